"""The one route wrapper: timing, the key check, admission, error mapping and metrics.

A handler gets an `Exchange` (the body read, the key checked, the timer running) and does
only its protocol work: it returns a Response, or a `Stream` that the wrapper serves. Whatever
happens, the wrapper answers in the route's API format, counts the request once, frees its
admission slot once (for a stream: when the stream ends), and never lets an exception reach
uvicorn, which would drop a kept-alive connection without `connection: close`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from stackctl.proxy.admission import Admitted
from stackctl.proxy.context import ProxyContext, log
from stackctl.proxy.errors import ApiFormat, ProxyError, Rejected
from stackctl.proxy.http_io import (
    error_response,
    read_body,
    request_headers,
    require_json_content_type,
)
from stackctl.proxy.metrics import RequestTimer
from stackctl.proxy.streaming import ProducerResponse, Stream

CLIENT_LEFT = 499  # nginx's code for "the client closed the connection first"


@dataclass(frozen=True)
class Exchange:
    """One request as a handler sees it."""

    body: bytes
    timer: RequestTimer  # first_event() and tokens() feed the metrics and the token limit
    headers: Mapping[str, str]  # by lower-case name (http_io.request_headers)

    @property
    def key(self) -> str:
        return self.timer.key


Handler = Callable[[Exchange], Awaitable[Response | Stream]]
Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class RouteSpec:
    """One proxied route: its path, error shape, handler and what the wrapper applies."""

    path: str
    api: ApiFormat  # the error shape
    handler: Handler
    reads_body: bool = True  # a POST with a JSON body
    generates: bool = False  # reaches the model: per-key limits and back-pressure apply


def wrap(context: ProxyContext, route: RouteSpec) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        timer = context.metrics.begin(route.path)
        admission: Admitted | None = None

        def finish(status: int) -> None:
            timer.end(status)
            if admission is not None:
                admission.release(timer.reported_tokens)

        status = 500
        handed_off = False  # a stream's end finishes the request, not this function
        try:
            headers = request_headers(request.scope)
            timer.key = context.keys.key_name(headers)
            if route.generates:
                admission = await context.gate.admit(timer.key)
            body = b""
            if route.reads_body:
                require_json_content_type(headers)
                body = await read_body(request, context.settings.max_body_bytes)
                if admission is not None:
                    admission.reserve(len(body))
            outcome = await route.handler(Exchange(body, timer, headers))
            if isinstance(outcome, Stream):
                handed_off = True
                return ProducerResponse(
                    outcome, on_done=lambda left: finish(CLIENT_LEFT if left else 200),
                    in_flight=context.streams,
                )
            status = outcome.status_code
            return outcome
        except ProxyError as error:
            status = error.status_for(route.api)
            if isinstance(error, Rejected):
                context.metrics.rejections.labels(error.reason, timer.key).inc()
            return error_response(error, route.api)
        except ClientDisconnect:  # left while sending the body: nobody reads an answer
            status = CLIENT_LEFT
            return Response(status_code=400)
        except Exception:  # noqa: BLE001 (a proxy bug: logged whole for us, one line for them)
            log.exception("unexpected error on %s %s", request.method, request.url.path)
            internal = ProxyError("internal error in the filter-proxy; the proxy log has the details")
            return error_response(internal, route.api)
        finally:
            if not handed_off:
                finish(status)

    return endpoint
