"""The admin API, for the stack's owner (`stackctl cache-report`): the cache report and the
capture switch.

- `GET /admin/cache-report?sessions=N&key=NAME`: the last N sessions per key (5), one key's only
  with `key`, as protocol/cache_report.py's CacheReport.
- `POST /admin/capture` `{"minutes": M}`: capture prompts for M minutes (at most a day); 0 stops
  and deletes what was captured. Answers the capture's state.

Authenticated by the backend key (VLLM_API_KEY, as `Authorization: Bearer` or `x-api-key`): the
owner's secret, in the stack's .env; whoever holds it reaches vLLM directly anyway, and no client
key opens these routes (a client would read every key's sessions, and with a capture their
prompts). Without a backend key the admin API is off. nginx forwards only /v1/ and /health, so
these routes answer on the proxy's own address, which `stackctl` reaches from the stack's host.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stackctl.proxy.auth import presented_key
from stackctl.proxy.context import ProxyContext, log
from stackctl.proxy.errors import (
    ApiFormat,
    AuthenticationFailed,
    Forbidden,
    InvalidRequest,
    ProxyError,
)
from stackctl.proxy.http_io import error_response, json_response, read_body
from stackctl.proxy.protocol.cache_report import CacheReport, CaptureRequest
from stackctl.proxy.sessions.report import DEFAULT_SESSIONS_PER_KEY

_MAX_SESSIONS_PER_KEY = 1000


def admin_routes(context: ProxyContext) -> list[Route]:
    async def report(request: Request) -> Response:
        raw = request.query_params.get("sessions", str(DEFAULT_SESSIONS_PER_KEY))
        if not raw.isdigit() or not 0 < int(raw) <= _MAX_SESSIONS_PER_KEY:
            raise InvalidRequest(f"sessions={raw!r}: a number of sessions per key, 1 to {_MAX_SESSIONS_PER_KEY}")
        key = request.query_params.get("key") or None
        if context.sessions is None:
            document = CacheReport(generated_at=time.time(), tracked_sessions=0, capacity=0)
        else:
            document = await context.sessions.report(int(raw), key)
        return json_response(document.model_dump_json().encode())

    async def capture(request: Request) -> Response:
        body = await read_body(request, 4096)
        try:
            wanted = CaptureRequest.model_validate_json(body or b"{}")
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            raise InvalidRequest(f"{where}: {first['msg']} (send {{\"minutes\": M}}, 0 to stop)") from None
        if context.sessions is None:
            raise InvalidRequest("prefix tracking is off (--sessions 0): there is nothing to capture")
        state = await context.sessions.capture(wanted.minutes)
        log.warning("prompt capture %s", f"on until {state.until:.0f} (Unix time) in {state.directory}"
                    if state.active else "off; captured prompts deleted")
        return json_response(state.model_dump_json().encode())

    return [
        Route("/admin/cache-report", _guarded(context, report), methods=["GET"]),
        Route("/admin/capture", _guarded(context, capture), methods=["POST"]),
    ]


def _guarded(context: ProxyContext, handler: Callable[[Request], Awaitable[Response]]
             ) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            _check_admin(context, request)
            return await handler(request)
        except ProxyError as error:
            return error_response(error, ApiFormat.OPENAI)

    return endpoint


def _check_admin(context: ProxyContext, request: Request) -> None:
    secret = context.settings.backend_api_key
    if not secret:
        raise Forbidden(
            "the admin API is off: it answers the backend key (VLLM_API_KEY), and this proxy has none"
        )
    presented = presented_key(request.headers)
    if presented is None:
        raise AuthenticationFailed("missing key: the admin API takes the backend key (VLLM_API_KEY) "
                                   "as Authorization: Bearer")
    if not hmac.compare_digest(presented.encode(), secret.encode()):
        raise Forbidden("this key does not open the admin API: it takes the backend key (VLLM_API_KEY), "
                             "not a client key")
