"""The service model: one Compose fragment per service, read into typed `Service` values."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any, Literal

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
class Service:
    name: str
    compose: dict[str, Any]  # the Compose service body, placeholders filled, x-stackctl removed
    depends_on: tuple[str, ...]
    health: HealthGate | None
    start_timeout: float
    native: NativeCommand | None
    named_volumes: dict[str, Any]


def fragment_paths() -> dict[str, Path]:
    return {path.stem: path for path in sorted(resource_dir("compose").glob("*.yml"))}


def load_services(config: StackConfig, context: dict[str, Any]) -> list[Service]:
    """This host's services (the whole stack on one box), placeholders filled, in dependency
    order (dependencies first)."""
    enabled = set(context["host"].services)
    fragments = fragment_paths()
    missing = enabled - fragments.keys()
    if missing:
        raise StackError(f"no Compose fragment for {', '.join(sorted(missing))} in {resource_dir('compose')}")
    services = {name: _load_fragment(name, fragments[name], context, enabled) for name in enabled}
    for name, seconds in config.start_timeouts.items():
        if name in services:
            services[name] = replace(services[name], start_timeout=seconds)
    return order_by_dependencies(services)


def order_by_dependencies(services: dict[str, Service]) -> list[Service]:
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


def _load_fragment(name: str, path: Path, context: dict[str, Any], enabled: set[str]) -> Service:
    try:
        document = yaml.safe_load(path.read_text())
        body = dict(document["services"][name])
    except (yaml.YAMLError, KeyError, TypeError) as error:
        raise StackError(f"{path}: not a Compose fragment defining service '{name}' ({error})") from None
    try:
        extension = _ExtensionBlock.model_validate(body.pop(EXTENSION_KEY, {}) or {})
    except ValidationError as error:
        raise StackError(f"{path}: invalid {EXTENSION_KEY} block: {error.errors()[0]['msg']}") from None
    config: StackConfig = context["stack"]
    for trait in sorted(config.hardware_profile.traits):
        for key, value in extension.variants.get(trait, {}).items():
            if value is None:
                body.pop(key, None)
            else:
                body[key] = value
    body = fill(body, context)
    if name in config.images:
        # The user's image replaces the fragment's, and is pulled, never built.
        body["image"] = config.images[name]
        body.pop("build", None)
    depends_on = _enabled_dependencies(body, enabled)
    native = None
    if extension.native is not None:
        native_block = fill(extension.native.model_dump(), context)
        native = NativeCommand(tuple(native_block["command"]), environment_mapping(native_block["environment"]))
    health = None
    if extension.health is not None:
        health = HealthGate(fill(extension.health.url, context), extension.health.probe,
                            tuple(fill(extension.health.command, context)))
    return Service(
        name=name,
        compose=body,
        depends_on=depends_on,
        health=health,
        start_timeout=extension.start_timeout,
        native=native,
        named_volumes=fill(document.get("volumes") or {}, context),
    )


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
