"""What every check sees: the stack, the host, and facts several checks share (read once)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from stackctl.config import StackConfig
from stackctl.doctor.host import CommandOutput, GpuInfo, HostFacts
from stackctl.layout import StackLayout
from stackctl.runtime import Runtime
from stackctl.services import Service
from stackctl.stack import Stack


@dataclass(frozen=True)
class GpuQuery:
    gpus: tuple[GpuInfo, ...]
    # Why nothing was read (not installed, driver not loaded, ...); empty when gpus were read.
    error: str = ""


@dataclass
class DoctorContext:
    stack: Stack
    facts: HostFacts = field(default_factory=HostFacts)
    # The vLLM engine's interpreter for flag validation (None: look in the default place).
    engine_python: Path | None = None

    @property
    def layout(self) -> StackLayout:
        return self.stack.layout

    @property
    def config(self) -> StackConfig:
        return self.stack.config

    @property
    def runtime(self) -> Runtime:
        return self.stack.runtime

    @cached_property
    def services(self) -> dict[str, Service]:
        """The rendered services by name (what would run: images, GPU requests, commands)."""
        return {service.name: service for service in self.stack.services}

    @property
    def hf_cache(self) -> Path:
        return Path(self.config.hf_cache).expanduser()

    @cached_property
    def gpu_query(self) -> GpuQuery:
        return parse_gpu_query(self.facts.nvidia_smi())


def parse_gpu_query(output: CommandOutput | None) -> GpuQuery:
    if output is None:
        return GpuQuery((), "nvidia-smi is not installed (no NVIDIA driver)")
    if output.returncode != 0:
        message = (output.stdout + output.stderr).strip().splitlines()
        return GpuQuery((), message[0] if message else f"nvidia-smi exited with {output.returncode}")
    gpus = []
    for line in output.stdout.splitlines():
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) < 5:
            continue
        name, bus_id, driver, memory, capability = cells[:5]
        gpus.append(GpuInfo(
            name=name,
            bus_id=bus_id,
            driver_version=driver,
            memory_mib=int(float(memory)) if _is_number(memory) else None,
            compute_cap=capability if _is_number(capability) else None,
        ))
    if not gpus:
        return GpuQuery((), "nvidia-smi lists no GPU")
    return GpuQuery(tuple(gpus))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
