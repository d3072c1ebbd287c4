"""The service model: one Compose fragment per service, read into typed `Service` values (or,
for `down` and `status`, `ServiceOutline`s: no command, environment or engine to fill)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from stackctl.config import StackConfig
from stackctl.errors import StackError
from stackctl.profiles.hardware import HardwareTrait
from stackctl.resources import resource_dir
from stackctl.templating import fill

EXTENSION_KEY = "x-stackctl"


class _HealthBlock(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str
    probe: Literal["http", "vllm", "command"] = "http"
    # probe: command: healthy when this exits 0 (e.g. the Ray cluster gate); its last line says why.
    command: list[str] = []


class _NativeBlock(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: list[str]
    # Like Compose: a mapping, or a list of KEY=VALUE (a list can splice in `{{ a_list }}`).
    environment: dict[str, str] | list[str] = {}


class _ExtensionBlock(BaseModel):
    """The `x-stackctl:` block: what only stackctl needs; Compose ignores `x-` keys."""

    model_config = ConfigDict(extra="forbid")
    health: _HealthBlock | None = None
    start_timeout: float = 120
    native: _NativeBlock | None = None
    # Keys that replace the service's own on hardware with a trait (`cpu`: no GPU;
    # `unified-memory`: DGX Spark GB10); a key set to null is removed.
    variants: dict[HardwareTrait, dict[str, Any]] = {}


@dataclass(frozen=True)
class HealthGate:
    url: str
    # `vllm`: /health answers AND a one-token completion succeeds; `command`: `command` exits 0.
    probe: Literal["http", "vllm", "command"] = "http"
    command: tuple[str, ...] = ()


@dataclass(frozen=True)
class NativeCommand:
    argv: tuple[str, ...]
    # May hold Compose-style ${VAR} references, resolved from .env at start time.
    environment: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ServiceOutline:
    """What stopping a service and reporting on it need: its name, image, dependencies and gate."""

    name: str
    image: str  # what Compose runs ("" where the fragment names none)
    depends_on: tuple[str, ...]
    health: HealthGate | None
    start_timeout: float


@dataclass(frozen=True)
class Service(ServiceOutline):
    """A service filled for one runtime: its Compose body and native command too."""

    compose: dict[str, Any]  # the Compose service body, placeholders filled, x-stackctl removed
    native: NativeCommand | None
    named_volumes: dict[str, Any]


AnyService = TypeVar("AnyService", ServiceOutline, Service)


def fragment_paths() -> dict[str, Path]:
    return {path.stem: path for path in sorted(resource_dir("compose").glob("*.yml"))}


def load_services(config: StackConfig, context: dict[str, Any]) -> list[Service]:
    """This host's services (the whole stack on one box), placeholders filled, in dependency
    order (dependencies first)."""
    return _load(config, context, lambda fragment: fragment.service(context))


def load_outlines(config: StackConfig, context: dict[str, Any]) -> list[ServiceOutline]:
    """The same services in the same order as far as `down` and `status` need them (a context
    without the engine's values fills them: template_values.outline_context)."""
    return _load(config, context, lambda fragment: fragment.outline(context))


def _load(config: StackConfig, context: dict[str, Any], make: Callable[[_Fragment], AnyService]) -> list[AnyService]:
    enabled = set(context["host"].services)
    fragments = fragment_paths()
    missing = enabled - fragments.keys()
    if missing:
        raise StackError(f"no Compose fragment for {', '.join(sorted(missing))} in {resource_dir('compose')}")
    services = {name: make(_Fragment.read(name, fragments[name], config, enabled)) for name in enabled}
    for name, seconds in config.start_timeouts.items():
        if name in services:
            services[name] = replace(services[name], start_timeout=seconds)
    return order_by_dependencies(services)


def order_by_dependencies(services: dict[str, AnyService]) -> list[AnyService]:
    graph = {name: set(service.depends_on) for name, service in sorted(services.items())}
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as error:
        raise StackError(f"service dependencies form a cycle: {' -> '.join(error.args[1])}") from None
    return [services[name] for name in order]


def dependency_waves(services: list[Service]) -> list[list[Service]]:
    """Services (in dependency order) grouped so that each group depends only on earlier ones:
    a group starts at once, so the exporters and Prometheus start while vLLM loads."""
    depth: dict[str, int] = {}
    waves: list[list[Service]] = []
    for service in services:
        level = 1 + max((depth[name] for name in service.depends_on if name in depth), default=-1)
        depth[service.name] = level
        while len(waves) <= level:
            waves.append([])
        waves[level].append(service)
    return waves


@dataclass(frozen=True)
class _Fragment:
    """One fragment's service with its hardware variant applied, placeholders not yet filled."""

    name: str
    body: dict[str, Any]
    extension: _ExtensionBlock
    volumes: dict[str, Any]
    user_image: str | None  # stack.yaml's `images:` entry for this service
    depends_on: tuple[str, ...]

    @classmethod
    def read(cls, name: str, path: Path, config: StackConfig, enabled: set[str]) -> _Fragment:
        try:
            document = yaml.safe_load(path.read_text())
            body = dict(document["services"][name])
        except (yaml.YAMLError, KeyError, TypeError) as error:
            raise StackError(f"{path}: not a Compose fragment defining service '{name}' ({error})") from None
        try:
            extension = _ExtensionBlock.model_validate(body.pop(EXTENSION_KEY, {}) or {})
        except ValidationError as error:
            raise StackError(f"{path}: invalid {EXTENSION_KEY} block: {error.errors()[0]['msg']}") from None
        for trait in sorted(config.hardware_profile.traits):
            for key, value in extension.variants.get(trait, {}).items():
                if value is None:
                    body.pop(key, None)
                else:
                    body[key] = value
        depends_on = _enabled_dependencies(body, enabled)
        return cls(name, body, extension, document.get("volumes") or {}, config.images.get(name), depends_on)

    def outline(self, context: dict[str, Any]) -> ServiceOutline:
        image = self.user_image or str(fill(self.body.get("image", ""), context))
        return ServiceOutline(self.name, image, self.depends_on, self._health(context), self.extension.start_timeout)

    def service(self, context: dict[str, Any]) -> Service:
        body = fill(self.body, context)
        if self.user_image is not None:
            # The user's image replaces the fragment's, and is pulled, never built.
            body["image"] = self.user_image
            body.pop("build", None)
        native = None
        if self.extension.native is not None:
            native_block = fill(self.extension.native.model_dump(), context)
            native = NativeCommand(tuple(native_block["command"]), environment_mapping(native_block["environment"]))
        return Service(name=self.name, image=str(body.get("image", "")), depends_on=self.depends_on,
                       health=self._health(context), start_timeout=self.extension.start_timeout, compose=body,
                       native=native, named_volumes=fill(self.volumes, context))

    def _health(self, context: dict[str, Any]) -> HealthGate | None:
        health = self.extension.health
        if health is None:
            return None
        return HealthGate(fill(health.url, context), health.probe, tuple(fill(health.command, context)))


def environment_mapping(environment: dict[str, Any] | list[str] | None) -> dict[str, str]:
    """Compose's two spellings of `environment` as one mapping."""
    if not environment:
        return {}
    if isinstance(environment, dict):
        return {key: "" if value is None else str(value) for key, value in environment.items()}
    pairs = (item.split("=", 1) for item in environment)
    return {pair[0]: pair[1] if len(pair) > 1 else "" for pair in pairs}


def _enabled_dependencies(body: dict[str, Any], enabled: set[str]) -> tuple[str, ...]:
    """Drop dependencies on services this stack does not run (e.g. grafana without TLS)."""
    declared = body.get("depends_on") or {}
    kept = {name: rule for name, rule in declared.items() if name in enabled}
    if kept:
        body["depends_on"] = kept
    else:
        body.pop("depends_on", None)
    return tuple(sorted(kept))
