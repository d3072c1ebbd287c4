"""`stackctl doctor [--json] [--fast]`: one row per check; exit code 1 when any check fails."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from stackctl.commands._shared import HostOption, RuntimeChoice, load_stack
from stackctl.doctor import CheckResult, Status, any_failed, run_checks

_STYLE = {Status.ok: "[green]ok[/green]", Status.warn: "[yellow]warn[/yellow]", Status.fail: "[red]fail[/red]"}


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)


def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    fast: Annotated[bool, typer.Option("--fast", help="Only the quick checks (what `up` runs).")] = False,
    runtime: Annotated[RuntimeChoice | None, typer.Option(help="Check for this runtime instead of stack.yaml's.")] = None,
    host: HostOption = None,
) -> None:
    """Check the host for every known trap before `up` (GPU driver, Docker, disk, memory, model fit, flags, ports)."""
    stack = load_stack(ctx, runtime, host)
    results = run_checks(stack, fast_only=fast)
    if as_json:
        typer.echo(json.dumps(report_document(results), indent=2))
    else:
        render_table(results, Console(highlight=False, soft_wrap=True))
    if any_failed(results):
        raise typer.Exit(1)


def report_document(results: list[CheckResult]) -> dict:
    counts = {status.value: sum(result.status is status for result in results) for status in Status}
    return {"ok": not any_failed(results), "summary": counts, "checks": [result.to_dict() for result in results]}


def render_table(results: list[CheckResult], console: Console) -> None:
    # Three columns, so what a check found has the width an 80-column terminal leaves (beside a fix
    # column it was folded mid-word); the fixes follow the table, each whole on its own line.
    table = Table(Column("check", no_wrap=True), Column("status", no_wrap=True), Column("found", overflow="fold"),
                  show_lines=True)
    for result in results:
        table.add_row(result.name, _STYLE[result.status], escape(result.found))
    console.print(table)
    failures = sum(result.status is Status.fail for result in results)
    warnings = sum(result.status is Status.warn for result in results)
    summary = f"{len(results)} checks: {failures} failed, {warnings} warnings"
    console.print(f"[red]{summary}[/red]" if failures else summary)
    # Each fix again on one line of its own: whole and copyable, whatever the terminal width.
    for result in results:
        if result.status is not Status.ok and result.fix:
            console.print(f"fix {result.name}: {result.fix}", markup=False, soft_wrap=True)
