"""The Compose runtime: the rendered project, driven through python-on-whales.

Same contract as the native runtime: images are made ready before anything starts; services
start one by one in dependency order, each behind its gate (Docker's healthcheck verdict and
stackctl's own probe); a failed start removes what this `up` started and reports the log tail;
`down` keeps the volumes, the model cache and the certificates.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from python_on_whales import Container, DockerClient
from python_on_whales.client_config import ClientNotFoundError
from python_on_whales.exceptions import DockerException

from stackctl.diagnosis import DIAGNOSIS_LOG_LINES, diagnose_service_log
from stackctl.engine.demo_model import default_demo_model_dir
from stackctl.engine.invocation import ImageStart, VllmInvocation, image_invocation
from stackctl.errors import RuntimeUnavailable, StackError
from stackctl.health import ProbeResult, probe, wait_until_healthy
from stackctl.project import RenderedProject
from stackctl.runtime.base import (
    ENGINE_SERVICES,
    EngineInUse,
    ModelLocation,
    OnEvent,
    Runtime,
    ServiceEvent,
    ServiceStartFailed,
    ServiceStatus,
)
from stackctl.runtime.compose_images import ensure_images
from stackctl.runtime.docker_output import docker_output, error_line
from stackctl.services import Service, ServiceOutline, dependency_waves

SERVICE_LABEL = "com.docker.compose.service"
# Seconds a service without a health gate (certbot) must stay up to count as started.
SETTLE_S = 3.0
# Where a local model directory is mounted inside the vLLM container.
CONTAINER_MODEL_DIR = "/models/local"
# Where the vllm-cpu image (images/vllm-cpu) carries the demo model.
IMAGE_DEMO_MODEL_DIR = "/models/tiny"


class ComposeRuntime(Runtime):
    """The rendered docker-compose.yml through Docker Compose v2 (python-on-whales)."""

    name = "compose"
    needs_docker = True
    privileged_ports_need_root = False
    inherits_shell_environment = False

    # -- rendering ---------------------------------------------------------------------------

    def template_paths(self) -> dict[str, str]:
        # Relative to the directory holding docker-compose.yml, so the project can be moved.
        return {"rendered": "./rendered", "data": "./data", "state": "./.stackctl"}

    def model_location(self, local_model: Path | None) -> ModelLocation:
        if local_model is None:
            return ModelLocation(None)
        if "cpu" in self.config.hardware_profile.traits and local_model == default_demo_model_dir():
            # The CPU image carries the demo model: nothing to generate or mount on the host.
            return ModelLocation(IMAGE_DEMO_MODEL_DIR)
        return ModelLocation(CONTAINER_MODEL_DIR, (f"{local_model}:{CONTAINER_MODEL_DIR}:ro",))

    def vllm_invocation(self, image: str) -> VllmInvocation:
        cpu_build = not self.config.hardware_profile.has_gpu
        return image_invocation(image, self.image_start(image), cpu_build=cpu_build)

    def image_start(self, image: str) -> ImageStart | None:
        """How `image` starts (its ENTRYPOINT and labels) as Docker has it locally; None when it
        is not here, no engine answers or this host has no docker CLI (a GPU host rendering for
        another); `up` renders again when the vLLM image arrives."""
        known = self._image_starts.get(image)
        if known is not None:
            return known
        try:
            config = self.docker.image.inspect(image).config
        except (DockerException, ClientNotFoundError, FileNotFoundError, ValueError):
            return None
        self._image_starts[image] = ImageStart(tuple(config.entrypoint or ()), dict(config.labels or {}))
        return self._image_starts[image]

    @cached_property
    def _image_starts(self) -> dict[str, ImageStart]:
        return {}

    def acme_webroot(self) -> str:
        return "/var/www/acme"  # data/acme, mounted by compose/nginx.yml and compose/certbot.yml

    def certificate_root(self) -> str:
        return "/etc/letsencrypt"  # stack.yaml's letsencrypt_dir, mounted

    @property
    def renders_nginx_main_config(self) -> bool:
        return False  # the nginx image brings its own nginx.conf; only the site is rendered

    # -- nginx, systemd ----------------------------------------------------------------------

    def reload_nginx(self) -> None:
        for argv, what in ((["nginx", "-t", "-q"], "the re-rendered nginx config does not pass `nginx -t`"),
                           (["nginx", "-s", "reload"], "nginx did not reload; is it running (`stackctl up`)?")):
            try:
                self.docker.compose.execute("nginx", argv, tty=False)
            except DockerException as error:
                raise StackError(f"{what}: {error_line(docker_output(error))}") from None

    def certificate_deploy_hook(self) -> None:
        # The certbot service renews in a container that cannot signal nginx's.
        return None

    def renewal_note(self) -> str:
        return "the certbot service renews twice a day; nginx reloads itself every 12 h (compose/nginx.yml)"

    def engine_command(self, service: str, argv: list[str]) -> list[str]:
        return [*self.compose_argv(), "exec", "-T", service, self.engine_python(), *argv]

    def engine_in_use(self, services: Sequence[ServiceOutline]) -> EngineInUse | None:
        engine = next((service for service in services if service.name in ENGINE_SERVICES), None)
        if engine is None:
            return None
        origin = "images.vllm in stack.yaml" if "vllm" in self.config.images else "stackctl's default for the model"
        return EngineInUse(engine.image, "image", origin)

    def compose_argv(self, docker: str = "docker") -> list[str]:
        """`docker compose` for this project, as a person (or a systemd unit) would type it."""
        return [docker, "compose", "--project-directory", str(self.layout.home), "-f", str(self.layout.compose_file),
                "--env-file", str(self.layout.env_file)]

    def systemd_service_lines(self, stackctl: list[str], docker: str) -> list[str]:
        compose = self.compose_argv(docker)
        return [
            "After=network-online.target docker.service",
            "Requires=docker.service",
            "",
            "[Service]",
            # Compose in the foreground: systemd sees the stack die and restarts it; depends_on with
            # service_healthy keeps the start order of `stackctl up`.
            "Type=simple",
            f"ExecStartPre={shlex.join([*stackctl, 'render'])}",
            # The weights first, resumable: Compose's vLLM then only loads them.
            f"ExecStartPre={shlex.join([*stackctl, 'pull'])}",
            f"ExecStart={shlex.join([*compose, 'up', '--remove-orphans'])}",
            f"ExecStop={shlex.join([*compose, 'stop'])}",
        ]

    # -- running -----------------------------------------------------------------------------

    @cached_property
    def docker(self) -> DockerClient:
        layout = self.layout
        return DockerClient(
            compose_files=[layout.compose_file],
            compose_env_files=[layout.env_file] if layout.env_file.exists() else [],
            compose_project_directory=layout.home,
            compose_project_name=self.config.project,
        )

    def check_available(self) -> None:
        try:
            self.docker.info()
        except DockerException:
            raise RuntimeUnavailable(
                "no Docker engine is reachable (is dockerd running, and may this user use it?); "
                "start Docker or run `stackctl up --runtime native`"
            ) from None
        except FileNotFoundError:
            raise RuntimeUnavailable("the docker client is not installed; install Docker or use --runtime native") from None
        if not self.docker.compose.is_installed():
            raise RuntimeUnavailable("Docker Compose v2 is missing: install the docker-compose-plugin package")

    def make_images_ready(self, project: RenderedProject, on_event: OnEvent = lambda _event: None) -> list[str]:
        """Build what stackctl builds and pull the rest (the project is written: Compose builds
        from it), before anything starts; returns the images that arrived."""
        self.check_available()
        return ensure_images(self.docker, project.services, on_event)

    # -- up --------------------------------------------------------------------------------

    def up(self, project: RenderedProject, on_event: OnEvent = lambda _event: None) -> None:
        """Start what is not running, a dependency wave at a time, each service behind its gate
        (the project is written and its images ready: docker-compose.yml is what Compose runs).
        On failure, remove the containers this call started and raise ServiceStartFailed."""
        self.check_available()
        services = project.services
        (self.layout.data / "acme").mkdir(parents=True, exist_ok=True)
        before = self._containers()
        started: list[Service] = []
        try:
            for wave in dependency_waves(services):
                starting: list[tuple[Service, Container, bool]] = []
                for service in wave:
                    previous = before.get(service.name)
                    was_running = previous is not None and bool(previous.state.running)
                    if not was_running:
                        started.append(service)
                    container = self._start(service)
                    fresh = not was_running or previous is None or previous.id != container.id
                    if fresh:
                        if was_running:
                            started.append(service)  # recreated: stack.yaml or .env changed
                        on_event(ServiceEvent(service, "starting"))
                    starting.append((service, container, fresh))
                # The quick gates first: a broken exporter is reported before vLLM finishes loading.
                for service, container, fresh in sorted(starting, key=lambda item: item[0].start_timeout):
                    self._wait_healthy(service, container, on_event, fresh)
        except BaseException:
            self._remove([service.name for service in reversed(started)])
            raise

    def _start(self, service: Service) -> Container:
        """`docker compose up -d --no-deps SERVICE`: a no-op when its container already runs
        with the same configuration, a recreate when stack.yaml or .env changed."""
        try:
            self.docker.compose.up([service.name], detach=True, dependencies=False, no_build=True, pull="never",
                                   quiet=True)
        except DockerException as error:
            output = docker_output(error)
            account = f"{service.name}: `docker compose up` failed: {error_line(output)}"
            # The container never ran: Docker's (or the NVIDIA runtime's) words are the log to read.
            raise ServiceStartFailed(account, log_tail=None, service=service.name, start_output=output.splitlines(),
                                     diagnosis=diagnose_service_log(service.name, output.splitlines(), self.config,
                                                                    failed=True, failure=account)) from None
        container = self._containers().get(service.name)
        if container is None:
            raise ServiceStartFailed(f"{service.name}: Compose reported success but no container exists; "
                                     f"see `docker compose -p {self.config.project} ps -a`")
        return container

    def _wait_healthy(self, service: Service, container: Container, on_event: OnEvent, fresh: bool) -> None:
        restarts_at_start = container.restart_count or 0
        watch = _ContainerWatch(self.docker, container.id, restarts_at_start)
        if service.health is None:
            time.sleep(0 if not fresh else SETTLE_S)
            if not watch.is_alive():
                self._fail(service, f"{service.name} exited during start ({watch.why_dead()})", watch)
            on_event(ServiceEvent(service, "healthy" if fresh else "running", detail="running"))
            return
        result = wait_until_healthy(
            service.health, service.start_timeout, is_alive=watch.is_alive, confirm=watch.docker_health,
            api_key=self.vllm_api_key(), served_name=self.config.served_name,
            on_tick=lambda elapsed, probe_result: fresh and on_event(
                ServiceEvent(service, "waiting", elapsed, probe_result.detail)),
        )
        if result.healthy:
            on_event(ServiceEvent(service, "healthy" if fresh else "running", detail=result.detail))
            return
        if not watch.is_alive():
            self._fail(service, f"{service.name} exited during start ({watch.why_dead()})", watch)
        self._fail(service, f"{service.name} did not become healthy in {service.start_timeout:.0f} s "
                            f"(last check: {result.detail})", watch)

    def _fail(self, service: Service, message: str, watch: _ContainerWatch) -> None:
        log_tail = self._log_tail(service.name)
        # A container Docker could not (re)start has no log of that: Docker's own error says why
        # (the NVIDIA runtime's refusal, a missing device), so the diagnosis reads it too.
        docker_error = watch.docker_error()
        if docker_error:
            log_tail = [*log_tail, f"docker: {docker_error}"]
        raise ServiceStartFailed(f"{message}; see `stackctl logs {service.name}`", log_tail, service=service.name,
                                 diagnosis=diagnose_service_log(service.name, log_tail, self.config, failed=True,
                                                                failure=message))

    def _remove(self, names: list[str]) -> None:
        if not names:
            return
        try:
            self.docker.compose.rm(names, stop=True)
        except DockerException:
            pass  # best effort: the failure being reported matters more

    # -- down / status / logs ----------------------------------------------------------------

    def down(self, services: Sequence[ServiceOutline]) -> list[str]:
        """Remove the project's containers. Never `-v`: the model cache, Prometheus TSDB and
        Grafana data survive a `down`."""
        self.check_available()
        present = self._containers()
        try:
            self.docker.compose.down(remove_orphans=True, quiet=True)
        except DockerException as error:
            raise StackError(f"`docker compose down` failed: {docker_output(error)}") from None
        order = [service.name for service in reversed(services)]
        return [name for name in order if name in present] + sorted(set(present) - set(order))

    def status(self, services: Sequence[ServiceOutline]) -> list[ServiceStatus]:
        self.check_available()
        containers = self._containers()
        rows = []
        for service in services:
            url = service.health.url if service.health else None
            container = containers.get(service.name)
            if container is None:
                rows.append(ServiceStatus(service.name, "stopped", None, None, url, None, ""))
                continue
            state = container.state
            result: ProbeResult | None = None
            docker_health = state.health.status if state.health else None
            if state.running and service.health:
                result = probe(service.health, api_key=self.vllm_api_key(), served_name=self.config.served_name)
            healthy = None if result is None else result.healthy and docker_health in (None, "healthy")
            detail = result.detail if result else ""
            if docker_health and docker_health != "healthy":
                detail = f"Docker health: {docker_health}; {detail}"
            if not state.running:
                detail = f"exit code {state.exit_code}" + (f": {state.error}" if state.error else "")
            uptime = (_now() - state.started_at).total_seconds() if state.running and state.started_at else None
            rows.append(ServiceStatus(service.name, str(state.status), state.pid or None, healthy, url, uptime, detail,
                                      restarts=container.restart_count or 0))
        return rows

    def logs(self, service: str, follow: bool) -> Iterator[str]:
        self.check_available()
        from stackctl.topology import plan_host

        known = sorted(plan_host(self.config, self.layout.host).services)
        if service not in known:
            raise StackError(f"no service '{service}' in this stack; services: {', '.join(known)}")
        try:
            for _source, line in self.docker.compose.logs([service], follow=follow, stream=True, no_log_prefix=True):
                yield line.decode(errors="replace")
        except DockerException as error:
            raise StackError(f"`docker compose logs {service}` failed: {docker_output(error)}") from None

    # -- helpers -----------------------------------------------------------------------------

    def _containers(self) -> dict[str, Container]:
        """This project's containers (running or not) by service name."""
        try:
            containers = self.docker.compose.ps(all=True)
        except DockerException as error:
            raise StackError(f"`docker compose ps` failed: {docker_output(error)}") from None
        return {(container.config.labels or {}).get(SERVICE_LABEL, container.name): container
                for container in containers}

    def _log_tail(self, service: str) -> list[str]:
        try:
            text = self.docker.compose.logs([service], tail=str(DIAGNOSIS_LOG_LINES), no_log_prefix=True)
        except DockerException:
            return []
        return str(text).splitlines()[-DIAGNOSIS_LOG_LINES:]


class _ContainerWatch:
    """A container as a start gate sees it: alive (running, not restarted since the start) and
    what Docker's own healthcheck says."""

    def __init__(self, docker: DockerClient, container_id: str, restarts_at_start: int) -> None:
        self.docker = docker
        self.container_id = container_id
        self.restarts_at_start = restarts_at_start
        self.last: Container | None = None

    def _inspect(self) -> Container | None:
        try:
            self.last = self.docker.container.inspect(self.container_id)
        except DockerException:
            self.last = None
        return self.last

    def is_alive(self) -> bool:
        container = self._inspect()
        if container is None:
            return False
        restarted = (container.restart_count or 0) > self.restarts_at_start
        return bool(container.state.running) and not container.state.restarting and not restarted

    def why_dead(self) -> str:
        container = self.last
        if container is None:
            return "its container is gone"
        if (container.restart_count or 0) > self.restarts_at_start:
            return f"it crashed and Docker restarted it {container.restart_count - self.restarts_at_start} time(s)"
        return f"exit code {container.state.exit_code}"

    def docker_error(self) -> str:
        """Docker's error for a container it could not start ("" when there is none)."""
        container = self.last or self._inspect()
        return str(container.state.error or "") if container else ""

    def docker_health(self) -> ProbeResult:
        """Docker's healthcheck verdict (a container without a healthcheck passes)."""
        container = self.last or self._inspect()
        health = container.state.health if container else None
        if health is None or health.status is None:
            return ProbeResult(True, "no Docker healthcheck")
        return ProbeResult(health.status == "healthy", f"Docker health: {health.status}")




def _now() -> datetime:
    return datetime.now(UTC)
