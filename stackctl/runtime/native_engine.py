"""Make sure the engine a native vLLM needs is there: the user's own interpreter (`engine.python`),
the CPU build and demo model, or the CUDA build that serves the model (installed once, by the
compatibility table's pins)."""

from __future__ import annotations

from collections.abc import Callable

from stackctl.config import StackConfig
from stackctl.engine.choice import native_engine
from stackctl.engine.demo_model import default_demo_model_dir, generate_demo_model
from stackctl.engine.install import default_engine_dir, install_engine
from stackctl.errors import StackError
from stackctl.vllm_settings import local_model_dir


def ensure_native_engine(config: StackConfig, on_progress: Callable[[str], None]) -> None:
    engine = native_engine(config)
    if engine.brought:
        if not engine.python.is_file():
            raise StackError(f"engine.python in stack.yaml names {engine.python}, which does not exist: point it at "
                             "the python of an environment that has vLLM (e.g. ~/vllm-env/bin/python), or remove "
                             "engine.python to let stackctl install one")
    elif config.hardware_profile.has_gpu:
        from stackctl.engine.choice import host_driver_major, plan_for, serving_gpu_engine
        from stackctl.engine.gpu_install import install_gpu_engine

        if serving_gpu_engine(config) is None:
            plan = plan_for(config, host_driver_major())
            on_progress(f"installing vLLM {plan.vllm} (CUDA build): {plan.reason}")
            install_gpu_engine(plan, on_progress=on_progress)
        return
    else:
        install_engine(default_engine_dir(), on_progress=on_progress)
    if local_model_dir(config) == default_demo_model_dir():
        on_progress("generating the demo model")
        generate_demo_model(engine.python, default_demo_model_dir())
