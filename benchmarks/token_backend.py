"""A scripted OpenAI backend that streams vLLM's exact one-token chunks at engine speed.

What the proxy reads from a GPU engine, and what costs it most: one SSE event per token per
stream, each its own write. vLLM's chunks, byte for byte in the form vLLM 0.22 (NGC images)
writes them (tests/data/vllm_streams/text.sse): the role chunk, one chunk per token with
`"tool_calls":[]`, the finish chunk, the usage chunk (`include_usage`), `data: [DONE]`, and the
body's end, each its own write.

It generates like an engine: one step writes one token to every active stream, then the next
step. `--rate R` paces the steps so that all streams together get R tokens/s (a GPU's aggregate
throughput, shared by whoever is running); `--rate 0` runs the steps back to back, yielding to
the event loop between them (a reader that falls behind then gets several tokens per read,
exactly as from a real engine). `--stream-rate R` paces the steps so that each stream gets R
tokens/s however many run (a model that streams at a reader's pace). Raw asyncio on uvloop, so that its own cost per token stays a
few microseconds on a machine it shares with the proxy and the client.

    python benchmarks/token_backend.py PORT [--rate 0 | --stream-rate 50] [--tokens 256]

Serves POST /v1/chat/completions (streamed whatever the body asks), GET /v1/models (a window of
32768 tokens), GET /health; the model is `bench-model`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time

MODEL = "bench-model"
PROMPT_TOKENS = 12
# Tokens as a tokenizer cuts English text: short, mostly with a leading space; one non-ASCII.
WORDS = (" The", " model", " writes", " one", " token", " at", " a", " time", ",", " café", ".")
_ids = itertools.count()


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


class Reply:
    """One streamed completion: its chunks prepared at the start, written one step at a time.
    With `continuous_usage_stats` (the proxy's Anthropic route asks for it) every chunk carries
    the usage so far, as vLLM's do."""

    def __init__(self, transport: asyncio.Transport, tokens: int, *, continuous_usage: bool) -> None:
        self.transport = transport
        self.tokens = tokens
        self.sent = 0
        self.continuous_usage = continuous_usage
        created = int(time.time())
        self._head = (f'data: {{"id":"chatcmpl-{next(_ids):032x}","object":"chat.completion.chunk",'
                      f'"created":{created},"model":"{MODEL}","choices":[')
        self._words = [
            f'{{"index":0,"delta":{{"content":{json.dumps(word, ensure_ascii=False)},"tool_calls":[]}},'
            f'"logprobs":null,"finish_reason":null}}]' for word in WORDS
        ]
        self._prepared = [self._chunk(choice, None) for choice in self._words] if not continuous_usage else []

    def _chunk(self, choices: str, completion_tokens: int | None) -> bytes:
        usage = "" if completion_tokens is None else (
            f',"usage":{{"prompt_tokens":{PROMPT_TOKENS},"total_tokens":{PROMPT_TOKENS + completion_tokens},'
            f'"completion_tokens":{completion_tokens}}}')
        return _chunked(f"{self._head}{choices}{usage}}}\n\n".encode())

    def _usage_now(self) -> int | None:
        return self.sent if self.continuous_usage else None

    def start(self) -> None:
        role = '{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[]},"logprobs":null,"finish_reason":null}]'
        self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
                             b"transfer-encoding: chunked\r\n\r\n" + self._chunk(role, self._usage_now()))

    def step(self) -> bool:
        """Writes the next token (the end after the last); False once the reply is complete."""
        if self.transport.is_closing():
            return False
        if self.sent < self.tokens:
            word = self.sent % len(WORDS)
            self.sent += 1
            self.transport.write(self._prepared[word] if self._prepared else self._chunk(self._words[word], self.sent))
            return True
        finish = ('{"index":0,"delta":{"content":"","tool_calls":[]},"logprobs":null,"finish_reason":"length",'
                  '"stop_reason":null}]')
        # Each its own write, as vLLM's server writes them: a reader may get [DONE] before the
        # body's end, and must read on to keep the connection.
        write = self.transport.write
        write(self._chunk(finish, self._usage_now()))
        write(self._chunk("]", self.tokens))  # the usage chunk: no choices
        write(_chunked(b"data: [DONE]\n\n"))
        write(b"0\r\n\r\n")
        return False


class Engine:
    """Steps every active reply by one token; `rate` tokens/s over all of them (0: unpaced), or
    `stream_rate` tokens/s for each, however many run (a slow model's per-stream pace)."""

    def __init__(self, rate: float, stream_rate: float = 0.0) -> None:
        self.rate = rate
        self.stream_rate = stream_rate
        self.active: list[Reply] = []
        self.joining: list[Reply] = []
        self._wake = asyncio.Event()

    def join(self, reply: Reply) -> None:
        reply.start()
        self.joining.append(reply)
        self._wake.set()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        next_step = loop.time()
        while True:
            if self.joining:
                self.active += self.joining
                self.joining = []
            if not self.active:
                self._wake.clear()
                await self._wake.wait()
                next_step = loop.time()
                continue
            running = len(self.active)
            self.active = [reply for reply in self.active if reply.step()]
            if not self.rate and not self.stream_rate:
                await asyncio.sleep(0)
                continue
            next_step += 1 / self.stream_rate if self.stream_rate else running / self.rate
            delay = next_step - loop.time()
            if delay < -0.05:  # far behind (the machine is busy): do not burst to catch up
                next_step = loop.time()
            await asyncio.sleep(max(0.0, delay))


class BackendProtocol(asyncio.Protocol):
    """HTTP/1.1 keep-alive, one request at a time (what the proxy's pool and the clients send)."""

    def __init__(self, engine: Engine, tokens: int) -> None:
        self.engine = engine
        self.tokens = tokens
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = self.buffer[:end].decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4:end + 4 + length]
            self.buffer = self.buffer[end + 4 + length:]
            self._answer(head.split(" ", 2), body)

    def _answer(self, request_line: list[str], body: bytes) -> None:
        assert self.transport is not None
        method, path = request_line[0], request_line[1].split("?")[0]
        if method == "POST" and path == "/v1/chat/completions":
            continuous = b'"continuous_usage_stats":true' in body.replace(b" ", b"")
            self.engine.join(Reply(self.transport, self.tokens, continuous_usage=continuous))
        elif path == "/v1/models":
            self._json({"object": "list", "data": [
                {"id": MODEL, "object": "model", "owned_by": "bench", "max_model_len": 32768}]})
        elif path == "/health":
            self._json({})
        else:
            self._json({"error": {"message": f"no route {method} {path}"}}, status="404 Not Found")

    def _json(self, payload: object, status: str = "200 OK") -> None:
        assert self.transport is not None
        body = json.dumps(payload).encode()
        self.transport.write(f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
                             f"content-length: {len(body)}\r\n\r\n".encode() + body)


async def serve(port: int, rate: float, tokens: int, stream_rate: float = 0.0) -> None:
    engine = Engine(rate, stream_rate)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: BackendProtocol(engine, tokens), "127.0.0.1", port, backlog=4096)
    async with server:
        await engine.run()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--rate", type=float, default=0.0, help="aggregate tokens/s (0: unpaced)")
    parser.add_argument("--stream-rate", type=float, default=0.0,
                        help="tokens/s for each stream, however many run (in place of --rate)")
    parser.add_argument("--tokens", type=int, default=256, help="tokens per reply")
    options = parser.parse_args()
    import uvloop

    uvloop.run(serve(options.port, options.rate, options.tokens, options.stream_rate))


if __name__ == "__main__":
    main()
