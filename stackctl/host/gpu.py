"""The host's GPUs and NVIDIA driver, as nvidia-smi and /proc/driver/nvidia tell them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackctl.host.command import CommandOutput

# Fields asked of nvidia-smi, in this order (CSV columns).
GPU_QUERY_FIELDS = ("name", "pci.bus_id", "driver_version", "memory.total", "compute_cap")
NVIDIA_SMI_QUERY = ["nvidia-smi", f"--query-gpu={','.join(GPU_QUERY_FIELDS)}", "--format=csv,noheader,nounits"]


@dataclass(frozen=True)
class GpuInfo:
    name: str
    bus_id: str
    driver_version: str
    # MiB; None where nvidia-smi prints [N/A] (GB10's unified memory has no framebuffer of its own).
    memory_mib: int | None
    # e.g. "12.0" (sm_120); None when the driver is too old to report it.
    compute_cap: str | None

    @property
    def sm(self) -> str | None:
        return "sm_" + self.compute_cap.replace(".", "") if self.compute_cap else None


@dataclass(frozen=True)
class GpuQuery:
    gpus: tuple[GpuInfo, ...]
    # Why nothing was read (not installed, driver not loaded, ...); empty when gpus were read.
    error: str = ""


def parse_gpu_query(output: CommandOutput | None) -> GpuQuery:
    """nvidia-smi's answer to NVIDIA_SMI_QUERY (None: nvidia-smi is not installed)."""
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


def driver_version(version_text: str | None, gpus: tuple[GpuInfo, ...]) -> str | None:
    """The driver's version: nvidia-smi's, else the loaded kernel module's (/proc/driver/nvidia/version)."""
    if gpus:
        return gpus[0].driver_version
    match = re.search(r"Kernel Module(?: for \w+)?\s+(\d+\.\d+(?:\.\d+)?)", version_text or "")
    return match.group(1) if match else None


def major_version(version: str | None) -> int | None:
    """580 for "580.95.05"; None when unknown."""
    if not version:
        return None
    head = version.split(".")[0]
    return int(head) if head.isdigit() else None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
