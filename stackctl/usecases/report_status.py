"""`status`: each service's state and health, and the engine this host runs, from the services'
outlines (nothing is rendered and no engine install is planned to report on them)."""

from __future__ import annotations

from dataclasses import dataclass

from stackctl.runtime import ServiceStatus
from stackctl.runtime.base import EngineInUse
from stackctl.stack import Stack


@dataclass(frozen=True)
class StackStatus:
    services: list[ServiceStatus]
    engine: EngineInUse | None  # None where this host runs no engine


def report_status(stack: Stack) -> StackStatus:
    outlines = stack.outlines
    return StackStatus(stack.runtime.status(outlines), stack.runtime.engine_in_use(outlines))
