"""What the filter-proxy costs at GPU speed: CPU per token, added TTFT and aggregate throughput on
both routes, against direct, two do-nothing relays (nginx, where installed, and a uvloop one) and
(--litellm) LiteLLM, measured in one run.

    .venv/bin/python benchmarks/proxy_overhead.py                    # ~3 min on 2 cores
    .venv/bin/python benchmarks/proxy_overhead.py --quick            # a smoke run (~40 s)
    .venv/bin/python benchmarks/proxy_overhead.py --compare main     # main's proxy beside this one
    .venv/bin/python benchmarks/proxy_overhead.py --litellm          # LiteLLM beside it (installed
                                                                     # under ~/.cache on first use)
    .venv/bin/python benchmarks/proxy_overhead.py --litellm --tokens 32 --stream-rate 50 \
        --levels 1,16,64 --no-ceiling --no-tracking                  # the issue's LiteLLM setup
Options: --rate (aggregate tokens/s, 0 = unpaced) or --stream-rate (tokens/s each stream gets,
however many run), --tokens (per reply), --levels, --workers (the proxy's), --no-tracking,
--no-ceiling, --json FILE.

LiteLLM saturates one core near 2.5k deltas/s. Where a level asks more of it (GPU speed, 64
streams) it falls behind: its added TTFT grows to seconds, it reads several events per read, and
its CPU per request falls with the throughput it no longer delivers. Read its ratio there with
its "vs direct" column; at a per-stream pace it keeps up with (the issue's own setup above), the
two do the same work.

The backend (token_backend.py) writes vLLM's exact one-token chunks (the role chunk, one chunk per
token with `"tool_calls":[]`, the finish chunk, usage in the last chunk, `[DONE]`) like an engine:
each step one token for every running stream, the steps paced so that all streams together get
--rate tokens/s (default 10k, what a GPU serves a small model), so the proxy reads one event per
read, as in front of vLLM on a GPU. The client (stream_client.py) is raw HTTP/1.1, sharded over
processes, so its cost stays small. Every server's CPU time (its process and its workers, every
thread, from the scheduler's counters in /proc) is read around each level and divided by the deltas it served (warm-up
included): "us/delta". "1 core" is 1e6 / that: the deltas/s one core sustains at this cost.
A last section offers the proxy an unpaced backend (steps back to back): the deltas/s it then
delivers and the cores it used, i.e. where one core is its ceiling.

What a profile of the proxy under this load showed (py-spy, 10k tokens/s over 64 streams, this
2-core VM, before the per-token path was reworked): per Anthropic delta ~42 us of CPU, per OpenAI
delta ~31 us, against ~14 us for the do-nothing relay. The kernel's part (a read, a write and an
epoll wake-up per token, ~10 us on this VM) is the same for all three. The rest was Python: the
producer ran inside Starlette's and uvicorn's ASGI chain, so each token resumed ~14 coroutine
frames and each write went through Starlette's two send wrappers (~20% of samples); aiohttp's
reader behind two async iterators (~8%); pydantic validation of every chunk (~7%, 3 us a chunk);
a regex event splitter per read; the translation and the encode themselves were small (~4%).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from process_cpu import tree_cpu
from proxy_process import free_port
from stream_client import LevelResult, Target, run_level

from stackctl.errors import StackError
from stackctl.runtime.native_nginx import nginx_binary

MODEL = "bench-model"
KEY = "sk-bench-not-a-secret"
REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
LITELLM_VERSION = "1.106.2"  # the version the issue measured by hand


# ---- servers: processes with a CPU meter ---------------------------------------------------------


@dataclass
class Server:
    name: str
    process: subprocess.Popen[bytes]
    port: int

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def wait_for(server: Server, path: str = "/health", timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    request = f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode()
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SystemExit(f"{server.name} exited with code {server.process.returncode} while starting")
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=2) as sock:
                sock.sendall(request)
                if sock.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{server.name} did not answer {path} on port {server.port} within {timeout_s:.0f} s")


def start(name: str, argv: list[str], port: int, *, env: dict[str, str] | None = None, cwd: Path = REPO,
          health: str = "/health", timeout_s: float = 60) -> Server:
    server = Server(name, subprocess.Popen(argv, env={**os.environ, **(env or {})}, cwd=cwd), port)
    wait_for(server, health, timeout_s)
    return server


def start_proxy(name: str, source: Path, backend_port: int, workers: int, *extra: str) -> Server:
    port = free_port()
    env = {"STACKCTL_PROXY_KEYS": f"bench={KEY}", "STACKCTL_PROXY_LOG_LEVEL": "warning",
           "PYTHONPATH": str(source)}
    argv = [sys.executable, "-m", "stackctl.proxy", "serve", "--backend", f"http://127.0.0.1:{backend_port}",
            "--port", str(port), "--alias", f"claude-*={MODEL}", "--search-backend", "off"]
    if workers != 1:
        argv += ["--workers", str(workers)]
    return start(name, [*argv, *extra], port, env=env, cwd=source)


def start_nginx_relay(backend_port: int, workdir: Path) -> Server | None:
    """nginx proxying HTTP without buffering, kept-alive to the backend: a relay with no Python in
    it, i.e. the floor this machine sets (wake-ups, loopback reads and writes). None without nginx."""
    try:
        binary = nginx_binary()
    except StackError as error:
        print(f"no C relay floor: {error}", flush=True)
        return None
    port, home = free_port(), workdir / "nginx"
    (home / "logs").mkdir(parents=True)
    (home / "nginx.conf").write_text(
        f"worker_processes 1; daemon off; pid {home}/nginx.pid; error_log {home}/logs/error.log;\n"
        "events { worker_connections 4096; }\n"
        "http { access_log off;\n"
        f"  upstream backend {{ server 127.0.0.1:{backend_port}; keepalive 512; }}\n"
        f"  server {{ listen 127.0.0.1:{port} backlog=4096; location / {{ proxy_pass http://backend;\n"
        "    proxy_http_version 1.1; proxy_set_header Connection \"\"; proxy_buffering off; } } }\n")
    return start("nginx relay", [binary, "-p", str(home), "-c", str(home / "nginx.conf")], port)


def checkout(ref: str, into: Path) -> Path:
    """The proxy as it is at `ref` (its stackctl/ package only), to run beside this one."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "stackctl"], capture_output=True, check=True)
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


# ---- LiteLLM, in its own virtual environment -----------------------------------------------------


def litellm_python() -> Path:
    """LiteLLM's proxy, pinned, in a venv of its own under ~/.cache (installed on first use)."""
    home = Path.home() / ".cache" / "stackctl-bench" / f"litellm-{LITELLM_VERSION}"
    installed = home / ".installed"
    if not installed.exists():
        print(f"installing litellm[proxy]=={LITELLM_VERSION} into {home} (once) ...", flush=True)
        shutil.rmtree(home, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(home)], check=True)
        subprocess.run([str(home / "bin" / "pip"), "install", "-q", f"litellm[proxy]=={LITELLM_VERSION}"],
                       check=True)
        installed.touch()
    return home / "bin" / "python"


def start_litellm(backend_port: int, workdir: Path, master_key: str) -> Server:
    port = free_port()
    config = workdir / "litellm.yaml"
    params = (f"      model: hosted_vllm/{MODEL}\n      api_base: http://127.0.0.1:{backend_port}/v1\n"
              "      api_key: not-a-secret\n")
    config.write_text("model_list:\n"
                      f"  - model_name: {MODEL}\n    litellm_params:\n{params}"
                      f"  - model_name: claude-bench\n    litellm_params:\n{params}"
                      "litellm_settings:\n  drop_params: true\n  telemetry: false\n")
    python = litellm_python()
    env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False",
           "LITELLM_MASTER_KEY": master_key, "PYTHONPATH": ""}
    argv = [str(python), "-m", "litellm.proxy.proxy_cli", "--config", str(config), "--host", "127.0.0.1",
            "--port", str(port), "--num_workers", "1"]
    return start("litellm", argv, port, env=env, cwd=workdir, health="/health/liveliness", timeout_s=180)


# ---- routes --------------------------------------------------------------------------------------


def chat_target(name: str, port: int, tokens: int, *, key: str | None = KEY) -> Target:
    body = {"model": MODEL, "stream": True, "max_tokens": tokens, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "Write a long story."}]}
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return Target(name, port, "/v1/chat/completions", headers, json.dumps(body).encode(), "openai")


def messages_target(name: str, port: int, tokens: int, *, key: str = KEY) -> Target:
    body = {"model": "claude-bench", "stream": True, "max_tokens": tokens,
            "messages": [{"role": "user", "content": "Write a long story."}]}
    headers = {"x-api-key": key, "authorization": f"Bearer {key}", "anthropic-version": "2023-06-01"}
    return Target(name, port, "/v1/messages", headers, json.dumps(body).encode(), "anthropic")


@dataclass
class Mode:
    target: Target
    server: Server | None  # whose CPU is measured (None: direct, the backend's own)
    group: str  # "base", "stackctl", "compare", "litellm"


@dataclass
class Row:
    mode: Mode
    level: LevelResult
    cpu_s: float

    @property
    def name(self) -> str:
        return self.mode.target.name

    @property
    def served_deltas(self) -> int:
        return sum(sample.tokens for sample in self.level.samples) + self.level.warm_tokens

    @property
    def served_streams(self) -> int:
        return len(self.level.samples) + self.level.warm_streams

    @property
    def us_per_delta(self) -> float:
        return self.cpu_s / self.served_deltas * 1e6 if self.served_deltas and self.mode.server else float("nan")

    @property
    def ms_per_request(self) -> float:
        return self.cpu_s / self.served_streams * 1e3 if self.served_streams and self.mode.server else float("nan")


def requests_each(concurrency: int, quick: bool) -> int:
    if concurrency == 1:
        return 8 if quick else 16
    return max(1, (32 if quick else 128) // concurrency)


def measure(modes: list[Mode], levels: list[int], quick: bool, tokens: int, rate: float,
            stream_rate: float = 0.0) -> list[Row]:
    rows = []
    for concurrency in levels:
        # Agents work independently: their first requests spread over one reply's duration (at
        # this level's share of the rate), not a burst at once, which would measure how fast a
        # server admits 256 requests together rather than what it adds to each.
        spread = tokens / stream_rate if stream_rate else tokens * concurrency / rate if rate else 0.0
        for mode in modes:
            if mode.group == "litellm" and concurrency > 64:
                continue  # the issue compares at 1/16/64
            before = tree_cpu(mode.server.process.pid) if mode.server else 0.0
            level = run_level(mode.target, concurrency, requests_each(concurrency, quick), spread_seconds=spread)
            cpu = tree_cpu(mode.server.process.pid) - before if mode.server else 0.0
            row = Row(mode, level, cpu)
            rows.append(row)
            print(f"  c{concurrency:<4} {row.name:<22} TTFT p50 {level.ttft_ms(0.5):7.1f} ms  "
                  f"{level.aggregate_rate:7.0f} deltas/s  {row.us_per_delta:5.1f} us/delta  "
                  f"{level.failures} failed", flush=True)
            errors = sorted({sample.error for sample in level.samples if sample.error})
            if errors:
                print(f"        failures: {'; '.join(errors)[:300]}", flush=True)
    return rows


# ---- report --------------------------------------------------------------------------------------


def table(rows: list[Row], levels: list[int]) -> str:
    header = ("| conc | mode | TTFT p50 | p99 | added p50 | deltas/s | vs direct | us/delta | 1 core "
              "| CPU ms/request | failed |")
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|---|"]
    for concurrency in dict.fromkeys(levels):
        level = [row for row in rows if row.level.concurrency == concurrency]
        direct = level[0]
        for row in level:
            result = row.level
            added = result.ttft_ms(0.5) - direct.level.ttft_ms(0.5)
            share = result.aggregate_rate / direct.level.aggregate_rate if direct.level.aggregate_rate else 0.0
            per_core = 1e6 / row.us_per_delta if row.us_per_delta == row.us_per_delta else float("nan")
            lines.append(f"| {concurrency} | {row.name} | {result.ttft_ms(0.5):.1f} ms | {result.ttft_ms(0.99):.1f} ms "
                         f"| {'-' if row is direct else f'{added:+.1f} ms'} | {result.aggregate_rate:.0f} | {share:.1%} "
                         f"| {row.us_per_delta:.1f} | {per_core:.0f}/s | {row.ms_per_request:.2f} "
                         f"| {result.failures}/{len(result.samples)} |")
    return "\n".join(lines)


def litellm_ratios(rows: list[Row], levels: list[int]) -> list[str]:
    lines = []
    for concurrency in levels:
        level = {row.name: row for row in rows if row.level.concurrency == concurrency}
        direct = next(row for row in rows if row.level.concurrency == concurrency)
        for ours, theirs in (("stackctl openai", "litellm openai"), ("stackctl anthropic", "litellm anthropic")):
            if ours not in level or theirs not in level:
                continue
            a, b = level[ours], level[theirs]
            ratio = b.ms_per_request / a.ms_per_request if a.ms_per_request else float("nan")
            added_a = a.level.ttft_ms(0.5) - direct.level.ttft_ms(0.5)
            added_b = b.level.ttft_ms(0.5) - direct.level.ttft_ms(0.5)
            verdict = "PASS" if ratio >= 20 else "MISS"
            lines.append(f"  c{concurrency} {ours.split()[1]:<9}: CPU/request {a.ms_per_request:.2f} ms vs LiteLLM "
                         f"{b.ms_per_request:.2f} ms = 1/{ratio:.0f} [{verdict} <= 1/20]; added TTFT p50 "
                         f"{added_a:+.1f} vs {added_b:+.1f} ms; aggregate {a.level.aggregate_rate:.0f} vs "
                         f"{b.level.aggregate_rate:.0f} deltas/s")
        theirs = level.get("litellm openai")
        floors = [level[name] for name in ("nginx relay", "relay") if name in level]
        if theirs and floors:
            # What a proxy that did nothing would score: no proxy beats its floor's ratio.
            lines.append(f"  c{concurrency} floors   : " + "; ".join(
                f"{row.name} {row.ms_per_request:.2f} ms = 1/{theirs.ms_per_request / row.ms_per_request:.0f}"
                for row in floors if row.ms_per_request) + " of LiteLLM openai's")
    return lines


def ceiling(proxies: list[Server], unpaced_port: int, tokens: int, quick: bool) -> list[str]:
    """Each proxy against an unpaced backend at 64 streams: what it delivers, on how many cores."""
    lines = ["| mode | deltas/s delivered | proxy cores used | deltas/s per proxy core | us/delta |",
             "|---|---|---|---|---|"]
    for server in proxies:
        for target in (chat_target(f"{server.name} openai", server.port, tokens),
                       messages_target(f"{server.name} anthropic", server.port, tokens)):
            before = tree_cpu(server.process.pid)
            result = run_level(target, 64, requests_each(64, quick), warm=False)
            cpu = tree_cpu(server.process.pid) - before
            deltas = sum(sample.tokens for sample in result.samples)
            cores = cpu / result.wall_seconds if result.wall_seconds else 0.0
            lines.append(f"| {target.name} | {result.aggregate_rate:.0f} | {cores:.2f} | "
                         f"{deltas / cpu if cpu else 0:.0f} | {cpu / max(deltas, 1) * 1e6:.1f} |")
            print(f"  unpaced c64 {target.name:<22} {result.aggregate_rate:7.0f} deltas/s on {cores:.2f} proxy cores",
                  flush=True)
    return lines


def tracking(backend_port: int, workers: int, quick: bool) -> list[str]:
    """What following each conversation's prefix (`stackctl cache-report`) costs a request: a
    Claude Code-shaped conversation (agent_conversation.py: 48 KB at turn 1, growing each turn,
    Claude Code's session header) through a proxy that follows it and one started with
    --sessions 0, turn by turn, alternating; the tracker's work waits for the reply's first
    event, so TTFT must not show it, and the CPU per request says what it is."""
    from agent_conversation import agent_request, tracking_cost

    proxies = [start_proxy("tracking on", REPO, backend_port, workers),
               start_proxy("tracking off", REPO, backend_port, workers, "--sessions", "0")]
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "x-claude-code-session-id": "bench-session"}
    turns = 4 if quick else 12
    lines = ["| conc | proxy | requests | TTFT p50 | p99 | CPU ms/request |", "|---|---|---|---|---|---|"]
    summary = []
    try:
        for concurrency in (1, 16):
            samples: dict[str, list[float]] = {server.name: [] for server in proxies}
            cpu = dict.fromkeys(samples, 0.0)
            for turn in range(1, turns + 1):
                body = agent_request(turn, max_tokens=64)
                for server in proxies:
                    target = Target(server.name, server.port, "/v1/messages", headers, body, "anthropic")
                    before = tree_cpu(server.process.pid)
                    level = run_level(target, concurrency, 1 if quick else 2, warm=turn == 1)
                    cpu[server.name] += tree_cpu(server.process.pid) - before
                    samples[server.name] += [sample.ttft * 1000 for sample in level.ok]
                    if level.failures:
                        raise SystemExit(f"{server.name}: {level.failures} failed streams at turn {turn}")
            p50 = {}
            for name, values in samples.items():
                values.sort()
                p50[name] = values[len(values) // 2]
                served = len(values) + concurrency  # the warm-up round (one a connection) is in the CPU
                lines.append(f"| {concurrency} | {name} | {len(values)} | {p50[name]:.1f} ms "
                             f"| {values[min(len(values) - 1, int(0.99 * len(values)))]:.1f} ms "
                             f"| {cpu[name] / served * 1e3:.2f} |")
                print(f"  tracking c{concurrency:<3} {name:<13} TTFT p50 {p50[name]:6.1f} ms  "
                      f"{cpu[name] / served * 1e3:.2f} ms CPU/request", flush=True)
            summary.append(f"c{concurrency}: added TTFT p50 {p50['tracking on'] - p50['tracking off']:+.1f} ms")
    finally:
        for server in proxies:
            server.stop()
    cost = tracking_cost()
    summary.append(f"in-process {cost.first_us:.0f} us a session's first request ({cost.request_bytes // 1024} KB at "
                   f"turn 20), {cost.next_us:.0f} us each next turn, {cost.session_bytes / 1024:.1f} KB kept a session")
    return [*lines, "", "  " + "; ".join(summary)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer requests, shorter replies")
    parser.add_argument("--rate", type=float, default=10000.0, help="aggregate tokens/s of the backend (0: unpaced)")
    parser.add_argument("--stream-rate", type=float, default=0.0,
                        help="tokens/s of each stream, however many run (in place of --rate)")
    parser.add_argument("--tokens", type=int, default=None, help="tokens per reply (256; 64 with --quick)")
    parser.add_argument("--levels", default=None, help="concurrency levels (1,16,64,256; 1,16,64 with --quick)")
    parser.add_argument("--workers", type=int, default=1, help="the proxy's worker processes")
    parser.add_argument("--compare", metavar="REF", help="also run the proxy of this git revision (e.g. main)")
    parser.add_argument("--litellm", action="store_true", help=f"also run LiteLLM {LITELLM_VERSION}'s proxy")
    parser.add_argument("--no-ceiling", action="store_true", help="skip the unpaced section")
    parser.add_argument("--no-tracking", action="store_true", help="skip the session tracking's section")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    options = parser.parse_args()
    tokens = options.tokens or (64 if options.quick else 256)
    levels = [int(level) for level in (options.levels or ("1,16,64" if options.quick else "1,16,64,256")).split(",")]

    servers: list[Server] = []
    workdir = Path(tempfile.mkdtemp(prefix="proxy-overhead-"))
    try:
        backend_port, unpaced_port, relay_port = free_port(), free_port(), free_port()
        python = sys.executable
        backend = start("backend", [python, str(BENCH / "token_backend.py"), str(backend_port), "--rate",
                                    str(options.rate), "--stream-rate", str(options.stream_rate),
                                    "--tokens", str(tokens)], backend_port)
        servers.append(backend)
        relay = start("relay", [python, str(BENCH / "proxy_overhead.py"), "--_relay", str(relay_port),
                                str(backend_port)], relay_port)
        servers.append(relay)
        nginx = start_nginx_relay(backend_port, workdir)
        servers += [nginx] if nginx else []
        ours = start_proxy("stackctl", REPO, backend_port, options.workers)
        servers.append(ours)
        modes = [Mode(chat_target("direct", backend_port, tokens, key=None), None, "base"),
                 *([Mode(chat_target("nginx relay", nginx.port, tokens, key=None), nginx, "base")] if nginx else []),
                 Mode(chat_target("relay", relay_port, tokens, key=None), relay, "base"),
                 Mode(chat_target("stackctl openai", ours.port, tokens), ours, "stackctl"),
                 Mode(messages_target("stackctl anthropic", ours.port, tokens), ours, "stackctl")]
        if options.compare:
            theirs = start_proxy(options.compare, checkout(options.compare, workdir / "compare"), backend_port, 1)
            servers.append(theirs)
            modes += [Mode(chat_target(f"{options.compare} openai", theirs.port, tokens), theirs,
                           "compare"),
                      Mode(messages_target(f"{options.compare} anthropic", theirs.port, tokens), theirs, "compare")]
        if options.litellm:
            master_key = "sk-" + secrets.token_hex(32)  # LiteLLM refuses to start without one
            litellm = start_litellm(backend_port, workdir, master_key)
            servers.append(litellm)
            modes += [Mode(chat_target("litellm openai", litellm.port, tokens, key=master_key), litellm, "litellm"),
                      Mode(messages_target("litellm anthropic", litellm.port, tokens, key=master_key), litellm,
                           "litellm")]
        pacing = (f"{options.stream_rate:.0f} tokens/s each stream" if options.stream_rate
                  else f"{options.rate:.0f} tokens/s aggregate" if options.rate else "unpaced")
        print(f"backend: {tokens} tokens a reply, {pacing}; proxy workers: {options.workers}; "
              f"{os.cpu_count()} CPU cores", flush=True)
        rows = measure(modes, levels, options.quick, tokens, options.rate, options.stream_rate)
        tracking_lines = [] if options.no_tracking else tracking(backend_port, options.workers, options.quick)
        ceiling_lines: list[str] = []
        if not options.no_ceiling:
            unpaced = start("unpaced backend", [python, str(BENCH / "token_backend.py"), str(unpaced_port),
                                                "--rate", "0", "--tokens", str(tokens)], unpaced_port)
            servers.append(unpaced)
            proxies = [start_proxy("stackctl", REPO, unpaced_port, options.workers)]
            servers += proxies
            if options.compare:
                proxies.append(start_proxy(options.compare, workdir / "compare", unpaced_port, 1))
                servers.append(proxies[-1])
            ceiling_lines = ceiling(proxies, unpaced_port, tokens, options.quick)
    finally:
        for server in reversed(servers):
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"\nproxy overhead: {tokens} tokens a reply, backend {pacing}, proxy workers {options.workers}, "
          f"{os.cpu_count()} cores. us/delta: the server's CPU per text delta it served; "
          "1 core: the deltas/s one core sustains at that cost; added: TTFT p50 minus direct's.\n")
    print(table(rows, levels))
    ratios = litellm_ratios(rows, levels)
    if ratios:
        print("\nLiteLLM side by side (CPU per streamed request, same backend, same client):")
        print("\n".join(ratios))
    if tracking_lines:
        print("\nSession tracking (cache-report), on and off, a Claude Code-shaped conversation turn by turn:")
        print("\n".join(tracking_lines))
    if ceiling_lines:
        print("\nOne core's ceiling: the backend unpaced (engine steps back to back), 64 streams:")
        print("\n".join(ceiling_lines))
    checks = []
    for row in rows:
        if row.name == "stackctl anthropic" and row.level.concurrency >= 16:
            per_core = 1e6 / row.us_per_delta
            checks.append((f"c{row.level.concurrency} anthropic: one core sustains {per_core:.0f} deltas/s >= 20000",
                           per_core >= 20000))
        if row.mode.group == "stackctl":
            checks.append((f"c{row.level.concurrency} {row.name}: {row.level.failures} failed streams",
                           row.level.failures == 0))
    print()
    for text, ok in checks:
        print(f"  [{'PASS' if ok else 'MISS'}] {text}")
    if options.json:
        options.json.write_text(json.dumps({
            "tokens": tokens, "rate": options.rate, "workers": options.workers, "levels": levels,
            "rows": [{"mode": row.name, "concurrency": row.level.concurrency, "ttft_p50_ms": row.level.ttft_ms(0.5),
                      "ttft_p99_ms": row.level.ttft_ms(0.99), "deltas_per_s": row.level.aggregate_rate,
                      "us_per_delta": row.us_per_delta, "cpu_ms_per_request": row.ms_per_request,
                      "failed": row.level.failures, "streams": len(row.level.samples)} for row in rows],
            "ceiling": ceiling_lines, "tracking": tracking_lines, "litellm": ratios}, indent=2))


# ---- a do-nothing TCP relay: what one more process hop costs on this machine ----------------------


def serve_relay(port: int, backend_port: int) -> None:
    """Copies bytes both ways and understands nothing: the floor under any proxy's costs (two more
    loopback hops, a read and a write per token), measured so the machine's part shows."""
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

    async def relay(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        backend_reader, backend_writer = await asyncio.open_connection("127.0.0.1", backend_port)
        await asyncio.gather(pump(client_reader, backend_writer), pump(backend_reader, client_writer))

    async def serve() -> None:
        server = await asyncio.start_server(relay, "127.0.0.1", port, backlog=4096)
        await server.serve_forever()

    uvloop.run(serve())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--_relay"]:
        serve_relay(int(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
