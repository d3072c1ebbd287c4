"""How `up` shows its progress: a spinner on a terminal, plain timestamped lines elsewhere (CI
logs, the systemd journal), where a spinner prints nothing."""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any, Self

from rich.console import Console
from rich.markup import escape

from stackctl.doctor import Status
from stackctl.pull import size_text
from stackctl.runtime import ServiceEvent
from stackctl.usecases.bring_up import (
    PeersReady,
    PreflightFinding,
    Preparing,
    StagingWeights,
    StartingDespiteChecks,
    UpEvent,
    WaitingForPeers,
    WeightsStaged,
)

# Off a terminal, a waiting service is reported this often (a spinner line otherwise).
PLAIN_WAITING_EVERY_S = 15.0


class UpProgress:
    def __init__(self, console: Console, err_console: Console) -> None:
        self.console = console
        self.err_console = err_console
        self.status: Any = None
        self._last_plain: dict[str, float] = {}
        self._download_start: tuple[float, int] | None = None

    def __enter__(self) -> Self:
        if self.console.is_terminal:
            self.status = self.console.status("starting")
            self.status.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.status is not None:
            self.status.__exit__(kind, error, trace)

    def show(self, event: UpEvent) -> None:
        if isinstance(event, PreflightFinding):
            result = event.result
            colour = "red" if result.status is Status.fail else "yellow"
            self.err_console.print(f"[{colour}]{result.status.value}[/{colour}] {result.name}: {result.found}")
            if result.fix:
                self.err_console.print(f"  fix: {result.fix}", markup=False)
        elif isinstance(event, StartingDespiteChecks):
            self.err_console.print("[yellow]starting anyway (--skip-checks)[/yellow]")
        elif isinstance(event, Preparing):
            self._transient("engine", f"engine: {event.message}")
        elif isinstance(event, StagingWeights):
            self._transient("weights", self._download_line(event))
        elif isinstance(event, WeightsStaged):
            result = event.result
            said = ("already in the cache" if result.skipped
                    else f"{size_text(result.downloaded_bytes)} downloaded")
            self.console.print(f"[green]✓[/green] weights {result.repo_id}: {said} ({size_text(result.total_bytes)})")
        elif isinstance(event, WaitingForPeers):
            waiting = ", ".join(f"{state.gate.host} ({state.gate.service})" for state in event.states
                                if not state.ready)
            self._transient("peers", f"waiting for {waiting}: {event.elapsed_s:4.0f}/{event.timeout_s:.0f} s")
        elif isinstance(event, PeersReady):
            for state in event.states:
                if state.ready:
                    self.console.print(f"[green]✓[/green] {state.gate.host}: {state.gate.service} serving")
                else:
                    self.err_console.print(f"[yellow]warn[/yellow] {escape(state.gate.host)}: {state.gate.service} "
                                           f"not serving ({escape(state.detail)}); starting without it")
        else:
            self._service(event)

    def _download_line(self, event: StagingWeights) -> str:
        """Bytes, rate and time left, from the first progress report on."""
        step, now = event.progress, time.monotonic()
        self._download_start = self._download_start or (now, step.done_bytes)
        began, first = self._download_start
        rate = (step.done_bytes - first) / (now - began) if now > began else 0.0
        left = f", {(step.total_bytes - step.done_bytes) / rate / 60:.0f} min left" if rate > 0 and step.total_bytes else ""
        total = f" of {size_text(step.total_bytes)}" if step.total_bytes else ""
        return f"weights {step.repo_id}: {size_text(step.done_bytes)}{total} at {size_text(int(rate))}/s{left}"

    def _service(self, event: ServiceEvent) -> None:
        name = event.service.name
        if event.kind == "healthy":
            self.console.print(f"[green]✓[/green] {name} healthy ({event.detail})")
        elif event.kind == "running":
            self.console.print(f"[green]✓[/green] {name} already running and healthy")
        elif event.kind == "restarting":
            self.console.print(f"[yellow]↻[/yellow] {name} was dead: restarting")
        elif event.kind == "changed":
            self.console.print(f"[yellow]↻[/yellow] {name} changed ({escape(event.detail)}): restarting")
        elif event.kind == "image-ready":
            self.console.print(f"[green]✓[/green] image {event.detail} ready")
        elif event.kind in ("building", "pulling"):
            self._transient(f"{name}:{event.kind}", f"{name}: {event.kind} image: {event.detail[-120:]}")
        elif event.kind == "waiting":
            self._transient(name, f"{name}: {event.elapsed_s:4.0f}/{event.service.start_timeout:.0f} s  "
                                  f"{event.detail[-100:]}")
        else:
            self._transient(name, f"{name}: starting", always=True)

    def _transient(self, key: str, text: str, *, always: bool = False) -> None:
        """A spinner line on a terminal; elsewhere a plain line, at most every few seconds per key."""
        if self.status is not None:
            self.status.update(text)
            return
        now = time.monotonic()
        if always or now - self._last_plain.get(key, -PLAIN_WAITING_EVERY_S) >= PLAIN_WAITING_EVERY_S:
            self._last_plain[key] = now
            self.console.print(f"… {text}", markup=False)
