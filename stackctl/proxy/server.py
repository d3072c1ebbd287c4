"""uvicorn's Server, without its ten wake-ups a second.

uvicorn's main loop sleeps 0.1 s between looks at `should_exit` and refreshes the Date header
once a second. Each wake-up costs an idle process ~0.2 ms of CPU on a small VM: 2 ms a second
doing nothing, and at one stream paced at 50 tokens/s (0.66 s a reply) a sixth of the request's
CPU. This loop wakes once a second (the Date header's resolution), and at once when a signal
asks it to stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from types import FrameType

import uvicorn

_TICK_S = 1.0
_TICKS_PER_DATE = 10  # uvicorn's on_tick refreshes the Date header on every tenth count


class ProxyServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake_up: asyncio.Future[None] | None = None

    async def main_loop(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + _TICKS_PER_DATE) % 864000
            wake_up = self._wake_up = loop.create_future()
            timer = loop.call_later(_TICK_S, _set, wake_up)
            try:
                await wake_up
            finally:
                timer.cancel()
            should_exit = await self.on_tick(counter)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if self._loop is not None and self._wake_up is not None:
            # A signal handler: the loop may be anywhere, so it is told, not touched.
            self._loop.call_soon_threadsafe(_set, self._wake_up)


def _set(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def serve(config: uvicorn.Config, sockets: list[socket.socket] | None = None) -> bool:
    """Runs until a signal stops it, as `uvicorn.run` does; False when it never started (the
    app's startup failed)."""
    server = ProxyServer(config)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises the SIGINT it caught again
        server.run(sockets=sockets)
    return server.started
