"""What a host command printed (nvidia-smi, docker), as HostFacts ran it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CommandOutput:
    returncode: int
    stdout: str
    stderr: str
