"""`/v1/messages` and `/v1/messages/count_tokens`: Anthropic in, OpenAI to the backend.

The translation itself lives in to_openai / from_openai / stream_translator, streaming in
anthropic_stream, and timing, keys, limits and errors in route.py; this module only does the
protocol work. A request carrying the web-search server tool goes through web_search_loop
instead of a single backend call.
"""

from __future__ import annotations

from pydantic import ValidationError
from starlette.responses import Response

from stackctl.proxy.anthropic_protocol import (
    CountTokensReply,
    CountTokensRequest,
    MessagesRequest,
)
from stackctl.proxy.anthropic_stream import AnthropicStream
from stackctl.proxy.backend import backend_error
from stackctl.proxy.context import ProxyContext
from stackctl.proxy.errors import BackendError
from stackctl.proxy.from_openai import translate_completion
from stackctl.proxy.http_io import json_response, parse_model
from stackctl.proxy.openai_protocol import TokenizeReply
from stackctl.proxy.route import Exchange
from stackctl.proxy.stream_translator import AnthropicStreamTranslator
from stackctl.proxy.streaming import Stream
from stackctl.proxy.to_openai import translate_count_tokens_request, translate_messages_request
from stackctl.proxy.web_search import find_web_search_tool, search_function
from stackctl.proxy.web_search_loop import WebSearchRunner, web_search_loop

MESSAGES_ROUTE = "/v1/messages"
COUNT_ROUTE = "/v1/messages/count_tokens"


class AnthropicRoutes:
    def __init__(self, context: ProxyContext) -> None:
        self.context = context
        self.search_runner = (
            WebSearchRunner(
                context.search,
                timeout_s=context.settings.search_timeout_s,
                metrics=context.metrics,
            )
            if context.search is not None
            else None
        )

    async def messages(self, exchange: Exchange) -> Response | Stream:
        context = self.context
        parsed = parse_model(MessagesRequest, exchange.body)
        served = await context.resolve_model(parsed.model)
        loop = web_search_loop(parsed, served, self.search_runner)
        chat = loop.chat_request() if loop else translate_messages_request(parsed, served)
        if parsed.stream:
            upstream = await context.backend.open_chat_stream(chat.to_json())
            translator = (
                loop.translator(served)
                if loop
                else AnthropicStreamTranslator(model=served, stop_sequences=parsed.stop_sequences)
            )
            stream = AnthropicStream(
                upstream,
                translator,
                backend=context.backend,
                timer=exchange.timer,
                ping_interval_s=context.settings.ping_interval_s,
                loop=loop,
            )
            return Stream(stream.produce, close=upstream.aclose)
        if loop is not None:
            message = await loop.complete(context.backend)
        else:
            completion = await context.backend.chat_completion(chat.to_json())
            message = translate_completion(completion, stop_sequences=parsed.stop_sequences)
        exchange.timer.tokens(message.usage.input_tokens, message.usage.output_tokens)
        return json_response(message.model_dump_json().encode())

    async def count_tokens(self, exchange: Exchange) -> Response:
        context = self.context
        parsed = parse_model(CountTokensRequest, exchange.body)
        served = await context.resolve_model(parsed.model)
        tokenize = translate_count_tokens_request(parsed, served)
        spec = find_web_search_tool(parsed.tools) if self.search_runner else None
        if spec is not None:  # the model will see the search function: count it
            tokenize.tools = [*(tokenize.tools or []), search_function(spec)]
        reply = await context.backend.request("POST", "/tokenize", tokenize.to_json())
        if reply.status_code == 404:
            raise BackendError(
                "the backend has no /tokenize endpoint; count_tokens needs vLLM "
                "(or a server with vLLM's /tokenize API)",
                backend_status=501,
            )
        if reply.status_code != 200:
            raise backend_error(reply.status_code, reply.content)
        try:
            count = TokenizeReply.model_validate_json(reply.content).count
        except ValidationError:
            raise BackendError(
                "backend /tokenize reply has no token count", backend_status=502
            ) from None
        return json_response(CountTokensReply(input_tokens=count).model_dump_json().encode())
