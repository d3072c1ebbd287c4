"""stack.yaml: the user's choices, validated once into a `StackConfig`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stackctl.config_hosts import HostSpec, RayOptions, check_hosts, cluster_shape
from stackctl.errors import ConfigError
from stackctl.profiles import HARDWARE_PROFILES, MODEL_PROFILES, HardwareProfile, ModelProfile
from stackctl.profiles.custom import CustomModel

STACK_FILE = "stack.yaml"
# How the services run (stackctl.runtime turns the name into the object that runs them).
RuntimeName = Literal["compose", "native"]
# Every service and the `ports:` keys it listens on (nginx's https only with TLS).
SERVICE_PORTS: dict[str, tuple[str, ...]] = {
    "vllm": ("vllm",),
    "filter-proxy": ("proxy",),
    "nginx": ("http", "https"),
    "prometheus": ("prometheus",),
    "node-exporter": ("node_exporter",),
    "gpu-exporter": ("gpu_exporter",),
    "grafana": ("grafana",),
    "certbot": (),
    # Multi-node (hosts: with ray-workers): the vLLM image's own Ray, head and workers.
    "ray-head": (),
    "ray-worker": (),
}
SERVICE_NAMES = tuple(SERVICE_PORTS)
# On unified memory (GB10) the OS, page cache and CUDA graphs share vLLM's pool.
UNIFIED_MEMORY_MAX_UTILIZATION = 0.70
# Build arguments stackctl's own Dockerfiles (images/*/Dockerfile) declare for air-gapped sites.
BUILD_ARGS = ("BASE_IMAGE", "PIP_INDEX_URL", "PIP_FIND_LINKS", "TORCH_INDEX_URL")
# Compose's rule for project names (they prefix container and volume names).
_PROJECT_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
# An image reference: [registry[:port]/]path[:tag][@digest], as `docker pull` takes it.
_IMAGE_REFERENCE = re.compile(
    r"^(?:[a-zA-Z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*"
    r"(?::[\w][\w.-]{0,127})?(?:@sha256:[0-9a-f]{64})?$"
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class Ports(_Strict):
    """Every service is on host networking, so these are host ports."""

    vllm: int = Field(8000, ge=1, le=65535)
    proxy: int = Field(4000, ge=1, le=65535)
    prometheus: int = Field(9090, ge=1, le=65535)
    grafana: int = Field(3000, ge=1, le=65535)
    node_exporter: int = Field(9100, ge=1, le=65535)
    gpu_exporter: int = Field(9835, ge=1, le=65535)
    http: int = Field(80, ge=1, le=65535)
    https: int = Field(443, ge=1, le=65535)


class Services(_Strict):
    """Optional services; vLLM, the filter-proxy and nginx are always on."""

    monitoring: bool = True  # prometheus, node-exporter, gpu-exporter (on GPU hosts)
    grafana: bool = True  # only with monitoring
    tls: bool = False  # certbot + the HTTPS server block (needs `hostname`)


class VllmOptions(_Strict):
    """Overrides of the model profile's defaults; unset means "use the profile"."""

    max_model_len: int | None = Field(None, ge=256)
    max_num_seqs: int | None = Field(None, ge=1)
    gpu_memory_utilization: float | None = Field(None, gt=0, le=0.98)
    extra_args: list[str] = Field(default_factory=list)
    # Local model directory (instead of the profile's Hugging Face id), e.g. the demo model.
    model_path: str | None = None
    # Variables for vLLM's environment (e.g. TIKTOKEN_ENCODINGS_BASE, TRITON_PTXAS_PATH); Compose
    # gives a container only what its service declares, so this is where an engine setting goes.
    environment: dict[str, str] = Field(default_factory=dict)

    @field_validator("environment")
    @classmethod
    def _no_secret_variables(cls, environment: dict[str, str]) -> dict[str, str]:
        for name in environment:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"'{name}' is not an environment variable name")
            if name in {"VLLM_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}:
                raise ValueError(f"{name} is a secret: set it in .env, which stackctl passes to vLLM without "
                                 "writing it into a rendered file")
        return environment

    @field_validator("extra_args")
    @classmethod
    def _no_secret_flags(cls, args: list[str]) -> list[str]:
        for arg in args:
            if arg.split("=", 1)[0] in {"--api-key", "--hf-token"}:
                raise ValueError(
                    f"{arg.split('=', 1)[0]} puts a secret in argv (visible in `ps`); "
                    "set VLLM_API_KEY / HF_TOKEN in .env instead"
                )
        return args


class EngineOptions(_Strict):
    """The vLLM a native stack runs: an interpreter that is already installed (a vLLM venv beside
    the stack, NGC's python), instead of the venv `stackctl install-engine` makes. Variables it
    needs go in vllm.environment, as for any engine."""

    # e.g. ~/vllm-env/bin/python; unset: stackctl's own engine venv (CPU build, or the CUDA build
    # the compatibility table pins).
    python: str | None = None

    @field_validator("python")
    @classmethod
    def _interpreter_path(cls, python: str | None) -> str | None:
        if python is not None and not python.strip():
            raise ValueError("give the engine's interpreter, e.g. ~/vllm-env/bin/python, or remove engine.python")
        return python


class WebSearchOptions(_Strict):
    """Who runs web searches for Anthropic clients (Claude Code's web_search tool)."""

    backend: Literal["ddgs", "searxng", "off"] = "ddgs"  # ddgs: DuckDuckGo, no key
    searxng_url: str | None = None  # e.g. http://127.0.0.1:8888 (its JSON format enabled)
    timeout_s: float = Field(10.0, gt=0, le=120)

    @model_validator(mode="after")
    def _searxng_needs_url(self) -> WebSearchOptions:
        if self.backend == "searxng" and not self.searxng_url:
            raise ValueError("backend 'searxng' needs searxng_url, e.g. http://127.0.0.1:8888")
        if self.searxng_url and not self.searxng_url.startswith(("http://", "https://")):
            raise ValueError(f"searxng_url must be an http(s) URL (got {self.searxng_url!r})")
        return self


class ProxyOptions(_Strict):
    """How the filter-proxy runs: `workers` processes share its port, its limits and its metrics
    (stackctl/proxy/workers.py); auto: a quarter of the cores, 1 to 4, read where it runs."""

    workers: int | Literal["auto"] = "auto"

    @field_validator("workers")
    @classmethod
    def _worker_count(cls, workers: int | str) -> int | str:
        if isinstance(workers, int) and not 1 <= workers <= 64:
            raise ValueError("give 1 to 64 worker processes, or auto")
        return workers


class KeyLimitOptions(_Strict):
    """One API key's limits; those left out follow the `limits` section's per-key values."""

    max_concurrent: int | None = Field(None, ge=0)
    requests_per_minute: int | None = Field(None, ge=0)
    tokens_per_minute: int | None = Field(None, ge=0)


class LimitsOptions(_Strict):
    """What each API key may use at the filter-proxy (0: no limit), and back-pressure: past
    `max_backend_waiting` requests waiting in vLLM, new ones get 529/503 until it drains."""

    max_concurrent: int = Field(32, ge=0)  # requests at once, per key
    requests_per_minute: int = Field(0, ge=0)
    tokens_per_minute: int = Field(0, ge=0)  # the rule: stackctl/proxy/rate_limits.py
    keys: dict[str, KeyLimitOptions] = Field(default_factory=dict)  # overrides by key name
    max_backend_waiting: int = Field(64, ge=0)

    @field_validator("keys")
    @classmethod
    def _key_names(cls, keys: dict[str, KeyLimitOptions]) -> dict[str, KeyLimitOptions]:
        for name in keys:
            if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
                raise ValueError(f"key name {name!r} must be 1-64 letters, digits, '_', '.' or '-'")
        return keys


class StackConfig(_Strict):
    hardware: str = "generic"
    model: str = "qwen3.6-27b"
    # Model profiles of this stack's own (e.g. derived from a Hugging Face config.json by
    # `stackctl init --model hf:ORG/NAME`); `model` may name one of them.
    models: dict[str, CustomModel] = Field(default_factory=dict)
    runtime: RuntimeName = "compose"
    # The Compose project: containers are PROJECT-SERVICE-1, volumes PROJECT_NAME.
    project: str = "stackctl"
    # Service -> image, replacing the fragment's (mirrors, pinned digests, air-gapped hosts).
    images: dict[str, str] = Field(default_factory=dict)
    # Build arguments for the images stackctl builds itself (filter-proxy, vllm-cpu).
    build_args: dict[str, str] = Field(default_factory=dict)
    hostname: str | None = None
    served_model_name: str | None = None
    # Client model names (glob patterns allowed) -> the served model.
    aliases: dict[str, str] = Field(default_factory=dict)
    services: Services = Field(default_factory=Services)
    ports: Ports = Field(default_factory=Ports)
    vllm: VllmOptions = Field(default_factory=VllmOptions)
    # Native runtime: which vLLM runs (bring your own interpreter).
    engine: EngineOptions = Field(default_factory=EngineOptions)
    web_search: WebSearchOptions = Field(default_factory=WebSearchOptions)
    proxy: ProxyOptions = Field(default_factory=ProxyOptions)
    limits: LimitsOptions = Field(default_factory=LimitsOptions)
    hf_cache: str = "~/.cache/huggingface"
    # certbot's --config-dir: certificates are read from its live/<hostname>/.
    letsencrypt_dir: str = "/etc/letsencrypt"
    # Seconds each service may take to pass its health gate (a 120B model loads for long).
    start_timeouts: dict[str, float] = Field(default_factory=dict)
    # Client networks allowed through nginx (CIDR); empty means everyone.
    allow_networks: list[str] = Field(default_factory=list)
    # Beyond one box: each host's intranet IP and role (stackctl/topology); none: one box.
    hosts: dict[str, HostSpec] = Field(default_factory=dict)
    ray: RayOptions | None = None

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: object) -> object:
        """`vllm.image` (older stack.yaml files) now lives in `images.vllm`."""
        if not isinstance(data, dict) or not isinstance(data.get("vllm"), dict) or "image" not in data["vllm"]:
            return data
        data = {**data, "vllm": dict(data["vllm"])}
        moved = data["vllm"].pop("image")
        images = dict(data.get("images") or {})
        if images.setdefault("vllm", moved) != moved:
            raise ValueError("vllm.image and images.vllm disagree; keep only images.vllm")
        data["images"] = images
        return data

    @field_validator("project")
    @classmethod
    def _compose_project_name(cls, name: str) -> str:
        if not _PROJECT_NAME.match(name):
            raise ValueError("lowercase letters, digits, '-' and '_' only, starting with a letter or digit")
        return name

    @field_validator("images")
    @classmethod
    def _image_references(cls, images: dict[str, str]) -> dict[str, str]:
        for name, reference in images.items():
            if name not in SERVICE_NAMES:
                raise ValueError(f"unknown service '{name}'; allowed: {', '.join(SERVICE_NAMES)}")
            if not _IMAGE_REFERENCE.match(reference):
                raise ValueError(f"'{reference}' for {name} is not an image reference (e.g. registry.local/prom/prometheus:v3.5.0)")
        return images

    @field_validator("build_args")
    @classmethod
    def _known_build_args(cls, args: dict[str, str]) -> dict[str, str]:
        for name in args:
            if name not in BUILD_ARGS:
                raise ValueError(f"unknown build argument '{name}'; allowed: {', '.join(BUILD_ARGS)}")
        return args

    @field_validator("hardware")
    @classmethod
    def _known_hardware(cls, name: str) -> str:
        if name not in HARDWARE_PROFILES:
            raise ValueError(f"unknown profile '{name}'; allowed: {', '.join(HARDWARE_PROFILES)}")
        return name

    @field_validator("start_timeouts")
    @classmethod
    def _known_services(cls, timeouts: dict[str, float]) -> dict[str, float]:
        for name, seconds in timeouts.items():
            if name not in SERVICE_NAMES:
                raise ValueError(f"unknown service '{name}'; allowed: {', '.join(SERVICE_NAMES)}")
            if seconds <= 0:
                raise ValueError(f"start timeout for '{name}' must be positive (got {seconds})")
        return timeouts

    @model_validator(mode="after")
    def _coherent(self) -> StackConfig:
        if self.model not in MODEL_PROFILES and self.model not in self.models:
            allowed = ", ".join([*MODEL_PROFILES, *self.models])
            raise ValueError(f"model: unknown profile '{self.model}'; allowed: {allowed} "
                             "(or `stackctl init --model hf:ORG/NAME` to derive one)")
        reason = self.hardware_profile.unsupported_reason(self.model_profile.quantization)
        if reason:
            raise ValueError(f"model '{self.model}' cannot run on hardware '{self.hardware}': {reason}")
        if not self.hardware_profile.has_gpu and self.model_profile.gpu_only:
            raise ValueError(
                f"hardware 'cpu' serves only the demo model; set model: tiny (got '{self.model}')"
            )
        utilization = self.vllm.gpu_memory_utilization
        if self.hardware_profile.unified_memory and utilization and utilization > UNIFIED_MEMORY_MAX_UTILIZATION:
            raise ValueError(
                f"vllm.gpu_memory_utilization {utilization} on unified memory ('{self.hardware}') "
                f"starves the OS, which shares the same pool; use at most {UNIFIED_MEMORY_MAX_UTILIZATION}"
            )
        if self.services.tls and not self.hostname:
            raise ValueError("services.tls needs `hostname` (the public DNS name of this box)")
        problem = check_hosts(self.hosts, self.ray)
        if problem:
            raise ValueError(problem)
        nodes = cluster_shape(self.hosts, self.ray)
        if self.hardware_profile.nodes > 1 and (nodes is None or nodes[0] != self.hardware_profile.nodes):
            raise ValueError(
                f"hardware '{self.hardware}' is {self.hardware_profile.nodes} nodes serving one model: list them "
                "under hosts: (one with role: gpu, the other with role: ray-worker) and set ray.interface"
            )
        clashes = _port_clashes(self.ports.model_dump(), self.enabled_port_names())
        if clashes:
            raise ValueError(f"port clash: {clashes}")
        return self

    @property
    def hardware_profile(self) -> HardwareProfile:
        return HARDWARE_PROFILES[self.hardware]

    @property
    def model_profile(self) -> ModelProfile:
        if self.model in self.models:
            return self.models[self.model].profile(self.model)
        return MODEL_PROFILES[self.model]

    @property
    def served_name(self) -> str:
        return self.served_model_name or self.model_profile.served_name

    def enabled_services(self) -> set[str]:
        """The services this stack runs (the one place that decides it)."""
        names = {"vllm", "filter-proxy", "nginx"}
        if self.services.monitoring:
            # Without a GPU the exporter is stackctl's own, which reports "no GPU" instead of
            # failing, so the dashboard's GPU panels say why they are empty.
            names |= {"prometheus", "node-exporter", "gpu-exporter"}
            if self.services.grafana:
                names.add("grafana")
        if self.services.tls:
            names.add("certbot")
        return names

    def enabled_port_names(self, services: set[str] | frozenset[str] | None = None) -> set[str]:
        """The `ports:` keys the enabled services (or the given ones: one host's) listen on."""
        services = self.enabled_services() if services is None else services
        names = {port for service in services for port in SERVICE_PORTS.get(service, ())}
        if not self.services.tls:
            names.discard("https")
        return names


def _port_clashes(ports: dict[str, int], enabled: set[str]) -> str:
    seen: dict[int, str] = {}
    for name in sorted(enabled):
        port = ports[name]
        if port in seen:
            return f"ports.{seen[port]} and ports.{name} both use {port}"
        seen[port] = name
    return ""


def parse_stack_config(data: object, source: str = STACK_FILE) -> StackConfig:
    """Validate already-parsed YAML; every problem becomes one ConfigError line."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of settings at the top level")
    try:
        return StackConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(f"{source}: {describe_validation_error(error)}") from None


def load_stack_config(path: Path) -> StackConfig:
    if not path.exists():
        raise ConfigError(f"{path} not found; run `stackctl init` to create it")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({_one_line(str(error))})") from None
    return parse_stack_config(data, str(path))


def describe_validation_error(error: ValidationError) -> str:
    """The first problem, as `key.path: what is wrong` (one line, names the key)."""
    first = error.errors()[0]
    location = ".".join(str(part) for part in first["loc"])
    if first["type"] == "extra_forbidden":
        parent = first["loc"][:-1]
        allowed = _allowed_keys(parent)
        return f"unknown key '{location}'; allowed keys here: {', '.join(allowed)}"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "literal_error":
        message = message.replace("Input should be", "allowed values are")
    given = first.get("input")
    suffix = f" (got {given!r})" if not isinstance(given, dict | list) and location else ""
    return f"{location + ': ' if location else ''}{message}{suffix}"


def _allowed_keys(location: tuple) -> list[str]:
    model: type[BaseModel] = StackConfig
    parts = list(location)
    while parts:
        annotation = model.model_fields[str(parts.pop(0))].annotation
        values = get_args(annotation)
        if values and parts and isinstance(values[-1], type) and issubclass(values[-1], BaseModel):
            parts.pop(0)  # a mapping of models (limits.keys.NAME, hosts.NAME): skip the name
            annotation = values[-1]
        # An optional section (`ray: RayOptions | None`): the model inside.
        annotation = next((arg for arg in get_args(annotation) if isinstance(arg, type)
                           and issubclass(arg, BaseModel)), annotation)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def _one_line(text: str) -> str:
    """The text on one line, its runs of white space folded (a YAML error spans several)."""
    return " ".join(text.split())
