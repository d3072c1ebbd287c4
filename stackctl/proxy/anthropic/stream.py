"""One streamed `/v1/messages` reply: backend chunks in, Anthropic events out, pings meanwhile.

Whatever the backend does, the client's stream ends the way Anthropic's grammar allows:
message_stop, or an `error` event (backend gone mid-reply, malformed chunk, a proxy bug).
"""

from __future__ import annotations

import asyncio
import time

from stackctl.proxy.anthropic.stream_translator import AnthropicStreamTranslator
from stackctl.proxy.anthropic.web_search.loop import WebSearchLoop
from stackctl.proxy.backend.client import BackendStream, StreamError
from stackctl.proxy.backend.fitted_calls import FittedCalls
from stackctl.proxy.context import log
from stackctl.proxy.errors import BackendError, ProxyError
from stackctl.proxy.metrics import RequestTimer
from stackctl.proxy.protocol.openai_stream import MalformedChunk, decode_chunk
from stackctl.proxy.protocol.sse import PING_EVENT, EventSplitter, event_payloads
from stackctl.proxy.streaming import Emit, cancel_and_wait


class AnthropicStream:
    def __init__(
        self,
        upstream: BackendStream,
        translator: AnthropicStreamTranslator,
        *,
        calls: FittedCalls,
        timer: RequestTimer,
        ping_interval_s: float,
        loop: WebSearchLoop | None = None,
    ) -> None:
        self.upstream = upstream
        self.translator = translator
        self.calls = calls
        self.timer = timer
        self.ping_interval_s = ping_interval_s
        self.loop = loop
        self._emit: Emit | None = None
        self._last_sent = time.monotonic()
        self._pinger: asyncio.TimerHandle | None = None
        self._ping: asyncio.Task[None] | None = None  # a ping being written
        self._stopped = False

    async def produce(self, emit: Emit) -> None:
        self._emit = emit
        translator = self.translator
        self._pinger = asyncio.get_running_loop().call_later(self.ping_interval_s, self._ping_due)
        try:
            if self.loop is None:
                await self.relay(self.upstream)
            else:
                await self.loop.stream(self.upstream, translator, self.relay, self.send, self.calls)
        except Exception:  # noqa: BLE001 (logged with its traceback below)
            # A proxy bug must still end the stream the way the grammar allows.
            log.exception("translating the backend stream failed")
            await self.send(translator.fail(ProxyError("internal error in the filter-proxy")))
        finally:
            # Counted however the stream ends: a client that leaves right after message_stop
            # cancels the relay before the body's end arrives.
            self.timer.tokens(translator.input_tokens, translator.output_tokens, cached=translator.cached_tokens)
            self._stopped = True
            self._pinger.cancel()
            if self._ping is not None:
                await cancel_and_wait(self._ping)

    async def send(self, data: bytes, *, keep_alive: bool = False, ending: bool = False) -> None:
        """`ending`: the reply's last events, held for the response's end (ClientBody.end_with)."""
        assert self._emit is not None
        self._last_sent = time.monotonic()
        if not keep_alive:  # pings are not tokens: keep them out of the TTFT histogram
            self.timer.first_event()
        if ending:
            self._emit.end_with(data)
        else:
            await self._emit(data)

    def _ping_due(self) -> None:
        """Idle clients and proxies drop silent connections during long prefills: after
        `ping_interval_s` without a write, a ping (the message's start first) goes out. A timer,
        not a task of its own: most streams end before it is ever due."""
        if self._stopped or self.translator.finished or (self._ping is not None and not self._ping.done()):
            return  # a ping still being written arms the next one when it is out: one timer at a time
        interval = self.ping_interval_s
        idle = time.monotonic() - self._last_sent
        if idle < interval:
            self._pinger = asyncio.get_running_loop().call_later(interval - idle, self._ping_due)
            return
        self._ping = asyncio.create_task(self._send_ping())

    async def _send_ping(self) -> None:
        translator = self.translator
        data = translator.start() if not translator.started else PING_EVENT
        await self.send(data, keep_alive=True)
        if not self._stopped:
            self._pinger = asyncio.get_running_loop().call_later(self.ping_interval_s, self._ping_due)

    async def relay(self, upstream: BackendStream) -> None:
        """Read one backend SSE stream, translate, send; ends with message_stop or `error`
        (or, in a web-search turn, with the turn's blocks closed). All the events of one
        read go out in one write; while the relay waits for the next read, each one is
        translated and written from the read's own callback (ClientBody.write_now)."""
        translator = self.translator
        splitter = EventSplitter()
        done = False  # [DONE] came: what follows it is the body's end, read to keep the connection

        def translated(data: bytes) -> bytes:
            nonlocal done
            out = b""
            for payload in event_payloads(splitter.complete(data)):
                if payload is None:
                    continue
                if payload[:1] != b"{":  # [DONE], an empty data line, or garbage
                    payload = payload.strip()
                    if not payload:
                        continue
                    if payload == b"[DONE]":
                        out += translator.finish()
                        done = True
                        break
                fast = translator.feed_text_token(payload)
                if fast is not None:
                    out += fast
                    continue
                try:
                    chunk = decode_chunk(payload)
                except MalformedChunk:
                    out += translator.fail(
                        BackendError("backend sent a malformed stream chunk", backend_status=502)
                    )
                    break
                out += translator.feed(chunk)
            return out

        emit = self._emit
        assert emit is not None
        timer = self.timer
        # A web-search turn's end is followed by the search, then more of the reply.
        last_turn = self.loop is None

        def pass_on(data: bytes) -> bool:
            if translator.turn_over or not emit.can_write_now():
                return False  # the relay reads the body's end, or waits for the client
            out = translated(data)
            if out:
                self._last_sent = time.monotonic()
                timer.first_event()
                if done and last_turn and upstream.ended:
                    emit.end_with(out)  # the reply's last read: written with the body's end
                else:
                    emit.write_now(out)
            return True

        read = upstream.read
        upstream.deliver_to(pass_on)
        try:
            while not translator.turn_over and (data := await read()):
                if translator.turn_over:
                    break  # the read's callback ended the turn: this is the body's end
                out = translated(data)
                if out:
                    await self.send(out, ending=done and last_turn and upstream.ended)
            if translator.turn_over:
                if done:
                    await upstream.read_to_end()
                return
        except StreamError as error:
            await self.send(translator.fail(self._broken(error)))
            return
        finally:
            upstream.deliver_to(None)
        if translator.saw_finish_reason:
            # Some servers end with finish_reason and no [DONE]; the reply is complete anyway.
            await self.send(translator.finish())
        else:
            # Closed without [DONE] or a finish_reason: the backend crashed mid-reply.
            await self.send(translator.fail(self._broken(None)))

    def _broken(self, error: BaseException | None) -> BackendError:
        reason = f" ({type(error).__name__})" if error is not None else ""
        return BackendError(
            f"the model backend at {self.calls.base_url} stopped mid-reply{reason}; "
            "the reply is incomplete: retry the request",
            backend_status=502,
        )
