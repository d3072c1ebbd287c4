"""`stackctl gpu-exporter`: GPU metrics for Prometheus from NVML (nvidia-ml-py), unified memory included.

Imports nothing but the standard library, nvidia-ml-py and prometheus-client (plus stackctl's
errors and host facts: /proc/meminfo); its one front end is the `stackctl gpu-exporter` command (stackctl/commands/gpu_exporter.py).
"""

from stackctl.gpu_exporter.collector import render_metrics, render_report, report_metrics
from stackctl.gpu_exporter.sampler import GpuReport, GpuSample, GpuSampler
from stackctl.gpu_exporter.server import DEFAULT_PORT, RunningExporter, start_exporter

__all__ = [
    "DEFAULT_PORT",
    "GpuReport",
    "GpuSample",
    "GpuSampler",
    "RunningExporter",
    "render_metrics",
    "render_report",
    "report_metrics",
    "start_exporter",
]
