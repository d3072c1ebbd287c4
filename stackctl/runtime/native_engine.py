"""The native runtime's own question: which vLLM engine its services run, and making sure it is
there. The interpreter stack.yaml names (`engine.python`: bring your own), else vLLM's CPU build
on `hardware: cpu` (with the demo model), else a CUDA venv that serves the model (the newest
installed one that does, or the one `install-engine` would make, installed once by the
compatibility table's pins)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stackctl.config import StackConfig
from stackctl.engine.demo_model import default_demo_model_dir, generate_demo_model
from stackctl.engine.gpu_install import (
    GpuEngineInfo,
    GpuEnginePlan,
    gpu_engine_dir,
    installed_gpu_engine,
    installed_gpu_engines,
    plan_gpu_engine,
)
from stackctl.engine.install import default_engine_dir, engine_python, install_engine
from stackctl.errors import StackError
from stackctl.profiles.compat import engine_serves
from stackctl.vllm_settings import local_model_dir


@dataclass(frozen=True)
class NativeEngine:
    """The interpreter the native vLLM service runs with (it may not be installed yet) and why."""

    python: Path
    # Where it comes from, in the user's words: "engine.python in stack.yaml", "stackctl's CPU build", ...
    origin: str
    # Variables the engine needs at serve time, as its install recorded them (a lean bundle's).
    environment: dict[str, str] = field(default_factory=dict)
    # The user's own interpreter (engine.python): stackctl installs nothing for it.
    brought: bool = False


def uses_cuda_engine(config: StackConfig) -> bool:
    return config.hardware_profile.has_gpu


def serving_gpu_engine(config: StackConfig) -> GpuEngineInfo | None:
    """The newest installed CUDA engine whose vLLM serves the stack's model."""
    architecture = config.model_profile.architecture
    for info in installed_gpu_engines():
        if engine_serves(info.vllm_version, architecture).ok is not False:
            return info
    return None


def plan_cuda_engine(config: StackConfig, driver_major: int | None = None, **options) -> GpuEnginePlan:
    """The CUDA build `install-engine` (or `up`) installs for this stack's model on a driver of
    `driver_major` (None: any): the compatibility table's pins."""
    return plan_gpu_engine(config.model_profile.architecture, driver_major, **options)


def native_engine(config: StackConfig) -> NativeEngine:
    """The engine a native stack runs, decided here only: the one there (`installed_native_engine`),
    else the CUDA build `up` would install."""
    found = installed_native_engine(config)
    if found is not None:
        return found
    try:
        planned = plan_cuda_engine(config).vllm
    except Exception:  # noqa: BLE001 - no wheel serves the model: `up` and doctor say why
        planned = "none"
    return NativeEngine(engine_python(gpu_engine_dir(planned)), f"not installed yet: `up` installs vLLM {planned}")


def installed_native_engine(config: StackConfig) -> NativeEngine | None:
    """The engine a native stack runs when no install is needed to know it (the brought
    interpreter, the CPU build, an installed CUDA build that serves the model); None when a CUDA
    build must be installed first. Plans nothing."""
    if config.engine.python:
        python = Path(config.engine.python).expanduser()
        return NativeEngine(python, "engine.python in stack.yaml", _install_environment(python), brought=True)
    if not uses_cuda_engine(config):
        python = engine_python(default_engine_dir())
        return NativeEngine(python, "stackctl's vLLM CPU build")
    installed = serving_gpu_engine(config)
    if installed is not None:
        return NativeEngine(installed.python, f"installed by stackctl ({installed.engine_dir.name})",
                            dict(installed.environment))
    return None


def _install_environment(python: Path) -> dict[str, str]:
    """What the install recorded that the engine needs (e.g. a lean bundle's sampler switch), when
    the interpreter is one of stackctl's engine venvs."""
    installed = installed_gpu_engine(python.parent.parent)
    return dict(installed.environment) if installed is not None else {}


def host_driver_major() -> int | None:
    """This machine's NVIDIA driver major version (None without a driver)."""
    from stackctl.host import HostFacts

    return HostFacts().driver_major()


def ensure_native_engine(config: StackConfig, on_progress: Callable[[str], None]) -> None:
    engine = native_engine(config)
    if engine.brought:
        if not engine.python.is_file():
            raise StackError(f"engine.python in stack.yaml names {engine.python}, which does not exist: point it at "
                             "the python of an environment that has vLLM (e.g. ~/vllm-env/bin/python), or remove "
                             "engine.python to let stackctl install one")
    elif config.hardware_profile.has_gpu:
        from stackctl.engine.gpu_install import install_gpu_engine

        if serving_gpu_engine(config) is None:
            plan = plan_cuda_engine(config, host_driver_major())
            on_progress(f"installing vLLM {plan.vllm} (CUDA build): {plan.reason}")
            install_gpu_engine(plan, on_progress=on_progress)
        return
    else:
        install_engine(default_engine_dir(), on_progress=on_progress)
    if local_model_dir(config) == default_demo_model_dir():
        on_progress("generating the demo model")
        generate_demo_model(engine.python, default_demo_model_dir())
