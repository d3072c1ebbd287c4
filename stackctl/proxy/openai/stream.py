"""One streamed OpenAI reply relayed as it comes: event boundaries kept, empty
`"tool_calls": []` dropped, the last usage report counted; a backend that dies mid-reply
leaves the client an error chunk in vLLM's own shape (the OpenAI SDK raises on it)."""

from __future__ import annotations

import json

from stackctl.proxy.backend.client import Backend, BackendStream, StreamError
from stackctl.proxy.context import log
from stackctl.proxy.metrics import RequestTimer
from stackctl.proxy.openai.tool_calls_cleanup import strip_empty_tool_calls
from stackctl.proxy.protocol.sse import EventSplitter, event_data, split_events
from stackctl.proxy.protocol.usage import chat_usage_in
from stackctl.proxy.streaming import Emit

_USAGE_MARK = b'"usage":{'


class OpenAIRelay:
    def __init__(self, upstream: BackendStream, *, backend: Backend, timer: RequestTimer) -> None:
        self.upstream = upstream
        self.backend = backend
        self.timer = timer
        self._usage_block = b""  # the events of the read that held the last usage report

    async def produce(self, emit: Emit) -> None:
        self._usage_block = b""
        try:
            await self._relay(emit)
        finally:
            self.upstream.deliver_to(None)
            # Counted however the stream ends: a client that leaves right after `[DONE]`
            # cancels the relay before the body's end arrives.
            self._count_usage()

    async def _relay(self, emit: Emit) -> None:
        splitter = EventSplitter()
        upstream = self.upstream
        read, timer = upstream.read, self.timer

        def edited(data: bytes) -> bytes:
            # Whole events only, all those of one read in one write.
            block = strip_empty_tool_calls(splitter.complete(data))
            if block:
                if _USAGE_MARK in block:
                    # Usage is cumulative (and on every chunk with continuous_usage_stats):
                    # only the last report counts.
                    self._usage_block = block
                timer.first_event()
            return block

        def pass_on(data: bytes) -> bool:
            # The per-token path, from the backend read's callback (ClientBody.write_now).
            if not emit.can_write_now():
                return False
            block = edited(data)
            if block:
                if upstream.ended:
                    emit.end_with(block)  # the reply's last read: written with the body's end
                else:
                    emit.write_now(block)
            return True

        self.upstream.deliver_to(pass_on)
        try:
            while data := await read():
                block = edited(data)
                if block:
                    if upstream.ended:
                        emit.end_with(block)
                    else:
                        await emit(block)
        except StreamError as error:
            rest = splitter.rest()
            if rest:
                await emit(rest)
            await emit(
                error_chunk(
                    f"the model backend at {self.backend.base_url} stopped mid-reply "
                    f"({type(error).__name__}); the reply is incomplete: retry the request"
                )
            )
            return
        except Exception:  # noqa: BLE001 (logged with its traceback)
            # A proxy bug must still end the stream with an error the client can read.
            log.exception("relaying the backend stream failed")
            await emit(error_chunk("internal error in the filter-proxy; the reply is incomplete"))
            return
        rest = splitter.rest()
        if rest:
            await emit(strip_empty_tool_calls(rest))

    def _count_usage(self) -> None:
        block, self._usage_block = self._usage_block, b""
        if block:
            usage_event = next(e for e in reversed(split_events(block)) if _USAGE_MARK in e)
            self.timer.count(chat_usage_in(event_data(usage_event) or b""))


def error_chunk(message: str) -> bytes:
    """vLLM's own shape for a stream that fails after it started."""
    failure = {"error": {"message": message, "type": "server_error", "code": 502}}
    return b"data: " + json.dumps(failure).encode() + b"\n\n"
