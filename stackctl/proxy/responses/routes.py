"""`/v1/responses`: the OpenAI Responses API (Codex CLI speaks only this), passed to the
backend's own Responses endpoint (vLLM serves one).

What vLLM cannot take is fixed on the way in (namespaced tools flattened, encrypted reasoning
dropped) and on the way out (namespaced names restored); `max_output_tokens` is fitted to the
window like `max_tokens` elsewhere. Everything else reaches vLLM as the client sent it, and each
fix is deterministic, so a conversation's requests extend each other (vLLM's prefix cache).
Timing, keys, limits and errors are route.py's.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json
from starlette.responses import Response

from stackctl.proxy.backend.fitted_calls import FittedCalls, Refused, asked_output
from stackctl.proxy.context import ProxyContext
from stackctl.proxy.errors import BackendError, InvalidRequest
from stackctl.proxy.http_io import json_response, parse_model
from stackctl.proxy.protocol.responses import ResponsesRequest
from stackctl.proxy.protocol.usage import responses_usage
from stackctl.proxy.responses.reasoning_replay import drop_encrypted_reasoning
from stackctl.proxy.responses.stream import ResponsesRelay
from stackctl.proxy.responses.tool_names import flatten_namespaces
from stackctl.proxy.route import Exchange
from stackctl.proxy.sessions.parts import first_user_text_of_items, responses_payload_parts
from stackctl.proxy.streaming import Stream

RESPONSES_ROUTE = "/v1/responses"


class ResponsesRoutes:
    def __init__(self, context: ProxyContext) -> None:
        self.context = context

    async def responses(self, exchange: Exchange) -> Response | Stream:
        context = self.context
        request = parse_model(ResponsesRequest, exchange.body)
        served = await context.resolve_model(request.model)
        renamed = served != request.model
        request.model = served
        flattened, names = flatten_namespaces(request)
        decrypted = drop_encrypted_reasoning(request)
        payload = request.model_dump(mode="json", exclude_unset=True)
        body = exchange.body
        if renamed or flattened or decrypted:
            try:
                body = json.dumps(payload, allow_nan=False).encode()
            except ValueError:  # 1e999 parses as infinity, which JSON cannot carry on
                raise InvalidRequest("a number in the body is too large for JSON") from None
        calls = FittedCalls(
            context.backend,
            context.fit,
            context.metrics,
            model=served,
            api=RESPONSES_ROUTE,
            body_bytes=len(exchange.body),
            asked=asked_output(payload),
        )
        exchange.timer.on_prompt_tokens = calls.learn_prompt
        if request.stream:
            upstream = await calls.open_stream(RESPONSES_ROUTE, body, payload)
            if isinstance(upstream, Refused):
                return _refused(upstream)
            self._track(exchange, payload)
            relay = ResponsesRelay(
                upstream,
                names=names,
                model=served,
                backend_url=context.backend.base_url,
                timer=exchange.timer,
            )
            return Stream(relay.produce, close=upstream.release)
        reply = await calls.request(RESPONSES_ROUTE, body, payload)
        if isinstance(reply, Refused):
            return _refused(reply)
        self._track(exchange, payload)
        try:
            response = from_json(reply.content)
        except ValueError:
            raise BackendError(
                "backend reply is not a Responses API response", backend_status=502
            ) from None
        if not isinstance(response, dict):
            raise BackendError("backend reply is not a Responses API response", backend_status=502)
        exchange.timer.count(responses_usage(response.get("usage")))
        if names and names.restore_document(response):
            return json_response(json.dumps(response).encode())
        return Response(reply.content, status_code=reply.status_code, media_type="application/json")

    def _track(self, exchange: Exchange, payload: dict[str, Any]) -> None:
        self.context.track(
            exchange.headers, exchange.timer, route=RESPONSES_ROUTE,
            first_user=first_user_text_of_items(payload.get("input")),
            parts=lambda: responses_payload_parts(payload),
        )


def _refused(reply: Refused) -> Response:
    """A backend error passed on as it came (vLLM's body is already in OpenAI's shape)."""
    return Response(reply.content, status_code=reply.status, media_type=reply.content_type)
