"""`/v1/messages` and `/v1/messages/count_tokens`: Anthropic in, OpenAI to the backend.

The translation itself lives in to_openai / from_openai / stream_translator; this module only
does I/O. A request carrying the web-search server tool goes through web_search_loop instead of
a single backend call.
"""

from __future__ import annotations

import asyncio
import time

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from stackctl.proxy.anthropic_protocol import (
    CountTokensReply,
    CountTokensRequest,
    MessagesRequest,
)
from stackctl.proxy.backend import StreamError, backend_error
from stackctl.proxy.context import ProxyContext, log
from stackctl.proxy.errors import ApiFormat, BackendError, ProxyError
from stackctl.proxy.from_openai import translate_completion
from stackctl.proxy.http_io import error_response, json_response, parse_model, read_body
from stackctl.proxy.metrics import RequestTimer
from stackctl.proxy.openai_protocol import ChatCompletionChunk, TokenizeReply
from stackctl.proxy.sse import PING_EVENT, EventSplitter, event_data
from stackctl.proxy.stream_translator import AnthropicStreamTranslator
from stackctl.proxy.streaming import ProducerResponse, cancel_and_wait
from stackctl.proxy.to_openai import translate_count_tokens_request, translate_messages_request
from stackctl.proxy.web_search import find_web_search_tool, search_function
from stackctl.proxy.web_search_loop import WebSearchLoop, WebSearchRunner, web_search_loop

ANTHROPIC = ApiFormat.ANTHROPIC
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

    async def messages(self, request: Request) -> Response:
        context = self.context
        timer = context.metrics.begin(MESSAGES_ROUTE)
        status = 500
        handed_off = False
        try:
            timer.key = context.keys.key_name(request.headers)
            body = await read_body(request, context.settings.max_body_bytes)
            parsed = parse_model(MessagesRequest, body)
            served = await context.resolve_model(parsed.model)
            loop = web_search_loop(parsed, served, self.search_runner)
            chat = loop.chat_request() if loop else translate_messages_request(parsed, served)
            if parsed.stream:
                response = await self._stream(chat.to_json(), parsed, served, timer, loop)
                handed_off = True
                return response
            if loop is not None:
                message = await loop.complete(context.backend)
            else:
                completion = await context.backend.chat_completion(chat.to_json())
                message = translate_completion(completion, stop_sequences=parsed.stop_sequences)
            timer.tokens(message.usage.input_tokens, message.usage.output_tokens)
            status = 200
            return json_response(message.model_dump_json().encode())
        except ProxyError as error:
            status = error.status_for(ANTHROPIC)
            return error_response(error, ANTHROPIC)
        finally:
            if not handed_off:
                timer.end(status)

    async def _stream(
        self,
        body: bytes,
        parsed: MessagesRequest,
        served: str,
        timer: RequestTimer,
        loop: WebSearchLoop | None = None,
    ) -> Response:
        backend = self.context.backend
        upstream = await backend.open_chat_stream(body)
        translator = (
            loop.translator(served)
            if loop
            else AnthropicStreamTranslator(model=served, stop_sequences=parsed.stop_sequences)
        )
        ping_interval = self.context.settings.ping_interval_s

        async def produce(emit) -> None:  # type: ignore[no-untyped-def]
            last_sent = time.monotonic()

            async def send(data: bytes, *, keep_alive: bool = False) -> None:
                nonlocal last_sent
                last_sent = time.monotonic()
                if not keep_alive:  # pings are not tokens: keep them out of the TTFT histogram
                    timer.first_event()
                await emit(data)

            async def keep_alive() -> None:
                # Idle clients and proxies drop silent connections during long prefills.
                while not translator.finished:
                    await asyncio.sleep(max(0.0, last_sent + ping_interval - time.monotonic()))
                    if time.monotonic() - last_sent >= ping_interval and not translator.finished:
                        data = translator.start() if not translator.started else PING_EVENT
                        await send(data, keep_alive=True)

            pinger = asyncio.create_task(keep_alive())
            try:
                if loop is None:
                    await send_translated(upstream, translator, send, backend)
                else:

                    async def relay(stream) -> None:  # type: ignore[no-untyped-def]
                        await send_translated(stream, translator, send, backend)

                    await loop.stream(upstream, translator, relay, send, backend)
            except Exception:  # noqa: BLE001 (logged with its traceback below)
                # A proxy bug must still end the stream the way the grammar allows.
                log.exception("translating the backend stream failed")
                await send(translator.fail(ProxyError("internal error in the filter-proxy")))
            finally:
                await cancel_and_wait(pinger)
            timer.tokens(translator.input_tokens, translator.output_tokens)

        def on_done(disconnected: bool) -> None:
            if disconnected:
                log.info("client left mid-stream; backend request cancelled")
            timer.end(499 if disconnected else 200)

        return ProducerResponse(produce, close=upstream.aclose, on_done=on_done)  # type: ignore[return-value]

    async def count_tokens(self, request: Request) -> Response:
        context = self.context
        timer = context.metrics.begin(COUNT_ROUTE)
        status = 500
        try:
            timer.key = context.keys.key_name(request.headers)
            body = await read_body(request, context.settings.max_body_bytes)
            parsed = parse_model(CountTokensRequest, body)
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
            status = 200
            return json_response(CountTokensReply(input_tokens=count).model_dump_json().encode())
        except ProxyError as error:
            status = error.status_for(ANTHROPIC)
            return error_response(error, ANTHROPIC)
        finally:
            timer.end(status)


async def send_translated(upstream, translator, send, backend) -> None:  # type: ignore[no-untyped-def]
    """Read the backend's SSE stream, translate, send; ends with message_stop or `error`."""
    splitter = EventSplitter()
    try:
        async for data in upstream.aiter_raw():
            out = b""
            for raw_event in splitter.feed(data):
                payload = event_data(raw_event)
                if payload is None or not payload.strip():
                    continue
                if payload.strip() == b"[DONE]":
                    out += translator.finish()
                    break
                try:
                    chunk = ChatCompletionChunk.model_validate_json(payload)
                except ValidationError:
                    out += translator.fail(
                        BackendError("backend sent a malformed stream chunk", backend_status=502)
                    )
                    break
                out += translator.feed(chunk)
            if out:
                await send(out)
            if translator.turn_over:
                return
    except StreamError as error:
        await send(translator.fail(_broken_stream(error, backend)))
        return
    if translator.saw_finish_reason:
        # Some servers end with finish_reason and no [DONE]; the reply is complete anyway.
        await send(translator.finish())
    else:
        # Closed without [DONE] or a finish_reason: the backend crashed mid-reply.
        await send(translator.fail(_broken_stream(None, backend)))


def _broken_stream(error: Exception | None, backend) -> BackendError:  # type: ignore[no-untyped-def]
    reason = f" ({type(error).__name__})" if error is not None else ""
    return BackendError(
        f"the model backend at {backend.base_url} stopped mid-reply{reason}; "
        "the reply is incomplete: retry the request",
        backend_status=502,
    )
