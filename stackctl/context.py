"""The values fragments and config templates are filled with, for one stack and one runtime."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

from stackctl import __version__
from stackctl.config import StackConfig
from stackctl.engine.choice import native_engine_python
from stackctl.engine.demo_model import default_demo_model_dir
from stackctl.layout import StackLayout
from stackctl.own_images import image_template_values
from stackctl.profiles.engines import default_vllm_image
from stackctl.resources import source_root
from stackctl.vllm_args import vllm_args

Runtime = Literal["compose", "native"]
# Where a local model directory is mounted inside the vLLM container.
CONTAINER_MODEL_DIR = "/models/local"
# Where the vllm-cpu image (images/vllm-cpu) carries the demo model.
IMAGE_DEMO_MODEL_DIR = "/models/tiny"


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
    return args


def template_context(config: StackConfig, layout: StackLayout, runtime: Runtime) -> dict[str, Any]:
    local_model = local_model_dir(config)
    if runtime == "compose":
        # Relative to the directory holding docker-compose.yml, so the project can be moved.
        paths = {"rendered": "./rendered", "data": "./data", "state": "./.stackctl"}
        model_ref = CONTAINER_MODEL_DIR if local_model else None
        if "cpu" in config.hardware_profile.traits and local_model == default_demo_model_dir():
            # The CPU image carries the demo model: nothing to generate or mount on the host.
            local_model, model_ref = None, IMAGE_DEMO_MODEL_DIR
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
        "own_images": image_template_values(config),
        "default_vllm_image": default_vllm_image(config.hardware_profile, config.model_profile),
        "native": {
            "engine_python": str(native_engine_python(config)),
            "stackctl": [sys.executable, "-m", "stackctl"],
        },
    }
