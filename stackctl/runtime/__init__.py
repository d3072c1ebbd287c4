"""The ways a stack's services run: Compose (production) and native processes.

`runtime_for` is the one place that turns a runtime's name into its object; everything else asks
the object.
"""

from __future__ import annotations

from importlib import import_module
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


# Each runtime's module is imported only when a stack runs on it (python-on-whales alone costs
# 0.3 s, which a native stack never needs).
_RUNTIME_CLASSES: dict[RuntimeName, tuple[str, str]] = {
    "compose": ("stackctl.runtime.compose", "ComposeRuntime"),
    "native": ("stackctl.runtime.native", "NativeRuntime"),
}


def runtime_for(name: RuntimeName, layout: StackLayout, config: StackConfig) -> Runtime:
    module, class_name = _RUNTIME_CLASSES[name]
    runtime_class: type[Runtime] = getattr(import_module(module), class_name)
    return runtime_class(layout, config)


__all__ = ["RUNTIME_NAMES", "ModelLocation", "Runtime", "RuntimeName", "ServiceEvent", "ServiceStartFailed",
           "ServiceStatus", "runtime_for"]
