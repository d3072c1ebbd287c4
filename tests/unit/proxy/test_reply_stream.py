"""The streamed-reply connections (backend/reply_stream.py) against small real servers on
loopback: keep-alive reuse, a kept connection the server dropped, cut and close-delimited
bodies, a silent backend, a slow reader."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from stackctl.proxy.backend.client import Backend, StreamError
from stackctl.proxy.backend.reply_stream import ReadTimeout, ReplyBroken, ReplyConnections
from stackctl.proxy.errors import BackendUnavailable

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]
SSE = b"data: {}\n\n"


class Server:
    """Counts connections and requests; `handler(reader, writer, request_number)` answers one
    request whose head and body have been read, and returns False to close the connection."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests = 0
        self.heads: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                await reader.readexactly(length)
                self.requests += 1
                self.heads.append(head)
                if await self.handler(reader, writer, self.requests) is False:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def start() -> AsyncIterator[Callable[[Handler], Awaitable[tuple[Server, str]]]]:
    servers: list[asyncio.Server] = []

    async def start_server(handler: Handler) -> tuple[Server, str]:
        server = Server(handler)
        listening = await asyncio.start_server(server.serve, "127.0.0.1", 0)
        servers.append(listening)
        port = listening.sockets[0].getsockname()[1]
        return server, f"http://127.0.0.1:{port}"

    yield start_server
    for listening in servers:
        listening.close()


def chunked(*events: bytes) -> bytes:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    return head + b"".join(b"%x\r\n%s\r\n" % (len(event), event) for event in events) + b"0\r\n\r\n"


async def sse_reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
    writer.write(chunked(SSE, SSE))
    await writer.drain()


def pool(base_url: str, *, timeout_s: float = 5.0) -> ReplyConnections:
    return ReplyConnections(base_url, {"content-type": "application/json"},
                            connect_timeout_s=timeout_s, head_timeout_s=timeout_s)


async def test_a_whole_reply_is_read_and_its_connection_kept_for_the_next(start) -> None:
    server, url = await start(sse_reply)
    connections = pool(url)
    for _ in range(3):
        reply = await connections.open("POST", "/v1/chat/completions", b"{}")
        assert reply.status_code == 200 and reply.headers["content-type"] == "text/event-stream"
        assert await reply.read_all() == SSE + SSE
        connections.release(reply)
    assert (server.connections, server.requests) == (1, 3)
    head = server.heads[0].decode()
    assert head.startswith("POST /v1/chat/completions HTTP/1.1\r\n") and "content-length: 2" in head
    connections.close()


async def test_an_unfinished_reply_closes_its_connection(start) -> None:
    async def endless(reader, writer, number) -> None:  # type: ignore[no-untyped-def]
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await writer.drain()
        await reader.read()  # until the proxy drops the connection

    server, url = await start(endless)
    connections = pool(url)
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    assert await reply.read() == b"hello"
    connections.release(reply)  # the client left: vLLM must see the connection go
    assert reply.closed
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    assert server.connections == 2
    connections.release(reply)


async def test_a_kept_connection_the_server_dropped_is_replaced(start) -> None:
    async def one_per_connection(reader, writer, number) -> bool:  # type: ignore[no-untyped-def]
        # Keep-alive on the wire, but the server drops the connection soon after (vLLM's
        # uvicorn does after 5 idle seconds).
        writer.write(chunked(SSE))
        await writer.drain()
        return False

    server, url = await start(one_per_connection)
    connections = pool(url)
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    assert await reply.read_all() == SSE
    connections.release(reply)
    await asyncio.sleep(0.1)  # the close arrives
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    assert await reply.read_all() == SSE
    assert (server.connections, server.requests) == (2, 2)
    connections.release(reply)


async def test_a_request_the_server_drops_unanswered_on_a_kept_connection_is_sent_again(start) -> None:
    async def drops_the_second(reader, writer, number) -> bool | None:  # type: ignore[no-untyped-def]
        if number == 2:
            return False  # closed as the request came in: its keep-alive ran out
        writer.write(chunked(SSE))
        await writer.drain()
        return None

    server, url = await start(drops_the_second)
    connections = pool(url)
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    await reply.read_all()
    connections.release(reply)
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    assert await reply.read_all() == SSE
    assert (server.connections, server.requests) == (2, 3)
    connections.release(reply)


async def test_a_body_cut_mid_reply_raises_what_the_routes_catch(start) -> None:
    async def dies(reader, writer, number) -> bool:  # type: ignore[no-untyped-def]
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await writer.drain()
        return False  # the engine died

    _, url = await start(dies)
    connections = pool(url)
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    assert await reply.read() == b"hello"
    with pytest.raises(ReplyBroken) as caught:
        await reply.read()
    assert isinstance(caught.value, StreamError)
    connections.release(reply)


async def test_a_body_without_length_or_chunks_ends_with_the_connection(start) -> None:
    async def close_delimited(reader, writer, number) -> bool:  # type: ignore[no-untyped-def]
        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n" + SSE)
        await writer.drain()
        return False

    _, url = await start(close_delimited)
    connections = pool(url)
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    assert await reply.read_all() == SSE
    assert not reply.reusable
    connections.release(reply)


async def test_a_refusal_is_read_whole(start) -> None:
    refusal = b'{"error": {"message": "too long"}}'

    async def refuses(reader, writer, number) -> None:  # type: ignore[no-untyped-def]
        writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(refusal), refusal))
        await writer.drain()

    server, url = await start(refuses)
    connections = pool(url)
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    assert (reply.status_code, await reply.read_all()) == (400, refusal)
    connections.release(reply)
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    assert server.connections == 1  # kept after a whole refusal
    connections.release(reply)


async def test_a_silent_backend_ends_the_stream_after_the_read_timeout(start) -> None:
    async def stalls(reader, writer, number) -> None:  # type: ignore[no-untyped-def]
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await writer.drain()
        await reader.read()

    _, url = await start(stalls)
    backend = Backend(url, api_key="secret-key", read_timeout_s=0.3)
    stream = await backend.open_stream("/v1/chat/completions", b"{}")
    assert await stream.read() == b"hello"
    started = asyncio.get_running_loop().time()
    with pytest.raises(ReadTimeout):
        await stream.read()
    assert 0.3 <= asyncio.get_running_loop().time() - started < 1.0
    await stream.aclose()
    await backend.aclose()


async def test_a_backend_that_never_answers_is_unavailable_after_the_read_timeout(start) -> None:
    closed = asyncio.Event()

    async def never_answers(reader, writer, number) -> None:  # type: ignore[no-untyped-def]
        await reader.read()  # reads the request, answers nothing, sees the proxy hang up
        closed.set()

    _, url = await start(never_answers)
    backend = Backend(url, api_key=None, read_timeout_s=0.3)
    started = asyncio.get_running_loop().time()
    with pytest.raises(BackendUnavailable, match="(?i)time"):
        await backend.open_stream("/v1/chat/completions", b"{}")
    assert 0.3 <= asyncio.get_running_loop().time() - started < 1.0
    await asyncio.wait_for(closed.wait(), 2)  # the connection is not kept for the next request
    await backend.aclose()


async def test_a_stopped_backend_is_unavailable_not_a_traceback() -> None:
    stopped = await asyncio.start_server(sse_reply, "127.0.0.1", 0)  # type: ignore[arg-type]
    port = stopped.sockets[0].getsockname()[1]
    stopped.close()
    await stopped.wait_closed()
    backend = Backend(f"http://127.0.0.1:{port}", api_key=None, read_timeout_s=5)
    with pytest.raises(BackendUnavailable, match="connection refused"):
        await backend.open_stream("/v1/chat/completions", b"{}")


async def test_a_reader_that_falls_behind_stops_the_socket_and_resumes_it(start) -> None:
    sent: list[int] = []

    async def floods(reader, writer, number) -> None:  # type: ignore[no-untyped-def]
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        block = b"x" * 65536
        for _ in range(256):  # 16 MiB, far past the kernel's buffers and the high-water mark
            writer.write(b"%x\r\n%s\r\n" % (len(block), block))
            await writer.drain()
            sent.append(len(block))
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    _, url = await start(floods)
    connections = pool(url)
    reply = await connections.open("POST", "/v1/chat/completions", b"{}")
    await asyncio.sleep(0.5)  # nobody reads
    held_back = sum(sent)
    assert held_back < 8 * 2**20, f"{held_back / 2**20:.1f} MiB taken in without a reader"
    assert len(await reply.read_all()) == 256 * 65536  # reading resumes the flow
    connections.release(reply)


# ---- the per-token path: the body handed to a sink while the reader waits --------------------


def paced(*groups: tuple[bytes, ...], pause_s: float = 0.05) -> Handler:
    """A reply whose chunks come in groups, one write each, `pause_s` apart."""

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, number: int) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for group in groups:
            await asyncio.sleep(pause_s)
            writer.write(b"".join(b"%x\r\n%s\r\n" % (len(event), event) for event in group))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    return reply


async def test_a_waiting_reader_s_sink_gets_each_network_read_whole_and_in_order(start) -> None:
    _, url = await start(paced((b"a1", b"a2", b"a3"), (b"b1",), (b"c1", b"c2")))
    reply = await pool(url).open("POST", "/v1/chat/completions", b"{}")
    handed: list[bytes] = []
    reply.deliver_to(lambda data: handed.append(data) is None)
    assert await reply.read() == b""  # everything went to the sink; the reader woke at the end
    # The chunks of one read arrive together: one write to the client, not one per chunk.
    assert handed == [b"a1a2a3", b"b1", b"c1c2"]
    assert reply.total_bytes == 12 and reply.reusable


async def test_what_the_sink_declines_is_read_in_order_and_the_sink_resumes_once_the_reader_waits(
    start,
) -> None:
    _, url = await start(paced((b"a",), (b"b",), (b"c",), (b"d",)))
    reply = await pool(url).open("POST", "/v1/chat/completions", b"{}")
    handed: list[bytes] = []
    declines = iter([True, False])  # takes a, declines b (a full client socket), then takes all

    def sink(data: bytes) -> bool:
        taken = next(declines, True)
        if taken:
            handed.append(data)
        return taken

    reply.deliver_to(sink)
    assert await reply.read() == b"b"  # the declined part wakes the reader, in its place
    assert handed == [b"a"]
    assert await reply.read() == b""
    assert handed == [b"a", b"c", b"d"]


async def test_a_sink_that_raises_ends_the_reply_with_its_error(start) -> None:
    _, url = await start(paced((b"a",), (b"b",)))
    reply = await pool(url).open("POST", "/v1/chat/completions", b"{}")

    def broken(data: bytes) -> bool:
        raise ValueError("a bug in the relay")

    reply.deliver_to(broken)
    with pytest.raises(ValueError, match="a bug in the relay"):
        await reply.read()
    assert not reply.reusable  # an unfinished reply's connection is never kept
