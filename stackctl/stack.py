"""One stack on disk: its layout, validated config and runtime, and what is computed from them,
each once: this host's plan, the vLLM settings, the template context and the services."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from stackctl.config import StackConfig, load_stack_config
from stackctl.layout import StackLayout
from stackctl.runtime import Runtime, RuntimeName, runtime_for
from stackctl.services import Service, ServiceOutline, load_outlines, load_services
from stackctl.template_values import outline_context, template_context
from stackctl.topology import HostPlan, plan_host
from stackctl.topology.local import local_host
from stackctl.vllm_settings import VllmSettings, vllm_settings


@dataclass(frozen=True)
class Stack:
    layout: StackLayout
    config: StackConfig
    runtime: Runtime

    @classmethod
    def load(cls, layout: StackLayout, runtime: RuntimeName | None = None, host: str | None = None) -> Stack:
        """The stack in `layout`'s stack.yaml; `host`: which of its hosts this is (None: the one
        whose address is local)."""
        return cls.from_config(load_stack_config(layout.stack_file), layout, runtime, host)

    @classmethod
    def from_config(cls, config: StackConfig, layout: StackLayout, runtime: RuntimeName | None = None,
                    host: str | None = None) -> Stack:
        """A stack from a validated config, kept in `layout` (`runtime` overrides stack.yaml's)."""
        if runtime and runtime != config.runtime:
            # `--runtime` overrides stack.yaml everywhere (what is rendered depends on it).
            config = config.model_copy(update={"runtime": runtime})
        if config.hosts or host:
            host = host or local_host(config.hosts)
            plan_host(config, host)  # an unknown or missing host name stops here, with the list
            layout = layout.for_host(host)
            # One Compose project per host: two hosts' containers never share names on one engine.
            config = config.model_copy(update={"project": f"{config.project}-{host}"})
        return cls(layout, config, runtime_for(config.runtime, layout, config))

    @cached_property
    def plan(self) -> HostPlan:
        """What this host runs (the whole stack on one box)."""
        return plan_host(self.config, self.layout.host)

    @cached_property
    def vllm(self) -> VllmSettings:
        """The vLLM settings this stack runs with (profile, hardware, then stack.yaml)."""
        return vllm_settings(self.config)

    @cached_property
    def template_context(self) -> dict[str, Any]:
        """What fragments and config templates are filled with, for this runtime. Read-only:
        whoever adds values copies it first."""
        return template_context(self.config, self.runtime, self.plan)

    @cached_property
    def services(self) -> list[Service]:
        """Enabled services in dependency order, filled for this runtime."""
        return load_services(self.config, self.template_context)

    @cached_property
    def outlines(self) -> list[ServiceOutline]:
        """The same services as far as stopping and reporting on them need: no engine is chosen
        (a native GPU stack plans no CUDA install to learn what to stop)."""
        if "services" in self.__dict__:
            return list(self.services)
        return load_outlines(self.config, outline_context(self.config, self.runtime, self.plan))
