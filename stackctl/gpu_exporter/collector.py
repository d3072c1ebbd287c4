"""GPU readings as Prometheus metrics, sampled on every scrape.

Metric names follow utkuozdemir/nvidia_gpu_exporter (the Compose image), so the dashboard reads
either exporter alike; `stackctl_gpu_*` adds what that one lacks: an explicit "no GPU" signal
and which GPUs report unified memory.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from stackctl.gpu_exporter.sampler import GpuReport, GpuSampler

_VALUES = (
    ("nvidia_smi_memory_total_bytes", "memory.total in bytes (unified memory: the OS's MemTotal)", "memory_total_bytes"),
    ("nvidia_smi_memory_used_bytes", "memory.used in bytes (unified memory: MemTotal - MemAvailable)", "memory_used_bytes"),
    ("nvidia_smi_memory_free_bytes", "memory.free in bytes (unified memory: the OS's MemAvailable)", "memory_free_bytes"),
    ("nvidia_smi_memory_reserved_bytes", "memory.reserved in bytes: the driver's own share, neither used nor free",
     "memory_reserved_bytes"),
    ("nvidia_smi_utilization_gpu_ratio", "utilization.gpu as a ratio (0-1)", "utilization_ratio"),
    ("nvidia_smi_temperature_gpu", "temperature.gpu in degrees Celsius", "temperature_celsius"),
    ("nvidia_smi_power_draw_watts", "power.draw in watts", "power_watts"),
)


class GpuCollector(Collector):
    def __init__(self, sampler: GpuSampler) -> None:
        self._sampler = sampler

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from report_metrics(self._sampler.sample())


def report_metrics(report: GpuReport) -> Iterator[GaugeMetricFamily]:
    present = GaugeMetricFamily(
        "stackctl_gpu_present",
        "1 when NVML reports at least one GPU; 0 with the reason when there is none to measure.",
        labels=["reason"],
    )
    present.add_metric([report.reason], 1 if report.present else 0)
    yield present
    if not report.present:
        return
    info = GaugeMetricFamily(
        "nvidia_smi_gpu_info", "Constant 1, labelled with the GPU's identity.",
        labels=["uuid", "name", "index", "driver_version"],
    )
    unified = GaugeMetricFamily(
        "stackctl_gpu_unified_memory",
        "1 when the GPU has no dedicated framebuffer and shares the OS's memory (DGX Spark GB10).",
        labels=["uuid"],
    )
    for gpu in report.gpus:
        info.add_metric([gpu.uuid, gpu.name, str(gpu.index), report.driver_version], 1)
        unified.add_metric([gpu.uuid], 1 if gpu.unified_memory else 0)
    yield info
    yield unified
    for name, help_text, attribute in _VALUES:
        family = GaugeMetricFamily(name, help_text, labels=["uuid"])
        for gpu in report.gpus:
            value = getattr(gpu, attribute)
            if value is not None:  # unsupported on this GPU: no sample rather than a fake 0
                family.add_metric([gpu.uuid], value)
        yield family


def exporter_registry(sampler: GpuSampler) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(GpuCollector(sampler))
    return registry


def render_metrics(sampler: GpuSampler) -> str:
    """One scrape's worth of metrics in Prometheus' text format."""
    return generate_latest(exporter_registry(sampler)).decode()


def render_report(report: GpuReport) -> str:
    """An already taken sample in Prometheus' text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(report))
    return generate_latest(registry).decode()


class _Fixed(Collector):
    def __init__(self, report: GpuReport) -> None:
        self._report = report

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from report_metrics(self._report)
