"""`stackctl down`: stop the stack; data stays."""

from __future__ import annotations

import typer

from stackctl.commands._shared import HostOption, RuntimeOption, console, load_stack


def register(app: typer.Typer) -> None:
    app.command()(down)


def down(ctx: typer.Context, runtime: RuntimeOption = None, host: HostOption = None) -> None:
    """Stop the stack. Data (model cache, metrics, certificates) is kept."""
    from stackctl.usecases.tear_down import tear_down

    stopped = tear_down(load_stack(ctx, runtime, host))
    console.print(f"stopped: {', '.join(stopped) if stopped else 'nothing was running'}; data kept")
