"""A streaming client light enough not to be what a benchmark measures: raw HTTP/1.1 on keep-alive
connections, SSE events split on blank lines and recognised by a byte mark, no JSON parsing per
event. Connections are sharded over worker processes (each its own event loop, uvloop where
installed), so at GPU speed (thousands of events a second) one core's Python is not the ceiling.

Used by benchmarks/engine_routes.py (a running stack, e.g. on the GPU) and importable by others.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

# A content token in each API's stream (one per SSE event as vLLM sends them).
TOKEN_MARKS = {
    "openai": (b'"content":"', b'"content":""'),  # the mark, and an empty delta that is no token
    "anthropic": (b'"text_delta"', None),
}
# How a well-formed stream ends; a stream that stops before it was cut.
END_MARKS = {"openai": b"data: [DONE]", "anthropic": b"event: message_stop"}
# The generated tokens the server reports (OpenAI's usage chunk, Anthropic's message_delta): a
# text delta can hold several tokens, or none while a multi-byte character is incomplete.
USAGE = re.compile(rb'"(?:completion_tokens|output_tokens)":(\d+)')


@dataclass(frozen=True)
class Target:
    """One route: where to send, how to authenticate, what to send, which API answers."""

    name: str
    port: int
    path: str
    headers: dict[str, str]
    body: bytes
    api: str  # "openai" | "anthropic"
    host: str = "127.0.0.1"


@dataclass
class Sample:
    ttft: float  # seconds from the request's first byte to the first token
    tokens: int  # text deltas (SSE events carrying text)
    stream_seconds: float  # first token to last token
    error: str = ""  # a cut stream, an error status, a refused connection
    usage_tokens: int = 0  # generated tokens as the server counted them


@dataclass
class LevelResult:
    target: str
    concurrency: int
    samples: list[Sample] = field(default_factory=list)
    wall_seconds: float = 0.0
    client_cpu_seconds: float = 0.0
    client_processes: int = 1
    warm_streams: int = 0  # the warm-up round's (one per connection, before the measurement)
    warm_tokens: int = 0

    @property
    def ok(self) -> list[Sample]:
        return [sample for sample in self.samples if not sample.error]

    @property
    def failures(self) -> int:
        return len(self.samples) - len(self.ok)

    def ttft_ms(self, quantile: float) -> float:
        values = sorted(sample.ttft * 1000 for sample in self.ok)
        return values[min(len(values) - 1, int(quantile * len(values)))] if values else float("nan")

    @property
    def aggregate_rate(self) -> float:
        return sum(sample.tokens for sample in self.ok) / self.wall_seconds if self.wall_seconds else 0.0

    @property
    def mean_tokens(self) -> float:
        return statistics.mean(sample.tokens for sample in self.ok) if self.ok else 0.0

    @property
    def usage_rate(self) -> float:
        """Generated tokens/s as the server reports them (0 where it reports none)."""
        return sum(sample.usage_tokens for sample in self.ok) / self.wall_seconds if self.wall_seconds else 0.0

    @property
    def mean_usage_tokens(self) -> float:
        return statistics.mean(sample.usage_tokens for sample in self.ok) if self.ok else 0.0

    @property
    def client_cores(self) -> float:
        return self.client_cpu_seconds / self.wall_seconds if self.wall_seconds else 0.0


class _StaleConnection(Exception):
    """The connection closed before any byte of the reply."""


class Connection:
    """One keep-alive connection; its requests are sequential, like one agent's."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.head = "".join(
            [f"POST {target.path} HTTP/1.1\r\nhost: {target.host}\r\ncontent-type: application/json\r\n",
             *(f"{name}: {value}\r\n" for name, value in target.headers.items()),
             f"content-length: {len(target.body)}\r\n\r\n"]).encode()
        self.mark, self.not_mark = TOKEN_MARKS[target.api]
        self.end = END_MARKS[target.api]

    async def request(self) -> Sample:
        started = time.perf_counter()
        reused = self.writer is not None
        try:
            return await self._request(started)
        except _StaleConnection:
            # The server closed the kept-alive connection while it sat idle (uvicorn does after
            # 5 s): like any HTTP client, send the request again on a fresh connection.
            self.close()
            if not reused:
                return Sample(time.perf_counter() - started, 0, 0.0, "no reply")
            return await self.request()
        except (OSError, asyncio.IncompleteReadError, ValueError) as error:
            self.close()
            return Sample(time.perf_counter() - started, 0, 0.0, f"{type(error).__name__}: {error}"[:200])

    async def _request(self, started: float) -> Sample:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.target.host, self.target.port)
        assert self.reader is not None and self.writer is not None
        try:
            self.writer.write(self.head + self.target.body)
            status = await self.reader.readline()
        except ConnectionError:
            raise _StaleConnection from None
        if not status:
            raise _StaleConnection
        chunked = False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"transfer-encoding:") and b"chunked" in line.lower():
                chunked = True
        if b" 200 " not in status or not chunked:
            self.close()
            return Sample(time.perf_counter() - started, 0, 0.0, status.decode(errors="replace").strip() or "no reply")
        first = last = 0.0
        tokens = usage = 0
        pending = b""
        ended = False
        mark, not_mark, end = self.mark, self.not_mark, self.end
        while True:
            size = int((await self.reader.readline()).strip(), 16)
            data = await self.reader.readexactly(size + 2)
            if size == 0:
                break
            now = time.perf_counter()
            pending += data[:-2]
            *events, pending = pending.split(b"\n\n")
            for event in events:
                if mark in event and (not_mark is None or not_mark not in event):
                    tokens += 1
                    last = now
                    if not first:
                        first = now
                elif end in event:
                    ended = True
                elif b'"usage"' in event and (found := USAGE.search(event)):
                    usage = int(found.group(1))
        error = "" if ended else "the stream ended without its closing event"
        return Sample((first or last or time.perf_counter()) - started, tokens, last - first, error, usage)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def _run_shard(target: Target, connections: int, requests_each: int, offsets: list[float],
                     warm: bool) -> tuple[list[Sample], float, list[Sample]]:
    pool = [Connection(target) for _ in range(connections)]
    samples: list[Sample] = []
    warm_samples: list[Sample] = []

    async def agent(connection: Connection, count: int, offset: float) -> None:
        await asyncio.sleep(offset)
        for _ in range(count):
            samples.append(await connection.request())

    if warm:  # TCP connect and the server's own pools, outside the measurement
        await asyncio.gather(*(agent(connection, 1, 0.0) for connection in pool))
        warm_samples, samples = samples, []
    started = time.perf_counter()
    await asyncio.gather(*(agent(connection, requests_each, offset) for connection, offset in zip(pool, offsets)))
    wall = time.perf_counter() - started
    for connection in pool:
        connection.close()
    return samples, wall, warm_samples


def worker_main() -> None:
    """`python stream_client.py --worker`: one shard, job as JSON on stdin, results on stdout."""
    job = json.loads(sys.stdin.read())
    target = Target(**{**job["target"], "body": job["target"]["body"].encode()})
    try:
        import uvloop  # type: ignore[import-not-found]

        uvloop.install()
    except ImportError:
        pass
    before = resource.getrusage(resource.RUSAGE_SELF)
    samples, wall, warm_samples = asyncio.run(_run_shard(target, job["connections"], job["requests_each"], job["offsets"],
                                           job["warm"]))
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(json.dumps({"samples": [asdict(sample) for sample in samples], "wall": wall, "cpu": cpu,
                      "warm_streams": len(warm_samples), "warm_tokens": sum(s.tokens for s in warm_samples)}))


def run_level(target: Target, concurrency: int, requests_each: int, *, spread_seconds: float = 0.0,
              processes: int | None = None, warm: bool = True) -> LevelResult:
    """`concurrency` agents, each sending `requests_each` streamed requests one after another,
    their first requests spread over `spread_seconds` (the same offsets for every target)."""
    processes = max(1, min(concurrency, processes or default_processes(concurrency)))
    offsets = [offset / 1000 * spread_seconds for offset in random.Random(concurrency).sample(range(1000), concurrency)] \
        if concurrency <= 1000 else [random.Random(i).random() * spread_seconds for i in range(concurrency)]
    shards = [offsets[index::processes] for index in range(processes)]
    job_target = {**asdict(target), "body": target.body.decode()}
    workers = [subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True) for _ in shards]
    for worker, shard in zip(workers, shards):
        assert worker.stdin is not None
        worker.stdin.write(json.dumps({"target": job_target, "connections": len(shard), "requests_each": requests_each,
                                       "offsets": shard, "warm": warm}))
        worker.stdin.close()
    result = LevelResult(target.name, concurrency, client_processes=processes)
    for worker in workers:
        assert worker.stdout is not None
        output = worker.stdout.read()
        if worker.wait() != 0 or not output.strip():
            raise RuntimeError(f"a client worker for {target.name} failed (exit {worker.returncode})")
        shard = json.loads(output)
        result.samples += [Sample(**sample) for sample in shard["samples"]]
        result.wall_seconds = max(result.wall_seconds, shard["wall"])
        result.client_cpu_seconds += shard["cpu"]
        result.warm_streams += shard["warm_streams"]
        result.warm_tokens += shard["warm_tokens"]
    return result


def default_processes(concurrency: int) -> int:
    """About 32 streams a worker, never more workers than half the cores."""
    return max(1, min((os.cpu_count() or 2) // 2, -(-concurrency // 32)))


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    worker_main()
