"""What the filter-proxy costs: added time-to-first-token and streamed throughput.

One command, one table: (a) direct to a fast scripted backend, (b) OpenAI pass-through and
(c) Anthropic translation through `stackctl proxy serve`, at concurrency 1, 16 and 128, all
against the same backend in the same run; (r), a do-nothing TCP relay, shows what one more
process hop costs on the machine itself. The backend, the proxy and this client run as
separate processes; the client is a minimal HTTP/1.1 reader so its own cost stays small.

    .venv/bin/python benchmarks/proxy_overhead.py            # full run (~1.5 min)
    .venv/bin/python benchmarks/proxy_overhead.py --quick    # smoke run (~20 s)

The backend paces tokens like a real engine (--rate tokens/s per stream, 0 = as fast as it
can), writing vLLM 0.22-style chunks that include `"tool_calls":[]`, so the proxy's cleanup
and translation are on the measured path. Targets (issue 3): at concurrency 16 the added TTFT
is <= 1 ms at p50 and <= 3 ms at p99; at 128 the proxied aggregate is >= 90% of direct.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

MODEL = "bench-model"
KEY = "sk-bench-not-a-secret"
REPO = Path(__file__).resolve().parents[1]
DIRECT, RELAY = "(a) direct", "(r) tcp relay"


# ---- the scripted backend (runs in its own process) ------------------------------------------


def backend_app(rate: float, tokens: int):  # type: ignore[no-untyped-def]
    created = int(time.time())

    def chunk(delta: str, finish: str | None = None) -> bytes:
        finish_json = "null" if finish is None else f'"{finish}"'
        return (
            f'data: {{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":{created},'
            f'"model":"{MODEL}","choices":[{{"index":0,"delta":{delta},"logprobs":null,'
            f'"finish_reason":{finish_json}}}]}}\n\n'
        ).encode()

    role = chunk('{"role":"assistant","content":"","tool_calls":[]}')
    token = chunk('{"content":" tok","tool_calls":[]}')
    final = chunk('{"content":"","tool_calls":[]}', "length")
    usage = (
        f'data: {{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":{created},'
        f'"model":"{MODEL}","choices":[],"usage":{{"prompt_tokens":12,'
        f'"total_tokens":{12 + tokens},"completion_tokens":{tokens}}}}}\n\ndata: [DONE]\n\n'
    ).encode()
    models = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode()
    sse = [(b"content-type", b"text/event-stream")]
    interval = 1.0 / rate if rate > 0 else 0.0

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
                await receive()
                await send({"type": "lifespan.shutdown.complete"})
            return
        while (await receive()).get("more_body"):
            pass
        if scope["path"] == "/v1/models":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": models})
            return
        await send({"type": "http.response.start", "status": 200, "headers": sse})
        await send({"type": "http.response.body", "body": role, "more_body": True})
        started = time.monotonic()
        for index in range(tokens):
            await send({"type": "http.response.body", "body": token, "more_body": True})
            if interval:
                # Against a schedule, not a fixed sleep, so slow event loops do not drift.
                await asyncio.sleep(max(0.0, started + (index + 1) * interval - time.monotonic()))
        await send({"type": "http.response.body", "body": final + usage})

    return app


def serve_backend(port: int, rate: float, tokens: int) -> None:
    import uvicorn

    uvicorn.run(
        backend_app(rate, tokens),
        host="127.0.0.1",
        port=port,
        loop="uvloop",
        http="httptools",
        log_level="warning",
        access_log=False,
    )


# ---- a do-nothing TCP relay: what one more process hop costs on this machine -----------------


def serve_relay(port: int, backend_port: int) -> None:
    """Copies bytes both ways and understands nothing: the floor under any proxy's added TTFT
    (two more loopback hops and process wake-ups), measured so the table can separate the
    machine's cost from the proxy's own."""
    import uvloop

    async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def relay(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter):  # type: ignore[no-untyped-def]
        backend_reader, backend_writer = await asyncio.open_connection("127.0.0.1", backend_port)
        await asyncio.gather(
            pump(client_reader, backend_writer), pump(backend_reader, client_writer)
        )

    async def main() -> None:
        server = await asyncio.start_server(relay, "127.0.0.1", port)
        await server.serve_forever()

    uvloop.run(main())


# ---- a minimal streaming HTTP/1.1 client -----------------------------------------------------


@dataclass
class Sample:
    ttft: float
    tokens: int
    stream_seconds: float  # first token to last token


class Connection:
    """One keep-alive connection; requests on it are sequential, like one agent's."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, path: str, body: bytes, token_mark: bytes) -> Sample:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = (
            f"POST {path} HTTP/1.1\r\nhost: {self.host}\r\ncontent-type: application/json\r\n"
            f"x-api-key: {KEY}\r\nanthropic-version: 2023-06-01\r\n"
            f"content-length: {len(body)}\r\n\r\n"
        ).encode()
        started = time.perf_counter()
        self.writer.write(head + body)
        status_line = await self.reader.readline()
        if b" 200 " not in status_line:
            raise RuntimeError(f"{path}: {status_line.decode().strip()}")
        chunked = False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"transfer-encoding:") and b"chunked" in line.lower():
                chunked = True
        if not chunked:
            raise RuntimeError(f"{path}: expected a chunked streaming reply")
        first = last = 0.0
        tokens = 0
        pending = b""
        while True:
            size = int((await self.reader.readline()).strip(), 16)
            data = await self.reader.readexactly(size + 2)
            if size == 0:
                break
            now = time.perf_counter()
            pending += data[:-2]
            *events, pending = pending.split(b"\n\n")
            for event in events:
                if token_mark in event:
                    tokens += 1
                    last = now
                    if not first:
                        first = now
        return Sample(ttft=first - started, tokens=tokens, stream_seconds=last - first)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


@dataclass
class Mode:
    name: str
    port: int
    path: str
    body: bytes
    token_mark: bytes


@dataclass
class Result:
    mode: str
    concurrency: int
    samples: list[Sample] = field(default_factory=list)
    wall_seconds: float = 0.0

    def ttft_ms(self, quantile: float) -> float:
        values = sorted(sample.ttft * 1000 for sample in self.samples)
        return values[min(len(values) - 1, int(quantile * len(values)))]

    @property
    def per_connection_rate(self) -> float:
        rates = [(s.tokens - 1) / s.stream_seconds for s in self.samples if s.stream_seconds > 0]
        return statistics.mean(rates) if rates else float("nan")  # one-token or instant replies

    @property
    def aggregate_rate(self) -> float:
        return sum(sample.tokens for sample in self.samples) / self.wall_seconds


async def run_level(
    mode: Mode, concurrency: int, requests_each: int, reply_seconds: float
) -> Result:
    connections = [Connection("127.0.0.1", mode.port) for _ in range(concurrency)]
    result = Result(mode=mode.name, concurrency=concurrency)
    # Agents work independently: spread their first requests over one reply's duration
    # instead of firing all at once (the same offsets for every mode, so runs compare).
    offsets = random.Random(concurrency).sample(range(1000), concurrency)

    async def agent(connection: Connection, count: int, offset: float) -> None:
        await asyncio.sleep(offset)
        for _ in range(count):
            result.samples.append(await connection.request(mode.path, mode.body, mode.token_mark))

    # Warm every connection first (TCP connect, the proxy's backend pool), then measure.
    await asyncio.gather(*(agent(c, 1, 0.0) for c in connections))
    result.samples.clear()
    started = time.perf_counter()
    await asyncio.gather(
        *(
            agent(c, requests_each, offset / 1000 * reply_seconds)
            for c, offset in zip(connections, offsets)
        )
    )
    result.wall_seconds = time.perf_counter() - started
    for connection in connections:
        connection.close()
    return result


# ---- orchestration ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{what} exited with code {process.returncode} while starting")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"{what} did not listen on port {port} within 30 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer requests")
    parser.add_argument(
        "--rate",
        type=float,
        default=50.0,
        help="tokens/s per stream from the backend (0 = unpaced)",
    )
    parser.add_argument("--tokens", type=int, default=None, help="tokens per reply")
    parser.add_argument("--levels", default="1,16,128", help="concurrency levels")
    parser.add_argument("--_backend", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--_relay", type=int, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    tokens = args.tokens or (16 if args.quick else 32)
    if args._backend:
        serve_backend(args._backend, args.rate, tokens)
        return
    if args._relay:
        serve_relay(*args._relay)
        return

    levels = [int(level) for level in args.levels.split(",")]
    backend_port, proxy_port, relay_port = free_port(), free_port(), free_port()
    python = sys.executable
    env = {
        **os.environ,
        "STACKCTL_PROXY_KEYS": f"bench={KEY}",
        "STACKCTL_PROXY_LOG_LEVEL": "warning",
        "PYTHONPATH": str(REPO),
    }
    env.pop("VLLM_API_KEY", None)
    backend = subprocess.Popen(
        [
            python,
            __file__,
            "--_backend",
            str(backend_port),
            "--rate",
            str(args.rate),
            "--tokens",
            str(tokens),
        ],
        env=env,
    )
    relay = subprocess.Popen(
        [python, __file__, "--_relay", str(relay_port), str(backend_port)], env=env
    )
    proxy = subprocess.Popen(
        [
            python,
            "-m",
            "stackctl.proxy",
            "serve",
            "--backend",
            f"http://127.0.0.1:{backend_port}",
            "--port",
            str(proxy_port),
            "--alias",
            f"claude-*={MODEL}",
        ],
        env=env,
        cwd=REPO,
    )
    try:
        wait_for_port(backend_port, backend, "the scripted backend")
        wait_for_port(proxy_port, proxy, "the proxy")
        wait_for_port(relay_port, relay, "the TCP relay")
        chat = json.dumps(
            {
                "model": MODEL,
                "stream": True,
                "max_tokens": tokens,
                "messages": [{"role": "user", "content": "go"}],
            }
        ).encode()
        messages = json.dumps(
            {
                "model": "claude-bench",
                "stream": True,
                "max_tokens": tokens,
                "messages": [{"role": "user", "content": "go"}],
            }
        ).encode()
        modes = [
            Mode(DIRECT, backend_port, "/v1/chat/completions", chat, b'"content":" '),
            Mode(RELAY, relay_port, "/v1/chat/completions", chat, b'"content":" '),
            Mode("(b) openai", proxy_port, "/v1/chat/completions", chat, b'"content":" '),
            Mode("(c) anthropic", proxy_port, "/v1/messages", messages, b"content_block_delta"),
        ]
        reply_seconds = tokens / args.rate if args.rate > 0 else 0.0
        results = asyncio.run(measure(modes, levels, reply_seconds, quick=args.quick))
    finally:
        for process in (proxy, relay, backend):
            process.terminate()
        for process in (proxy, relay, backend):
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
    print_table(results, levels, tokens, args.rate)


async def measure(
    modes: list[Mode], levels: list[int], reply_seconds: float, *, quick: bool
) -> list[Result]:
    results = []
    for concurrency in levels:
        # Enough samples for a p99 to mean something, within ~1.5 min for the whole run.
        if concurrency == 1:
            requests_each = 10 if quick else 25
        elif concurrency < 128:
            requests_each = max(1, (16 if quick else 128) // concurrency)
        else:
            requests_each = 1 if quick else 2
        for mode in modes:
            results.append(await run_level(mode, concurrency, requests_each, reply_seconds))
    return results


def print_table(results: list[Result], levels: list[int], tokens: int, rate: float) -> None:
    cores = os.cpu_count()
    pacing = f"{rate:g} tok/s per stream" if rate > 0 else "unpaced"
    print(
        f"\nproxy overhead: {tokens} tokens per reply, backend {pacing}, {cores} CPU cores; "
        "added = mode - direct"
    )
    header = (
        f"{'mode':<14}{'conc':>5}{'n':>6}{'TTFT p50':>10}{'p99':>8}{'added p50':>11}"
        f"{'p99':>8}{'tok/s/conn':>12}{'aggregate':>11}{'vs (a)':>8}"
    )
    print(header)
    print("-" * len(header))
    for concurrency in levels:
        level = [r for r in results if r.concurrency == concurrency]
        direct = level[0]
        for result in level:
            added50 = result.ttft_ms(0.5) - direct.ttft_ms(0.5)
            added99 = result.ttft_ms(0.99) - direct.ttft_ms(0.99)
            print(
                f"{result.mode:<14}{concurrency:>5}{len(result.samples):>6}"
                f"{result.ttft_ms(0.5):>8.2f}ms{result.ttft_ms(0.99):>6.2f}ms"
                f"{added50:>9.2f}ms{added99:>6.2f}ms{result.per_connection_rate:>12.1f}"
                f"{result.aggregate_rate:>11.0f}{result.aggregate_rate / direct.aggregate_rate:>8.1%}"
            )
    print(
        "TTFT is in ms (ms columns); throughput in streamed tokens/s; 'vs (a)' is aggregate "
        "throughput as a share of direct. (r) relays bytes and does nothing else: its added "
        "TTFT is this machine's cost of one more process hop, part of every proxy's figure."
    )
    for concurrency in levels:
        level = {r.mode: r for r in results if r.concurrency == concurrency}
        relay = level.get(RELAY)
        if relay is None:
            continue
        own = ", ".join(
            f"{mode} p50 {r.ttft_ms(0.5) - relay.ttft_ms(0.5):.2f} ms / "
            f"p99 {r.ttft_ms(0.99) - relay.ttft_ms(0.99):.2f} ms"
            for mode, r in level.items()
            if mode not in (RELAY, DIRECT)
        )
        print(f"  c{concurrency}: TTFT added beyond the relay: {own}")
    checks = []
    for result in results:
        direct = next(r for r in results if r.concurrency == result.concurrency)
        if result.mode in (DIRECT, RELAY):
            continue
        if result.concurrency == 16:
            added50 = result.ttft_ms(0.5) - direct.ttft_ms(0.5)
            added99 = result.ttft_ms(0.99) - direct.ttft_ms(0.99)
            checks.append(
                (f"{result.mode} c16 added TTFT p50 {added50:.2f} ms <= 1 ms", added50 <= 1.0)
            )
            checks.append(
                (f"{result.mode} c16 added TTFT p99 {added99:.2f} ms <= 3 ms", added99 <= 3.0)
            )
        if result.concurrency == 128:
            share = result.aggregate_rate / direct.aggregate_rate
            checks.append(
                (f"{result.mode} c128 aggregate {share:.1%} of direct >= 90%", share >= 0.9)
            )
    for text, ok in checks:
        print(f"  [{'PASS' if ok else 'MISS'}] {text}")


if __name__ == "__main__":
    main()
