"""Per-key admission: requests at once, requests per minute, tokens per minute.

Sliding 60-second windows in this process's memory (one proxy serves a box). Keys are the
configured names, so the state is bounded by the number of keys, and each window by 60 s.

The token rule (what a proxy can know before and after a request):
- a request is admitted while the tokens charged to its key in the last 60 s are under the
  key's tokens_per_minute;
- once admitted, it is charged an estimate of its prompt: request body bytes / 4;
- when it ends, the backend's reported usage (prompt + completion tokens) replaces the
  estimate, charged at the end time; if the backend reported none (the client left, the
  backend failed), the estimate stays.
So a key may overshoot by what its requests in flight generate; max_concurrent bounds that.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from stackctl.proxy.errors import RateLimited
from stackctl.proxy.limit_settings import KeyLimits, LimitSettings

WINDOW_S = 60.0
BYTES_PER_TOKEN = 4  # a prompt-size estimate good enough for a budget, not for billing
# A slot frees when some request of the key ends, which nobody can predict: retry soon.
_CONCURRENCY_RETRY_S = 1.0


@dataclass
class _Charge:
    at: float
    tokens: int
    in_window: bool = True


@dataclass
class _KeyWindow:
    limits: KeyLimits
    running: int = 0
    admitted: deque[float] = field(default_factory=deque)
    charges: deque[_Charge] = field(default_factory=deque)
    charged: int = 0  # the sum of `charges` still in the window

    def forget_before(self, horizon: float) -> None:
        while self.admitted and self.admitted[0] <= horizon:
            self.admitted.popleft()
        while self.charges and self.charges[0].at <= horizon:
            old = self.charges.popleft()
            old.in_window = False
            self.charged -= old.tokens

    def charge(self, at: float, tokens: int) -> _Charge:
        entry = _Charge(at, tokens)
        self.charges.append(entry)
        self.charged += tokens
        return entry

    def uncharge(self, entry: _Charge) -> None:
        if entry.in_window:
            self.charged -= entry.tokens
        entry.tokens = 0

    def tokens_retry_s(self, now: float) -> float:
        """Seconds until enough charges leave the window to go under the limit."""
        excess = self.charged - self.limits.tokens_per_minute
        for entry in self.charges:
            excess -= entry.tokens
            if excess < 0:
                return entry.at + WINDOW_S - now
        return WINDOW_S


class KeyLimiter:
    def __init__(
        self, settings: LimitSettings, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._windows: dict[str, _KeyWindow] = {}

    def admit(self, key: str) -> Admission:
        """A slot for one request of `key`; raises RateLimited (with retry-after) if over."""
        limits = self._settings.for_key(key)
        if limits.unlimited:
            return Admission(None, self._clock)
        window = self._windows.get(key)
        if window is None:
            window = self._windows[key] = _KeyWindow(limits)
        now = self._clock()
        window.forget_before(now - WINDOW_S)
        if limits.max_concurrent and window.running >= limits.max_concurrent:
            raise RateLimited(
                f"API key {key!r} already has {window.running} requests running, its limit "
                f"(max_concurrent {limits.max_concurrent}); retry when one finishes",
                reason="concurrent",
                retry_after_s=_CONCURRENCY_RETRY_S,
            )
        if limits.requests_per_minute and len(window.admitted) >= limits.requests_per_minute:
            raise RateLimited(
                f"API key {key!r} is over its {limits.requests_per_minute} requests per minute; "
                "retry after the retry-after header's seconds",
                reason="requests_per_minute",
                retry_after_s=window.admitted[0] + WINDOW_S - now,
            )
        if limits.tokens_per_minute and window.charged >= limits.tokens_per_minute:
            raise RateLimited(
                f"API key {key!r} used its {limits.tokens_per_minute} tokens per minute; "
                "retry after the retry-after header's seconds",
                reason="tokens_per_minute",
                retry_after_s=window.tokens_retry_s(now),
            )
        window.running += 1
        if limits.requests_per_minute:
            window.admitted.append(now)
        return Admission(window, self._clock)


class Admission:
    """One admitted request: `reserve` its prompt estimate, `release` exactly once at the end."""

    def __init__(self, window: _KeyWindow | None, clock: Callable[[], float]) -> None:
        self._window = window
        self._clock = clock
        self._estimate: _Charge | None = None
        self._released = False

    def reserve(self, body_bytes: int) -> None:
        window = self._window
        if window is not None and window.limits.tokens_per_minute:
            self._estimate = window.charge(self._clock(), body_bytes // BYTES_PER_TOKEN)

    def release(self, reported_tokens: int) -> None:
        window = self._window
        if window is None or self._released:
            return
        self._released = True
        window.running -= 1
        if reported_tokens and window.limits.tokens_per_minute:
            if self._estimate is not None:
                window.uncharge(self._estimate)
            window.charge(self._clock(), reported_tokens)
