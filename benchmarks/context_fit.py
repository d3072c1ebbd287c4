"""What fitting max_tokens to the window costs the filter-proxy, on Claude Code's real request.

The common path adds no backend round trip: the window comes from the model list the proxy read
at start, the prompt's size is estimated from the body (bytes x the tokens per byte the backend
last reported). This measures, in one run, on the vLLM CPU engine with the demo model:

- the budget itself (per request, in the proxy's process);
- Claude Code's first request (~35k tokens, max_tokens 32000) through the proxy, window 131072:
  the common path, one backend request;
- one refused attempt at vLLM (the same request with max_tokens over the window): what a
  corrected retry adds on a release that refuses prompt + max_tokens past the window;
- the same request through the proxy at a window of 32768, where the prompt alone is too long:
  vLLM's refusal plus the /tokenize count behind "prompt is too long: N tokens > M maximum".

Claude Code's request is captured first from the real CLI (npm, pinned) against the proxy and
a scripted backend.

    .venv/bin/python benchmarks/context_fit.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import httpx
from prefix_cache import CLIENT_KEY, proxy

from stackctl.proxy.app import create_app
from stackctl.proxy.backend.window_fit import WindowFit
from stackctl.proxy.settings import ProxySettings
from tests.support.npm_clients import CLAUDE_CODE, installed
from tests.support.proxy.scripted_backend import SERVED_MODEL, ScriptedBackend, Turn
from tests.support.proxy.servers import ServerThread
from tests.support.vllm_server import running_vllm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    anthropic_body, chat_body = capture_claude_code_request()
    print(f"Claude Code's first request: {len(anthropic_body)} bytes (Anthropic), {len(chat_body)} bytes "
          "(translated for vLLM)")
    fit = WindowFit(windows={"tiny": 131072})
    fit.learn("tiny", "anthropic", len(anthropic_body), 34_600)
    per_call = min(timeit.repeat(lambda: fit.budget("tiny", "anthropic", len(anthropic_body), 32000),
                                 number=10_000, repeat=5)) / 10_000
    rows = [("budget (window, estimate, min) per request", f"{per_call * 1e6:.2f} µs", "in the proxy, no I/O")]
    with tempfile.TemporaryDirectory(prefix="fit-bench-") as scratch:
        work = Path(scratch)
        (work / "wide").mkdir()
        (work / "narrow").mkdir()
        with running_vllm(work / "wide", max_model_len=131072) as vllm, \
                proxy(vllm.base_url, vllm.api_key, "in-place", work / "wide") as url:
            ok = timed(rounds, lambda: post(url + "/v1/messages", anthropic_body, {"x-api-key": CLIENT_KEY}), 200)
            rows.append(("Claude Code's request through the proxy (window 131072)", ok, "one backend request"))
            refused = timed(rounds, lambda: post(vllm.base_url + "/v1/chat/completions",
                                                 with_max_tokens(chat_body, 200_000),
                                                 {"authorization": f"Bearer {vllm.api_key}"}), 400)
            rows.append(("one refused attempt at vLLM (max_tokens over the window)", refused,
                         "what a corrected retry adds"))
        with running_vllm(work / "narrow", max_model_len=32768) as vllm, \
                proxy(vllm.base_url, vllm.api_key, "in-place", work / "narrow") as url:
            direct = timed(rounds, lambda: post(vllm.base_url + "/v1/chat/completions", chat_body,
                                                {"authorization": f"Bearer {vllm.api_key}"}), 400)
            rows.append(("vLLM refusing the prompt (window 32768), direct", direct, "vLLM's own answer"))
            too_long = timed(rounds, lambda: post(url + "/v1/messages", anthropic_body, {"x-api-key": CLIENT_KEY}),
                             400)
            rows.append(("'prompt is too long' through the proxy (window 32768)", too_long,
                         "refusal + /tokenize count"))
            reply = post(url + "/v1/messages", anthropic_body, {"x-api-key": CLIENT_KEY})
            print(f"the proxy's answer: {reply.json()['error']['message']}")
    print(f"\n{'':60}{'median (min-max)':>24}")
    for label, value, note in rows:
        print(f"{label:60}{value:>24}   {note}")


def capture_claude_code_request() -> tuple[bytes, bytes]:
    """Claude Code's first /v1/messages body, and what the proxy sends vLLM for it."""
    backend = ScriptedBackend()
    backend_server = ServerThread(backend, log_level="critical").start()
    settings = ProxySettings(backend_url=backend_server.base_url, default_model=SERVED_MODEL,
                             api_keys={"bench": CLIENT_KEY})
    app = create_app(settings)
    bodies: list[bytes] = []

    async def recording(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http" or scope["path"] != "/v1/messages":
            return await app(scope, receive, send)
        chunks: list[bytes] = []

        async def receive_and_keep():  # type: ignore[no-untyped-def]
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                bodies.append(b"".join(chunks))
            return message

        return await app(scope, receive_and_keep, send)

    proxy_server = ServerThread(recording).start()
    key = uuid.uuid4().hex[:10]
    backend.script(key, [Turn(text="hi")])
    claude = installed(CLAUDE_CODE, CLAUDE_CODE.pinned)
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ["PATH"], "HOME": home, "ANTHROPIC_BASE_URL": proxy_server.base_url,
               "ANTHROPIC_AUTH_TOKEN": CLIENT_KEY, "ANTHROPIC_MODEL": "tiny",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        subprocess.run([str(claude.executable), "-p", f"script:{key} say hi", "--output-format", "json"], env=env,
                       cwd=home, capture_output=True, text=True, timeout=300, check=True)
    proxy_server.stop()
    backend_server.stop()
    chat = backend.script_requests(key)[0]
    anthropic = json.loads(bodies[0])
    anthropic["stream"] = False
    chat = {**chat, "model": "tiny", "stream": False}
    chat.pop("stream_options", None)
    return json.dumps(anthropic).encode(), json.dumps(chat).encode()


def with_max_tokens(body: bytes, max_tokens: int) -> bytes:
    return json.dumps({**json.loads(body), "max_tokens": max_tokens}).encode()


def post(url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(url, content=body, headers={"content-type": "application/json", **headers}, timeout=600)


def timed(rounds: int, call, status: int) -> str:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        response = call()
        times.append(time.perf_counter() - began)
        if response.status_code != status:
            sys.exit(f"expected {status}, got {response.status_code}: {response.text[:500]}")
    ms = [t * 1000 for t in times]
    return f"{statistics.median(ms):.0f} ms ({min(ms):.0f}-{max(ms):.0f})"


if __name__ == "__main__":
    main()
