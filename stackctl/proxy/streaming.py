"""A streaming ASGI response that stops its producer the moment the client goes away.

Starlette's StreamingResponse only notices a disconnect when a write fails, which never
happens while the backend is still prefilling a long prompt; watching `receive()` instead
cancels the producer, which closes the backend connection, and vLLM frees the slot.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from starlette.types import Receive, Scope, Send

Emit = Callable[[bytes], Awaitable[None]]
Producer = Callable[[Emit], Awaitable[None]]

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    # nginx in front would otherwise buffer the stream and break time-to-first-token.
    (b"x-accel-buffering", b"no"),
]


class ProducerResponse:
    def __init__(
        self,
        produce: Producer,
        *,
        close: Callable[[], Awaitable[None]],
        on_done: Callable[[bool], None],
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        self._produce = produce
        self._close = close
        self._on_done = on_done
        self._headers = headers or SSE_HEADERS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        disconnected = False

        async def emit(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        try:
            await send({"type": "http.response.start", "status": 200, "headers": self._headers})
            async with anyio.create_task_group() as tasks:

                async def watch_disconnect() -> None:
                    nonlocal disconnected
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    disconnected = True
                    tasks.cancel_scope.cancel()

                tasks.start_soon(watch_disconnect)
                try:
                    await self._produce(emit)
                except OSError:  # the write failed: the client is gone
                    disconnected = True
                tasks.cancel_scope.cancel()
            if not disconnected:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            disconnected = True
        finally:
            with anyio.CancelScope(shield=True):
                await self._close()
            self._on_done(disconnected)
