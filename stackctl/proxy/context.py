"""What every route shares: settings, the backend pool, the model router, keys, limits and
metrics."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from stackctl.proxy.auth import KeyChecker
from stackctl.proxy.backend import Backend
from stackctl.proxy.backend_queue import BackendQueueWatch
from stackctl.proxy.errors import ProxyError
from stackctl.proxy.metrics import ProxyMetrics
from stackctl.proxy.model_router import ModelRouter
from stackctl.proxy.rate_limits import KeyLimiter
from stackctl.proxy.search.base import SearchBackend
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
    limiter: KeyLimiter
    queue: BackendQueueWatch
    search: SearchBackend | None = None  # None: web search is off
    _refreshed_at: float = field(default=-1e9)

    async def refresh_models(self) -> None:
        self._refreshed_at = time.monotonic()
        try:
            self.router.served = await self.backend.served_models()
        except ProxyError as error:
            log.warning("could not list the backend's models: %s", error.message)

    async def resolve_model(self, requested: str) -> str:
        # Names an alias or the default route need no backend round trip on the request path;
        # only a name nothing routes may be a model the backend started serving since.
        stale = time.monotonic() - self._refreshed_at > _REFRESH_EVERY_S
        if stale and self.router.match(requested) is None:
            await self.refresh_models()
        return self.router.resolve(requested)
