"""`stackctl logs SERVICE [-f] [--explain]`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from stackctl.commands._shared import HostOption, RuntimeOption, console, load_stack


def register(app: typer.Typer) -> None:
    app.command()(logs)


def logs(
    ctx: typer.Context,
    service: Annotated[str, typer.Argument(help="Service name, e.g. vllm")],
    follow: Annotated[bool, typer.Option("--follow", "-f")] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Name the failure the log shows and its fix (exit 1 if fatal).")
    ] = False,
    runtime: RuntimeOption = None,
    host: HostOption = None,
) -> None:
    """Show a service's logs, or with --explain the failure they show and its fix."""
    stack = load_stack(ctx, runtime, host)
    if explain:
        from stackctl.commands.diagnosis_output import explain_logs

        raise typer.Exit(explain_logs(console, stack.runtime.logs(service, False), service, stack.config))
    for line in stack.runtime.logs(service, follow):
        sys.stdout.write(line)
        sys.stdout.flush()
