"""The list of checks, fast ones first, and `run_checks` (what `doctor` and `up` call)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.docker import check_docker, check_mount_propagation
from stackctl.doctor.engine import check_engine, check_engine_version
from stackctl.doctor.entrypoint import check_vllm_entrypoint
from stackctl.doctor.gpu import check_cuda_image, check_driver, check_gpu_visible
from stackctl.doctor.last_start import check_last_start
from stackctl.doctor.memory import check_unified_memory
from stackctl.doctor.model_window import check_model_window
from stackctl.doctor.network import (
    check_env_file,
    check_hf_token,
    check_nginx_upstreams,
    check_ports,
)
from stackctl.doctor.request_failures import check_request_failures
from stackctl.doctor.result import CheckResult, fail
from stackctl.doctor.served_model import check_disk, check_model_fit
from stackctl.doctor.topology import (
    check_peers,
    check_proxy_exposure,
    check_ray_link,
    check_this_host,
)
from stackctl.doctor.vllm_flags import check_tool_parser, check_vllm_flags
from stackctl.host import HostFacts
from stackctl.stack import Stack

CheckFunction = Callable[[DoctorContext], "CheckResult | list[CheckResult]"]


@dataclass(frozen=True)
class Check:
    name: str
    run: CheckFunction
    # Fast checks read files and run nvidia-smi/docker once; `up` runs them before starting.
    fast: bool = True
    # Only on a host running one of these (an edge host has no GPU to check); empty: every host.
    needs: frozenset[str] = frozenset()


# A GPU and the model's weights: vLLM's host and its Ray workers.
_ENGINE = frozenset({"vllm", "ray-head", "ray-worker"})
_VLLM = frozenset({"vllm"})


CHECKS: tuple[Check, ...] = (
    Check("host", check_this_host),
    Check("gpu", check_gpu_visible, needs=_ENGINE),
    Check("driver", check_driver, needs=_ENGINE),
    Check("cuda-image", check_cuda_image, needs=_ENGINE),
    # The engine against the model's architecture: before any download (table + image labels).
    Check("engine", check_engine, needs=_ENGINE),
    # The image's ENTRYPOINT and the rendered command start vLLM's server once.
    Check("vllm-entrypoint", check_vllm_entrypoint, needs=_VLLM),
    Check("docker", check_docker),
    Check("mount-propagation", check_mount_propagation),
    Check("disk", check_disk, needs=_ENGINE),
    Check("memory", check_unified_memory, needs=_ENGINE),
    Check("model-fit", check_model_fit, needs=_VLLM),
    Check("model-window", check_model_window, needs=_VLLM),
    Check("tool-parser", check_tool_parser, needs=_VLLM),
    Check("ports", check_ports),
    Check("nginx", check_nginx_upstreams),
    Check("hf-token", check_hf_token, needs=_ENGINE),
    Check("env-file", check_env_file),
    # Multi-host stacks (hosts:): peers reachable, the proxy off public addresses, the Ray link.
    Check("peers", check_peers),
    Check("proxy-exposure", check_proxy_exposure),
    Check("ray-link", check_ray_link),
    # Starts the engine's Python and imports vLLM (~10 s): `doctor` only.
    Check("vllm-flags", check_vllm_flags, fast=False, needs=_VLLM),
    # Runs the local image once to read its vLLM version (seconds): `doctor` only.
    Check("engine-version", check_engine_version, fast=False, needs=_ENGINE),
    # History, not a host trap: `up` must not refuse to retry because the last try failed.
    Check("last-start", check_last_start, fast=False),
    # The requests a running vLLM refused, per class, from its log: `doctor` only.
    Check("request-failures", check_request_failures, fast=False, needs=_VLLM),
)


def run_checks(
    stack: Stack,
    fast_only: bool = True,
    *,
    facts: HostFacts | None = None,
    engine_python: Path | None = None,
) -> list[CheckResult]:
    """Every check's results, in order. A check that crashes is reported as a failure, not raised."""
    ctx = DoctorContext(stack, facts or HostFacts(), engine_python)
    results: list[CheckResult] = []
    for check in CHECKS:
        if fast_only and not check.fast:
            continue
        if check.needs and not check.needs & ctx.stack.plan.services:
            continue
        try:
            outcome = check.run(ctx)
        except Exception as error:  # noqa: BLE001 - one broken probe must not hide the others
            outcome = fail(check.name, f"the check itself failed: {type(error).__name__}: {error}",
                           "report this as a stackctl bug, with `stackctl doctor --json`")
        results += outcome if isinstance(outcome, list) else [outcome]
    return results
