"""Back-pressure: watch vLLM's waiting queue and turn new requests away while it is too long.

A background task reads `vllm:num_requests_waiting` from the backend's /metrics every
`backend_poll_s` (only the lines of that metric are parsed, so a poll costs little); `check()`
is a comparison on the request path. While the queue is past the bound on two readings in a
row (one is not enough: a burst of streams waits a few prefill steps, ~0.1 s, to be admitted; on
an H100 a 256-stream burst read once past the bound of 64 turned 2 of 512 requests away), new
generation requests get Anthropic's 529 `overloaded_error` (503 on OpenAI routes), which the
official SDKs and Claude Code retry with back-off; requests already running keep their streams. No reading (backend down, not
vLLM) means no refusal: a backend that cannot be reached answers for itself.
"""

from __future__ import annotations

import asyncio
import logging

from prometheus_client.parser import text_string_to_metric_families

from stackctl.proxy.backend.client import Backend
from stackctl.proxy.errors import Overloaded, ProxyError

WAITING_METRIC = "vllm:num_requests_waiting"
log = logging.getLogger("stackctl.proxy")


class BackendQueueWatch:
    def __init__(self, backend: Backend, *, max_waiting: int, poll_s: float) -> None:
        self.backend = backend
        self.max_waiting = max_waiting
        self.poll_s = poll_s
        self.waiting: float | None = None  # the last reading; None: unknown
        self._previous: float | None = None  # the reading before it
        self._over = False  # refusing: the last two readings were past the bound
        self._warned = False

    @property
    def enabled(self) -> bool:
        return self.max_waiting > 0

    def check(self) -> None:
        """Raises Overloaded while the last two readings are past the bound."""
        if self._over:
            raise Overloaded(
                f"the model backend is overloaded: {self.waiting:g} requests are waiting "
                f"(the bound is {self.max_waiting}); retry with back-off",
                reason="backend_queue",
            )

    def past_bound(self, reading: float | None) -> bool:
        return reading is not None and reading > self.max_waiting

    def record(self, reading: float | None) -> None:
        self._previous, self.waiting = self.waiting, reading
        over = self.enabled and self.past_bound(self.waiting) and self.past_bound(self._previous)
        if over and not self._over:  # the log says when and at what length refusals began and ended
            log.warning("refusing new requests: the backend's queue read %g then %g waiting (bound %d)",
                        self._previous, self.waiting, self.max_waiting)
        elif self._over and not over:
            log.info("accepting requests again: the backend's queue reads %s waiting", self.waiting)
        self._over = over

    async def poll_once(self) -> None:
        try:
            text = await self.backend.metrics_text(timeout_s=max(1.0, 2 * self.poll_s))
        except ProxyError as error:
            self.record(None)
            if not self._warned:
                log.warning("cannot read the backend's queue length: %s", error.message)
                self._warned = True
            return
        self.record(waiting_requests(text))
        if self.waiting is None and not self._warned:
            log.warning("the backend's /metrics has no %s: back-pressure is off", WAITING_METRIC)
            self._warned = True
        elif self.waiting is not None:
            self._warned = False

    async def run(self) -> None:
        """Poll until cancelled (the app's lifespan owns this task)."""
        while True:
            await self.poll_once()
            await asyncio.sleep(self.poll_s)


def waiting_requests(metrics_text: str) -> float | None:
    """The sum of `vllm:num_requests_waiting` over its series (one per model/engine)."""
    lines = [
        line
        for line in metrics_text.splitlines()
        if line.startswith(WAITING_METRIC)
        and line[len(WAITING_METRIC) : len(WAITING_METRIC) + 1] in ("{", " ")
    ]
    if not lines:
        return None
    try:
        samples = [
            sample.value
            for family in text_string_to_metric_families("\n".join(lines) + "\n")
            for sample in family.samples
        ]
    except ValueError:
        return None
    return sum(samples) if samples else None
