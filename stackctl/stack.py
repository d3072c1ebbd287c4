"""One stack on disk: its layout, validated config, runtime and the values computed from them once."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from stackctl.config import StackConfig, load_stack_config
from stackctl.layout import StackLayout
from stackctl.runtime import Runtime, RuntimeName, runtime_for
from stackctl.services import Service, load_services
from stackctl.template_values import template_context
from stackctl.vllm_settings import VllmSettings, vllm_settings


@dataclass(frozen=True)
class Stack:
    layout: StackLayout
    config: StackConfig
    runtime: Runtime

    @classmethod
    def load(cls, layout: StackLayout, runtime: RuntimeName | None = None) -> Stack:
        config = load_stack_config(layout.stack_file)
        if runtime and runtime != config.runtime:
            # `--runtime` overrides stack.yaml everywhere (what is rendered depends on it).
            config = config.model_copy(update={"runtime": runtime})
        return cls(layout, config, runtime_for(config.runtime, layout, config))

    @cached_property
    def vllm(self) -> VllmSettings:
        """The vLLM settings this stack runs with (profile, hardware, then stack.yaml)."""
        return vllm_settings(self.config)

    def services(self) -> list[Service]:
        """Enabled services in dependency order, filled for this runtime."""
        return load_services(self.config, template_context(self.config, self.layout, self.runtime))
