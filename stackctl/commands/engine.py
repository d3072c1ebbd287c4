"""`stackctl demo-model`: the tiny local model the native CPU engine serves, or a random-weight
model sized like a real one (`--shape`) for measuring a GPU."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stackctl.commands._shared import console
from stackctl.errors import StackError


def register(app: typer.Typer) -> None:
    app.command("demo-model")(demo_model_command)


def demo_model_command(
    out: Annotated[Path | None, typer.Option(help="Where to write the model.")] = None,
    shape: Annotated[str | None, typer.Option(
        help="A model sized like a real one, for a GPU (e.g. qwen3-8b-widths); default: the tiny demo model.")] = None,
    layers: Annotated[int | None, typer.Option(min=1, help="Layers of the --shape model (default: the shape's).")] = None,
    python: Annotated[Path | None, typer.Option(
        help="The interpreter that builds it (torch, transformers, tokenizers); default: stackctl's CPU engine.")] = None,
) -> None:
    """Generate a random-weight model locally (no download): the tiny demo model, or --shape."""
    from stackctl.engine.demo_model import (
        DEMO_MODEL_SHAPES,
        default_demo_model_dir,
        generate_demo_model,
        shaped_model_dir,
    )
    from stackctl.engine.install import default_engine_dir, engine_python, install_engine

    chosen = None
    if shape is not None:
        if shape not in DEMO_MODEL_SHAPES:
            raise StackError(f"unknown shape '{shape}'; choose one of: {', '.join(DEMO_MODEL_SHAPES)}")
        chosen = DEMO_MODEL_SHAPES[shape].with_layers(layers) if layers else DEMO_MODEL_SHAPES[shape]
    target = out or (shaped_model_dir(chosen) if chosen else default_demo_model_dir())
    with console.status("preparing") as spinner:
        if python is None:
            install_engine(default_engine_dir(), on_progress=spinner.update)
        spinner.update(f"generating {chosen.description if chosen else 'the demo model'}")
        path = generate_demo_model(python or engine_python(default_engine_dir()), target, chosen)
    console.print(f"demo model in {path}")
