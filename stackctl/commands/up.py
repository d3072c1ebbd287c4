"""`stackctl up`: start the stack and print where clients reach it."""

from __future__ import annotations

from typing import Annotated

import typer

from stackctl.commands._shared import (
    HostOption,
    RuntimeOption,
    cli_invocation,
    console,
    err_console,
    load_stack,
)


def register(app: typer.Typer) -> None:
    app.command()(up)


def up(
    ctx: typer.Context,
    runtime: RuntimeOption = None,
    host: HostOption = None,
    skip_checks: Annotated[
        bool, typer.Option("--skip-checks", help="Start even when `doctor --fast` finds a failure.")
    ] = False,
) -> None:
    """Start every enabled service in dependency order, each behind its health gate."""
    from stackctl.commands.diagnosis_output import report_failed_start
    from stackctl.commands.progress import UpProgress
    from stackctl.runtime import ServiceStartFailed
    from stackctl.usecases.bring_up import bring_up

    stack = load_stack(ctx, runtime, host)
    try:
        with UpProgress(console, err_console) as progress:
            endpoint = bring_up(stack, skip_checks=skip_checks, on_event=progress.show)
    except ServiceStartFailed as failure:
        report_failed_start(err_console, failure)
        raise
    from stackctl.clients import RECIPES
    from stackctl.usecases.connect import try_line
    from stackctl.usecases.launch import launch_lines

    console.print("[green]all services healthy[/green]")
    console.print(f"endpoint: {endpoint.openai_base_url}  (model: {endpoint.model}, "
                  f"{endpoint.context_tokens}-token window)")
    # Each line works as printed, in this shell, on this machine: `launch` sets each agent up
    # for the run (nothing written); curl needs KEY, set by the first line (the key itself is
    # never printed: it is read from .env).
    invocation = cli_invocation(stack.layout)
    console.print(f"key:         KEY=$({invocation} connect key --show-key)", markup=False)
    console.print(f"curl:        {try_line(endpoint)}", markup=False)
    for title, line in launch_lines(invocation).items():
        console.print(f"{title + ':':<12} {line}", markup=False)
    console.print(f"other machines: {invocation} connect {'|'.join(RECIPES)} "
                  "[--write] (LAN address, key, model, context limits)", markup=False)
