"""`stackctl launch CLIENT [-- ARGS]`: run a coding agent against this stack, nothing written."""

from __future__ import annotations

from typing import Annotated

import typer

from stackctl.commands._shared import load_stack

LAUNCHABLE = ("claude", "codex", "opencode", "openclaw")


def register(app: typer.Typer) -> None:
    # Everything after CLIENT is the client's, in order (`launch claude -p hi` as `launch claude -- -p hi`).
    settings = {"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False}
    app.command(context_settings=settings)(launch)


def launch(
    ctx: typer.Context,
    client: Annotated[str, typer.Argument(help=f"{', '.join(LAUNCHABLE)}.")],
    args: Annotated[list[str] | None, typer.Argument(help="Passed to the client (after --).")] = None,
    key: Annotated[str | None, typer.Option("--key", help="Client key name from .env (default: the first).")] = None,
) -> None:
    """Run a coding agent against this stack: endpoint, key, model and window set for this run
    only (environment, command line or a temporary config); your own config files are untouched."""
    from stackctl.usecases.launch import run_client

    code = run_client(load_stack(ctx), client, [*(args or []), *ctx.args], key_name=key)
    raise typer.Exit(code)
