"""The Compose runtime: the rendered project, driven through python-on-whales."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException

from stackctl.diagnosis import DIAGNOSIS_LOG_LINES, diagnose_service_log
from stackctl.envfile import read_env
from stackctl.errors import RuntimeUnavailable
from stackctl.health import ProbeResult, probe, wait_until_healthy
from stackctl.render import PROJECT_NAME, render_project
from stackctl.runtime.base import ServiceEvent, ServiceStartFailed, ServiceStatus
from stackctl.services import Service
from stackctl.stack import Stack


class ComposeRuntime:
    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        layout = stack.layout
        self.docker = DockerClient(
            compose_files=[layout.compose_file],
            compose_env_files=[layout.env_file] if layout.env_file.exists() else [],
            compose_project_directory=layout.root,
            compose_project_name=PROJECT_NAME,
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

    def up(self, services: list[Service], on_event: Callable[[ServiceEvent], None] = lambda _event: None) -> None:
        self.check_available()
        render_project(self.stack.config, self.stack.layout, runtime="compose")
        for service in services:
            on_event(ServiceEvent(service, "starting"))
            self.docker.compose.up([service.name], detach=True, no_deps=True, build=service.compose.get("build") is not None)
            if service.health is None:
                continue
            result = wait_until_healthy(
                service.health, service.start_timeout, api_key=self._api_key(), served_name=self.stack.config.served_name,
                on_tick=lambda elapsed, probe_result, s=service: on_event(ServiceEvent(s, "waiting", elapsed, probe_result.detail)),
            )
            if not result.healthy:
                log_tail = self._log_tail(service.name)
                raise ServiceStartFailed(
                    f"{service.name} did not become healthy in {service.start_timeout:.0f} s (last check: {result.detail}); "
                    f"see `stackctl logs {service.name}`",
                    log_tail, service=service.name,
                    diagnosis=diagnose_service_log(service.name, log_tail, self.stack.config),
                )
            on_event(ServiceEvent(service, "healthy", detail=result.detail))

    def down(self, services: list[Service]) -> list[str]:
        self.check_available()
        # Never `-v`: the model cache, Prometheus TSDB and Grafana data survive a `down`.
        self.docker.compose.down()
        return [service.name for service in services]

    def status(self, services: list[Service]) -> list[ServiceStatus]:
        self.check_available()
        states = {container.name: container.state.status for container in self.docker.compose.ps()}
        rows = []
        for service in services:
            state = next((value for name, value in states.items() if service.name in name), "stopped")
            url = service.health.url if service.health else None
            result: ProbeResult | None = None
            if service.health and state == "running":
                result = probe(service.health, api_key=self._api_key(), served_name=self.stack.config.served_name)
            rows.append(ServiceStatus(service.name, str(state), None, result.healthy if result else None, url, None,
                                      result.detail if result else ""))
        return rows

    def logs(self, service: str, follow: bool) -> Iterator[str]:
        self.check_available()
        for _source, line in self.docker.compose.logs([service], follow=follow, stream=True):
            yield line.decode(errors="replace")

    def _log_tail(self, service: str) -> list[str]:
        try:
            return self.docker.compose.logs([service], tail=str(DIAGNOSIS_LOG_LINES)).splitlines()
        except DockerException:
            return []

    def _api_key(self) -> str | None:
        return read_env(self.stack.layout.env_file).get("VLLM_API_KEY") or None
