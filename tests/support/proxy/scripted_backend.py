"""A scripted OpenAI-compatible backend that replays recorded vLLM replies byte for byte.

The scenario comes from the last user message (or the prompt): `scenario:NAME` picks
tests/data/vllm_streams/NAME.sse (streamed) or NAME.json; `delay=SECONDS` waits before the
first byte (a long prefill), `pace=SECONDS` waits between events, `stall=N` goes silent after
N events until the client leaves (a stuck engine, recorded in `disconnects`); `scenario:hang` streams
forever until the client leaves; `scenario:flood` streams FLOOD_BYTES of text deltas as fast
as the reader takes them, counting what it sent in `flood_sent` (the slow-reader test).
`/v1/responses` answers as vLLM's Responses endpoint does (scripted_responses.py).
`python -m tests.support.proxy.scripted_backend PORT` serves it as a process of its own
(the fault tests kill it). Every request body is recorded for assertions.

Multi-turn scenarios (the proxy's web-search loop) use scripts instead: `backend.script(KEY,
[Turn(...), ...])` queues replies, and any request whose messages mention `script:KEY` gets the
next one, streamed or not, in vLLM's chunk format; `backend.script_requests(KEY)` returns them.

Like vLLM, it answers 400 to a request whose shape it cannot use (the fuzz tests send such
requests through the OpenAI pass-through), and `/metrics` reports `waiting` as
`vllm:num_requests_waiting` (the proxy's back-pressure reads it). `failures` counts requests
it could not answer at all (a bug here, not in the proxy).

Its window is `window` tokens (`max_model_len` in its model list), a prompt being
`prompt_tokens(body)` of them. Like vLLM 0.32 it refuses max_tokens above the window and a
prompt over it, in 0.32's words; with `refuses_overflow` it also refuses prompt + max_tokens
past the window in older releases' words, as NGC images may.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.types import Receive, Scope, Send

from tests.support.proxy import scripted_responses as responses
from tests.support.proxy.servers import answer_lifespan

STREAMS = Path(__file__).resolve().parents[2] / "data" / "vllm_streams"
SERVED_MODEL = "qwen3-coder"
# The recorded replies that end normally (died_midway is the broken-stream case).
RECORDED_SCENARIOS = [
    "text",
    "thinking",
    "one_tool_call",
    "two_tool_calls_interleaved",
    "stop_sequence",
    "max_tokens",
]
FLOOD_BYTES = 256 * 1024 * 1024
_SCENARIO = re.compile(r"scenario:(\w+)")
_OPTION = re.compile(r"\b(delay|pace|stall)=([0-9.]+)")
_SCRIPT = re.compile(r"script:(\w+)")


@dataclass(frozen=True)
class Turn:
    """One scripted model reply: text, then tool calls as (name, arguments)."""

    text: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    completion_tokens: int = 7
    reasoning: str = ""  # streamed first, as a reasoning item (the Responses API only)


class BackendCrash(Exception):
    """Raised after the last byte of a stream without [DONE]: uvicorn drops the connection."""


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    peer: tuple[str, int] | None = None  # the connection it came on (the proxy's address and port)


@dataclass
class ScriptedBackend:
    # The latest requests only: fuzz and soak runs send hundreds of thousands.
    requests: deque[Recorded] = field(default_factory=lambda: deque(maxlen=5000))
    disconnects: deque[str] = field(default_factory=lambda: deque(maxlen=5000))
    scripts: dict[str, list[Turn]] = field(default_factory=dict)
    waiting: float = 0.0  # reported as vllm:num_requests_waiting
    window: int = 32768
    refuses_overflow: bool = False
    failures: int = 0
    flood_sent: int = 0
    floods: int = 0  # floods begun: only the latest counts into flood_sent

    def last(self, path: str) -> Recorded:
        return next(r for r in reversed(self.requests) if r.path == path)

    def script(self, key: str, turns: list[Turn]) -> str:
        """Queue replies for requests mentioning `script:KEY`; returns that marker."""
        self.scripts[key] = list(turns)
        return f"script:{key}"

    def script_requests(self, key: str) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if _script_key(r.body) == key]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        try:
            await self._serve(scope, receive, send)
        except (BackendCrash, asyncio.CancelledError):
            raise
        except Exception:
            self.failures += 1
            raise

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        if path == "/metrics":
            text = (
                "# TYPE vllm:num_requests_running gauge\n"
                f'vllm:num_requests_running{{model_name="{SERVED_MODEL}"}} 0.0\n'
                "# TYPE vllm:num_requests_waiting gauge\n"
                f'vllm:num_requests_waiting{{model_name="{SERVED_MODEL}"}} {self.waiting}\n'
            )
            await _raw(send, 200, text.encode(), b"text/plain; version=0.0.4")
            return
        try:
            payload = json.loads(body) if body else {}
        except ValueError:
            await _bad_request(send, "body is not valid JSON")
            return
        problem = _unusable(payload) if path != "/v1/models" else None
        if problem:
            await _bad_request(send, problem)
            return
        client = scope.get("client")
        self.requests.append(Recorded(path=path, headers=headers, body=payload,
                                      peer=tuple(client) if client else None))
        if path == "/v1/models":
            await _json(
                send,
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": SERVED_MODEL,
                            "object": "model",
                            "created": 0,
                            "owned_by": "vllm",
                            "max_model_len": self.window,
                        }
                    ],
                },
            )
        elif path == "/tokenize":
            # Deterministic stand-in for the tokenizer: one token per 4 bytes of messages.
            rendered = json.dumps(payload.get("messages", payload.get("prompt", "")))
            await _json(
                send, 200, {"count": len(rendered) // 4 + 3, "max_model_len": 32768, "tokens": []}
            )
        elif path in ("/v1/chat/completions", "/v1/completions", "/v1/responses"):
            if payload.get("model") != SERVED_MODEL:
                await _json(
                    send,
                    404,
                    {
                        "error": {
                            "message": f"The model `{payload.get('model')}` does not exist.",
                            "type": "NotFoundError",
                            "param": None,
                            "code": 404,
                        }
                    },
                )
                return
            refusal = self._window_refusal(payload)
            if refusal:
                await _bad_request(send, refusal)
                return
            if path == "/v1/responses":
                await self._respond(payload, receive, send)
            else:
                await self._generate(payload, receive, send)
        else:
            await _json(send, 404, {"detail": "Not Found"})

    def _window_refusal(self, payload: dict[str, Any]) -> str | None:
        """vLLM's refusal of a request that does not fit the window, in its own words."""
        window = self.window
        asked = payload.get(
            "max_completion_tokens", payload.get("max_tokens", payload.get("max_output_tokens"))
        )
        asked = asked if isinstance(asked, int) and not isinstance(asked, bool) else None
        prompt = prompt_tokens(payload)
        if asked is not None and asked > window:
            return (
                f"max_tokens={asked} cannot be greater than max_model_len={window}. "
                "Please request fewer output tokens."
            )
        if prompt > window:
            return (
                f"This model's maximum context length is {window} tokens. However, your prompt "
                f"contains at least {window + 1} input tokens, which exceeds this limit even "
                "without any output tokens. Please reduce the length of the input prompt."
            )
        if self.refuses_overflow and asked is not None and prompt + asked > window:
            return (
                f"This model's maximum context length is {window} tokens. However, you requested "
                f"{prompt + asked} tokens ({prompt} in the messages, {asked} in the completion). "
                "Please reduce the length of the messages or completion."
            )
        return None

    async def _generate(self, payload: dict[str, Any], receive: Receive, send: Send) -> None:
        key = _script_key(payload)
        if key is not None:
            turns = self.scripts.get(key) or [Turn(text=f"(script {key} has no more turns)")]
            turn = turns.pop(0) if len(turns) > 1 else turns[0]
            await _scripted_reply(send, payload, turn)
            return
        text = _instruction(payload)
        match = _SCENARIO.search(text)
        name = match.group(1) if match else "text"
        options = {key: float(value) for key, value in _OPTION.findall(text)}
        known = name in ("backend_error", "hang", "flood") or (STREAMS / f"{name}.sse").exists()
        if not known:  # a mangled name (the fuzz tests): refused, as vLLM refuses bad input
            await _bad_request(send, f"no recorded scenario {name!r}")
            return
        if name == "backend_error":
            await _json(
                send,
                400,
                {
                    "error": {
                        "message": "max_tokens is too large: 99999999",
                        "type": "BadRequestError",
                        "param": None,
                        "code": 400,
                    }
                },
            )
            return
        if not payload.get("stream"):
            await asyncio.sleep(options.get("delay", 0))
            await _raw(send, 200, (STREAMS / f"{name}.json").read_bytes())
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream; charset=utf-8")],
            }
        )
        if name == "hang":
            await self._hang(receive, send, options.get("delay", 0))
            return
        if name == "flood":
            await self._flood(send)
            return
        data = (STREAMS / f"{name}.sse").read_bytes()
        events = [event + b"\n\n" for event in data.split(b"\n\n") if event]
        await asyncio.sleep(options.get("delay", 0))
        for index, event in enumerate(events):
            if index == options.get("stall"):
                while (await receive())["type"] != "http.disconnect":
                    pass
                self.disconnects.append("stall")
                return
            await send({"type": "http.response.body", "body": event, "more_body": True})
            if options.get("pace"):
                await asyncio.sleep(options["pace"])
        if not data.endswith(b"data: [DONE]\n\n"):
            raise BackendCrash(name)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _respond(self, payload: dict[str, Any], receive: Receive, send: Send) -> None:
        """`/v1/responses`, as vLLM 0.32 answers it (scripted_responses.py)."""
        key = responses.script_key(payload)
        turn = Turn(text=responses.DEFAULT_TEXT)
        if key is not None:
            turns = self.scripts.get(key) or [Turn(text=f"(script {key} has no more turns)")]
            turn = turns.pop(0) if len(turns) > 1 else turns[0]
        reply = responses.ResponsesTurn(
            payload,
            text=turn.text,
            tool_calls=turn.tool_calls,
            reasoning=turn.reasoning,
            prompt_tokens=prompt_tokens(payload),
            completion_tokens=turn.completion_tokens,
        )
        if not payload.get("stream"):
            await _json(send, 200, reply.whole())
            return
        name = responses.scenario(payload) if key is None else "text"
        events = reply.events()
        if name == "hang":
            endless = events[:2] + [e for e in events if b"output_text.delta" in e][:1] * 600
            streaming = asyncio.ensure_future(responses.stream_events(send, endless, pace_s=0.05))
            while (await receive())["type"] != "http.disconnect":
                pass
            streaming.cancel()
            self.disconnects.append("responses-hang")
            return
        if name == "died_midway":
            await responses.stream_events(send, events[:5])
            raise BackendCrash(name)
        if name == "generation_error":
            await responses.stream_events(send, [*events[:5], responses.generation_error(5)])
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        await responses.stream_events(send, events)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _hang(self, receive: Receive, send: Send, delay: float) -> None:
        chunk = (STREAMS / "text.sse").read_bytes().split(b"\n\n")[1] + b"\n\n"

        async def stream_forever() -> None:
            await asyncio.sleep(delay)
            for _ in range(600):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await asyncio.sleep(0.05)

        streaming = asyncio.ensure_future(stream_forever())
        while (await receive())["type"] != "http.disconnect":
            pass
        streaming.cancel()
        self.disconnects.append("hang")

    async def _flood(self, send: Send) -> None:
        # Each send blocks while the proxy does not read (uvicorn's flow control): what this
        # counts is what the proxy has taken in.
        event = (STREAMS / "text.sse").read_bytes().split(b"\n\n")[1] + b"\n\n"
        block = event * (65536 // len(event))
        # Counted per flood: an earlier flood whose reader left spins to its end through
        # uvicorn's send (which returns at once once the client is gone) and must not count here.
        self.floods += 1
        flood, sent = self.floods, 0
        self.flood_sent = 0
        while sent < FLOOD_BYTES:
            await send({"type": "http.response.body", "body": block, "more_body": True})
            sent += len(block)
            if flood == self.floods:
                self.flood_sent = sent
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})


def prompt_tokens(payload: dict[str, Any]) -> int:
    """The stand-in tokenizer: one token per 4 bytes of the messages (the prompt, the input)."""
    prompt = payload.get("messages", payload.get("prompt", payload.get("input", "")))
    return len(json.dumps(prompt)) // 4


def _script_key(payload: dict[str, Any]) -> str | None:
    if "input" in payload:
        return responses.script_key(payload)
    for message in payload.get("messages", []):
        if message.get("role") == "user":
            match = _SCRIPT.search(json.dumps(message.get("content")))
            if match:
                return match.group(1)
    return None


async def _scripted_reply(send: Send, payload: dict[str, Any], turn: Turn) -> None:
    """The turn as vLLM would send it: a completion, or chunks with usage at the end."""
    completion_id = f"chatcmpl-script{len(json.dumps(payload)) % 10_000:04d}"
    usage = {
        "prompt_tokens": prompt_tokens(payload),
        "completion_tokens": turn.completion_tokens,
        "total_tokens": prompt_tokens(payload) + turn.completion_tokens,
    }
    finish = "tool_calls" if turn.tool_calls else "stop"
    calls = [
        (f"chatcmpl-tool-{number:04d}{len(name)}", name, json.dumps(arguments))
        for number, (name, arguments) in enumerate(turn.tool_calls)
    ]
    base = {"id": completion_id, "created": 1763848800, "model": SERVED_MODEL}
    if not payload.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            for call_id, name, args in calls
        ]
        choice = {"index": 0, "message": message, "finish_reason": finish, "stop_reason": None}
        reply = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        await _json(send, 200, reply)
        return
    chunks: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    words = turn.text.split(" ")
    chunks += [
        {"content": word if i == 0 else " " + word} for i, word in enumerate(words) if turn.text
    ]
    for index, (call_id, name, args) in enumerate(calls):
        head = {"id": call_id, "type": "function", "index": index, "function": {"name": name}}
        chunks.append({"tool_calls": [head]})
        middle = len(args) // 2
        for piece in (args[:middle], args[middle:]):
            chunks.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    events = [
        {**base, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
        for delta in chunks
    ]
    last = {"index": 0, "delta": {"content": ""}, "finish_reason": finish, "stop_reason": None}
    events.append({**base, "object": "chat.completion.chunk", "choices": [last]})
    events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream; charset=utf-8")],
        }
    )
    for event in events:
        body = b"data: " + json.dumps(event).encode() + b"\n\n"
        await send({"type": "http.response.body", "body": body, "more_body": True})
    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})


def _instruction(payload: dict[str, Any]) -> str:
    if "prompt" in payload:
        return str(payload["prompt"])
    for message in reversed(payload.get("messages", [])):
        if message.get("role") in ("user", "tool"):
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(part.get("text", "") for part in content)
            return str(content)
    return ""


def _unusable(payload: object) -> str | None:
    """Why vLLM's request validation would refuse this body (the shapes this backend reads)."""
    if not isinstance(payload, dict):
        return "body must be a JSON object"
    if "stream" in payload and not isinstance(payload["stream"], bool):
        return "stream: Input should be a valid boolean"
    prompt = payload.get("prompt")
    if prompt is not None and not isinstance(prompt, str | list):
        return "prompt: Input should be a valid string"
    messages = payload.get("messages", [])
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return "messages: each message needs a role"
        content = message.get("content")
        if isinstance(content, list):
            if not all(isinstance(part, dict) for part in content):
                return "messages.content: parts must be objects"
            if not all(isinstance(part.get("text", ""), str) for part in content):
                return "messages.content.text: Input should be a valid string"
        elif content is not None and not isinstance(content, str):
            return "messages.content: Input should be a valid string or list"
    return None


async def _bad_request(send: Send, message: str) -> None:
    error = {"message": message, "type": "BadRequestError", "param": None, "code": 400}
    await _json(send, 400, {"error": error})


async def _json(send: Send, status: int, payload: dict[str, Any]) -> None:
    await _raw(send, status, json.dumps(payload).encode())


async def _raw(
    send: Send, status: int, body: bytes, content_type: bytes = b"application/json"
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type)],
        }
    )
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    import sys

    import uvicorn

    uvicorn.run(
        ScriptedBackend(),
        host="127.0.0.1",
        port=int(sys.argv[1]),
        loop="uvloop",
        http="httptools",
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
