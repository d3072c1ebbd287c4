"""A real Claude Code session, recorded here and replayed on a GPU host (which has no Node).

`record OUT`: the five-turn session of benchmarks/prefix_cache.py (the first turn yesterday, the
rest today, so Claude Code adds "The date has changed..." as it does in a session resumed the next
morning) and the first turn of a second session, run by the real CLI (npm, pinned) against the
demo stack's vLLM (CPU) through the filter-proxy, with a relay in front that keeps every
/v1/messages body Claude Code sent, in order, by turn.

`replay RECORDING --stack DIR`: for each placement of Claude Code's inline system messages
(`front`, the old merge; `in-place`, the default), on an emptied prefix cache, the recorded bodies
through a filter-proxy with that placement to the stack's vLLM, in order; per turn, the share of
prompt tokens vLLM served from its prefix cache and the TTFT of the turn's main request. Replies
are cut at --max-tokens: the prompt side is what is measured. Needs the engine started with
VLLM_SERVER_DEV_MODE=1 (its /reset_prefix_cache empties the cache between placements).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

from proxy_process import free_port, proxy_process

WINDOW = 131072
YESTERDAY, TODAY = "Etc/GMT+12", "Etc/GMT-14"  # 26 h apart: the date always differs
PLACEMENTS = ("front", "in-place")
CLIENT_KEY = "sk-gpu-check-session"


# ---- record (a connected machine with Node and the CPU engine) ---------------------------------


def record(out: Path) -> None:
    sys.path.insert(0, str(REPO))
    from tests.support.npm_clients import CLAUDE_CODE, installed
    from tests.support.vllm_server import running_vllm

    claude = installed(CLAUDE_CODE, CLAUDE_CODE.pinned)
    turns: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="session-record-") as scratch:
        work = Path(scratch)
        with running_vllm(work, max_model_len=WINDOW) as vllm, \
                proxy(vllm.base_url, vllm.api_key, "in-place", "tiny", work) as proxy_url, \
                recording_relay(proxy_url) as (relay_url, bodies):
            session = work / "session"
            session.mkdir()
            plan = [(f"turn {n}: say hi", ("--continue",) if n > 1 else (), YESTERDAY if n == 1 else TODAY, session,
                     f"turn {n}" + (" (next day)" if n == 2 else "")) for n in range(1, 6)]
            other = work / "other-session"
            other.mkdir()
            plan.append(("a new session: say hello", (), TODAY, other, "new session, turn 1"))
            for prompt, flags, zone, cwd, label in plan:
                first = len(bodies)
                run_claude(claude.executable, relay_url, cwd, prompt, flags, zone)
                turns.append({"label": label, "requests": bodies[first:]})
                print(f"recorded {label}: {len(bodies) - first} request(s), "
                      f"{max((len(body) for body in bodies[first:]), default=0)} bytes at most", flush=True)
    out.write_text(json.dumps({"client": claude.label, "window": WINDOW, "turns": turns}))


def run_claude(executable: Path, base_url: str, cwd: Path, prompt: str, flags: tuple[str, ...], zone: str) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd.parent / "home"), "TZ": zone,
           "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_AUTH_TOKEN": CLIENT_KEY, "ANTHROPIC_MODEL": "tiny",
           "ANTHROPIC_DEFAULT_HAIKU_MODEL": "tiny", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(WINDOW),
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    done = subprocess.run([str(executable), "-p", prompt, "--output-format", "json", *flags], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0 or '"is_error":false' not in done.stdout:
        sys.exit(f"Claude Code failed on {prompt!r}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


@contextmanager
def recording_relay(upstream: str):  # type: ignore[no-untyped-def]
    """An HTTP relay to `upstream` that keeps each /v1/messages body (count_tokens aside)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    bodies: list[str] = []
    client = httpx.AsyncClient(base_url=upstream, timeout=None)

    async def relay(request: Request) -> StreamingResponse:
        body = await request.body()
        if request.url.path == "/v1/messages":
            bodies.append(body.decode())
        headers = {key: value for key, value in request.headers.items() if key.lower() not in ("host", "content-length")}
        upstream_request = client.build_request(request.method, request.url.path, params=request.query_params,
                                                headers=headers, content=body)
        reply = await client.send(upstream_request, stream=True)
        passed = {key: value for key, value in reply.headers.items()
                  if key.lower() not in ("content-length", "transfer-encoding", "connection")}
        return StreamingResponse(reply.aiter_raw(), status_code=reply.status_code, headers=passed,
                                 background=None)

    app = Starlette(routes=[Route("/{path:path}", relay, methods=["GET", "POST"])])
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", bodies
    finally:
        server.should_exit = True
        thread.join(10)


# ---- replay (the GPU host) ---------------------------------------------------------------------


@dataclass
class TurnFigures:
    label: str
    requests: int
    hits: float  # prompt tokens served from vLLM's prefix cache
    queries: float  # prompt tokens looked up
    ttft_ms: float  # the turn's main (largest) request, first text token
    seconds: float

    @property
    def cached_share(self) -> float:
        return self.hits / self.queries if self.queries else 0.0


def replay(recording: Path, vllm_url: str, vllm_key: str, model: str, max_tokens: int, stackctl: list[str]) -> dict:
    session = json.loads(recording.read_text())
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="session-replay-") as scratch:
        for placement in PLACEMENTS:
            reset = httpx.post(f"{vllm_url}/reset_prefix_cache", headers={"authorization": f"Bearer {vllm_key}"},
                               timeout=60)
            if reset.status_code != 200:
                sys.exit(f"could not empty vLLM's prefix cache ({reset.status_code}): start vLLM with "
                         "VLLM_SERVER_DEV_MODE=1 (vllm.environment in stack.yaml)")
            with proxy(vllm_url, vllm_key, placement, model, Path(scratch), stackctl) as url:
                figures = [replay_turn(url, vllm_url, turn, model, max_tokens) for turn in session["turns"]]
            results[placement] = [{**asdict(figure), "cached_share": figure.cached_share} for figure in figures]
            for figure in figures:
                print(f"  {placement:<9} {figure.label:<22} {figure.cached_share:6.1%} of "
                      f"{figure.queries:.0f} prompt tokens from cache, TTFT {figure.ttft_ms:.0f} ms", flush=True)
    return {"client": session["client"], "placements": results}


def replay_turn(proxy_url: str, vllm_url: str, turn: dict, model: str, max_tokens: int) -> TurnFigures:
    before = prefix_counters(vllm_url)
    began = time.monotonic()
    main = max(range(len(turn["requests"])), key=lambda index: len(turn["requests"][index]))
    ttft: float | None = None
    for index, text in enumerate(turn["requests"]):
        body = json.loads(text)
        body.update(model=model, stream=True, max_tokens=min(int(body.get("max_tokens", max_tokens)), max_tokens))
        started = time.perf_counter()
        with httpx.stream("POST", f"{proxy_url}/v1/messages", json=body, timeout=600,
                          headers={"x-api-key": CLIENT_KEY, "anthropic-version": "2023-06-01"}) as reply:
            if reply.status_code != 200:
                sys.exit(f"{turn['label']}: the proxy answered {reply.status_code}: {reply.read()[:500]!r}")
            for line in reply.iter_lines():
                if index == main and ttft is None and '"text_delta"' in line:
                    ttft = (time.perf_counter() - started) * 1000
    after = prefix_counters(vllm_url)
    return TurnFigures(turn["label"], len(turn["requests"]), after[0] - before[0], after[1] - before[1],
                       float("nan") if ttft is None else ttft,
                       time.monotonic() - began)


def prefix_counters(vllm_url: str) -> tuple[float, float]:
    values = {}
    for line in httpx.get(f"{vllm_url}/metrics", timeout=10).text.splitlines():
        for name in ("hits", "queries"):
            if line.startswith(f"vllm:prefix_cache_{name}_total"):
                values[name] = values.get(name, 0.0) + float(line.split()[-1])
    return values.get("hits", 0.0), values.get("queries", 0.0)


# ---- shared --------------------------------------------------------------------------------------


@contextmanager
def proxy(backend_url: str, backend_key: str | None, placement: str, model: str, work: Path,
          stackctl: list[str] | None = None):  # type: ignore[no-untyped-def]
    with proxy_process(backend_url, backend_key, client_key=CLIENT_KEY, model=model, placement=placement, work=work,
                       stackctl=stackctl) as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    recorder = commands.add_parser("record")
    recorder.add_argument("out", type=Path)
    replayer = commands.add_parser("replay")
    replayer.add_argument("recording", type=Path)
    replayer.add_argument("--vllm-url", required=True)
    replayer.add_argument("--model", required=True)
    replayer.add_argument("--max-tokens", type=int, default=16)
    replayer.add_argument("--json", type=Path)
    options = parser.parse_args()
    if options.command == "record":
        record(options.out)
        return
    report = replay(options.recording, options.vllm_url, os.environ.get("VLLM_API_KEY", ""), options.model,
                    options.max_tokens, [sys.executable, "-m", "stackctl"])
    if options.json:
        options.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
