"""`stackctl gpu-exporter`: GPU metrics for Prometheus (the native runtime's GPU exporter)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from stackctl.gpu_exporter import DEFAULT_PORT, GpuSampler, render_report
from stackctl.gpu_exporter.server import serve_forever

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False)


def gpu_exporter(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = DEFAULT_PORT,
    once: Annotated[bool, typer.Option("--once", help="Print one scrape's metrics and exit.")] = False,
) -> None:
    """Export GPU memory, utilisation, temperature and power from NVML on /metrics.

    Unified memory (DGX Spark GB10) is reported as the OS's pool (free = MemAvailable); a host without a GPU exports stackctl_gpu_present 0 with the reason instead of failing.
    """
    sampler = GpuSampler()
    if once:
        try:
            report = sampler.sample()
        finally:
            sampler.close()
        typer.echo(render_report(report), nl=False)  # plain: the exposition format, unstyled
        if not report.present:
            err_console.print(f"[yellow]no GPU[/yellow]: {report.reason} ({report.detail})", markup=True)
        return
    report = sampler.sample()
    found = f"{len(report.gpus)} GPU(s)" if report.present else f"no GPU ({report.reason}: {report.detail})"
    console.print(f"gpu-exporter: {found}; serving http://{host}:{port}/metrics")
    serve_forever(host, port, sampler)


def register(app: typer.Typer) -> None:
    app.command("gpu-exporter")(gpu_exporter)
