"""`stackctl up`: start the stack and print where clients reach it."""

from __future__ import annotations

from typing import Annotated

import typer

from stackctl.commands._shared import HostOption, RuntimeOption, console, err_console, load_stack


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
    console.print("[green]all services healthy[/green]")
    console.print(f"endpoint: {endpoint.openai_base_url}  (model: {endpoint.model}; client key: STACKCTL_PROXY_KEYS "
                  f"in {endpoint.key_file})")
    console.print(
        f"try: curl -s {endpoint.openai_base_url}/chat/completions -H \"Authorization: Bearer $KEY\" "
        f"-H 'content-type: application/json' -d '{{\"model\": \"{endpoint.model}\", \"messages\": "
        f"[{{\"role\": \"user\", \"content\": \"hi\"}}]}}'"
    )
    console.print(f"Claude Code: ANTHROPIC_BASE_URL={endpoint.base_url} ANTHROPIC_AUTH_TOKEN=$KEY "
                  f"ANTHROPIC_MODEL={endpoint.model} claude")
