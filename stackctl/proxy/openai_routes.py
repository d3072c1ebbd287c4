"""OpenAI-compatible pass-through: forwarded unchanged except for model aliases and the
removal of empty `"tool_calls": []`. Streams are relayed read by read, never buffered."""

from __future__ import annotations

import json
from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import Response

from stackctl.proxy.backend import StreamError
from stackctl.proxy.context import ProxyContext, log
from stackctl.proxy.errors import ApiFormat, InvalidRequest, ProxyError
from stackctl.proxy.http_io import error_response, json_response, parse_json_object, read_body
from stackctl.proxy.metrics import RequestTimer
from stackctl.proxy.sse import EventSplitter, event_data
from stackctl.proxy.streaming import ProducerResponse
from stackctl.proxy.tool_calls_cleanup import strip_empty_tool_calls

OPENAI = ApiFormat.OPENAI
_USAGE_MARK = b'"usage":{'


class OpenAIRoutes:
    def __init__(self, context: ProxyContext) -> None:
        self.context = context

    async def chat_completions(self, request: Request) -> Response:
        return await self._generate(request, "/v1/chat/completions")

    async def completions(self, request: Request) -> Response:
        return await self._generate(request, "/v1/completions")

    async def tokenize(self, request: Request) -> Response:
        return await self._forward_post(request, "/tokenize")

    async def detokenize(self, request: Request) -> Response:
        return await self._forward_post(request, "/detokenize")

    async def models(self, request: Request) -> Response:
        """Served models plus the aliases, in OpenAI's shape (or Anthropic's, for its SDK)."""
        context = self.context
        timer = context.metrics.begin("/v1/models")
        status = 500
        try:
            timer.key = context.keys.key_name(request.headers)
            api = ApiFormat.ANTHROPIC if "anthropic-version" in request.headers else OPENAI
            await context.refresh_models()
            names = list(context.router.served)
            aliases = [(alias.pattern, alias.target) for alias in context.settings.aliases]
            status = 200
            if api is ApiFormat.ANTHROPIC:
                data = [
                    {"type": "model", "id": name, "display_name": name, "created_at": _EPOCH}
                    for name in names + [pattern for pattern, _ in aliases]
                ]
                body = {
                    "data": data,
                    "has_more": False,
                    "first_id": data[0]["id"] if data else None,
                    "last_id": data[-1]["id"] if data else None,
                }
            else:
                body = {
                    "object": "list",
                    "data": [
                        {"id": name, "object": "model", "created": 0, "owned_by": "stackctl"}
                        for name in names
                    ]
                    + [
                        {
                            "id": pattern,
                            "object": "model",
                            "created": 0,
                            "owned_by": "stackctl",
                            "alias_of": target,
                        }
                        for pattern, target in aliases
                    ],
                }
            return json_response(json.dumps(body).encode())
        except ProxyError as error:
            status = error.status_for(OPENAI)
            return error_response(error, OPENAI)
        finally:
            timer.end(status)

    async def _generate(self, request: Request, path: str) -> Response:
        context = self.context
        timer = context.metrics.begin(path)
        status = 500
        handed_off = False
        try:
            timer.key = context.keys.key_name(request.headers)
            body, payload = await self._body_with_served_model(request, required_model=True)
            if payload.get("stream") is True:
                response = await self._relay_stream(path, body, timer)
                handed_off = True
                return response
            reply = await context.backend.request("POST", path, body)
            content = strip_empty_tool_calls(reply.content)
            status = reply.status_code
            if status == 200:
                _count_tokens(timer, content)
            return _relayed(content, status, reply.headers)
        except ProxyError as error:
            status = error.status_for(OPENAI)
            return error_response(error, OPENAI)
        finally:
            if not handed_off:
                timer.end(status)

    async def _forward_post(self, request: Request, path: str) -> Response:
        context = self.context
        timer = context.metrics.begin(path)
        status = 500
        try:
            timer.key = context.keys.key_name(request.headers)
            body, _ = await self._body_with_served_model(request, required_model=False)
            reply = await context.backend.request("POST", path, body)
            status = reply.status_code
            return _relayed(reply.content, status, reply.headers)
        except ProxyError as error:
            status = error.status_for(OPENAI)
            return error_response(error, OPENAI)
        finally:
            timer.end(status)

    async def _body_with_served_model(
        self, request: Request, *, required_model: bool
    ) -> tuple[bytes, dict[str, object]]:
        body = await read_body(request, self.context.settings.max_body_bytes)
        payload = parse_json_object(body)
        model = payload.get("model")
        if model is None and not required_model:
            return body, payload
        if not isinstance(model, str) or not model:
            raise InvalidRequest("model: Field required (a model name string)", param="model")
        served = await self.context.resolve_model(model)
        if served != model:
            payload["model"] = served
            body = json.dumps(payload).encode()
        return body, payload

    async def _relay_stream(self, path: str, body: bytes, timer: RequestTimer) -> Response:
        backend = self.context.backend
        upstream = await backend.open_stream(path, body)
        if upstream.status_code != 200:
            try:
                content = await upstream.aread()
            finally:
                await upstream.aclose()
            timer.end(upstream.status_code)  # the caller handed the timer over to us
            return _relayed(content, upstream.status_code, upstream.headers)

        async def produce(emit) -> None:  # type: ignore[no-untyped-def]
            splitter = EventSplitter()
            usage_event = b""
            try:
                async for data in upstream.aiter_raw():
                    events = splitter.feed(data)
                    if not events:
                        continue
                    out = b"".join(strip_empty_tool_calls(event) for event in events)
                    if _USAGE_MARK in out:
                        # Usage is cumulative (and on every chunk with continuous_usage_stats):
                        # only the last report counts.
                        usage_event = next(e for e in reversed(events) if _USAGE_MARK in e)
                    timer.first_event()
                    await emit(out)
            except StreamError as error:
                rest = splitter.rest()
                if rest:
                    await emit(rest)
                # The same shape vLLM uses for in-stream errors; the OpenAI SDK raises on it.
                message = (
                    f"the model backend at {backend.base_url} stopped mid-reply "
                    f"({type(error).__name__}); the reply is incomplete: retry the request"
                )
                failure = {"error": {"message": message, "type": "server_error", "code": 502}}
                await emit(b"data: " + json.dumps(failure).encode() + b"\n\n")
                return
            rest = splitter.rest()
            if rest:
                await emit(strip_empty_tool_calls(rest))
            if usage_event:
                _count_tokens(timer, event_data(usage_event) or b"")

        def on_done(disconnected: bool) -> None:
            if disconnected:
                log.info("client left mid-stream; backend request cancelled")
            timer.end(499 if disconnected else 200)

        return ProducerResponse(produce, close=upstream.aclose, on_done=on_done)  # type: ignore[return-value]


def _relayed(content: bytes, status: int, headers: Mapping[str, str]) -> Response:
    """A backend reply passed on as it came: its status and content type kept."""
    return Response(
        content,
        status_code=status,
        media_type=headers.get("content-type", "application/json"),
    )


_EPOCH = "1970-01-01T00:00:00Z"


def _count_tokens(timer: RequestTimer, document: bytes) -> None:
    try:
        usage = json.loads(document).get("usage") or {}
        timer.tokens(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (ValueError, AttributeError, TypeError):
        pass  # metrics must never break a reply
