"""OpenAI-compatible pass-through: forwarded unchanged except for model aliases and the
removal of empty `"tool_calls": []`. Streams are relayed read by read, never buffered
(stream.py); timing, keys, limits and errors are route.py's."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from stackctl.proxy.backend.fitted_calls import FittedCalls, Refused, asked_output
from stackctl.proxy.context import ProxyContext
from stackctl.proxy.errors import InvalidRequest
from stackctl.proxy.http_io import json_response, parse_json_object
from stackctl.proxy.openai.stream import OpenAIRelay, error_chunk
from stackctl.proxy.openai.tool_calls_cleanup import strip_empty_tool_calls
from stackctl.proxy.protocol.usage import chat_usage_in
from stackctl.proxy.route import Exchange
from stackctl.proxy.sessions.parts import chat_payload_parts, first_user_text_of_items
from stackctl.proxy.streaming import Stream

_EPOCH = "1970-01-01T00:00:00Z"
# The proxy stopping mid-reply (a restart): an error chunk, which the OpenAI SDK raises.
INTERRUPTED = error_chunk("the filter-proxy restarted mid-reply; the reply is incomplete: retry the request")


class OpenAIRoutes:
    def __init__(self, context: ProxyContext) -> None:
        self.context = context

    async def chat_completions(self, exchange: Exchange) -> Response | Stream:
        return await self._generate(exchange, "/v1/chat/completions")

    async def completions(self, exchange: Exchange) -> Response | Stream:
        return await self._generate(exchange, "/v1/completions")

    async def tokenize(self, exchange: Exchange) -> Response:
        return await self._forward_post(exchange, "/tokenize")

    async def detokenize(self, exchange: Exchange) -> Response:
        return await self._forward_post(exchange, "/detokenize")

    async def models(self, exchange: Exchange) -> Response:
        """Served models plus the aliases, in OpenAI's shape (or Anthropic's, for its SDK)."""
        context = self.context
        await context.refresh_models()
        names = list(context.router.served)
        aliases = [(alias.pattern, alias.target) for alias in context.settings.aliases]
        body: dict[str, Any]
        if "anthropic-version" in exchange.headers:
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

    async def _generate(self, exchange: Exchange, path: str) -> Response | Stream:
        context = self.context
        body, payload = await self._with_served_model(exchange.body, required_model=True)
        calls = FittedCalls(
            context.backend,
            context.fit,
            context.metrics,
            model=str(payload["model"]),
            api=path,
            body_bytes=len(exchange.body),
            asked=asked_output(payload),
        )
        exchange.timer.on_prompt_tokens = calls.learn_prompt
        if payload.get("stream") is True:
            upstream = await calls.open_stream(path, body, payload)
            if isinstance(upstream, Refused):
                return _relayed(upstream.content, upstream.status, upstream.content_type)
            self._track(exchange, path, payload)
            relay = OpenAIRelay(upstream, backend=context.backend, timer=exchange.timer)
            return Stream(relay.produce, close=upstream.release, interrupted=INTERRUPTED)
        reply = await calls.request(path, body, payload)
        if isinstance(reply, Refused):
            return _relayed(reply.content, reply.status, reply.content_type)
        self._track(exchange, path, payload)
        content = strip_empty_tool_calls(reply.content)
        exchange.timer.count(chat_usage_in(content))
        return _relayed(content, reply.status_code, reply.headers.get("content-type"))

    def _track(self, exchange: Exchange, path: str, payload: dict[str, Any]) -> None:
        """Chat conversations only: a completions prompt is no session of turns."""
        if path == "/v1/chat/completions":
            messages = payload.get("messages")
            self.context.track(
                exchange.headers, exchange.timer, route=path,
                first_user=first_user_text_of_items(messages), parts=lambda: chat_payload_parts(payload),
            )

    async def _forward_post(self, exchange: Exchange, path: str) -> Response:
        body, _ = await self._with_served_model(exchange.body, required_model=False)
        reply = await self.context.backend.request("POST", path, body)
        return _relayed(reply.content, reply.status_code, reply.headers.get("content-type"))

    async def _with_served_model(
        self, body: bytes, *, required_model: bool
    ) -> tuple[bytes, dict[str, Any]]:
        payload = parse_json_object(body)
        model = payload.get("model")
        if model is None and not required_model:
            return body, payload
        if not isinstance(model, str) or not model:
            raise InvalidRequest("model: Field required (a model name string)", param="model")
        served = await self.context.resolve_model(model)
        if served != model:
            payload["model"] = served
            try:
                body = json.dumps(payload, allow_nan=False).encode()
            except ValueError:  # 1e999 parses as infinity, which JSON cannot carry on
                raise InvalidRequest("a number in the body is too large for JSON") from None
        return body, payload


def _relayed(content: bytes, status: int, content_type: str | None) -> Response:
    """A backend reply passed on as it came: its status and content type kept."""
    return Response(content, status_code=status, media_type=content_type or "application/json")
