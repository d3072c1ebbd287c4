"""What the routes and the admin API ask of session tracking, whoever keeps the sessions: this
process (`LocalSessions`), or with several workers the one keeper they all report to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from stackctl.proxy.metrics import ProxyMetrics
from stackctl.proxy.protocol.cache_report import CacheReport, CaptureState, Outcome
from stackctl.proxy.sessions.report import cache_report, capture_state
from stackctl.proxy.sessions.tracker import Observation, SessionTracker

# Told the backend's (prompt, cached) tokens for the request observed.
UsageSink = Callable[[int, int], None]


class Sessions(Protocol):
    def observe(self, seen: Observation) -> UsageSink:
        """Compares a request with its session's previous one; returns where its usage goes."""
        ...

    async def report(self, per_key: int, key: str | None) -> CacheReport: ...

    async def run(self) -> None:
        """Background work for the app's lifetime (a worker's channel to the keeper)."""
        ...

    async def capture(self, minutes: float) -> CaptureState:
        """Captures prompts for `minutes` (0: stops and deletes them); the capture's state."""
        ...

    def close(self) -> None:
        """The proxy stops: captured prompts go with it."""
        ...


def count_turn(metrics: ProxyMetrics, key: str, outcome: Outcome, first_break: bool) -> None:
    metrics.prefix_requests_of(key, outcome).inc()
    if first_break:
        metrics.prefix_broken_sessions.labels(key).inc()


class LocalSessions:
    """The sessions of this process; `metrics` None: counted by whoever asked (shared.py)."""

    def __init__(self, tracker: SessionTracker, metrics: ProxyMetrics | None = None) -> None:
        self.tracker = tracker
        self.metrics = metrics

    def observe(self, seen: Observation) -> UsageSink:
        turn = self.tracker.observe(seen)
        if self.metrics is not None:
            count_turn(self.metrics, seen.key, turn.outcome, turn.first_break)
        return turn.usage

    def observe_turn(self, seen: Observation) -> tuple[UsageSink, Outcome, bool]:
        turn = self.tracker.observe(seen)
        return turn.usage, turn.outcome, turn.first_break

    async def run(self) -> None:
        pass

    async def report(self, per_key: int, key: str | None) -> CacheReport:
        return cache_report(self.tracker, per_key=per_key, key=key)

    async def capture(self, minutes: float) -> CaptureState:
        if self.tracker.capture is not None:
            self.tracker.capture.start(minutes)
        return capture_state(self.tracker.capture)

    def close(self) -> None:
        if self.tracker.capture is not None:
            self.tracker.capture.stop()
