"""The values fragments and config templates are filled with, for one stack and one runtime."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

from stackctl import __version__
from stackctl.config import StackConfig
from stackctl.engine.demo_model import default_demo_model_dir
from stackctl.engine.install import default_engine_dir, engine_python
from stackctl.layout import StackLayout
from stackctl.resources import source_root
from stackctl.vllm_args import vllm_args

Runtime = Literal["compose", "native"]
# Where a local model directory is mounted inside the vLLM container.
CONTAINER_MODEL_DIR = "/models/local"


def local_model_dir(config: StackConfig) -> Path | None:
    """A model served from a local directory (the demo model, or `vllm.model_path`)."""
    if config.vllm.model_path:
        return Path(config.vllm.model_path).expanduser().resolve()
    if config.model_profile.hf_id is None:
        return default_demo_model_dir()
    return None


def proxy_args(config: StackConfig, *, host: str = "127.0.0.1") -> list[str]:
    """`stackctl proxy serve` arguments; its API keys come from STACKCTL_PROXY_KEYS, not argv."""
    args = [
        "--backend", f"http://127.0.0.1:{config.ports.vllm}",
        "--host", host,
        "--port", str(config.ports.proxy),
        # One served model: any client name (claude-*, gpt-*) reaches it.
        "--default-model", config.served_name,
    ]
    for pattern, target in config.aliases.items():
        args += ["--alias", f"{pattern}={target}"]
    return args + limit_args(config)


def limit_args(config: StackConfig) -> list[str]:
    """stack.yaml's `limits:` as `stackctl proxy serve` flags."""
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


def template_context(config: StackConfig, layout: StackLayout, runtime: Runtime) -> dict[str, Any]:
    local_model = local_model_dir(config)
    if runtime == "compose":
        # Relative to the directory holding docker-compose.yml, so the project can be moved.
        paths = {"rendered": "./rendered", "data": "./data", "state": "./.stackctl"}
        model_ref = CONTAINER_MODEL_DIR if local_model else None
    else:
        paths = {"rendered": str(layout.rendered), "data": str(layout.data), "state": str(layout.state)}
        model_ref = str(local_model) if local_model else None
    paths["hf_cache"] = str(Path(config.hf_cache).expanduser())
    paths["source"] = str(source_root() or ".")
    paths["local_model"] = str(local_model) if local_model else ""
    return {
        "stack": config,
        "ports": config.ports,
        "served_name": config.served_name,
        "version": __version__,
        "paths": paths,
        "vllm_args": vllm_args(config, model_ref=model_ref),
        "vllm_extra_volumes": [f"{local_model}:{CONTAINER_MODEL_DIR}:ro"] if local_model else [],
        "vllm_environment": [f"{key}={value}" for key, value in config.hardware_profile.vllm_environment],
        "proxy_args": proxy_args(config),
        "native": {
            "engine_python": str(engine_python(default_engine_dir())),
            "stackctl": [sys.executable, "-m", "stackctl"],
        },
    }
