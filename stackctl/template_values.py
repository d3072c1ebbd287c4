"""The values fragments and config templates are filled with, for one stack and one runtime."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stackctl import __version__
from stackctl.config import StackConfig
from stackctl.own_images import image_template_values
from stackctl.profiles.engines import default_vllm_image
from stackctl.topology.ray_probe import ray_probe_argv
from stackctl.vllm_args import vllm_args
from stackctl.vllm_settings import local_model_dir

if TYPE_CHECKING:
    from stackctl.runtime.base import Runtime
    from stackctl.topology import HostPlan, RayPlan


def proxy_args(config: StackConfig, *, host: str = "127.0.0.1") -> list[str]:
    """`stackctl filter-proxy serve` arguments; its API keys come from STACKCTL_PROXY_KEYS, not argv."""
    args = [
        "--backend", f"http://127.0.0.1:{config.ports.vllm}",
        "--host", host,
        "--port", str(config.ports.proxy),
        # One served model: any client name (claude-*, gpt-*) reaches it.
        "--default-model", config.served_name,
        "--workers", str(config.proxy.workers),
    ]
    for pattern, target in config.aliases.items():
        args += ["--alias", f"{pattern}={target}"]
    return args + limit_args(config)


def limit_args(config: StackConfig) -> list[str]:
    """stack.yaml's `limits:` as `stackctl filter-proxy serve` flags."""
    limits = config.limits
    args = [
        "--max-concurrent", str(limits.max_concurrent),
        "--requests-per-minute", str(limits.requests_per_minute),
        "--tokens-per-minute", str(limits.tokens_per_minute),
        "--max-backend-waiting", str(limits.max_backend_waiting),
    ]
    for name, override in limits.keys.items():
        values = override.model_dump(exclude_none=True)
        if values:
            args += ["--key-limit", f"{name}:" + ",".join(f"{k}={v}" for k, v in values.items())]
    return args


def outline_context(config: StackConfig, runtime: Runtime, host: HostPlan) -> dict[str, Any]:
    """What names, images and health gates are filled with: this host's plan, the ports and the
    images; not the engine's interpreter and flags (`down` and `status` need no engine)."""
    return {
        # This host's share of the stack: its services, listen addresses, upstreams, Ray node.
        "host": host,
        "ray": host.ray,
        # The cluster gate: the engine's own Python (with Ray) runs it, inside the container under Compose.
        "ray_probe": runtime.engine_command("ray-head" if host.role == "gpu" else "ray-worker", ray_probe_argv())
        if host.ray else [],
        "ray_probe_args": ray_probe_argv(),
        "ray_environment": host.ray.environment() if host.ray else [],
        "stack": config,
        "ports": config.ports,
        "served_name": config.served_name,
        "version": __version__,
        "vllm_image": config.images.get("vllm", default_vllm_image(config.hardware_profile, config.model_profile)),
        "own_images": image_template_values(config),
        "default_vllm_image": default_vllm_image(config.hardware_profile, config.model_profile),
    }


def template_context(config: StackConfig, runtime: Runtime, host: HostPlan) -> dict[str, Any]:
    """Everything a fragment or config template may use: the outline's values, the paths as the
    services see them, and the engine the runtime runs (its interpreter, how vLLM is started, its
    flags and variables)."""
    outline = outline_context(config, runtime, host)
    model = runtime.model_location(local_model_dir(config))
    invocation = runtime.vllm_invocation(vllm_service_image(config, outline["own_images"]))
    return {
        **outline,
        "paths": {**runtime.template_paths(), "hf_cache": str(Path(config.hf_cache).expanduser())},
        "vllm_args": vllm_args(config, model_ref=model.reference, model_positional=invocation.model_positional),
        # What starts vLLM before its arguments: the image's own ENTRYPOINT or the words rendered here.
        "vllm_invocation": {"entrypoint": list(invocation.entrypoint) if invocation.entrypoint is not None else None,
                            "command": list(invocation.command)},
        "vllm_extra_volumes": list(model.mounts),
        "vllm_environment": _vllm_environment(config, host.ray, runtime.engine_environment()),
        "proxy_args": proxy_args(config, host=host.proxy_bind),
        "native": {
            "engine_python": runtime.engine_python(),
            "stackctl": [sys.executable, "-m", "stackctl"],
        },
    }


def vllm_service_image(config: StackConfig, own_images: dict[str, dict[str, Any]] | None = None) -> str:
    """The image the vllm service runs: stack.yaml's images.vllm, else the CPU build stackctl
    makes (no GPU), else the table's NGC tag."""
    if "vllm" in config.images:
        return config.images["vllm"]
    if not config.hardware_profile.has_gpu:
        return str((own_images or image_template_values(config))["vllm-cpu"]["image"])
    return default_vllm_image(config.hardware_profile, config.model_profile)


def _vllm_environment(config: StackConfig, ray: RayPlan | None, engine: dict[str, str]) -> list[str]:
    """The hardware's engine variables, then the engine's own (a native interpreter's); on a Ray
    node, the link's (which replace VLLM_HOST_IP); then the user's own (vllm.environment), which win."""
    values = {**dict(config.hardware_profile.vllm_environment), **engine}
    if ray is not None:
        values.update(item.split("=", 1) for item in ray.environment())
    values.update(config.vllm.environment)
    return [f"{key}={value}" for key, value in values.items()]
