"""The inference engine stackctl runs natively: vLLM's CPU build and a tiny demo model.

Used for machines without a GPU (developers, CI) so the whole stack runs and is tested for real.
"""

from stackctl.engine.demo_model import default_demo_model_dir, generate_demo_model
from stackctl.engine.install import (
    EngineInfo,
    EngineInstallError,
    default_engine_dir,
    engine_python,
    install_engine,
)
from stackctl.engine.server import vllm_cpu_command, vllm_cpu_env

__all__ = [
    "EngineInfo",
    "EngineInstallError",
    "default_demo_model_dir",
    "default_engine_dir",
    "engine_python",
    "generate_demo_model",
    "install_engine",
    "vllm_cpu_command",
    "vllm_cpu_env",
]
