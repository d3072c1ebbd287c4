"""`stackctl demo-model`: the tiny local model the native CPU engine serves."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stackctl.commands._shared import console


def register(app: typer.Typer) -> None:
    app.command("demo-model")(demo_model_command)


def demo_model_command(
    out: Annotated[Path | None, typer.Option(help="Where to write the model.")] = None,
) -> None:
    """Generate the tiny random-weight demo model locally (no download)."""
    from stackctl.engine.demo_model import default_demo_model_dir, generate_demo_model
    from stackctl.engine.install import default_engine_dir, install_engine

    with console.status("preparing") as spinner:
        install_engine(default_engine_dir(), on_progress=spinner.update)
        spinner.update("generating the demo model")
        path = generate_demo_model(default_engine_dir(), out or default_demo_model_dir())
    console.print(f"demo model in {path}")
