"""What every route shares: settings, the backend pool, the model router, keys, limits,
metrics and the session tracker."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stackctl.proxy.admission import AdmissionGate
from stackctl.proxy.anthropic.web_search.search_backend import SearchBackend
from stackctl.proxy.auth import KeyChecker
from stackctl.proxy.backend.client import Backend
from stackctl.proxy.backend.window_fit import WindowFit
from stackctl.proxy.errors import ProxyError
from stackctl.proxy.metrics import ProxyMetrics, RequestTimer
from stackctl.proxy.model_router import ModelRouter
from stackctl.proxy.sessions.fingerprint import Part
from stackctl.proxy.sessions.service import Sessions
from stackctl.proxy.sessions.tracker import Observation, client_session
from stackctl.proxy.settings import ProxySettings

log = logging.getLogger("stackctl.proxy")

# How often an unknown model name may trigger a fresh look at the backend's model list.
_REFRESH_EVERY_S = 15.0


@dataclass
class ProxyContext:
    settings: ProxySettings
    backend: Backend
    router: ModelRouter
    keys: KeyChecker
    metrics: ProxyMetrics
    gate: AdmissionGate  # per-key limits and back-pressure (admission.py)
    search: SearchBackend | None = None  # None: web search is off
    sessions: Sessions | None = None  # None: prefix tracking is off
    fit: WindowFit = field(default_factory=WindowFit)
    streams: set[asyncio.Task[Any]] = field(default_factory=set)  # being served (streaming.py)
    _refreshed_at: float = field(default=-1e9)
    _tracking_failed: bool = field(default=False)

    def track(
        self,
        headers: Mapping[str, str],
        timer: RequestTimer,
        *,
        route: str,
        first_user: str,
        parts: Callable[[], Sequence[Part]],
    ) -> None:
        """One request the backend accepted, to compare with its session's previous one. The
        work waits until the reply's first event is written (never delaying the first token),
        and never fails the request."""
        sessions = self.sessions
        if sessions is None:
            return
        session = client_session(headers)

        def observe() -> None:
            try:
                usage = sessions.observe(Observation(timer.key, session, first_user, route, parts()))
            except Exception:  # a tracking bug: logged once, the request goes on
                if not self._tracking_failed:
                    self._tracking_failed = True
                    log.exception("prefix tracking failed (requests go on; reported once)")
                return
            if timer.prompt_reported:  # the backend reported before the tracking ran
                usage(timer.prompt_reported, timer.cached_reported)
            timer.on_usage = usage

        timer.defer(observe)

    async def refresh_models(self) -> None:
        self._refreshed_at = time.monotonic()
        try:
            models = await self.backend.model_list()
        except ProxyError as error:
            log.warning("could not list the backend's models: %s", error.message)
            return
        self.router.served = tuple(model.name for model in models)
        self.fit.windows.update(
            {model.name: model.max_model_len for model in models if model.max_model_len}
        )

    async def resolve_model(self, requested: str) -> str:
        # Names an alias or the default route need no backend round trip on the request path;
        # only a name nothing routes may be a model the backend started serving since.
        stale = time.monotonic() - self._refreshed_at > _REFRESH_EVERY_S
        target = self.router.match(requested)
        # A served model whose window is unknown (the backend was down at start) is asked too.
        if stale and (target is None or target not in self.fit.windows):
            await self.refresh_models()
        return self.router.resolve(requested)
