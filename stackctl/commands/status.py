"""`stackctl status`: one row per service."""

from __future__ import annotations

import typer
from rich.table import Column, Table

from stackctl.commands._shared import HostOption, RuntimeOption, console, load_stack


def register(app: typer.Typer) -> None:
    app.command()(status)


def status(ctx: typer.Context, runtime: RuntimeOption = None, host: HostOption = None) -> None:
    """One row per service: state, pid, health, URL, uptime, restarts."""
    from stackctl.usecases.report_status import report_status

    stack = load_stack(ctx, runtime, host)
    # URLs and failure details wrap rather than end in "…": they are what people copy.
    table = Table(
        "service", "state", "pid", "health",
        Column("url", overflow="fold"), "uptime", "restarts", Column("detail", overflow="fold"),
    )  # fmt: skip
    report = report_status(stack)
    for row in report.services:
        health = {True: "[green]healthy[/green]", False: "[red]unhealthy[/red]", None: "-"}[row.healthy]
        state = {"running": "[green]running[/green]", "dead": "[red]dead[/red]"}.get(row.state, row.state)
        uptime = f"{row.uptime_s:.0f} s" if row.uptime_s is not None else "-"
        detail = "" if row.healthy else row.detail
        restarts = "-" if row.restarts is None else str(row.restarts)
        table.add_row(row.name, state, str(row.pid or "-"), health, row.url or "-", uptime, restarts, detail)
    console.print(table)
    engine = report.engine
    if engine is not None:
        console.print(f"engine: {engine.what} — {engine.where} ({engine.origin})")
