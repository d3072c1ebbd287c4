"""`/v1/messages` and `/v1/messages/count_tokens`: Anthropic in, OpenAI to the backend.

The translation itself lives in to_openai / from_openai / stream_translator, streaming in
stream.py, and timing, keys, limits and errors in the proxy's route.py; this module only does
the protocol work. A request carrying the web-search server tool goes through web_search/loop.py
instead of a single backend call.
"""

from __future__ import annotations

from pydantic import ValidationError
from starlette.responses import Response

from stackctl.proxy.anthropic.from_openai import translate_completion
from stackctl.proxy.anthropic.stream import AnthropicStream
from stackctl.proxy.anthropic.stream_translator import AnthropicStreamTranslator
from stackctl.proxy.anthropic.to_openai import (
    translate_count_tokens_request,
    translate_messages_request,
)
from stackctl.proxy.anthropic.web_search.loop import WebSearchRunner, web_search_loop
from stackctl.proxy.anthropic.web_search.tool import find_web_search_tool, search_function
from stackctl.proxy.backend.client import backend_error
from stackctl.proxy.backend.fitted_calls import FittedCalls
from stackctl.proxy.context import ProxyContext
from stackctl.proxy.errors import BackendError, BackendUnavailable, sse_error_event
from stackctl.proxy.http_io import json_response, parse_model
from stackctl.proxy.protocol.anthropic import (
    CountTokensReply,
    CountTokensRequest,
    MessagesRequest,
)
from stackctl.proxy.protocol.openai import TokenizeReply
from stackctl.proxy.route import Exchange
from stackctl.proxy.sessions.parts import chat_request_parts, first_user_text_of_messages
from stackctl.proxy.streaming import Stream

# The proxy stopping mid-reply (a restart): overloaded_error, which SDKs and Claude Code retry.
INTERRUPTED = sse_error_event(
    BackendUnavailable("the filter-proxy restarted mid-reply; the reply is incomplete: retry the request")
)
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
        placement = context.settings.system_placement
        loop = web_search_loop(parsed, served, self.search_runner, placement)
        chat = (
            loop.chat_request() if loop else translate_messages_request(parsed, served, placement)
        )
        calls = FittedCalls(
            context.backend,
            context.fit,
            context.metrics,
            model=served,
            api="anthropic",
            body_bytes=len(exchange.body),
            asked=parsed.max_tokens,
        )
        if loop is None:  # a search loop's usage sums several prompts: no measure of this one
            exchange.timer.on_prompt_tokens = calls.learn_prompt

        def track() -> None:
            context.track(
                exchange.headers, exchange.timer, route=MESSAGES_ROUTE,
                first_user=first_user_text_of_messages(parsed), parts=lambda: chat_request_parts(chat),
            )

        if parsed.stream:
            upstream = await calls.open_chat_stream(chat)
            track()
            estimate = context.fit.prompt_tokens(served, "anthropic", len(exchange.body))
            translator = (
                loop.translator(served, estimate)
                if loop
                else AnthropicStreamTranslator(
                    model=served, stop_sequences=parsed.stop_sequences, input_tokens_estimate=estimate
                )
            )
            stream = AnthropicStream(
                upstream,
                translator,
                calls=calls,
                timer=exchange.timer,
                ping_interval_s=context.settings.ping_interval_s,
                loop=loop,
            )
            return Stream(stream.produce, close=upstream.release, interrupted=INTERRUPTED)
        if loop is not None:
            message = await loop.complete(calls)
        else:
            completion = await calls.chat_completion(chat)
            message = translate_completion(completion, stop_sequences=parsed.stop_sequences)
        track()
        usage = message.usage
        exchange.timer.tokens(usage.prompt_tokens, usage.output_tokens, cached=usage.cache_read_input_tokens)
        return json_response(message.model_dump_json().encode())

    async def count_tokens(self, exchange: Exchange) -> Response:
        context = self.context
        parsed = parse_model(CountTokensRequest, exchange.body)
        served = await context.resolve_model(parsed.model)
        tokenize = translate_count_tokens_request(parsed, served, context.settings.system_placement)
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
