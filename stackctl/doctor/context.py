"""What every check sees: the stack, the host, and facts several checks share (read once)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from stackctl.config import StackConfig
from stackctl.host import GpuQuery, HostFacts
from stackctl.layout import StackLayout
from stackctl.runtime import Runtime
from stackctl.services import Service
from stackctl.stack import Stack


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
        return self.facts.gpu_query()

    @cached_property
    def driver_major(self) -> int | None:
        return self.facts.driver_major(self.gpu_query)
