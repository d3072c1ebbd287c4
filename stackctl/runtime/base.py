"""What every runtime is: one object per way of running a stack, answering for itself.

A runtime knows where its services see the stack's files, how vLLM finds a local model, where
nginx serves ACME challenges and certificates from, how nginx is reloaded, what a systemd unit
runs, which checks apply to it, and how its services start, stop and report. Nothing outside
`runtime_for` asks which runtime it is.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from stackctl.config import RuntimeName, StackConfig
from stackctl.envfile import read_env
from stackctl.errors import ServiceFailed
from stackctl.layout import StackLayout
from stackctl.project import RenderedProject
from stackctl.services import Service, ServiceOutline

if TYPE_CHECKING:
    from stackctl.diagnosis import Diagnosis
    from stackctl.engine.invocation import VllmInvocation

EventKind = Literal[
    "running", "starting", "restarting", "waiting", "healthy",
    # Running, but stack.yaml or the engine changed what it runs: stopped and started again.
    "changed",
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


# The services that run vLLM's interpreter (vLLM itself; Ray's head and workers on a cluster).
ENGINE_SERVICES = ("vllm", "ray-head", "ray-worker")


@dataclass(frozen=True)
class EngineInUse:
    """Which vLLM a stack runs, for `status`: what it is, where it lives, and why that one."""

    what: str  # "vLLM 0.24.0 (torch 2.11.0+cu130)", or an image reference
    where: str  # the interpreter, or "image"
    origin: str  # "engine.python in stack.yaml", "images.vllm in stack.yaml", ...


@dataclass(frozen=True)
class ModelLocation:
    """How vLLM reaches its model: `--model` (None: the profile's Hugging Face id) and the bind
    mounts that make it visible."""

    reference: str | None
    mounts: tuple[str, ...] = field(default_factory=tuple)


class ServiceStartFailed(ServiceFailed):
    """A service exited or missed its health gate; carries its log tail and what it diagnosed there."""

    def __init__(self, message: str, log_tail: list[str] | None = None, hint: str | None = None, *,
                 service: str | None = None, diagnosis: Diagnosis | None = None,
                 start_output: list[str] | None = None) -> None:
        super().__init__(message)
        # None: the service never ran, so it has no log (e.g. its container could not be created).
        self.log_tail = log_tail
        # What the runtime itself said when it could not start the service (Docker's error).
        self.start_output = start_output
        self.service = service
        self.diagnosis = diagnosis
        self.hint = hint if hint is not None else (diagnosis.one_line() if diagnosis else None)


OnEvent = Callable[[ServiceEvent], None]


class Runtime(ABC):
    name: ClassVar[RuntimeName]
    # Doctor's Docker checks (engine, Compose, NVIDIA runtime, image CUDA) apply.
    needs_docker: ClassVar[bool]
    # Ports below 1024 need root (containers bind them as root; processes as their user).
    privileged_ports_need_root: ClassVar[bool]
    # The environment of the shell running stackctl reaches vLLM (a process; not a container).
    inherits_shell_environment: ClassVar[bool]

    def __init__(self, layout: StackLayout, config: StackConfig) -> None:
        self.layout = layout
        self.config = config

    # -- how the stack is rendered for this runtime ------------------------------------------

    @abstractmethod
    def template_paths(self) -> dict[str, str]:
        """`rendered`, `data` and `state` as the services see them."""

    @abstractmethod
    def model_location(self, local_model: Path | None) -> ModelLocation:
        """Where vLLM finds a model served from a local directory (None: the Hugging Face id)."""

    @abstractmethod
    def vllm_invocation(self, image: str) -> VllmInvocation:
        """How this runtime's vLLM is started: from `image` (Compose) or from its engine venv (native)."""

    @abstractmethod
    def acme_webroot(self) -> str:
        """Where nginx serves /.well-known/acme-challenge/ from, as nginx sees it."""

    @abstractmethod
    def certificate_root(self) -> str | None:
        """Where nginx sees certbot's directory (None: where it is on the host)."""

    @property
    def nginx_user(self) -> str | None:
        """The `user` directive of a rendered nginx.conf (None: nginx's default)."""
        return None

    @property
    def renders_nginx_main_config(self) -> bool:
        """Whether nginx runs from stackctl's nginx.conf (else the image brings its own)."""
        return True

    # -- secrets, nginx and systemd -----------------------------------------------------------

    def vllm_api_key(self) -> str | None:
        """The key vLLM requires: the environment's, else .env's (Compose's own precedence when
        it fills ${VLLM_API_KEY}, and what a native process inherits)."""
        return os.environ.get("VLLM_API_KEY") or read_env(self.layout.env_file).get("VLLM_API_KEY") or None

    def engine_python(self) -> str:
        """The interpreter the engine's services run: the image's own `python3` in a container;
        natively, the engine the native runtime chose."""
        return "python3"

    @abstractmethod
    def engine_command(self, service: str, argv: list[str]) -> list[str]:
        """`python ARGV` with the interpreter of the vLLM engine that `service` runs (the image's
        own Python and Ray in its container; the engine venv natively)."""

    @abstractmethod
    def engine_in_use(self, services: Sequence[ServiceOutline]) -> EngineInUse | None:
        """The vLLM this host runs (or would run), None where it runs no engine."""

    def engine_environment(self) -> dict[str, str]:
        """Variables the engine itself needs, beyond the hardware's (a native interpreter's)."""
        return {}

    @abstractmethod
    def reload_nginx(self) -> None:
        """Make the running nginx serve freshly rendered config (checked first where possible)."""

    @abstractmethod
    def certificate_deploy_hook(self) -> str | None:
        """A command certbot runs after each renewal so nginx serves the new certificate (None:
        this runtime reloads nginx another way)."""

    @abstractmethod
    def renewal_note(self) -> str:
        """How renewed certificates reach nginx, for the user."""

    @abstractmethod
    def systemd_service_lines(self, stackctl: list[str], docker: str) -> list[str]:
        """The [Unit] dependencies and [Service] start/stop lines of a unit that keeps the stack up."""

    # -- running ------------------------------------------------------------------------------

    def prepare(self, services: Collection[str], on_progress: Callable[[str], None]) -> None:
        """Whatever the named services need before they are rendered and started (an engine venv,
        a model): nothing by default."""
        return

    def make_images_ready(self, project: RenderedProject, on_event: OnEvent = lambda _event: None) -> list[str]:
        """Whatever images the rendered project runs, there before anything starts; returns those
        that arrived (the vLLM service's start may read its image). None to make by default."""
        return []

    def check_available(self) -> None:
        """Raise RuntimeUnavailable when this runtime cannot start anything here (by default it
        always can)."""
        return

    # A runtime never renders: the use case renders the stack (stackctl.render) and writes it into
    # the stack directory; `up` runs what was rendered. `down` and `status` need only outlines.

    @abstractmethod
    def up(self, project: RenderedProject, on_event: OnEvent = lambda _event: None) -> None: ...

    @abstractmethod
    def down(self, services: Sequence[ServiceOutline]) -> list[str]: ...

    @abstractmethod
    def status(self, services: Sequence[ServiceOutline]) -> list[ServiceStatus]: ...

    @abstractmethod
    def logs(self, service: str, follow: bool) -> Iterator[str]: ...
