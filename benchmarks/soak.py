"""Soak: the filter-proxy under steady mixed load, watched for leaks and for errors.

64 clients (like agents, one kept-alive connection each) send, for --duration seconds,
a mix of streamed and unstreamed, Anthropic and OpenAI requests, with tools, through a real
`stackctl proxy serve` process to the scripted backend (recorded vLLM replies, paced like a
real engine); some clients walk away mid-stream at random. The backend, the proxy and the
clients are three processes.

It reports the proxy's RSS and open file descriptors after warm-up and at the end (both
taken with the load stopped and idle connections gone), errors by kind, and per window the
p50/p99 TTFT the proxy adds: the client's time to first event minus the backend's own time
to first byte for the same request (both CLOCK_MONOTONIC differences, each on its own side).

    .venv/bin/python benchmarks/soak.py                   # 30 minutes
    .venv/bin/python benchmarks/soak.py --duration 120    # 2 minutes (tests/.../test_soak.py)

Targets (issue 13): RSS growth under 10% after warm-up, 0 leaked file descriptors,
0 unexpected errors. --json PATH writes the report for a test to assert on.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from proxy_process import free_port  # this folder is on sys.path: the script runs from it

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-soak-not-a-secret"
MODEL = "qwen3-coder"  # the scripted backend's served name
PACE_S = 0.03  # between streamed events: ~30 tokens/s per stream, like a loaded GPU
SCENARIOS = ["text", "thinking", "one_tool_call", "two_tool_calls_interleaved", "stop_sequence"]
TOOL_SCENARIOS = {"one_tool_call", "two_tool_calls_interleaved"}
THINK_S = (0.2, 1.5)  # between an agent's requests (tool runs, reading the reply)
DISCONNECT_RATE = 0.1  # of streamed requests: the client reads a little, then leaves
_SOAK_ID = re.compile(rb"soak-id:(\d+)")


# ---- the backend: the scripted one, timing its own first byte per request -----------------


def serve_backend(port: int) -> None:
    import uvicorn

    sys.path.insert(0, str(REPO))
    from tests.support.proxy.scripted_backend import ScriptedBackend

    scripted = ScriptedBackend()
    timings: dict[str, float] = {}  # soak id -> seconds from request to first body byte

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http" and scope["path"] == "/_soak/timings":
            body = json.dumps(timings).encode()
            timings.clear()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] != "http":
            await scripted(scope, receive, send)
            return
        received = time.monotonic()
        soak_id: str | None = None

        async def reading():  # type: ignore[no-untyped-def]
            nonlocal soak_id
            message = await receive()
            match = _SOAK_ID.search(message.get("body", b""))
            if match:
                soak_id = match.group(1).decode()
            return message

        async def sending(message):  # type: ignore[no-untyped-def]
            if soak_id and message.get("body") and soak_id not in timings:
                timings[soak_id] = time.monotonic() - received
            await send(message)

        await scripted(scope, reading, sending)
        scripted.requests.clear()  # nothing to assert on here: keep the backend's memory flat

    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        loop="uvloop",
        http="httptools",
        log_level="critical",
        access_log=False,
    )


# ---- one client request ---------------------------------------------------------------------


@dataclass
class Outcome:
    kind: str  # "ok", "disconnected" (intended), or what went wrong
    soak_id: int
    streamed: bool
    ttft_s: float | None = None  # client-side, streamed requests only


def build_request(soak_id: int, rng: random.Random) -> tuple[str, dict[str, Any], str]:
    scenario = rng.choice(SCENARIOS)
    text = f"scenario:{scenario} pace={PACE_S} soak-id:{soak_id}"
    streamed = rng.random() < 0.7
    if rng.random() < 0.5:
        tools = [
            {
                "name": "read_file",
                "description": "Read a file.",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
            }
        ]
        body = {
            "model": "claude-soak",
            "max_tokens": 256,
            "stream": streamed,
            "tools": tools,
            "messages": [{"role": "user", "content": text}],
        }
        return "/v1/messages", body, scenario
    tools = [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]
    body = {
        "model": "gpt-soak",
        "max_tokens": 256,
        "stream": streamed,
        "tools": tools,
        "messages": [{"role": "user", "content": text}],
    }
    return "/v1/chat/completions", body, scenario


async def one_request(session, base_url: str, soak_id: int, rng: random.Random) -> Outcome:  # type: ignore[no-untyped-def]
    import aiohttp

    path, body, scenario = build_request(soak_id, rng)
    streamed = bool(body["stream"])
    leave_after = rng.randint(1, 6) if streamed and rng.random() < DISCONNECT_RATE else None
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    started = time.monotonic()
    try:
        async with session.post(base_url + path, json=body, headers=headers) as response:
            if response.status != 200:
                return Outcome(f"status_{response.status}", soak_id, streamed)
            if not streamed:
                return Outcome(_check_reply(path, scenario, await response.read()), soak_id, False)
            ttft = None
            data = b""
            reads = 0
            async for chunk in response.content.iter_any():
                if ttft is None and not chunk.startswith(b"event: ping"):
                    ttft = time.monotonic() - started
                data += chunk
                reads += 1
                if leave_after is not None and reads >= leave_after:
                    response.close()  # the agent walks away mid-reply
                    return Outcome("disconnected", soak_id, True, ttft)
            return Outcome(_check_stream(path, scenario, data), soak_id, True, ttft)
    except (TimeoutError, aiohttp.ClientError) as error:
        return Outcome(f"client_{type(error).__name__}", soak_id, streamed)


def _check_stream(path: str, scenario: str, data: bytes) -> str:
    text = data.decode(errors="replace")
    if path == "/v1/messages":
        if "event: error" in text:
            return "stream_error_event"
        if not text.rstrip().endswith('data: {"type":"message_stop"}'):
            return "stream_incomplete"
        if scenario in TOOL_SCENARIOS and '"type":"tool_use"' not in text:
            return "stream_tool_call_missing"
        return "ok"
    if '"error"' in text and "data: [DONE]" not in text:
        return "stream_error_chunk"
    if not text.rstrip().endswith("data: [DONE]"):
        return "stream_incomplete"
    if scenario in TOOL_SCENARIOS and '"tool_calls"' not in text:
        return "stream_tool_call_missing"
    return "ok"


def _check_reply(path: str, scenario: str, data: bytes) -> str:
    try:
        reply = json.loads(data)
        if path == "/v1/messages":
            kinds = [block["type"] for block in reply["content"]]
            tool_called = "tool_use" in kinds
        else:
            tool_called = bool(reply["choices"][0]["message"].get("tool_calls"))
    except (ValueError, KeyError, IndexError, TypeError):
        return "reply_malformed"
    if scenario in TOOL_SCENARIOS and not tool_called:
        return "reply_tool_call_missing"
    return "ok"


# ---- load ----------------------------------------------------------------------------------


@dataclass
class Window:
    ends_at_s: float
    requests: int
    streamed_timed: int
    added_ttft_p50_ms: float | None
    added_ttft_p99_ms: float | None
    errors: int
    proxy_rss_mib: float


@dataclass
class Load:
    base_url: str
    backend_url: str
    clients: int
    seed: int
    next_id: int = 0
    outcomes: list[Outcome] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # soak id -> backend's TTFB

    async def run(self, seconds: float, runs: int = 0) -> None:
        import aiohttp

        deadline = time.monotonic() + seconds

        async def client(index: int) -> None:
            rng = random.Random(self.seed * 100_000 + runs * 1000 + index)
            timeout = aiohttp.ClientTimeout(total=60)
            connector = aiohttp.TCPConnector(limit=1)  # one agent, one connection
            async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
                await asyncio.sleep(rng.uniform(*THINK_S))  # agents do not start in lockstep
                while time.monotonic() < deadline:
                    self.next_id += 1
                    self.outcomes.append(
                        await one_request(session, self.base_url, self.next_id, rng)
                    )
                    await asyncio.sleep(rng.uniform(*THINK_S))

        await asyncio.gather(*(client(index) for index in range(self.clients)))

    async def take_window(self) -> tuple[list[Outcome], list[float]]:
        """The outcomes since the last call, and their added TTFTs in ms."""
        import aiohttp

        async with (
            aiohttp.ClientSession() as session,
            session.get(self.backend_url + "/_soak/timings") as reply,
        ):
            self.timings.update(await reply.json(content_type=None))
        outcomes, self.outcomes = self.outcomes, []
        added = []
        for outcome in outcomes:
            backend_ttfb = self.timings.pop(str(outcome.soak_id), None)
            if outcome.ttft_s is not None and backend_ttfb is not None:
                added.append((outcome.ttft_s - backend_ttfb) * 1000)
        if len(self.timings) > 100_000:  # requests that never reported back (cut off early)
            self.timings.clear()
        return outcomes, added


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


async def _warm_up(load: Load, seconds: float) -> list[Outcome]:
    await load.run(seconds, runs=0)
    outcomes, _ = await load.take_window()
    return outcomes


async def _measure(
    load: Load, seconds: float, window_s: float, offset_s: float, pid: int, errors: Counter[str]
) -> tuple[list[Window], list[float]]:
    """Load runs without a break; every window_s its outcomes and the proxy's RSS are taken."""
    running = asyncio.create_task(load.run(seconds, runs=1))
    started = time.monotonic()
    windows: list[Window] = []
    all_added: list[float] = []
    while not running.done():
        await asyncio.wait({running}, timeout=window_s)
        outcomes, added = await load.take_window()
        if not outcomes:  # the load ended with the last window
            continue
        all_added += added
        kinds = Counter(o.kind for o in outcomes)
        errors.update(kinds)
        window = Window(
            ends_at_s=round(offset_s + time.monotonic() - started, 1),
            requests=len(outcomes),
            streamed_timed=len(added),
            added_ttft_p50_ms=_quantile(added, 0.5),
            added_ttft_p99_ms=_quantile(added, 0.99),
            errors=sum(n for kind, n in kinds.items() if kind not in ("ok", "disconnected")),
            proxy_rss_mib=proxy_stats(pid).rss_mib,
        )
        windows.append(window)
        print(
            f"  t={window.ends_at_s:>6.0f}s  {window.requests:>5} req  added TTFT p50 "
            f"{window.added_ttft_p50_ms} ms  p99 {window.added_ttft_p99_ms} ms  "
            f"errors {window.errors}  RSS {window.proxy_rss_mib} MiB",
            flush=True,
        )
    await running
    return windows, all_added


# ---- the proxy process ---------------------------------------------------------------------


@dataclass
class ProcessStats:
    rss_mib: float
    fds: int


def proxy_stats(pid: int) -> ProcessStats:
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kib = int(re.search(r"^VmRSS:\s+(\d+)", status, re.MULTILINE).group(1))  # type: ignore[union-attr]
    return ProcessStats(round(rss_kib / 1024, 1), len(os.listdir(f"/proc/{pid}/fd")))


def settled_stats(pid: int) -> ProcessStats:
    """The load stopped: wait for idle connections to close (the backend drops idle
    keep-alives after 5 s), then measure."""
    stable_since, last = time.monotonic(), proxy_stats(pid).fds
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = proxy_stats(pid).fds
        if now != last:
            stable_since, last = time.monotonic(), now
        elif time.monotonic() - stable_since >= 6.0:
            break
    return proxy_stats(pid)


def wait_for_http(url: str, process: subprocess.Popen[bytes], what: str) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{what} exited with code {process.returncode} while starting")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise SystemExit(f"{what} did not answer {url} within 30 s")


def get_text(url: str) -> str:
    import httpx

    return httpx.get(url, timeout=10).text


# ---- the run -------------------------------------------------------------------------------


def soak(duration_s: float, clients: int, seed: int, log_dir: Path) -> dict[str, Any]:
    warmup_s = min(120.0, max(15.0, duration_s * 0.15))
    measured_s = max(1.0, duration_s - warmup_s)
    window_s = max(10.0, min(60.0, measured_s / 10))
    backend_port, proxy_port = free_port(), free_port()
    env = {
        **os.environ,
        "STACKCTL_PROXY_KEYS": f"soak={KEY}",
        "STACKCTL_PROXY_LOG_LEVEL": "warning",
        "STACKCTL_PROXY_SEARCH_BACKEND": "off",
        "PYTHONPATH": str(REPO),
    }
    env.pop("VLLM_API_KEY", None)
    log_dir.mkdir(parents=True, exist_ok=True)
    proxy_log = log_dir / "proxy.log"
    backend = subprocess.Popen(
        [sys.executable, __file__, "--_backend", str(backend_port)], env=env, cwd=REPO
    )
    with open(proxy_log, "wb") as log:
        proxy = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "stackctl.proxy",
                "serve",
                "--port",
                str(proxy_port),
                "--backend",
                f"http://127.0.0.1:{backend_port}",
                "--alias",
                f"claude-*={MODEL}",
                "--alias",
                f"gpt-*={MODEL}",
            ],
            env=env,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base_url, backend_url = f"http://127.0.0.1:{proxy_port}", f"http://127.0.0.1:{backend_port}"
    try:
        wait_for_http(backend_url + "/v1/models", backend, "the scripted backend")
        wait_for_http(base_url + "/health", proxy, "the proxy")
        load = Load(base_url, backend_url, clients, seed)
        print(
            f"soak: {clients} clients, {warmup_s:.0f} s warm-up, {measured_s:.0f} s measured "
            f"in {window_s:.0f} s windows; proxy pid {proxy.pid}",
            flush=True,
        )
        warm_outcomes = asyncio.run(_warm_up(load, warmup_s))
        start = settled_stats(proxy.pid)
        print(f"after warm-up: RSS {start.rss_mib} MiB, {start.fds} fds", flush=True)
        errors: Counter[str] = Counter(o.kind for o in warm_outcomes)
        windows, all_added = asyncio.run(
            _measure(load, measured_s, window_s, warmup_s, proxy.pid, errors)
        )
        end = settled_stats(proxy.pid)
        metrics = get_text(base_url + "/metrics")
    finally:
        proxy.terminate()
        backend.terminate()
        for process in (proxy, backend):
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
    log_problems = [
        line
        for line in proxy_log.read_text(errors="replace").splitlines()
        if "Traceback" in line or " ERROR " in line
    ]
    if log_problems:
        errors["proxy_log_error"] += len(log_problems)
    in_flight = [
        float(v)
        for v in re.findall(r"^stackctl_proxy_in_flight\{.*\} (\S+)$", metrics, re.MULTILINE)
    ]
    if any(in_flight):
        errors["proxy_in_flight_after_run"] += 1
    server_errors = re.findall(
        r'^stackctl_proxy_requests_total\{.*status="5\d\d".*\} (\S+)$', metrics, re.MULTILINE
    )
    if server_errors:
        errors["proxy_counted_5xx"] += int(sum(float(n) for n in server_errors))
    expected = {"ok", "disconnected"}
    return {
        "duration_s": duration_s,
        "clients": clients,
        "requests": sum(errors.values()),
        "errors": dict(sorted(errors.items())),
        "unexpected_errors": sum(n for kind, n in errors.items() if kind not in expected),
        "rss": {
            "start_mib": start.rss_mib,
            "end_mib": end.rss_mib,
            "growth_pct": round((end.rss_mib - start.rss_mib) / start.rss_mib * 100, 2),
        },
        "fds": {"start": start.fds, "end": end.fds, "leaked": max(0, end.fds - start.fds)},
        "added_ttft_ms": {
            "p50": _quantile(all_added, 0.5),
            "p99": _quantile(all_added, 0.99),
            "mean": round(statistics.fmean(all_added), 2) if all_added else None,
        },
        "windows": [asdict(window) for window in windows],
        "proxy_log_problems": log_problems[:20],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=1800.0, help="seconds (default 1800)")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--json", type=Path, help="write the report here as JSON")
    parser.add_argument("--log-dir", type=Path, default=Path("/tmp/stackctl-soak"))
    parser.add_argument("--_backend", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._backend:
        serve_backend(args._backend)
        return
    report = soak(args.duration, args.clients, args.seed, args.log_dir)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    summary = {
        key: report[key]
        for key in ("requests", "errors", "unexpected_errors", "rss", "fds", "added_ttft_ms")
    }
    print(json.dumps(summary, indent=2))
    targets_met = (
        report["unexpected_errors"] == 0
        and report["fds"]["leaked"] == 0
        and report["rss"]["growth_pct"] < 10
    )
    print(
        "targets (RSS growth < 10%, 0 leaked fds, 0 unexpected errors):",
        "met" if targets_met else "MISSED",
    )
    sys.exit(0 if targets_met else 1)


if __name__ == "__main__":
    main()
