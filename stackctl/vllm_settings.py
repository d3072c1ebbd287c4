"""The vLLM settings a stack runs with, decided once: model profile defaults, hardware needs,
then stack.yaml's overrides. The command line, doctor's fit and memory checks and the templates
all read these values; none of them decides a default of its own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stackctl.config import StackConfig
from stackctl.config_hosts import cluster_shape
from stackctl.engine.demo_model import default_demo_model_dir


@dataclass(frozen=True)
class VllmSettings:
    # The Hugging Face id, or None when the model is served from a local directory.
    hf_id: str | None
    local_model: Path | None
    served_name: str
    dtype: str
    max_model_len: int
    max_num_seqs: int
    # None: no GPU, so no --gpu-memory-utilization at all.
    gpu_memory_utilization: float | None
    kv_cache_dtype: str | None
    tool_call_parser: str | None
    reasoning_parser: str | None
    # The hardware's flags, then the Ray cluster's, the model profile's, the user's (argparse keeps
    # the last).
    extra_args: tuple[str, ...]
    # Ray multi-node (hosts: with ray-workers): (nodes, tensor, pipeline); None on one node.
    cluster: tuple[int, int, int] | None = None


def vllm_settings(config: StackConfig) -> VllmSettings:
    model = config.model_profile
    hardware = config.hardware_profile
    options = config.vllm
    utilization = options.gpu_memory_utilization or hardware.gpu_memory_utilization
    cluster = cluster_shape(config.hosts, config.ray)
    return VllmSettings(
        hf_id=None if options.model_path else model.hf_id,
        local_model=local_model_dir(config),
        served_name=config.served_name,
        dtype=hardware.dtype,
        max_model_len=options.max_model_len or model.max_model_len,
        max_num_seqs=options.max_num_seqs or model.max_num_seqs,
        gpu_memory_utilization=utilization if hardware.has_gpu else None,
        kv_cache_dtype=model.kv_cache_dtype,
        tool_call_parser=model.tool_call_parser,
        reasoning_parser=model.reasoning_parser,
        extra_args=(*_hardware_flags(hardware.vllm_flags, cluster), *_parallel_args(cluster), *model.extra_args,
                    *options.extra_args),
        cluster=cluster,
    )


def _hardware_flags(flags: tuple[str, ...], cluster: tuple[int, int, int] | None) -> tuple[str, ...]:
    """The hardware's flags; on a Ray cluster without its own executor choice (the CPU build's `uni`)."""
    if cluster is None or "--distributed-executor-backend" not in flags:
        return flags
    index = flags.index("--distributed-executor-backend")
    return flags[:index] + flags[index + 2:]


def _parallel_args(cluster: tuple[int, int, int] | None) -> tuple[str, ...]:
    """One model over every GPU of the Ray cluster that vLLM joins (RAY_ADDRESS)."""
    if cluster is None:
        return ()
    _nodes, tensor, pipeline = cluster
    return ("--distributed-executor-backend", "ray", "--tensor-parallel-size", str(tensor),
            "--pipeline-parallel-size", str(pipeline))


def local_model_dir(config: StackConfig) -> Path | None:
    """A model served from a local directory (the demo model, or `vllm.model_path`)."""
    if config.vllm.model_path:
        return Path(config.vllm.model_path).expanduser().resolve()
    if config.model_profile.hf_id is None:
        return default_demo_model_dir()
    return None
