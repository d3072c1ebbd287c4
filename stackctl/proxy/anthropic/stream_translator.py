"""OpenAI chat-completion chunks -> Anthropic stream events (a state machine, no I/O).

Anthropic's grammar has one open content block at a time: message_start, then per block
content_block_start / *_delta / content_block_stop, then message_delta and message_stop.
OpenAI streams may interleave argument chunks of several tool calls, so only one tool call
streams live; the others are buffered and emitted, whole, once the live one is complete (its
arguments parse as JSON: a complete JSON object cannot be extended and stay valid) or at the end.

With `server_tools` (the proxy's web search), one Anthropic message spans several backend
streams: calls to a server tool stream as `server_tool_use` blocks, a turn that made such calls
ends without message_delta/message_stop (`turn_ended`), the loop adds its own blocks
(`add_block`), starts the next turn (`next_turn`), and finally calls `finish_message`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from stackctl.proxy.anthropic.from_openai import (
    map_stop_reason,
    message_id,
    parse_tool_input,
    tool_use_id,
)
from stackctl.proxy.errors import ProxyError, sse_error_event
from stackctl.proxy.protocol.anthropic import StopReason
from stackctl.proxy.protocol.openai_stream import ChatCompletionChunk, ToolCallDelta
from stackctl.proxy.protocol.sse import PING_EVENT, encode_event

# One text token as vLLM streams it, from `"choices"` to the chunk's end: choice 0's delta holds
# only content (beside the empty tool_calls of vLLM 0.22 and older), nothing finished, no usage
# (vLLM 0.24 adds `"token_ids":null`). Group 1: the JSON string of the content, which an
# Anthropic text_delta carries as it is.
_TEXT_TOKEN = re.compile(
    rb'"choices":\[\{"index":0,"delta":\{"content":("(?:[^"\\]|\\.)+")(?:,"tool_calls":\[\])?\},'
    rb'"logprobs":null,"finish_reason":null(?:,"token_ids":null)?\}\]\}\Z'
)
_TEXT_DELTA = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%b}}\n\n'


@dataclass
class _ToolCall:
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)
    block_index: int | None = None  # set once its block has been opened
    closed: bool = False
    server: bool = False  # a server tool call (the proxy runs it), set when its block opens

    def arguments_complete(self) -> bool:
        text = "".join(self.arguments).strip()
        if not text:
            return False
        try:
            json.loads(text)
        except ValueError:
            return False
        return True


@dataclass
class _OpenBlock:
    kind: str  # "thinking" | "text" | "tool_use"
    index: int
    tool: _ToolCall | None = None


@dataclass(frozen=True)
class ServerToolCall:
    id: str
    name: str
    input: dict[str, object]


@dataclass(frozen=True)
class TurnRecord:
    """What the model did in one turn of a multi-turn message, for the next backend request."""

    text: str
    server_calls: list[ServerToolCall]
    called_client_tools: bool


class AnthropicStreamTranslator:
    """Feed parsed chunks; each call returns the encoded events to send (maybe b"")."""

    def __init__(
        self,
        *,
        model: str,
        stop_sequences: list[str] | None,
        server_tools: frozenset[str] = frozenset(),
        server_tool_id: Callable[[], str] | None = None,
        input_tokens_estimate: int = 0,
    ) -> None:
        self.model = model
        # message_start's input count where the first chunk carries no usage (vLLM reports it
        # in the last chunk only): message_delta then gives the backend's own count.
        self.input_tokens_estimate = input_tokens_estimate
        self.stop_sequences = stop_sequences
        self.server_tools = server_tools
        self._server_tool_id = server_tool_id
        self.started = False
        self.finished = False
        self.turn_ended = False
        # Set by the search loop: reported as usage.server_tool_use.web_search_requests.
        self.web_search_requests: int | None = None
        self._turn_input = 0
        self._turn_output = 0
        self._turn_cached = 0
        self._prior_input = 0
        self._prior_output = 0
        self._prior_cached = 0
        self._turn_text: list[str] = []
        self._id = ""
        self._next_index = 0
        self._open: _OpenBlock | None = None
        self._tools: dict[int, _ToolCall] = {}
        self._pending: list[_ToolCall] = []
        self._finish_reason: str | None = None
        self._backend_stop_reason: str | int | None = None
        self.dropped_tool_arguments = False

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def input_tokens(self) -> int:
        return self._prior_input + self._turn_input

    @property
    def output_tokens(self) -> int:
        return self._prior_output + self._turn_output

    @property
    def cached_tokens(self) -> int:
        """Of input_tokens, served from the backend's prefix cache (known at the end)."""
        return min(self._prior_cached + self._turn_cached, self.input_tokens)

    @property
    def turn_over(self) -> bool:
        return self.finished or self.turn_ended

    def start(self, chunk: ChatCompletionChunk | None = None) -> bytes:
        """message_start (+ the ping Anthropic sends right after it). Called on the first
        chunk, or earlier by the pinger when the backend is slow to produce one."""
        if self.started:
            return b""
        self.started = True
        reported = None
        if chunk is not None:
            self._id = chunk.id
            self.model = chunk.model or self.model
            if chunk.usage is not None:
                self._turn_input = reported = chunk.usage.prompt_tokens
        input_tokens = reported if reported is not None else self.input_tokens_estimate
        message: dict[str, object] = {
            "id": message_id(self._id),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            # The cached share and the exact input count come with the backend's last usage
            # report: message_delta says them (its usage is cumulative and final, as Anthropic's).
            "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0, "output_tokens": 0},
        }
        return encode_event("message_start", {"type": "message_start", "message": message}) + (
            PING_EVENT
        )

    def feed_text_token(self, payload: bytes) -> bytes | None:
        """The per-token shortcut: a chunk's data that only adds text to the open text block, as
        its content_block_delta, without decoding the chunk (the event `feed` would write, its
        text escaped as the backend escaped it). None for any other chunk, or while the turn's
        text is recorded (server tools): `feed` takes those."""
        block = self._open
        if block is None or block.kind != "text" or self.server_tools:
            return None
        match = _TEXT_TOKEN.search(payload)
        return None if match is None else _TEXT_DELTA % (block.index, match[1])

    def feed(self, chunk: ChatCompletionChunk) -> bytes:
        out = self.start(chunk) if not self.started else b""
        usage = chunk.usage
        if usage is not None:
            self._turn_input = usage.prompt_tokens or self._turn_input
            self._turn_output = usage.completion_tokens
            if usage.prompt_tokens_details is not None:  # the last usage chunk only
                self._turn_cached = usage.prompt_tokens_details.cached_tokens or 0
        for choice in chunk.choices:
            if choice.index != 0:
                continue  # n > 1 cannot be expressed in the Messages API
            delta = choice.delta
            thinking = delta.thinking
            if thinking:
                out += self._text_like("thinking", thinking)
            if delta.content:
                out += self._text_like("text", delta.content)
            if delta.tool_calls:
                for call in delta.tool_calls:
                    out += self._tool_delta(call)
            if choice.finish_reason:
                self._finish_reason = choice.finish_reason
                self._backend_stop_reason = choice.stop_reason
        return out

    @property
    def saw_finish_reason(self) -> bool:
        return self._finish_reason is not None

    def finish(self) -> bytes:
        """The backend ended the stream cleanly: close blocks, then message_delta/stop (with
        server tools: end the turn only; the search loop decides what comes next)."""
        if self.finished or self.turn_ended:
            return b""
        out = self.start() if not self.started else b""
        out += self._end_turn_blocks()
        if self.server_tools:
            self.turn_ended = True
            return out
        return out + self._message_end(None)

    def finish_message(self, stop_reason: StopReason | None = None) -> bytes:
        """Multi-turn only: message_delta/stop after the last turn (or `stop_reason`)."""
        if self.finished:
            return b""
        out = self.start() if not self.started else b""
        out += self._end_turn_blocks()
        return out + self._message_end(stop_reason)

    def turn_record(self) -> TurnRecord:
        """What the model did in the turn that just ended."""
        return TurnRecord(
            text="".join(self._turn_text),
            server_calls=[
                ServerToolCall(tool.id, tool.name, parse_tool_input("".join(tool.arguments)))
                for tool in self._tools.values()
                if tool.server
            ],
            called_client_tools=any(not tool.server for tool in self._tools.values()),
        )

    def next_turn(self) -> None:
        """Ready for the next backend stream of the same message."""
        self._prior_input += self._turn_input
        self._prior_output += self._turn_output
        self._prior_cached += self._turn_cached
        self._turn_input = self._turn_output = self._turn_cached = 0
        self._turn_text = []
        self._tools = {}
        self._pending = []
        self._finish_reason = None
        self._backend_stop_reason = None
        self.turn_ended = False

    def add_block(self, block: dict[str, object]) -> bytes:
        """A whole block the proxy made (a web_search_tool_result), between two turns."""
        out = self._close_open() + self._start_block("proxy", block)
        return out + self._close_open()

    def _end_turn_blocks(self) -> bytes:
        out = self._close_open()
        for tool in self._pending:
            out += self._open_tool(tool) + self._close_open()
        self._pending.clear()
        return out

    def _message_end(self, stop_reason: StopReason | None) -> bytes:
        self.finished = True
        stop_sequence = None
        if stop_reason is None:
            stop_reason, stop_sequence = map_stop_reason(
                self._finish_reason,
                self._backend_stop_reason,
                self.stop_sequences,
                called_tools=any(not tool.server for tool in self._tools.values()),
            )
        cached = self.cached_tokens
        usage: dict[str, object] = {
            # Anthropic's input_tokens: the prompt tokens read from no cache.
            "input_tokens": self.input_tokens - cached,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cached,
            "output_tokens": self.output_tokens,
        }
        if self.web_search_requests is not None:
            usage["server_tool_use"] = {"web_search_requests": self.web_search_requests}
        out = encode_event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
                "usage": usage,
            },
        )
        return out + encode_event("message_stop", {"type": "message_stop"})

    def fail(self, error: ProxyError) -> bytes:
        """The backend broke mid-stream: an `error` event, and nothing after it."""
        self.finished = True
        return sse_error_event(error)

    # ---- blocks ------------------------------------------------------------------------------

    def _text_like(self, kind: str, text: str) -> bytes:
        out = b""
        if self._open is None or self._open.kind != kind:
            out += self._close_open()
            block: dict[str, object] = (
                {"type": "thinking", "thinking": "", "signature": ""}
                if kind == "thinking"
                else {"type": "text", "text": ""}
            )
            out += self._start_block(kind, block)
        assert self._open is not None
        if kind == "text":
            self._turn_text.append(text)
        delta: dict[str, object] = (
            {"type": "thinking_delta", "thinking": text}
            if kind == "thinking"
            else {"type": "text_delta", "text": text}
        )
        return out + self._delta(delta)

    def _tool_delta(self, call: ToolCallDelta) -> bytes:
        out = b""
        tool = self._tools.get(call.index)
        function = call.function
        if tool is None:
            tool = _ToolCall(
                id=tool_use_id(call.id), name=(function.name if function else "") or ""
            )
            self._tools[call.index] = tool
            self._pending.append(tool)
        elif function is not None and function.name and tool.block_index is None:
            tool.name += function.name
        arguments = function.arguments if function is not None else None
        if arguments:
            if tool.closed:
                # Only possible after its arguments were already a complete JSON object.
                if arguments.strip():
                    self.dropped_tool_arguments = True
            else:
                tool.arguments.append(arguments)
                if self._open is not None and self._open.tool is tool:
                    out += self._delta({"type": "input_json_delta", "partial_json": arguments})
        return out + self._advance_tools()

    def _advance_tools(self) -> bytes:
        """Open buffered tool calls in order while the live block is finished."""
        out = b""
        while self._pending:
            live = self._open
            if live is not None and live.tool is not None and not live.tool.arguments_complete():
                break
            out += self._close_open()
            out += self._open_tool(self._pending.pop(0))
        return out

    def _open_tool(self, tool: _ToolCall) -> bytes:
        block_type = "tool_use"
        if tool.name in self.server_tools:
            tool.server = True
            block_type = "server_tool_use"
            if self._server_tool_id is not None:
                tool.id = self._server_tool_id()
        block: dict[str, object] = {"type": block_type, "id": tool.id, "name": tool.name, "input": {}}
        out = self._start_block("tool_use", block, tool)
        tool.block_index = self._open.index if self._open else None
        buffered = "".join(tool.arguments)
        if buffered:
            out += self._delta({"type": "input_json_delta", "partial_json": buffered})
        return out

    def _start_block(
        self, kind: str, block: dict[str, object], tool: _ToolCall | None = None
    ) -> bytes:
        index = self._next_index
        self._next_index += 1
        self._open = _OpenBlock(kind=kind, index=index, tool=tool)
        return encode_event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )

    def _delta(self, delta: dict[str, object]) -> bytes:
        assert self._open is not None
        return encode_event(
            "content_block_delta",
            {"type": "content_block_delta", "index": self._open.index, "delta": delta},
        )

    def _close_open(self) -> bytes:
        if self._open is None:
            return b""
        index = self._open.index
        if self._open.tool is not None:
            self._open.tool.closed = True
        self._open = None
        return encode_event("content_block_stop", {"type": "content_block_stop", "index": index})
