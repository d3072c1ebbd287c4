"""The ways a stack's services run: Compose (production) and native processes.

`runtime_for` is the one place that turns a runtime's name into its object; everything else asks
the object.
"""

from __future__ import annotations

from typing import get_args

from stackctl.config import StackConfig
from stackctl.layout import StackLayout
from stackctl.runtime.base import (
    ModelLocation,
    Runtime,
    RuntimeName,
    ServiceEvent,
    ServiceStartFailed,
    ServiceStatus,
)

RUNTIME_NAMES: tuple[RuntimeName, ...] = get_args(RuntimeName)


def runtime_for(name: RuntimeName, layout: StackLayout, config: StackConfig) -> Runtime:
    from stackctl.runtime.compose import ComposeRuntime
    from stackctl.runtime.native import NativeRuntime

    runtimes: dict[str, type[Runtime]] = {ComposeRuntime.name: ComposeRuntime, NativeRuntime.name: NativeRuntime}
    return runtimes[name](layout, config)


__all__ = ["RUNTIME_NAMES", "ModelLocation", "Runtime", "RuntimeName", "ServiceEvent", "ServiceStartFailed",
           "ServiceStatus", "runtime_for"]
