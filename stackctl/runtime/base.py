"""What every runtime offers the CLI: the same verbs, events and status rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from stackctl.errors import ServiceFailed
from stackctl.services import Service

if TYPE_CHECKING:
    from stackctl.diagnosis import Diagnosis

EventKind = Literal[
    "running", "starting", "restarting", "waiting", "healthy",
    # Compose: the service's image is being built or pulled, then is there.
    "building", "pulling", "image-ready",
]


@dataclass(frozen=True)
class ServiceEvent:
    service: Service
    kind: EventKind
    elapsed_s: float = 0.0
    detail: str = ""


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    state: str  # running | dead | stopped | (Compose's container states)
    pid: int | None
    healthy: bool | None
    url: str | None
    uptime_s: float | None
    detail: str
    # Times the service was restarted after a crash (Docker's restart policy), where known.
    restarts: int | None = None


class ServiceStartFailed(ServiceFailed):
    """A service exited or missed its health gate; carries its log tail and what it diagnosed there."""

    def __init__(self, message: str, log_tail: list[str] | None = None, hint: str | None = None, *,
                 service: str | None = None, diagnosis: Diagnosis | None = None) -> None:
        super().__init__(message)
        # None: the service never ran, so it has no log (e.g. its container could not be created).
        self.log_tail = log_tail
        self.service = service
        self.diagnosis = diagnosis
        self.hint = hint if hint is not None else (diagnosis.one_line() if diagnosis else None)


class Runtime(Protocol):
    def up(self, services: list[Service], on_event: Callable[[ServiceEvent], None]) -> None: ...
    def down(self, services: list[Service]) -> list[str]: ...
    def status(self, services: list[Service]) -> list[ServiceStatus]: ...
    def logs(self, service: str, follow: bool) -> Iterator[str]: ...
