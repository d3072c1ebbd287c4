"""The proxy's uvicorn server: one wake-up a second when idle, and a stop signal heard at once."""

from __future__ import annotations

import asyncio
import signal

import uvicorn
from starlette.types import Receive, Scope, Send

from stackctl.proxy.server import ProxyServer


async def _nothing(scope: Scope, receive: Receive, send: Send) -> None:
    pass


def _server() -> ProxyServer:
    return ProxyServer(uvicorn.Config(_nothing, lifespan="off"))


async def test_a_stop_signal_ends_the_main_loop_at_once_not_at_the_next_tick() -> None:
    server = _server()
    main_loop = asyncio.create_task(server.main_loop())
    await asyncio.sleep(0.05)  # waiting for its next tick, a second away
    server.handle_exit(signal.SIGTERM, None)
    await asyncio.wait_for(main_loop, timeout=0.5)
    assert server.should_exit


async def test_the_date_header_is_set_from_the_first_tick() -> None:
    server = _server()
    main_loop = asyncio.create_task(server.main_loop())
    await asyncio.sleep(0.05)
    assert [name for name, _ in server.server_state.default_headers] == [b"date"]
    server.handle_exit(signal.SIGTERM, None)
    await main_loop
