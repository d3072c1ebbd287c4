"""The Compose runtime: the rendered project, driven through python-on-whales."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException

from stackctl.envfile import read_env
from stackctl.errors import RuntimeUnavailable, ServiceFailed
from stackctl.health import ProbeResult, probe, wait_until_healthy
from stackctl.layout import StackLayout
from stackctl.render import PROJECT_NAME
from stackctl.services import Service


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    state: str
    healthy: bool | None
    detail: str


class ComposeRuntime:
    def __init__(self, layout: StackLayout) -> None:
        self.layout = layout
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

    def up(self, services: list[Service], served_name: str, on_tick: Callable[[Service, float, ProbeResult], None] | None = None) -> None:
        self.check_available()
        api_key = read_env(self.layout.env_file).get("VLLM_API_KEY")
        for service in services:
            self.docker.compose.up([service.name], detach=True, no_deps=True, build=service.compose.get("build") is not None)
            if service.health is None:
                continue
            result = wait_until_healthy(
                service.health,
                service.start_timeout,
                api_key=api_key,
                served_name=served_name,
                on_tick=(lambda elapsed, probe_result, s=service: on_tick(s, elapsed, probe_result)) if on_tick else None,
            )
            if not result.healthy:
                raise ServiceFailed(
                    f"{service.name} did not become healthy: {result.detail}; see `stackctl logs {service.name}`"
                )

    def down(self) -> None:
        self.check_available()
        # Never `-v`: the model cache, Prometheus TSDB and Grafana data survive a `down`.
        self.docker.compose.down()

    def status(self, services: list[Service], served_name: str) -> list[ServiceStatus]:
        self.check_available()
        states = {container.name: container.state.status for container in self.docker.compose.ps()}
        api_key = read_env(self.layout.env_file).get("VLLM_API_KEY")
        rows = []
        for service in services:
            state = next((value for name, value in states.items() if service.name in name), "not created")
            health = probe(service.health, api_key=api_key, served_name=served_name) if service.health and state == "running" else None
            rows.append(ServiceStatus(service.name, str(state), health.healthy if health else None, health.detail if health else ""))
        return rows

    def logs(self, service: str, follow: bool) -> Iterator[str]:
        self.check_available()
        for _source, line in self.docker.compose.logs([service], follow=follow, stream=True):
            yield line.decode(errors="replace")
