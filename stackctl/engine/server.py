"""How to start vLLM's CPU build: the command line and the environment, tuned for small hosts.

Flags and variables here were chosen by experiment on a 2-core, 24 GiB CI machine with the tiny
demo model; the comments say what each one buys.
"""

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from stackctl.engine.install import engine_python
from stackctl.profiles import HARDWARE_PROFILES

# GiB reserved for the KV cache. vLLM's CPU backend takes it up front from RAM; the tiny model
# needs almost none, and a small value keeps several servers (parallel test sessions) affordable.
DEFAULT_KVCACHE_GIB = 1
# The test fixtures' default: short prompts need no more (the demo model has 131072 positions,
# which the `tiny` profile serves for real clients).
DEFAULT_MAX_MODEL_LEN = 2048


def vllm_cpu_command(
    engine_dir: Path,
    model_dir: Path,
    *,
    port: int,
    host: str = "127.0.0.1",
    served_name: str,
    extra_args: Sequence[str] = (),
    max_model_len: int = DEFAULT_MAX_MODEL_LEN,
) -> list[str]:
    """argv that serves model_dir on host:port under served_name with the engine venv's python.

    The API key is deliberately not a flag: argv is world-readable in /proc and `ps`, so vLLM
    reads it from VLLM_API_KEY (see vllm_cpu_env).
    """
    return [
        str(engine_python(engine_dir)),
        # The `vllm` console script does not work under the vllm-cpu distribution name (its
        # entry point looks up a distribution called "vllm"), so run the module directly.
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model_dir),
        "--served-model-name",
        served_name,
        "--host",
        host,
        "--port",
        str(port),
        "--max-model-len",
        str(max_model_len),
        *_CPU_FLAGS,
        *extra_args,
    ]


# The CPU build's flags and environment are the `cpu` hardware profile's, so the stack and the
# test fixtures start vLLM the same way. Measured on 2 cores with the demo model: 77 s to
# healthy with vLLM's defaults, 23-27 s with them.
_CPU_PROFILE = HARDWARE_PROFILES["cpu"]
_CPU_FLAGS: tuple[str, ...] = ("--dtype", _CPU_PROFILE.dtype, *_CPU_PROFILE.vllm_flags)


def vllm_cpu_env(
    *,
    api_key: str | None = None,
    kvcache_gib: int = DEFAULT_KVCACHE_GIB,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for vllm_cpu_command: base (default os.environ) plus CPU settings."""
    env = dict(os.environ if base is None else base)
    env.update(dict(_CPU_PROFILE.vllm_environment))
    env["VLLM_CPU_KVCACHE_SPACE"] = str(kvcache_gib)
    if api_key:
        env["VLLM_API_KEY"] = api_key
    else:
        env.pop("VLLM_API_KEY", None)
    return env
