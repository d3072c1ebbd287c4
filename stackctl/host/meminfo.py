"""/proc/meminfo: the memory figures that matter on unified-memory GPUs (DGX Spark GB10)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MEMINFO = Path("/proc/meminfo")


@dataclass(frozen=True)
class MemInfo:
    total_bytes: int
    # MemAvailable, not MemFree: page cache and reclaimable slabs are given back on demand, so
    # MemFree understates what a CUDA allocation can still get (often by tens of GB on a GB10).
    available_bytes: int

    @property
    def used_bytes(self) -> int:
        return self.total_bytes - self.available_bytes


def meminfo_values(text: str) -> dict[str, int]:
    """Every figure of /proc/meminfo's text, in bytes (counts without a unit as they are)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            values[key.strip()] = int(fields[0]) * (1024 if fields[1:] == ["kB"] else 1)
    return values


def parse_meminfo(text: str) -> MemInfo:
    """Parse /proc/meminfo's text (values in kB)."""
    values = meminfo_values(text)
    try:
        return MemInfo(values["MemTotal"], values["MemAvailable"])
    except KeyError as missing:
        # MemAvailable exists since Linux 3.14; without it there is no honest figure to report.
        raise ValueError(f"/proc/meminfo has no {missing.args[0]} line") from None


def read_meminfo(path: Path = MEMINFO) -> MemInfo:
    return parse_meminfo(path.read_text())
