"""One stack on disk: its layout, validated config and services, for a chosen runtime."""

from __future__ import annotations

from dataclasses import dataclass

from stackctl.config import StackConfig, load_stack_config
from stackctl.context import Runtime, template_context
from stackctl.layout import StackLayout
from stackctl.services import Service, load_services


@dataclass(frozen=True)
class Stack:
    layout: StackLayout
    config: StackConfig
    runtime: Runtime

    @classmethod
    def load(cls, layout: StackLayout, runtime: Runtime | None = None) -> Stack:
        config = load_stack_config(layout.stack_file)
        if runtime and runtime != config.runtime:
            # `--runtime` overrides stack.yaml everywhere (which services exist depends on it).
            config = config.model_copy(update={"runtime": runtime})
        return cls(layout, config, runtime or config.runtime)

    def services(self) -> list[Service]:
        """Enabled services in dependency order, filled for this runtime."""
        return load_services(self.config, template_context(self.config, self.layout, self.runtime))
