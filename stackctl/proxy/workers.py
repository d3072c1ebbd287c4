"""`serve --workers N`: N worker processes serving one port, one truth for what they share.

One Python process tops out at one core. A GPU box has many, and the proxy's work (a read, a
translation and a write per token per stream) is independent from stream to stream, so workers
scale it; what must stay one truth is kept by this parent process:

- the port: each worker listens on it with SO_REUSEPORT; the kernel spreads new connections
  over them (a kept-alive connection, an agent's, stays with its worker);
- per-key limits and back-pressure: the parent keeps the one KeyLimiter and the one watch on
  vLLM's queue; each worker asks it to admit a request over a Unix socket (admission.py: one
  round trip per request, ~0.1 ms, nothing per token), and a worker that dies releases what
  it held;
- metrics: prometheus_client's multiprocess mode (metrics.py); any worker's /metrics is the sum;
- the sessions whose prompt prefix is followed (sessions/shared.py): a conversation's requests
  reach any worker (each `claude -p --continue` is a new connection), so the parent keeps them
  and the workers send it what they see; any worker's /admin/cache-report asks it;
- the workers themselves: one that dies is started again; SIGTERM/SIGINT stop them all, each
  finishing its streams for up to 5 s as a single proxy does.
Per-worker, and harmless so: the backend connection pool, the model list, the prompt-size
estimate (it steers, backend/window_fit.py) and the web-search client.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
from multiprocessing.process import BaseProcess
from pathlib import Path

from stackctl.proxy.admission import GateKeeper, LocalGate
from stackctl.proxy.backend.client import Backend
from stackctl.proxy.backend.queue_watch import BackendQueueWatch
from stackctl.proxy.metrics import MULTIPROCESS_DIR
from stackctl.proxy.rate_limits import KeyLimiter
from stackctl.proxy.sessions.capture import Capture
from stackctl.proxy.sessions.service import LocalSessions
from stackctl.proxy.sessions.shared import SessionKeeper
from stackctl.proxy.sessions.tracker import SessionTracker
from stackctl.proxy.settings import ProxySettings

log = logging.getLogger("stackctl.proxy")
_RESTART_PAUSE_S = 1.0  # a worker that dies at once is not restarted in a tight loop
# Idle kept-alive connections are closed after this long. uvicorn's default (5 s) is shorter than
# agents' pauses between requests, and a client that sends on a connection the server is just
# closing gets a reset; clients give up idle connections sooner (httpx, Node: 5 s; nginx: 60).
KEEP_ALIVE_S = 75


def auto_workers() -> int:
    """A GPU box has many cores and vLLM's own API server needs some: a quarter, 1 to 4."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(4, cores // 4))


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port that other workers may bind too (SO_REUSEPORT)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(address)
    return sock


def serve_workers(settings: ProxySettings, workers: int, log_level: str) -> None:
    """Runs until SIGTERM/SIGINT; raises OSError when the port cannot be had."""
    listening_socket(settings.host, settings.port).close()  # the port is ours, or fail here
    private = Path(tempfile.mkdtemp(prefix="stackctl-proxy-"))
    os.chmod(private, 0o700)
    (private / "metrics").mkdir()
    os.environ[MULTIPROCESS_DIR] = str(private / "metrics")  # the workers inherit it
    try:
        import uvloop

        uvloop.run(_supervise(settings, workers, log_level, private))
    finally:
        shutil.rmtree(private, ignore_errors=True)


async def _supervise(settings: ProxySettings, count: int, log_level: str, private: Path) -> None:
    limits = settings.limits
    backend = Backend(settings.backend_url, api_key=settings.backend_api_key,
                      read_timeout_s=settings.backend_read_timeout_s)
    queue = BackendQueueWatch(backend, max_waiting=limits.max_backend_waiting, poll_s=limits.backend_poll_s)
    gate = LocalGate(KeyLimiter(limits), queue)
    keeper_path = str(private / "keeper.sock")
    keeper = await asyncio.start_unix_server(GateKeeper(gate).serve, path=keeper_path)
    sessions_path: str | None = None
    kept: LocalSessions | None = None
    if settings.sessions:
        kept = LocalSessions(SessionTracker(capacity=settings.sessions, capture=Capture(settings.capture_dir)))
        sessions_path = str(private / "sessions.sock")
        session_keeper = await asyncio.start_unix_server(SessionKeeper(kept).serve, path=sessions_path)
    watcher = asyncio.create_task(gate.run())
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    context = multiprocessing.get_context("spawn")

    def start(index: int) -> BaseProcess:
        process = context.Process(
            target=_worker_main,
            args=(settings, index, keeper_path, sessions_path, log_level),
            name=f"filter-proxy-worker-{index}",
        )
        process.start()
        return process

    running = {index: start(index) for index in range(count)}
    log.info("filter-proxy: %d workers on %s:%d", count, settings.host, settings.port)
    try:
        while not stopping.is_set():
            try:
                await asyncio.wait_for(stopping.wait(), timeout=_RESTART_PAUSE_S)
            except TimeoutError:
                pass
            for index, process in list(running.items()):
                if not process.is_alive() and not stopping.is_set():
                    log.error("filter-proxy worker %d exited (code %s); starting it again",
                              index, process.exitcode)
                    _forget_metrics_of(process)
                    running[index] = start(index)
    finally:
        for process in running.values():
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
        for process in running.values():
            await asyncio.to_thread(process.join, 10)
            if process.is_alive():
                process.kill()
        watcher.cancel()
        keeper.close()
        if kept is not None:
            session_keeper.close()
            kept.close()  # captured prompts never outlive the proxy
        await backend.aclose()


def _forget_metrics_of(process: BaseProcess) -> None:
    """A dead worker's gauges (requests in flight) no longer count; its counters still do."""
    if process.pid is not None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(process.pid)  # type: ignore[no-untyped-call]


def _worker_main(settings: ProxySettings, index: int, keeper_path: str, sessions_path: str | None,
                 log_level: str) -> None:
    """One worker: the whole app, its limits asked of the parent, its sessions kept there."""
    import uvicorn

    from stackctl.proxy.admission import SharedGate
    from stackctl.proxy.app import create_app
    from stackctl.proxy.auth import ANONYMOUS
    from stackctl.proxy.metrics import ProxyMetrics
    from stackctl.proxy.server import serve
    from stackctl.proxy.sessions.shared import SharedSessions

    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C reaches the parent, which stops us
    metrics = ProxyMetrics(key_names=tuple(settings.api_keys) if settings.auth_enabled else (ANONYMOUS,))
    sessions = SharedSessions(sessions_path, metrics) if sessions_path else None
    app = create_app(settings, gate=SharedGate(keeper_path), sessions=sessions, metrics=metrics, worker=index)
    config = uvicorn.Config(app, loop="uvloop", http="httptools", access_log=False, log_level=log_level.lower(),
                            timeout_graceful_shutdown=5, timeout_keep_alive=KEEP_ALIVE_S)
    serve(config, sockets=[listening_socket(settings.host, settings.port)])
