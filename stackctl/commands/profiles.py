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
    models = Table("model", "description", "tool parser", "reasoning parser", title="Model profiles")
    for model in MODEL_PROFILES.values():
        models.add_row(model.name, model.description, model.tool_call_parser, model.reasoning_parser or "-")
    console.print(hardware)
    console.print(models)
