"""Make sure the engine a native vLLM needs is there: the CPU build and demo model, or a venv."""

from __future__ import annotations

from collections.abc import Callable

from stackctl.config import StackConfig
from stackctl.engine.demo_model import default_demo_model_dir, generate_demo_model
from stackctl.engine.install import default_engine_dir, engine_python, install_engine
from stackctl.errors import StackError
from stackctl.vllm_settings import local_model_dir


def ensure_native_engine(config: StackConfig, on_progress: Callable[[str], None]) -> None:
    engine_dir = default_engine_dir()
    if config.hardware_profile.has_gpu:
        # GPU hosts bring their own vLLM build (CUDA wheels, or a patched one for their GPU).
        if not engine_python(engine_dir).exists():
            raise StackError(
                f"native vLLM runs from the venv {engine_dir}: create it with "
                f"`python3 -m venv {engine_dir} && {engine_dir}/bin/pip install vllm`, or use --runtime compose"
            )
        return
    install_engine(engine_dir, on_progress=on_progress)
    if local_model_dir(config) == default_demo_model_dir():
        on_progress("generating the demo model")
        generate_demo_model(engine_dir, default_demo_model_dir())
