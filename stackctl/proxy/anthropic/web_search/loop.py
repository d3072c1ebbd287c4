"""The web-search loop: call the model; while it calls web_search, search and call it again.

One client request, several backend requests, one Anthropic message: `server_tool_use` and
`web_search_tool_result` blocks record each search, `usage.server_tool_use` counts them. The
next backend request is the client's request plus an assistant message holding the blocks so
far, translated by to_openai: the very path a follow-up request from the client takes, so the
model sees the same text both times (and vLLM's prefix cache keeps working).

A search never fails the request: errors, timeouts and refusals become an error result the
model reads (and a `stackctl_proxy_web_searches_total{outcome}` count); the model answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from stackctl.proxy.anthropic.from_openai import translate_completion
from stackctl.proxy.anthropic.stream_translator import AnthropicStreamTranslator
from stackctl.proxy.anthropic.system_turns import SystemPlacement
from stackctl.proxy.anthropic.to_openai import translate_messages_request
from stackctl.proxy.anthropic.web_search.search_backend import SearchBackend, SearchError
from stackctl.proxy.anthropic.web_search.tool import (
    MAX_QUERY_CHARS,
    RESULTS_PER_SEARCH,
    WebSearchSpec,
    backend_query,
    domain_allowed,
    find_web_search_tool,
    result_blocks,
    search_function,
    server_tool_use_id,
)
from stackctl.proxy.backend.client import BackendStream
from stackctl.proxy.backend.fitted_calls import FittedCalls
from stackctl.proxy.context import log
from stackctl.proxy.errors import ProxyError
from stackctl.proxy.metrics import ProxyMetrics
from stackctl.proxy.protocol.anthropic import (
    ContentBlock,
    Message,
    MessageReply,
    MessagesRequest,
    ReplyServerToolUse,
    ReplyText,
    ReplyToolUse,
    ReplyUsage,
    ReplyWebSearchToolResult,
    ServerToolUsage,
    ServerToolUseBlock,
    StopReason,
    TextBlock,
    WebSearchError,
    WebSearchResult,
    WebSearchToolResultBlock,
)
from stackctl.proxy.protocol.openai import ChatRequest, NamedToolChoice

Send = Callable[[bytes], Awaitable[None]]
Relay = Callable[[BackendStream], Awaitable[None]]  # one backend stream through the translator


@dataclass(frozen=True)
class SearchRun:
    block: WebSearchToolResultBlock
    outcome: str  # the metric label
    searched: bool  # the backend was asked: counts as one of usage's web_search_requests


class WebSearchRunner:
    """Runs one search: limits, timeout, domain filters, the metric. Never raises."""

    def __init__(self, backend: SearchBackend, *, timeout_s: float, metrics: ProxyMetrics) -> None:
        self.backend = backend
        self.timeout_s = timeout_s
        self.metrics = metrics

    async def run(
        self, call_id: str, call_input: dict[str, Any], spec: WebSearchSpec, *, uses: int
    ) -> SearchRun:
        content, outcome, searched = await self._search(call_input, spec, uses)
        self.metrics.web_searches.labels(outcome).inc()
        block = WebSearchToolResultBlock(
            type="web_search_tool_result", tool_use_id=call_id, content=content
        )
        return SearchRun(block, outcome, searched)

    async def _search(
        self, call_input: dict[str, Any], spec: WebSearchSpec, uses: int
    ) -> tuple[list[WebSearchResult] | WebSearchError, str, bool]:
        query = call_input.get("query")
        if not isinstance(query, str) or not query.strip():
            return _error("invalid_tool_input"), "invalid_input", False
        query = " ".join(query.split())
        if len(query) > MAX_QUERY_CHARS:
            return _error("query_too_long"), "invalid_input", False
        if uses >= spec.max_uses:
            return _error("max_uses_exceeded"), "max_uses", False
        filtered = bool(spec.allowed_domains or spec.blocked_domains)
        wanted = RESULTS_PER_SEARCH * (3 if filtered else 1)  # room for what the filters drop
        try:
            with anyio.fail_after(self.timeout_s):
                results = await self.backend.search(backend_query(query, spec), max_results=wanted)
        except TimeoutError:
            log.warning("web search (%s) timed out after %g s", self.backend.name, self.timeout_s)
            return _error("unavailable"), "timeout", True
        except SearchError as error:
            log.warning("web search (%s) failed: %s", self.backend.name, error)
            if error.reason == "rate_limited":
                return _error("too_many_requests"), "rate_limited", True
            return _error("unavailable"), "timeout" if error.reason == "timeout" else "error", True
        except Exception:  # noqa: BLE001 (a search backend bug must not fail the request)
            log.exception("web search (%s) raised", self.backend.name)
            return _error("unavailable"), "error", True
        kept = [result for result in results if domain_allowed(result.url, spec)]
        kept = kept[:RESULTS_PER_SEARCH]
        return result_blocks(kept), "ok" if kept else "empty", True


def _error(code: str) -> WebSearchError:
    return WebSearchError(type="web_search_tool_result_error", error_code=code)


def web_search_loop(
    request: MessagesRequest,
    served: str,
    runner: WebSearchRunner | None,
    placement: SystemPlacement = "in-place",
) -> WebSearchLoop | None:
    """A loop when the request carries the web-search tool and search is on; else None."""
    if runner is None or (request.tool_choice and request.tool_choice.type == "none"):
        return None
    spec = find_web_search_tool(request.tools)
    return WebSearchLoop(runner, spec, request, served, placement) if spec else None


class WebSearchLoop:
    def __init__(
        self,
        runner: WebSearchRunner,
        spec: WebSearchSpec,
        request: MessagesRequest,
        served: str,
        placement: SystemPlacement = "in-place",
    ) -> None:
        self.runner = runner
        self.spec = spec
        self.request = request
        self.served = served
        self.placement = placement
        self.history: list[ContentBlock] = []  # this message's blocks, for the next turn
        self.searches = 0

    def chat_request(self) -> ChatRequest:
        """The next backend request: the client's, plus what happened so far."""
        request = self.request
        if self.history:
            turn = Message(role="assistant", content=list(self.history))
            request = request.model_copy(update={"messages": [*request.messages, turn]})
        chat = translate_messages_request(request, self.served, self.placement)
        client_tools = bool(chat.tools)
        chat.tools = [*(chat.tools or []), search_function(self.spec)]
        choice = request.tool_choice
        first = not self.history
        if choice is not None and choice.type == "tool" and choice.name == self.spec.name:
            # Forced search: the first turn only, or the model could never answer.
            chat.tool_choice = (
                NamedToolChoice(function={"name": self.spec.name}) if first else "auto"
            )
        elif choice is not None and choice.type == "any" and not client_tools:
            chat.tool_choice = "required" if first else "auto"
        elif chat.tool_choice is None:
            chat.tool_choice = "auto"
        return chat

    async def search(self, call_id: str, call_input: dict[str, Any]) -> SearchRun:
        run = await self.runner.run(call_id, call_input, self.spec, uses=self.searches)
        if run.searched:  # failed searches count too; refused ones (bad input, over max_uses) not
            self.searches += 1
        self.history.append(run.block)
        return run

    def record_turn(self, text: str, calls: list[ServerToolUseBlock]) -> None:
        if text:
            self.history.append(TextBlock(type="text", text=text))
        self.history.extend(calls)

    # ---- unstreamed ---------------------------------------------------------------------------

    async def complete(self, model: FittedCalls) -> MessageReply:
        content: list[Any] = []
        first: MessageReply | None = None
        tokens_in = tokens_out = tokens_cached = 0
        stop_reason: StopReason = "end_turn"
        stop_sequence: str | None = None
        for _ in range(self.spec.max_turns):
            completion = await model.chat_completion(self.chat_request())
            message = translate_completion(completion, stop_sequences=self.request.stop_sequences)
            first = first or message
            tokens_in += message.usage.input_tokens
            tokens_cached += message.usage.cache_read_input_tokens
            tokens_out += message.usage.output_tokens
            stop_reason, stop_sequence = message.stop_reason, message.stop_sequence
            calls: list[ReplyServerToolUse] = []
            called_client_tools = False
            for block in message.content:
                if isinstance(block, ReplyToolUse) and block.name == self.spec.name:
                    block = ReplyServerToolUse(
                        id=server_tool_use_id(), name=block.name, input=block.input
                    )
                    calls.append(block)
                elif isinstance(block, ReplyToolUse):
                    called_client_tools = True
                content.append(block)
            if not calls:
                break
            text = "".join(block.text for block in message.content if isinstance(block, ReplyText))
            self.record_turn(
                text, [_history_call(call.id, call.name, call.input) for call in calls]
            )
            for call in calls:
                run = await self.search(call.id, call.input)
                content.append(
                    ReplyWebSearchToolResult(tool_use_id=call.id, content=run.block.content)
                )
            if called_client_tools:
                stop_reason, stop_sequence = "tool_use", None
                break
        else:
            stop_reason, stop_sequence = "pause_turn", None
        assert first is not None
        return MessageReply(
            id=first.id,
            model=first.model,
            content=content,
            stop_reason=stop_reason,
            stop_sequence=stop_sequence,
            usage=ReplyUsage(
                input_tokens=tokens_in,
                cache_read_input_tokens=tokens_cached,
                output_tokens=tokens_out,
                server_tool_use=ServerToolUsage(web_search_requests=self.searches),
            ),
        )

    # ---- streamed -----------------------------------------------------------------------------

    def translator(self, model: str, input_tokens_estimate: int) -> AnthropicStreamTranslator:
        return AnthropicStreamTranslator(
            model=model,
            input_tokens_estimate=input_tokens_estimate,
            stop_sequences=self.request.stop_sequences,
            server_tools=frozenset({self.spec.name}),
            server_tool_id=server_tool_use_id,
        )

    async def stream(
        self,
        first_upstream: BackendStream,
        translator: AnthropicStreamTranslator,
        relay: Relay,
        send: Send,
        model: FittedCalls,
    ) -> None:
        """Relay turn after turn into one Anthropic message; pings run meanwhile (the caller's
        keep-alive watches `translator.finished`, which stays False during searches)."""
        translator.web_search_requests = 0
        for turn in range(self.spec.max_turns):
            if turn == 0:
                await relay(first_upstream)  # the caller closes it
            else:
                try:
                    upstream = await model.open_chat_stream(self.chat_request())
                except ProxyError as error:
                    await send(translator.fail(error))
                    return
                try:
                    await relay(upstream)
                finally:
                    await upstream.aclose()
            if translator.finished:  # the backend failed mid-stream: `error` event already sent
                return
            record = translator.turn_record()
            if not record.server_calls:
                await send(translator.finish_message())
                return
            self.record_turn(
                record.text, [_history_call(c.id, c.name, c.input) for c in record.server_calls]
            )
            for call in record.server_calls:
                run = await self.search(call.id, call.input)
                translator.web_search_requests = self.searches
                await send(translator.add_block(run.block.model_dump(mode="json")))
            if record.called_client_tools:
                await send(translator.finish_message())
                return
            translator.next_turn()
        await send(translator.finish_message("pause_turn"))


def _history_call(call_id: str, name: str, call_input: dict[str, Any]) -> ServerToolUseBlock:
    return ServerToolUseBlock(type="server_tool_use", id=call_id, name=name, input=call_input)
