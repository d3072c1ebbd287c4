"""What one streamed request costs the filter-proxy in instructions: counted by valgrind's
callgrind, so the figure is the same run after run, whatever else the machine is doing.

    .venv/bin/python benchmarks/proxy_instructions.py                    # ~4 min on 2 cores
    .venv/bin/python benchmarks/proxy_instructions.py --compare 1c68713  # an earlier proxy beside it

The CPU figures of proxy_overhead.py move by 30-60% between runs on a small shared VM, too much
to see a change of a tenth. This counts the user-space instructions a server runs for each
request instead: each server runs under callgrind with its counting off, takes warm-up requests,
then counts only while --requests requests go through it back to back on one keep-alive
connection (the backend unpaced, token_backend.py). A one-token reply shows the per-request
cost; a --tokens reply adds the per-event cost, (long - short) / (tokens - 1) per event. A
do-nothing uvloop relay (proxy_overhead.py's) is the floor.

Instructions are not time: the kernel's part (reads, writes, wake-ups: most of what one stream
costs on this VM) is not counted, and a cold cache makes an instruction dearer at one stream
than back to back. Use it to compare proxies with each other, and proxy_overhead.py for time.
Needs valgrind (Debian's valgrind package; scripts/setup does not install it).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from proxy_overhead import KEY, MODEL, REPO, chat_target, checkout, messages_target
from proxy_process import free_port
from stream_client import Target

BENCH = Path(__file__).resolve().parent
WARM_UP = 30
START_TIMEOUT_S = 600  # Python starting under callgrind takes a minute or more on 2 cores


@dataclass(frozen=True)
class Counted:
    name: str
    tokens: int
    per_request: float  # instructions


def _request_bytes(target: Target) -> bytes:
    head = "".join([f"POST {target.path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n",
                    *(f"{name}: {value}\r\n" for name, value in target.headers.items()),
                    f"content-length: {len(target.body)}\r\n\r\n"])
    return head.encode() + target.body


def _connect(port: int, server: subprocess.Popen[bytes]) -> socket.socket:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port))
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the server on port {port} did not start")
            time.sleep(1)


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    """One request, its chunked reply read to the body's end."""
    sock.sendall(request)
    reply = b""
    while not reply.endswith(b"0\r\n\r\n"):
        data = sock.recv(65536)
        if not data:
            sys.exit("the server closed the connection mid-reply")
        reply += data
    return reply


def _total_instructions(out_file: Path) -> int:
    report = subprocess.run(["callgrind_annotate", str(out_file)], capture_output=True, text=True, check=True).stdout
    found = re.search(r"^([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", report, re.MULTILINE)
    if found is None:
        sys.exit(f"callgrind_annotate printed no total for {out_file}")
    return int(found.group(1).replace(",", ""))


def count(name: str, argv: list[str], port: int, target: Target, requests: int, *, env: dict[str, str],
          cwd: Path, work: Path) -> float:
    """Instructions per request of the server `argv` starts (listening on `port`)."""
    out_file = work / f"callgrind.{name.replace(' ', '-')}.{os.getpid()}"
    server = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                               f"--callgrind-out-file={out_file}", *argv],
                              env={**os.environ, **env}, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        sock = _connect(port, server)
        request = _request_bytes(target)
        for _ in range(WARM_UP):
            reply = _exchange(sock, request)
        if b" 200 " not in reply.split(b"\r\n", 1)[0]:
            sys.exit(f"{name}: {reply[:300]!r}")
        subprocess.run(["callgrind_control", "--instr=on", str(server.pid)], check=True, capture_output=True)
        for _ in range(requests):
            _exchange(sock, request)
        subprocess.run(["callgrind_control", "--instr=off", str(server.pid)], check=True, capture_output=True)
        sock.close()
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(120)
    return _total_instructions(out_file) / requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=32, help="tokens of the long reply (the short one has 1)")
    parser.add_argument("--requests", type=int, default=200, help="requests counted per server and reply")
    parser.add_argument("--compare", metavar="REF", help="also count the proxy of this git revision")
    options = parser.parse_args()
    if options.tokens < 2:
        parser.error("--tokens must be 2 or more (the short reply has 1)")
    if not (shutil.which("valgrind") and shutil.which("callgrind_control") and shutil.which("callgrind_annotate")):
        sys.exit("valgrind is not installed: `sudo apt-get install valgrind`")
    python = sys.executable
    work = Path(tempfile.mkdtemp(prefix="proxy-instructions-"))
    sources = {"stackctl": REPO}
    if options.compare:
        sources[options.compare] = checkout(options.compare, work / "compare")
    results: list[Counted] = []
    try:
        for tokens in (1, options.tokens):
            backend_port = free_port()
            backend = subprocess.Popen([python, str(BENCH / "token_backend.py"), str(backend_port),
                                        "--tokens", str(tokens)], stdout=subprocess.DEVNULL)
            try:
                port = free_port()
                relay = [python, str(BENCH / "proxy_overhead.py"), "--_relay", str(port), str(backend_port)]
                per_request = count("relay", relay, port, chat_target("relay", port, tokens, key=None),
                                    options.requests, env={}, cwd=REPO, work=work)
                results.append(Counted("relay", tokens, per_request))
                print(f"  counted relay, {tokens} token(s)", flush=True)
                for label, source in sources.items():
                    for route, make in (("openai", chat_target), ("anthropic", messages_target)):
                        port = free_port()
                        argv = [python, "-m", "stackctl.proxy", "serve", "--backend",
                                f"http://127.0.0.1:{backend_port}", "--port", str(port),
                                "--alias", f"claude-*={MODEL}", "--search-backend", "off"]
                        env = {"STACKCTL_PROXY_KEYS": f"bench={KEY}", "STACKCTL_PROXY_LOG_LEVEL": "warning",
                               "PYTHONPATH": str(source), "PYTHONHASHSEED": "0"}
                        name = f"{label} {route}"
                        per_request = count(name, argv, port, make(name, port, tokens), options.requests,
                                            env=env, cwd=source, work=work)
                        results.append(Counted(name, tokens, per_request))
                        print(f"  counted {name}, {tokens} token(s)", flush=True)
            finally:
                backend.terminate()
                backend.wait(10)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(results, options.tokens, options.compare)


def report(results: list[Counted], tokens: int, compare: str | None) -> None:
    by = {(item.name, item.tokens): item.per_request for item in results}
    names = list(dict.fromkeys(item.name for item in results))
    print("\nInstructions per streamed request (callgrind, back to back, unpaced backend):\n")
    print(f"| server | 1-token reply | {tokens}-token reply | per extra event | 1-token vs relay |")
    print("|---|---|---|---|---|")
    relay_short = by[("relay", 1)]
    for name in names:
        short, long = by[(name, 1)], by[(name, tokens)]
        print(f"| {name} | {short / 1e6:.3f} M | {long / 1e6:.3f} M | {(long - short) / (tokens - 1) / 1e3:.1f} k "
              f"| {short / relay_short:.1f}x |")
    if compare:
        print()
        for route in ("openai", "anthropic"):
            for reply in (1, tokens):
                now, then = by[(f"stackctl {route}", reply)], by[(f"{compare} {route}", reply)]
                print(f"  {route}, {reply}-token reply: {then / 1e6:.3f} M -> {now / 1e6:.3f} M "
                      f"({(now - then) / then:+.1%} against {compare})")


if __name__ == "__main__":
    main()
