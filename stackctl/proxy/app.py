"""The ASGI app: wires settings, the backend pool and the routes together."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from stackctl.proxy.admin import admin_routes
from stackctl.proxy.admission import AdmissionGate, LocalGate
from stackctl.proxy.anthropic.routes import AnthropicRoutes
from stackctl.proxy.anthropic.web_search.ddgs_search import DdgsSearch
from stackctl.proxy.anthropic.web_search.search_backend import SearchBackend
from stackctl.proxy.anthropic.web_search.searxng_search import SearxngSearch
from stackctl.proxy.auth import ANONYMOUS, KeyChecker
from stackctl.proxy.backend.client import Backend
from stackctl.proxy.backend.queue_watch import BackendQueueWatch
from stackctl.proxy.context import ProxyContext, log
from stackctl.proxy.errors import ApiFormat, InvalidRequest, ModelNotFound, ProxyError
from stackctl.proxy.http_io import error_response
from stackctl.proxy.metrics import ProxyMetrics
from stackctl.proxy.model_router import ModelRouter
from stackctl.proxy.openai.routes import OpenAIRoutes
from stackctl.proxy.rate_limits import KeyLimiter
from stackctl.proxy.responses.routes import RESPONSES_ROUTE, ResponsesRoutes
from stackctl.proxy.route import Endpoint, RouteSpec, wrap
from stackctl.proxy.sessions.capture import Capture
from stackctl.proxy.sessions.service import LocalSessions, Sessions
from stackctl.proxy.sessions.tracker import SessionTracker
from stackctl.proxy.settings import ProxySettings
from stackctl.proxy.streaming import SERVER_SEND, ends_of

# A stopping server gives its cancelled streams this long to write their ending (streaming.py).
_STREAM_ENDING_S = 2.0


def build_search_backend(settings: ProxySettings) -> SearchBackend | None:
    """The configured web-search backend; None when web search is off."""
    if settings.search_backend == "searxng":
        assert settings.searxng_url  # build_settings refuses searxng without a URL
        return SearxngSearch(settings.searxng_url, timeout_s=settings.search_timeout_s)
    if settings.search_backend == "ddgs":
        return DdgsSearch(timeout_s=settings.search_timeout_s)
    return None


def create_app(
    settings: ProxySettings,
    *,
    search_backend: SearchBackend | None = None,
    gate: AdmissionGate | None = None,
    sessions: Sessions | None = None,
    metrics: ProxyMetrics | None = None,
    worker: int | None = None,
) -> Starlette:
    """`search_backend` replaces the one `settings` name (tests, or a custom service); `gate`
    the limits of this process and `sessions` its session tracking (a worker's shared ones,
    workers.py, which count into the worker's `metrics`); `worker` is the worker's number, told
    by /health."""
    metrics = metrics or ProxyMetrics(
        key_names=tuple(settings.api_keys) if settings.auth_enabled else (ANONYMOUS,)
    )
    backend = Backend(
        settings.backend_url,
        api_key=settings.backend_api_key,
        read_timeout_s=settings.backend_read_timeout_s,
        on_connect=metrics.backend_connections.inc,
    )
    limits = settings.limits
    if gate is None:
        queue = BackendQueueWatch(
            backend, max_waiting=limits.max_backend_waiting, poll_s=limits.backend_poll_s
        )
        gate = LocalGate(KeyLimiter(limits), queue)
    context = ProxyContext(
        settings=settings,
        backend=backend,
        router=ModelRouter(aliases=settings.aliases, default_model=settings.default_model),
        keys=KeyChecker(settings.api_keys, enabled=settings.auth_enabled),
        metrics=metrics,
        gate=gate,
        search=search_backend if search_backend is not None else build_search_backend(settings),
    )
    if sessions is not None:
        context.sessions = sessions
    elif settings.sessions:
        tracker = SessionTracker(capacity=settings.sessions, capture=Capture(settings.capture_dir))
        context.sessions = LocalSessions(tracker, context.metrics)
    anthropic = AnthropicRoutes(context)
    openai = OpenAIRoutes(context)
    responses = ResponsesRoutes(context)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"} if worker is None else {"status": "ok", "worker": worker})

    async def metrics_page(request: Request) -> Response:
        # Open like /health: Prometheus scrapes it over loopback; it holds no secrets.
        return Response(context.metrics.render(), media_type="text/plain; version=0.0.4")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await context.refresh_models()
        served = ", ".join(context.router.served) or "none yet (backend not reachable)"
        auth = (
            f"{len(settings.api_keys)} API key(s): {', '.join(settings.api_keys)}"
            if settings.auth_enabled
            else "no auth (--no-auth)"
        )
        search = context.search.name if context.search else "off"
        log.info(
            "filter-proxy -> %s; served models: %s; %s; web search: %s",
            settings.backend_url,
            served,
            auth,
            search,
        )
        watchers = [asyncio.create_task(context.gate.run())]
        if context.sessions is not None:
            watchers.append(asyncio.create_task(context.sessions.run()))
        try:
            yield
        finally:
            await ends_of(context.streams, _STREAM_ENDING_S)
            for watcher in watchers:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            await context.backend.aclose()
            if context.search is not None:
                await context.search.aclose()
            if context.sessions is not None:
                context.sessions.close()  # captured prompts never outlive the proxy

    anthropic_api, openai_api = ApiFormat.ANTHROPIC, ApiFormat.OPENAI
    # generates=True: the request reaches the model, so per-key limits and back-pressure apply.
    proxied = [
        RouteSpec("/v1/messages", anthropic_api, anthropic.messages, generates=True),
        RouteSpec("/v1/messages/count_tokens", anthropic_api, anthropic.count_tokens),
        RouteSpec("/v1/chat/completions", openai_api, openai.chat_completions, generates=True),
        RouteSpec("/v1/completions", openai_api, openai.completions, generates=True),
        RouteSpec(RESPONSES_ROUTE, openai_api, responses.responses, generates=True),
        RouteSpec("/tokenize", openai_api, openai.tokenize),
        RouteSpec("/detokenize", openai_api, openai.detokenize),
    ]
    endpoints = {route.path: wrap(context, route) for route in proxied}
    routes = [
        *(Route(path, endpoint, methods=["POST"]) for path, endpoint in endpoints.items()),
        Route(
            "/v1/models",
            wrap(context, RouteSpec("/v1/models", openai_api, openai.models, reads_body=False)),
            methods=["GET"],
        ),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics_page, methods=["GET"]),
        *admin_routes(context),
    ]
    app = ProxyApp(
        endpoints,
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            HTTPException: _http_exception,
            Exception: _unexpected,
        },
    )
    app.state.context = context
    return app


class ProxyApp(Starlette):
    """Starlette, leaving the server's own `send` in the scope for streamed bodies
    (streaming.py: each token then skips Starlette's two send wrappers).

    A POST to a proxied route goes straight to its endpoint: route.py's wrapper answers every
    error itself, so Starlette's router and its two error middlewares (a dozen frames each way,
    about 5% of a streamed request's instructions) have nothing to add there. Anything else
    (another method or path, a trailing slash, a root path) goes through Starlette as before."""

    def __init__(self, direct: Mapping[str, Endpoint], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._direct = dict(direct)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[SERVER_SEND] = send
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            endpoint = self._direct.get(scope["path"])
            if endpoint is not None:
                scope["app"] = self
                response = await endpoint(Request(scope, receive, send))
                await response(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def _api_for(request: Request) -> ApiFormat:
    if request.url.path.startswith("/v1/messages"):
        return ApiFormat.ANTHROPIC
    return ApiFormat.OPENAI


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    api = _api_for(request)
    error: ProxyError
    if exc.status_code == 404:
        error = ModelNotFound(f"no such endpoint: {request.method} {request.url.path}")
        error.anthropic_type = "not_found_error"
    elif exc.status_code == 405:
        error = InvalidRequest(f"{request.method} is not allowed on {request.url.path}")
        error.status = 405
    else:
        error = InvalidRequest(str(exc.detail))
        error.status = exc.status_code
    return error_response(error, api)


async def _unexpected(request: Request, exc: Exception) -> Response:
    # A bug outside the routes (they catch their own, route.py): logged with its traceback
    # for us, one clean line for the client.
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    error = ProxyError("internal error in the filter-proxy; the proxy log has the details")
    return error_response(error, _api_for(request))
