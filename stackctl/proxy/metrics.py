"""Prometheus metrics (names are a contract with the Grafana dashboard: change both or neither).

Each app owns its registry, so several proxies in one process (tests) do not collide. With
several workers (workers.py), prometheus_client's multiprocess mode keeps each worker's values in
files of a directory the parent names (PROMETHEUS_MULTIPROC_DIR), and any worker's /metrics sums
them: one truth, whichever worker Prometheus reaches.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from stackctl.proxy.protocol.usage import ReportedUsage

# Set (by workers.py, before the workers start) to a directory: the workers' metrics are summed.
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
_TTFT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
# Every outcome of one web search; all are created at 0 so dashboards have series at once.
SEARCH_OUTCOMES = ("ok", "empty", "error", "rate_limited", "timeout", "max_uses", "invalid_input")
# Why a request was turned away (rate_limits.py, backend/queue_watch.py); exported from 0 per key.
REJECTION_REASONS = ("concurrent", "requests_per_minute", "tokens_per_minute", "backend_queue")
# What fitting max_tokens to the window did (backend/window_fit.py, backend/fitted_calls.py).
WINDOW_FIT_OUTCOMES = ("capped", "retried", "prompt_too_long")
# How a tracked session's request relates to the one before (sessions/tracker.py).
PREFIX_OUTCOMES = ("first", "kept", "broken")
_DURATION_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)

Metric = TypeVar("Metric", Counter, Gauge, Histogram)


class Children(Generic[Metric]):
    """A labelled metric's children, each looked up once: prometheus_client's `labels()`
    validates the values and takes a lock on every call, several times a request. The label
    values are bounded (routes, statuses, key names), as the metric's own children are."""

    def __init__(self, metric: Metric) -> None:
        self._metric: Metric = metric
        self._made: dict[tuple[str, ...], Metric] = {}

    def __call__(self, *values: str) -> Metric:
        child = self._made.get(values)
        if child is None:
            child = self._made[values] = self._metric.labels(*values)
        return child


class ProxyMetrics:
    def __init__(self, key_names: tuple[str, ...] = ()) -> None:
        """`key_names`: the keys whose rejection series exist from the start (at 0)."""
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "stackctl_proxy_requests",
            "Requests answered, by route, HTTP status and API key name.",
            ["route", "status", "key"],
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "stackctl_proxy_in_flight",
            "Requests being served now, by route.",
            ["route"],
            registry=self.registry,
            multiprocess_mode="livesum",  # workers: the sum over the live ones
        )
        self.ttft = Histogram(
            "stackctl_proxy_ttft_seconds",
            "Time from request received to the first streamed event sent, by route.",
            ["route"],
            buckets=_TTFT_BUCKETS,
            registry=self.registry,
        )
        self.duration = Histogram(
            "stackctl_proxy_request_duration_seconds",
            "Time from request received to the last byte sent, by route.",
            ["route"],
            buckets=_DURATION_BUCKETS,
            registry=self.registry,
        )
        self.tokens = Counter(
            "stackctl_proxy_tokens",
            "Tokens reported by the backend, by direction (in = prompt, out = completion) and key.",
            ["direction", "key"],
            registry=self.registry,
        )
        self.cached_tokens = Counter(
            "stackctl_proxy_cached_tokens",
            "Prompt tokens the backend served from its prefix cache (vLLM's "
            "prompt_tokens_details.cached_tokens), by key; of stackctl_proxy_tokens_total{direction=\"in\"}.",
            ["key"],
            registry=self.registry,
        )
        self.prefix_requests = Counter(
            "stackctl_proxy_prefix_requests",
            "Requests of tracked sessions by key and outcome: first (of its session), kept (extends "
            "the previous request whole: vLLM can reuse all of it), broken (differs inside it).",
            ["key", "outcome"],
            registry=self.registry,
        )
        self.prefix_broken_sessions = Counter(
            "stackctl_proxy_prefix_broken_sessions",
            "Sessions whose prefix broke (counted at their first break), by key; "
            "stackctl cache-report says where.",
            ["key"],
            registry=self.registry,
        )
        self.web_searches = Counter(
            "stackctl_proxy_web_searches",
            "Web searches the proxy ran (or refused) for Anthropic clients, by outcome.",
            ["outcome"],
            registry=self.registry,
        )
        for outcome in SEARCH_OUTCOMES:
            self.web_searches.labels(outcome)
        self.rejections = Counter(
            "stackctl_proxy_rejections",
            "Requests turned away before reaching the backend, by reason (concurrent, "
            "requests_per_minute, tokens_per_minute: the key's limits; backend_queue: "
            "back-pressure) and API key name.",
            ["reason", "key"],
            registry=self.registry,
        )
        for key in key_names:
            self.cached_tokens.labels(key)
            self.prefix_broken_sessions.labels(key)
            for outcome in PREFIX_OUTCOMES:
                self.prefix_requests.labels(key, outcome)
            for reason in REJECTION_REASONS:
                self.rejections.labels(reason, key)
        self.backend_connections = Counter(
            "stackctl_proxy_backend_connections",
            "Connections opened to the model backend for streamed replies. A whole reply's "
            "connection is kept for the next request, so this grows with concurrency, not with "
            "requests; growing with requests means replies end early (or the backend closes them).",
            registry=self.registry,
        )
        self.context_fits = Counter(
            "stackctl_proxy_context_fits",
            "Requests whose max_tokens did not fit the model's window, by outcome (capped: "
            "sent capped; retried: refused, sent again with what fits; prompt_too_long: the "
            "prompt alone is over the window).",
            ["outcome"],
            registry=self.registry,
        )
        for outcome in WINDOW_FIT_OUTCOMES:
            self.context_fits.labels(outcome)
        # What each request counts into, looked up once per label values.
        self.in_flight_of = Children(self.in_flight)
        self.ttft_of = Children(self.ttft)
        self.duration_of = Children(self.duration)
        self.requests_of = Children(self.requests)
        self.tokens_of = Children(self.tokens)
        self.cached_tokens_of = Children(self.cached_tokens)
        self.prefix_requests_of = Children(self.prefix_requests)

    def render(self) -> bytes:
        if os.environ.get(MULTIPROCESS_DIR):
            summed = CollectorRegistry()
            MultiProcessCollector(summed)  # type: ignore[no-untyped-call]
            return generate_latest(summed)
        return generate_latest(self.registry)

    def begin(self, route: str) -> RequestTimer:
        self.in_flight_of(route).inc()
        return RequestTimer(metrics=self, route=route)


@dataclass
class RequestTimer:
    """One request's measurements; `end` is called exactly once, streaming or not."""

    metrics: ProxyMetrics
    route: str
    key: str = "unauthenticated"
    reported_tokens: int = 0  # prompt + completion, as the backend reported them
    # Told the prompt's length when the backend reports it (the estimate of the next one learns).
    on_prompt_tokens: Callable[[int], None] | None = None
    # Told (prompt, cached) tokens when the backend reports them (the session's turn).
    on_usage: Callable[[int, int], None] | None = None
    prompt_reported: int = 0
    cached_reported: int = 0
    started: float = field(default_factory=time.perf_counter)
    _first_event: bool = False
    _ended: bool = False
    _deferred: Callable[[], None] | None = None

    def first_event(self) -> None:
        if not self._first_event:
            self._first_event = True
            self.metrics.ttft_of(self.route).observe(time.perf_counter() - self.started)
            if self._deferred is not None:
                asyncio.get_running_loop().call_soon(self._run_deferred)

    def defer(self, work: Callable[[], None]) -> None:
        """Runs `work` once the first event is written (a stream), else at the end: work that
        must not delay the first token (the session tracking)."""
        self._deferred = work
        if self._first_event:
            asyncio.get_running_loop().call_soon(self._run_deferred)

    def _run_deferred(self) -> None:
        work, self._deferred = self._deferred, None
        if work is not None:
            work()

    def tokens(self, prompt: int, completion: int, *, cached: int = 0) -> None:
        """The backend's usage report: `prompt` is the whole prompt, `cached` the part of it
        served from the prefix cache."""
        self.reported_tokens += prompt + completion
        self.prompt_reported += prompt
        self.cached_reported += cached
        if prompt:
            self.metrics.tokens_of("in", self.key).inc(prompt)
            if self.on_prompt_tokens is not None:
                self.on_prompt_tokens(prompt)
        if cached:
            self.metrics.cached_tokens_of(self.key).inc(cached)
        if self.on_usage is not None:
            self.on_usage(prompt, cached)
        if completion:
            self.metrics.tokens_of("out", self.key).inc(completion)

    def count(self, usage: ReportedUsage | None) -> None:
        """A usage report as the protocol reads it (none: nothing to count)."""
        if usage is not None:
            self.tokens(usage.prompt, usage.completion, cached=usage.cached)

    def end(self, status: int) -> None:
        if self._ended:
            return
        self._run_deferred()
        self._ended = True
        self.metrics.in_flight_of(self.route).dec()
        self.metrics.duration_of(self.route).observe(time.perf_counter() - self.started)
        self.metrics.requests_of(self.route, str(status), self.key).inc()
