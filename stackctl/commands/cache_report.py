"""`stackctl cache-report`: per key, the last conversations' turns, the share of each prompt vLLM
served from its prefix cache, and where a prefix broke; `--capture` adds the prompts' diff."""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from stackctl.commands._shared import (
    HostOption,
    RuntimeOption,
    cli_invocation,
    console,
    layout_of,
    load_stack,
)

DEFAULT_CAPTURE_MINUTES = 15.0


def register(app: typer.Typer) -> None:
    app.command("cache-report")(cache_report)


def cache_report(
    ctx: typer.Context,
    sessions: Annotated[int, typer.Option("--sessions", "-n", min=1, max=1000,
                                          help="The last N conversations of each key.")] = 5,
    key: Annotated[str | None, typer.Option("--key", help="One client key's conversations (its name).")] = None,
    capture: Annotated[bool, typer.Option(
        "--capture", help="Capture prompts for --minutes (owner-only files on the proxy's host, deleted an hour "
                          "after) and show the diff at each break captured.")] = False,
    minutes: Annotated[float, typer.Option("--minutes", min=1, max=24 * 60,
                                           help="How long --capture captures.")] = DEFAULT_CAPTURE_MINUTES,
    stop_capture: Annotated[bool, typer.Option("--stop-capture",
                                               help="Stop capturing and delete the captured prompts.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="The report as the proxy sent it.")] = False,
    runtime: RuntimeOption = None,
    host: HostOption = None,
) -> None:
    """Where each conversation's prompt prefix held, what vLLM served from cache, and where it broke."""
    from stackctl.errors import ConfigError
    from stackctl.usecases.cache_report import cache_report as report_of

    if capture and stop_capture:
        raise ConfigError("--capture and --stop-capture: pick one")
    switch = minutes if capture else 0.0 if stop_capture else None
    reports = report_of(load_stack(ctx, runtime, host), sessions=sessions, key=key, capture_minutes=switch)
    if as_json:
        console.print_json(json.dumps([{"proxy": r.address, **r.report.model_dump()} for r in reports]))
        return
    again = f"{cli_invocation(layout_of(ctx))} cache-report --capture"
    for proxied in reports:
        _print_report(proxied.address, proxied.report, show_diffs=capture, multiple=len(reports) > 1)
        state = proxied.capture
        if state is not None and state.active and state.until:
            console.print(f"capturing prompts until {_clock(state.until)} in {state.directory} on the proxy's host "
                          f"(owner-only; deleted at {_clock(state.kept_until)}). Reproduce the break, then run "
                          f"`{again}` again for its diff; --stop-capture deletes them now.", markup=False)
        elif state is not None:
            console.print("capture stopped; captured prompts deleted.")


def _print_report(address: str, report, *, show_diffs: bool, multiple: bool) -> None:  # type: ignore[no-untyped-def]
    if multiple:
        console.print(f"[bold]filter-proxy {address}[/bold]")
    if report.capacity == 0:
        console.print("prefix tracking is off on this proxy (filter-proxy --sessions 0).")
        return
    if not report.keys:
        console.print(f"no conversations tracked yet ({report.capacity} kept at most).")
        return
    for entry in report.keys:
        for session in entry.sessions:
            _print_session(entry.key, session, show_diffs)


def _print_session(key: str, session, show_diffs: bool) -> None:  # type: ignore[no-untyped-def]
    client = f", client session {session.client_session}" if session.client_session else ""
    breaks = f"{session.breaks} break{'s' if session.breaks != 1 else ''}"
    shown = "" if len(session.turns) == session.turns_total else f" (the last {len(session.turns)} shown)"
    console.print(f"\n[bold]key {key}[/bold] · conversation {session.id}{client} · {session.turns_total} turns"
                  f"{shown}, {breaks} · last {_clock(session.last_seen)}", markup=True, highlight=False)
    table = Table("turn", "prefix", "messages", "kept of previous", "prompt tokens", "from cache", box=None)
    for turn in session.turns:
        kept = "-" if turn.outcome == "first" else f"{turn.kept_bytes / max(turn.previous_bytes, 1):.0%} " \
               f"({turn.kept_messages} msg)"
        outcome = {"broken": "[red]broken[/red]", "kept": "[green]kept[/green]"}.get(turn.outcome, turn.outcome)
        share = "-" if turn.cached_share is None else f"{turn.cached_share:.0%}"
        tokens = "-" if turn.prompt_tokens is None else str(turn.prompt_tokens)
        table.add_row(str(turn.turn), outcome, str(turn.messages), kept, tokens, share)
    console.print(table)
    for turn in session.turns:
        if turn.change is None:
            continue
        console.print(f"  turn {turn.turn}: {turn.change}", markup=False)
        if show_diffs and turn.diff:
            _print_diff(turn.diff)
        elif show_diffs:
            console.print("  (not captured: turns before and after the break must both fall in a capture)",
                          markup=False)


def _print_diff(diff: str) -> None:
    """Line by line, coloured, never padded or cut (it is read, copied, piped)."""
    for line in diff.splitlines():
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else None
        console.print(Text(line, style=style or ""))


def _clock(moment: float | None) -> str:
    return "-" if moment is None else time.strftime("%H:%M:%S", time.localtime(moment))
