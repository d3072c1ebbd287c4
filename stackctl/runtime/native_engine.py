"""Make sure the engine a native vLLM needs is there: the CPU build and demo model, or the CUDA
build that serves the model (installed once, by the compatibility table's pins)."""

from __future__ import annotations

from collections.abc import Callable

from stackctl.config import StackConfig
from stackctl.engine.demo_model import default_demo_model_dir, generate_demo_model
from stackctl.engine.install import default_engine_dir, install_engine
from stackctl.vllm_settings import local_model_dir


def ensure_native_engine(config: StackConfig, on_progress: Callable[[str], None]) -> None:
    if config.hardware_profile.has_gpu:
        from stackctl.engine.choice import host_driver_major, plan_for, serving_gpu_engine
        from stackctl.engine.gpu_install import install_gpu_engine

        if serving_gpu_engine(config) is None:
            plan = plan_for(config, host_driver_major())
            on_progress(f"installing vLLM {plan.vllm} (CUDA build): {plan.reason}")
            install_gpu_engine(plan, on_progress=on_progress)
        return
    engine_dir = default_engine_dir()
    install_engine(engine_dir, on_progress=on_progress)
    if local_model_dir(config) == default_demo_model_dir():
        on_progress("generating the demo model")
        generate_demo_model(engine_dir, default_demo_model_dir())
