"""Which native engine a stack runs: vLLM's CPU build on `hardware: cpu`, else a CUDA venv that
serves the model (the newest installed one that does, or the one `install-engine` would make)."""

from __future__ import annotations

from pathlib import Path

from stackctl.config import StackConfig
from stackctl.engine.gpu_install import (
    GpuEngineInfo,
    GpuEnginePlan,
    gpu_engine_dir,
    installed_gpu_engines,
    plan_gpu_engine,
)
from stackctl.engine.install import default_engine_dir, engine_python
from stackctl.profiles.compat import engine_serves


def uses_cuda_engine(config: StackConfig) -> bool:
    return config.hardware_profile.has_gpu


def serving_gpu_engine(config: StackConfig) -> GpuEngineInfo | None:
    """The newest installed CUDA engine whose vLLM serves the stack's model."""
    architecture = config.model_profile.architecture
    for info in installed_gpu_engines():
        if engine_serves(info.vllm_version, architecture).ok is not False:
            return info
    return None


def plan_for(config: StackConfig, driver_major: int | None = None, **options) -> GpuEnginePlan:
    return plan_gpu_engine(config.model_profile.architecture, driver_major, **options)


def native_engine_python(config: StackConfig) -> Path:
    """The interpreter the native vLLM service runs with (it may not be installed yet)."""
    if not uses_cuda_engine(config):
        return engine_python(default_engine_dir())
    installed = serving_gpu_engine(config)
    if installed is not None:
        return installed.python
    try:
        return engine_python(gpu_engine_dir(plan_for(config).vllm))
    except Exception:  # noqa: BLE001 - no wheel serves the model: `up` and doctor say why
        return engine_python(gpu_engine_dir("none"))


def host_driver_major() -> int | None:
    """The NVIDIA driver's major version, from nvidia-smi (None without a driver)."""
    from stackctl.doctor.context import parse_gpu_query
    from stackctl.doctor.host import HostFacts

    gpus = parse_gpu_query(HostFacts().nvidia_smi()).gpus
    head = gpus[0].driver_version.split(".")[0] if gpus else ""
    return int(head) if head.isdigit() else None
