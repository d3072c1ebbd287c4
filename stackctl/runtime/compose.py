"""The Compose runtime: the rendered project, driven through python-on-whales.

Same contract as the native runtime: images are made ready before anything starts; services
start one by one in dependency order, each behind its gate (Docker's healthcheck verdict and
stackctl's own probe); a failed start removes what this `up` started and reports the log tail;
`down` keeps the volumes, the model cache and the certificates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from python_on_whales import Container, DockerClient
from python_on_whales.exceptions import DockerException

from stackctl.diagnosis import DIAGNOSIS_LOG_LINES, diagnose_log, diagnose_service_log
from stackctl.envfile import read_env
from stackctl.errors import RuntimeUnavailable, StackError
from stackctl.health import ProbeResult, probe, wait_until_healthy
from stackctl.render import render_project
from stackctl.runtime.base import ServiceEvent, ServiceStartFailed, ServiceStatus
from stackctl.runtime.compose_images import ensure_images, error_line
from stackctl.services import Service
from stackctl.stack import Stack

SERVICE_LABEL = "com.docker.compose.service"
# Seconds a service without a health gate (certbot) must stay up to count as started.
SETTLE_S = 3.0


class ComposeRuntime:
    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        layout = stack.layout
        self.docker = DockerClient(
            compose_files=[layout.compose_file],
            compose_env_files=[layout.env_file] if layout.env_file.exists() else [],
            compose_project_directory=layout.root,
            compose_project_name=stack.config.project,
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

    # -- up --------------------------------------------------------------------------------

    def up(self, services: list[Service], on_event: Callable[[ServiceEvent], None] = lambda _event: None) -> None:
        """Make images ready, then start what is not running, in order, each behind its gate.
        On failure, remove the containers this call started and raise ServiceStartFailed."""
        self.check_available()
        render_project(self.stack.config, self.stack.layout, runtime="compose")
        (self.stack.layout.data / "acme").mkdir(parents=True, exist_ok=True)
        before = self._containers()
        ensure_images(self.docker, services, on_event)
        started: list[Service] = []
        try:
            for service in services:
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
            output = _docker_error(error)
            raise ServiceStartFailed(f"{service.name}: `docker compose up` failed: {error_line(output)}",
                                     log_tail=None, service=service.name,
                                     diagnosis=diagnose_log(output.splitlines())) from None
        container = self._containers().get(service.name)
        if container is None:
            raise ServiceStartFailed(f"{service.name}: Compose reported success but no container exists; "
                                     f"see `docker compose -p {self.stack.config.project} ps -a`")
        return container

    def _wait_healthy(self, service: Service, container: Container, on_event: Callable[[ServiceEvent], None],
                      fresh: bool) -> None:
        restarts_at_start = container.restart_count or 0
        watch = _ContainerWatch(self.docker, container.id, restarts_at_start)
        if service.health is None:
            time.sleep(0 if not fresh else SETTLE_S)
            if not watch.is_alive():
                self._fail(service, f"{service.name} exited during start ({watch.why_dead()})")
            on_event(ServiceEvent(service, "healthy" if fresh else "running", detail="running"))
            return
        result = wait_until_healthy(
            service.health, service.start_timeout, is_alive=watch.is_alive, confirm=watch.docker_health,
            api_key=self._api_key(), served_name=self.stack.config.served_name,
            on_tick=lambda elapsed, probe_result: on_event(ServiceEvent(service, "waiting", elapsed, probe_result.detail)),
        )
        if result.healthy:
            on_event(ServiceEvent(service, "healthy" if fresh else "running", detail=result.detail))
            return
        if not watch.is_alive():
            self._fail(service, f"{service.name} exited during start ({watch.why_dead()})")
        self._fail(service, f"{service.name} did not become healthy in {service.start_timeout:.0f} s "
                            f"(last check: {result.detail})")

    def _fail(self, service: Service, message: str) -> None:
        log_tail = self._log_tail(service.name)
        raise ServiceStartFailed(f"{message}; see `stackctl logs {service.name}`", log_tail, service=service.name,
                                 diagnosis=diagnose_service_log(service.name, log_tail, self.stack.config))

    def _remove(self, names: list[str]) -> None:
        if not names:
            return
        try:
            self.docker.compose.rm(names, stop=True)
        except DockerException:
            pass  # best effort: the failure being reported matters more

    # -- down / status / logs ----------------------------------------------------------------

    def down(self, services: list[Service]) -> list[str]:
        """Remove the project's containers. Never `-v`: the model cache, Prometheus TSDB and
        Grafana data survive a `down`."""
        self.check_available()
        present = self._containers()
        try:
            self.docker.compose.down(remove_orphans=True, quiet=True)
        except DockerException as error:
            raise StackError(f"`docker compose down` failed: {_docker_error(error)}") from None
        order = [service.name for service in reversed(services)]
        return [name for name in order if name in present] + sorted(set(present) - set(order))

    def status(self, services: list[Service]) -> list[ServiceStatus]:
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
                result = probe(service.health, api_key=self._api_key(), served_name=self.stack.config.served_name)
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
        known = [each.name for each in self.stack.services()]
        if service not in known:
            raise StackError(f"no service '{service}' in this stack; services: {', '.join(known)}")
        try:
            for _source, line in self.docker.compose.logs([service], follow=follow, stream=True, no_log_prefix=True):
                yield line.decode(errors="replace")
        except DockerException as error:
            raise StackError(f"`docker compose logs {service}` failed: {_docker_error(error)}") from None

    # -- helpers -----------------------------------------------------------------------------

    def _containers(self) -> dict[str, Container]:
        """This project's containers (running or not) by service name."""
        try:
            containers = self.docker.compose.ps(all=True)
        except DockerException as error:
            raise StackError(f"`docker compose ps` failed: {_docker_error(error)}") from None
        return {container.config.labels.get(SERVICE_LABEL, container.name): container for container in containers}

    def _log_tail(self, service: str) -> list[str]:
        try:
            text = self.docker.compose.logs([service], tail=str(DIAGNOSIS_LOG_LINES), no_log_prefix=True)
        except DockerException:
            return []
        return str(text).splitlines()[-DIAGNOSIS_LOG_LINES:]

    def _api_key(self) -> str | None:
        return read_env(self.stack.layout.env_file).get("VLLM_API_KEY") or None


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

    def docker_health(self) -> ProbeResult:
        """Docker's healthcheck verdict (a container without a healthcheck passes)."""
        container = self.last or self._inspect()
        health = container.state.health if container else None
        if health is None or health.status is None:
            return ProbeResult(True, "no Docker healthcheck")
        return ProbeResult(health.status == "healthy", f"Docker health: {health.status}")


def _docker_error(error: DockerException) -> str:
    """The useful part of a failed docker command: its stderr, else its stdout."""
    text = (error.stderr or error.stdout or str(error) or "").strip()
    return text or "no output"


def _now() -> datetime:
    return datetime.now(UTC)
