"""The native runtime: the same service definitions, run as local processes under one
supervisord per stack (a crashed service is restarted, a crash loop given up on)."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ValidationError

from stackctl.diagnosis import DIAGNOSIS_LOG_LINES, diagnose_service_log
from stackctl.engine.invocation import VllmInvocation, venv_invocation
from stackctl.engine.probe import probe_engine
from stackctl.errors import StackError
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
from stackctl.runtime.launch import LaunchSpec
from stackctl.runtime.native_engine import NativeEngine, installed_native_engine, native_engine
from stackctl.runtime.native_nginx import native_nginx_reload_argv, reload_native_nginx
from stackctl.runtime.processes import (
    ProcessRecord,
    is_running,
    last_line,
    stop_process,
    tail,
    uptime_s,
)
from stackctl.runtime.supervisor import ALIVE_STATES, Program, StackSupervisor
from stackctl.services import Service, ServiceOutline, dependency_waves, environment_mapping

# vLLM frees its KV cache and workers on SIGTERM; give it longer than the small services.
STOP_GRACE_S = {"vllm": 30.0}
DEFAULT_STOP_GRACE_S = 10.0
# Seconds the launcher may take to record a freshly started service.
LAUNCH_TIMEOUT_S = 30.0
# Where a missing native binary comes from, for the error message.
PACKAGE_HINTS = {
    "prometheus": "apt-get install prometheus",
    "prometheus-node-exporter": "apt-get install prometheus-node-exporter",
    "nginx": "apt-get install nginx",
    "grafana": "Grafana's apt repository (grafana package), or set services.grafana: false",
}

class NativeRuntime(Runtime):
    """Each fragment's `x-stackctl.native` command as a supervised local process."""

    name = "native"
    needs_docker = False
    privileged_ports_need_root = True
    inherits_shell_environment = True

    @property
    def records_dir(self) -> Path:
        return self.layout.state / "pids"

    @cached_property
    def supervisor(self) -> StackSupervisor:
        return StackSupervisor(self.layout)

    # -- rendering ---------------------------------------------------------------------------

    def template_paths(self) -> dict[str, str]:
        return {"rendered": str(self.layout.rendered), "data": str(self.layout.data), "state": str(self.layout.state)}

    def model_location(self, local_model: Path | None) -> ModelLocation:
        return ModelLocation(str(local_model) if local_model else None)

    def vllm_invocation(self, image: str) -> VllmInvocation:
        return venv_invocation(self.engine.python, cpu_build=not self.config.hardware_profile.has_gpu)

    def acme_webroot(self) -> str:
        return str(self.layout.data / "acme")

    def certificate_root(self) -> None:
        return None  # nginx reads certbot's directory where it is

    @property
    def nginx_user(self) -> str | None:
        # As root, nginx's workers would otherwise run as `nobody`, who cannot read the stack's files.
        return "root" if os.geteuid() == 0 else None

    @cached_property
    def engine(self) -> NativeEngine:
        """The vLLM this runtime runs: its own question (runtime/native_engine.py answers it)."""
        return native_engine(self.config)

    def engine_python(self) -> str:
        return str(self.engine.python)

    def engine_command(self, service: str, argv: list[str]) -> list[str]:
        return [self.engine_python(), *argv]

    def engine_environment(self) -> dict[str, str]:
        return dict(self.engine.environment)

    def engine_in_use(self, services: Sequence[ServiceOutline]) -> EngineInUse | None:
        """The interpreter the running engine was started with (else the one `up` would start), and
        what it holds (read from its installed metadata, no import). Plans no install."""
        engine = next((service for service in services if service.name in ENGINE_SERVICES), None)
        if engine is None:
            return None
        chosen = installed_native_engine(self.config)
        spec = self._launch_spec(engine.name)
        started = Path(spec.argv[0]) if spec is not None and self._is_running(engine.name) else None
        if started is not None and (chosen is None or started != chosen.python):
            python, origin = started, "started before stack.yaml changed (`up` switches it)"
        elif chosen is None:
            return EngineInUse("vLLM not installed yet", "`up` (or `stackctl install-engine`) installs it",
                               "the CUDA build that serves the model")
        else:
            python, origin = chosen.python, chosen.origin
        probe = probe_engine(python)
        return EngineInUse(probe.error or probe.summary, str(python), origin)

    # -- nginx, systemd ----------------------------------------------------------------------

    def reload_nginx(self) -> None:
        reload_native_nginx(self.layout)

    def certificate_deploy_hook(self) -> str:
        # Stored in renewal/<domain>.conf: every renewal (Debian's certbot.timer, `certbot renew`)
        # reloads nginx, which otherwise serves the old certificate from memory until it expires.
        return shlex.join(native_nginx_reload_argv(self.layout))

    def renewal_note(self) -> str:
        return self.certificate_deploy_hook()

    def systemd_service_lines(self, stackctl: list[str], docker: str) -> list[str]:
        return [
            "After=network-online.target",
            "",
            "[Service]",
            # `stackctl up` returns once every service is healthy; the services stay in this unit's
            # cgroup, and systemd restarts the unit when they are all gone.
            "Type=forking",
            "GuessMainPID=no",
            # The engine venv (CPU or CUDA build, by stack.yaml) and the weights, each a no-op
            # once there; `up` would do both, this makes them visible as their own steps.
            f"ExecStartPre={shlex.join([*stackctl, 'install-engine'])}",
            f"ExecStartPre={shlex.join([*stackctl, 'pull'])}",
            f"ExecStart={shlex.join([*stackctl, 'up', '--runtime', 'native'])}",
            f"ExecStop={shlex.join([*stackctl, 'down', '--runtime', 'native'])}",
        ]

    # -- running -----------------------------------------------------------------------------

    def prepare(self, services: Collection[str], on_progress: Callable[[str], None]) -> None:
        """vLLM runs from a venv of its own: the CPU build (and the demo model), or the CUDA build
        that serves the model, installed on first use; or the user's own interpreter."""
        if any(name in ENGINE_SERVICES for name in services):
            from stackctl.runtime.native_engine import ensure_native_engine

            ensure_native_engine(self.config, on_progress)
            self.__dict__.pop("engine", None)  # chosen again: what was just installed
        if any(name in ("ray-head", "ray-worker") for name in services):
            from stackctl.topology.ray_engine import ensure_ray

            ensure_ray(on_progress)

    # -- records ---------------------------------------------------------------------------

    def _record_path(self, name: str) -> Path:
        return self.records_dir / f"{name}.json"

    def record(self, name: str) -> ProcessRecord | None:
        """What the launcher wrote when it last started the service (None: never, or `down`)."""
        path = self._record_path(name)
        try:
            return ProcessRecord.model_validate_json(path.read_text())
        except (OSError, ValidationError):
            return None

    def _forget(self, name: str) -> None:
        self._record_path(name).unlink(missing_ok=True)

    # -- up --------------------------------------------------------------------------------

    def up(self, project: RenderedProject, on_event: OnEvent = lambda _event: None) -> None:
        """Start what is not healthy, a dependency wave at a time, each behind its gate, under the stack's
        supervisor (which restarts a crashed service). On failure, stop what this call started
        and raise ServiceStartFailed (log tail + diagnosis)."""
        self._prepare_directories()
        services = project.services
        running = {service.name for service in services if self._is_running(service.name)}
        # What stack.yaml (or the engine) changed since a running service started: it starts again
        # with the new command, as Compose recreates a changed container; the rest are left alone.
        changed = {service.name: why for service in services if service.name in running
                   and (why := self._launch_change(service))}
        for name, why in changed.items():
            on_event(ServiceEvent(next(service for service in services if service.name == name), "changed",
                                  detail=why))
            self._stop(name)
        running -= set(changed)
        to_start = [service for service in services if service.name not in running]
        self._preflight(to_start)
        generation = time.time()
        self.supervisor.configure([self._program(service, generation if service in to_start else None)
                                   for service in services])
        started: list[Service] = []
        try:
            for wave in dependency_waves(services):
                starting: list[Service] = []
                for service in wave:
                    if service.name in running:
                        result = self._probe(service)
                        if result.healthy:
                            on_event(ServiceEvent(service, "running", detail=result.detail))
                            continue
                        self.supervisor.stop(service.name)  # alive but not serving: start it again
                    was_dead = service.name not in changed and self.record(service.name) is not None
                    on_event(ServiceEvent(service, "restarting" if was_dead else "starting"))
                    self._forget(service.name)
                    started.append(service)
                    self.supervisor.start(service.name)
                    starting.append(service)
                # The quick gates first: a broken exporter is reported before vLLM finishes loading.
                for service in sorted(starting, key=lambda each: each.start_timeout):
                    self._wait_healthy(service, self._first_record(service), on_event)
        except BaseException:
            for service in reversed(started):
                self._stop(service.name)
            if not any(self._is_running(service.name) for service in services):
                self.supervisor.shutdown()  # nothing of this stack runs: nothing supervises either
            raise

    def _launch_change(self, service: Service) -> str:
        """What differs between the command a running service was started with and the one it
        would start with now ("" when nothing does)."""
        current = self._launch_spec(service.name)
        if current is None or service.native is None:
            return ""
        wanted = self._declared_environment(service)
        if list(service.native.argv) != current.argv:
            return "its command"
        names = sorted(name for name in set(wanted) | set(current.environment)
                       if wanted.get(name) != current.environment.get(name))
        # Names only: a value may be a secret reference.
        return f"environment: {', '.join(names)}" if names else ""

    def _declared_environment(self, service: Service) -> dict[str, str]:
        assert service.native is not None
        return {**environment_mapping(service.compose.get("environment")), **service.native.environment}

    def _launch_spec(self, name: str) -> LaunchSpec | None:
        try:
            return LaunchSpec.model_validate_json((self.layout.state / "launch" / f"{name}.json").read_text())
        except (OSError, ValidationError):
            return None

    def _program(self, service: Service, generation: float | None) -> Program:
        """The supervisor's program for a service; a new launch spec when it is (re)started."""
        assert service.native is not None
        spec_file = self.layout.state / "launch" / f"{service.name}.json"
        log_file = self.layout.logs / f"{service.name}.log"
        if generation is not None or not spec_file.exists():
            spec = LaunchSpec(service=service.name, argv=list(service.native.argv),
                              environment=self._declared_environment(service),
                              env_file=str(self.layout.env_file), record_file=str(self._record_path(service.name)),
                              log_file=str(log_file), generation=generation or time.time())
            spec_file.parent.mkdir(parents=True, exist_ok=True)
            spec_file.write_text(spec.model_dump_json(indent=2))
        return Program(service.name, spec_file, log_file, start_seconds=int(service.start_timeout),
                       stop_grace_s=int(STOP_GRACE_S.get(service.name, DEFAULT_STOP_GRACE_S)))

    def _first_record(self, service: Service) -> ProcessRecord | None:
        """The record the launcher writes once the supervisor started it (None: it died first)."""
        deadline = time.monotonic() + LAUNCH_TIMEOUT_S
        while time.monotonic() < deadline:
            record = self.record(service.name)
            if record is not None:
                return record
            state = self.supervisor.state(service.name)
            if state is not None and state.state not in (*ALIVE_STATES, "BACKOFF"):
                return None
            time.sleep(0.05)
        return None

    def _wait_healthy(self, service: Service, record: ProcessRecord | None, on_event: OnEvent) -> None:
        log_file = self.layout.logs / f"{service.name}.log"
        offset = record.log_offset if record else 0

        def alive() -> bool:
            # The first start's process: a retry by the supervisor is a failed start here.
            return record is not None and is_running(record)

        def tick(elapsed: float, _result: ProbeResult) -> None:
            on_event(ServiceEvent(service, "waiting", elapsed, last_line(log_file, offset)))

        if service.health is None:
            result = ProbeResult(alive(), "running" if alive() else "the process exited")
        else:
            result = wait_until_healthy(
                service.health, service.start_timeout, is_alive=alive, on_tick=tick,
                api_key=self.vllm_api_key(), served_name=self.config.served_name,
            )
        if result.healthy:
            on_event(ServiceEvent(service, "healthy", detail=result.detail))
            return
        exited = not alive()
        self.supervisor.stop(service.name)  # no retries of a start that failed in front of the user
        log_tail = tail(log_file, DIAGNOSIS_LOG_LINES, offset)
        what = "exited during start" if exited else f"did not become healthy in {service.start_timeout:.0f} s"
        detail = "" if exited else f" (last check: {result.detail})"
        account = f"{service.name} {what}{detail}"
        raise ServiceStartFailed(
            f"{account}; full log: {log_file}", log_tail, service=service.name,
            diagnosis=diagnose_service_log(service.name, log_tail, self.config, failed=True, failure=account),
        )

    def _preflight(self, services: list[Service]) -> None:
        """Fail before starting anything: missing binaries, ports held by someone else."""
        for service in services:
            if service.native is None:
                raise StackError(
                    f"{service.name} has no native command; disable it in stack.yaml or use --runtime compose"
                )
            program = service.native.argv[0]
            if not (Path(program).is_file() or shutil.which(program)):
                hint = PACKAGE_HINTS.get(program, f"install {program}")
                raise StackError(f"{service.name} needs `{program}`, which is not installed: {hint}")
            port = service_port(service)
            if port is not None and port_in_use(port):
                raise StackError(
                    f"port {port} ({service.name}) is already in use by another process; stop it "
                    f"(`ss -ltnp 'sport = :{port}'`) or change its port under `ports:` in stack.yaml"
                )

    def _prepare_directories(self) -> None:
        for directory in (self.layout.logs, self.layout.state / "nginx", self.layout.data / "acme",
                          self.layout.data / "prometheus", self.layout.data / "grafana"):
            directory.mkdir(parents=True, exist_ok=True)

    # -- down / status -----------------------------------------------------------------------

    def down(self, services: Sequence[ServiceOutline]) -> list[str]:
        """Stop every service, dependents first, then the supervisor. Data directories stay."""
        names = [service.name for service in reversed(services)]
        if self.records_dir.exists():
            names += sorted(path.stem for path in self.records_dir.glob("*.json") if path.stem not in names)
        stopped = [name for name in names if self._stop(name)]
        self.supervisor.shutdown()
        return stopped

    def _stop(self, name: str) -> bool:
        stopped = self.supervisor.stop(name)
        record = self.record(name)
        if record is not None and is_running(record):  # started outside this supervisor
            stopped = stop_process(record, STOP_GRACE_S.get(name, DEFAULT_STOP_GRACE_S)) or stopped
        self._forget(name)
        return stopped

    def status(self, services: Sequence[ServiceOutline]) -> list[ServiceStatus]:
        rows = []
        for service in services:
            record = self.record(service.name)
            url = service.health.url if service.health else None
            program = self.supervisor.state(service.name)
            restarts = max(0, record.starts - 1) if record else None
            if record is None:
                rows.append(ServiceStatus(service.name, "stopped", None, None, url, None, ""))
            elif program is not None and program.state == "FATAL":
                detail = (f"crashed {restarts + 1} times; the supervisor gave up: "
                          f"{last_line(Path(record.log_file), record.log_offset)}")
                rows.append(ServiceStatus(service.name, "failed", None, False, url, None, detail, restarts))
            elif not is_running(record):
                state = "restarting" if program is not None and program.state in ("BACKOFF", "STARTING") else "dead"
                detail = last_line(Path(record.log_file), record.log_offset)
                rows.append(ServiceStatus(service.name, state, record.pid, False, url, None, detail, restarts))
            else:
                result = self._probe(service)
                rows.append(ServiceStatus(
                    service.name, "running", record.pid, result.healthy if service.health else None, url,
                    uptime_s(record), result.detail, restarts,
                ))
        return rows

    def logs(self, service: str, follow: bool) -> Iterator[str]:
        path = self.layout.logs / f"{service}.log"
        if not path.exists():
            raise StackError(f"no log for '{service}' yet in {self.layout.logs}; has it been started?")
        with path.open(errors="replace") as handle:
            yield from handle
            while follow:
                line = handle.readline()
                if line:
                    yield line
                else:
                    time.sleep(0.25)

    # -- helpers -----------------------------------------------------------------------------

    def _is_running(self, name: str) -> bool:
        record = self.record(name)
        return record is not None and is_running(record)

    def _probe(self, service: ServiceOutline) -> ProbeResult:
        if service.health is None:
            return ProbeResult(True, "no health gate")
        return probe(service.health, api_key=self.vllm_api_key(), served_name=self.config.served_name)



def service_port(service: ServiceOutline) -> int | None:
    """The port a service listens on, taken from its health gate URL."""
    if service.health is None:
        return None
    return urlsplit(service.health.url).port


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe_socket:
        probe_socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe_socket.bind((host, port))
        except OSError:
            return True
    return False
