"""Where a stack keeps its files: one directory holding stack.yaml and .env."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StackLayout:
    root: Path
    # One host of a multi-host stack (stack.yaml's `hosts:`): its rendered project, data and
    # state live under hosts/NAME/, beside the shared stack.yaml and .env.
    host: str | None = None

    @property
    def home(self) -> Path:
        """Where this host's Compose project, rendered configs, data and state live."""
        return self.root / "hosts" / self.host if self.host else self.root

    def for_host(self, host: str | None) -> StackLayout:
        return StackLayout(self.root, host)

    @property
    def stack_file(self) -> Path:
        return self.root / "stack.yaml"

    @property
    def env_file(self) -> Path:
        return self.root / ".env"

    @property
    def compose_file(self) -> Path:
        return self.home / "docker-compose.yml"

    @property
    def rendered(self) -> Path:
        """Rendered service configs (prometheus.yml, nginx site, grafana provisioning)."""
        return self.home / "rendered"

    @property
    def data(self) -> Path:
        """Service data that `down` never deletes (Prometheus TSDB, Grafana, ACME webroot)."""
        return self.home / "data"

    @property
    def state(self) -> Path:
        """Runtime state: PID files, logs, nginx temp dirs."""
        return self.home / ".stackctl"

    @property
    def logs(self) -> Path:
        return self.state / "logs"


def find_layout(directory: Path | None) -> StackLayout:
    return StackLayout((directory or Path.cwd()).resolve())
