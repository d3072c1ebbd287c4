"""Show a diagnosis: after a failed `up` (with the log tail) and for `stackctl logs SERVICE
--explain`. The fix is printed whole, whatever the terminal width."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape

from stackctl.config import StackConfig
from stackctl.diagnosis import Diagnosis, Severity, diagnose_service_log
from stackctl.runtime.base import ServiceStartFailed

# Log lines shown after a failed start (the diagnosis reads more).
SHOWN_LOG_LINES = 30
# How much of a long-running service's log `--explain` reads.
EXPLAIN_LOG_LINES = 5000


def report_failed_start(console: Console, failure: ServiceStartFailed) -> None:
    """Print the log tail and the diagnosis of a failed start."""
    shown = (failure.log_tail or [])[-SHOWN_LOG_LINES:]
    if shown:
        console.print(f"[bold]last {len(shown)} log lines:[/bold]")
        for line in shown:
            console.print(f"  {line}", markup=False, soft_wrap=True)
    elif failure.log_tail is not None:  # None: it never ran (e.g. its container could not be created)
        console.print("the service wrote no log lines before it was stopped")
    if failure.diagnosis is not None:
        print_diagnosis(console, failure.diagnosis)
    elif failure.hint:
        console.print(f"[yellow]hint:[/yellow] {failure.hint}", soft_wrap=True)


def explain_logs(console: Console, lines: Iterable[str], service: str, config: StackConfig | None) -> int:
    """Diagnose a service's log; the exit code is 1 when it shows a fatal failure, else 0."""
    tail = deque((line.rstrip("\n") for line in lines), maxlen=EXPLAIN_LOG_LINES)
    diagnosis = diagnose_service_log(service, tail, config)
    if diagnosis is None:
        console.print(f"no error found in the last {len(tail)} lines of {service}'s log")
        return 0
    print_diagnosis(console, diagnosis)
    return 1 if diagnosis.severity is Severity.fatal else 0


def print_diagnosis(console: Console, diagnosis: Diagnosis) -> None:
    if diagnosis.severity is not Severity.fatal:
        label = "[yellow]warning:[/yellow]"
    else:
        # A known cause, or (no signature knows it) the error line that stopped the service. Not
        # `error:`: that label is the command's own one-line failure, printed once, last.
        label = "[red]cause:[/red]" if diagnosis.known else "[red]failure:[/red]"
    # soft_wrap: the terminal wraps, rich neither folds nor cuts, so the fix stays whole and copyable.
    # Log text is not markup: `[rank0]` prints as is.
    console.print(f"{label} {escape(diagnosis.summary)}", soft_wrap=True)
    console.print(f"[green]fix:[/green] {escape(diagnosis.fix.text)}", soft_wrap=True)
    if diagnosis.evidence and not diagnosis.summary.endswith(diagnosis.evidence):
        console.print(f"[dim]from the log line:[/dim] {escape(diagnosis.evidence)}", soft_wrap=True)
