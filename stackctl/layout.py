"""Where a stack keeps its files: one directory holding stack.yaml and .env."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StackLayout:
    root: Path

    @property
    def stack_file(self) -> Path:
        return self.root / "stack.yaml"

    @property
    def env_file(self) -> Path:
        return self.root / ".env"

    @property
    def compose_file(self) -> Path:
        return self.root / "docker-compose.yml"

    @property
    def rendered(self) -> Path:
        """Rendered service configs (prometheus.yml, nginx site, grafana provisioning)."""
        return self.root / "rendered"

    @property
    def data(self) -> Path:
        """Service data that `down` never deletes (Prometheus TSDB, Grafana, ACME webroot)."""
        return self.root / "data"

    @property
    def state(self) -> Path:
        """Runtime state: PID files, logs, nginx temp dirs."""
        return self.root / ".stackctl"

    @property
    def logs(self) -> Path:
        return self.state / "logs"


def find_layout(directory: Path | None) -> StackLayout:
    return StackLayout((directory or Path.cwd()).resolve())
