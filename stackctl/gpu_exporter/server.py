"""Serve the GPU metrics over HTTP (prometheus-client's own server)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from prometheus_client import start_http_server

from stackctl.errors import StackError
from stackctl.gpu_exporter.collector import exporter_registry
from stackctl.gpu_exporter.sampler import GpuSampler

DEFAULT_PORT = 9835  # the port nvidia_gpu_exporter uses, so both fit the same scrape config


@dataclass
class RunningExporter:
    host: str
    port: int
    _server: object
    _thread: threading.Thread
    _sampler: GpuSampler

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def stop(self) -> None:
        self._server.shutdown()  # type: ignore[attr-defined]
        self._server.server_close()  # type: ignore[attr-defined]
        self._thread.join(timeout=5)
        self._sampler.close()


def start_exporter(host: str = "127.0.0.1", port: int = DEFAULT_PORT, sampler: GpuSampler | None = None) -> RunningExporter:
    """Listen in a background thread; the caller keeps the process alive and calls `stop()`."""
    sampler = sampler or GpuSampler()
    try:
        server, thread = start_http_server(port, addr=host, registry=exporter_registry(sampler))
    except OSError as error:
        raise StackError(
            f"gpu-exporter cannot listen on {host}:{port}: {error.strerror or error}; "
            "another exporter (nvidia_gpu_exporter?) may already use it; pick another with --port"
        ) from None
    return RunningExporter(host, server.server_port, server, thread, sampler)


def serve_forever(host: str = "127.0.0.1", port: int = DEFAULT_PORT, sampler: GpuSampler | None = None) -> None:
    """Serve until interrupted (SIGINT; SIGTERM ends the process as usual)."""
    exporter = start_exporter(host, port, sampler)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        exporter.stop()
