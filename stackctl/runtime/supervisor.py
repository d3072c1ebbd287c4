"""The native runtime's supervisor: one supervisord per stack keeps its services alive.

Like Compose's `restart: unless-stopped`, a service that crashes is started again; one that
keeps crashing before it is up (a crash loop) is retried `START_RETRIES` times with a growing
pause (supervisord's backoff), then given up on (FATAL), and `status` says so. Its config names
only `python -m stackctl.runtime.launch SPEC` per service: secrets stay in .env.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
import xmlrpc.client
from dataclasses import dataclass
from pathlib import Path

from stackctl.errors import StackError
from stackctl.layout import StackLayout

# Start attempts that die before the service is up, before the supervisor gives up on it.
START_RETRIES = 3
# Unix sockets take at most 107 bytes of path.
_SOCKET_PATH_MAX = 100
_START_TIMEOUT_S = 15.0

# supervisord's process states (supervisor.states.ProcessStates).
ALIVE_STATES = {"STARTING", "RUNNING"}


@dataclass(frozen=True)
class Program:
    name: str
    spec_file: Path
    log_file: Path
    # A crash within this many seconds of a start counts as a failed start (backoff, then FATAL).
    start_seconds: int
    stop_grace_s: int


@dataclass(frozen=True)
class ProgramState:
    name: str
    state: str  # supervisord's statename: STOPPED, STARTING, RUNNING, BACKOFF, STOPPING, EXITED, FATAL
    pid: int
    exit_status: int
    description: str


class StackSupervisor:
    def __init__(self, layout: StackLayout) -> None:
        self.layout = layout
        self.directory = layout.state / "supervisor"
        self.config_file = self.directory / "supervisord.conf"
        self.socket = self._socket_path()

    def _socket_path(self) -> Path:
        preferred = self.directory / "supervisor.sock"
        if len(str(preferred)) <= _SOCKET_PATH_MAX:
            return preferred
        digest = hashlib.sha256(str(self.layout.home).encode()).hexdigest()[:16]
        return Path("/tmp") / f"stackctl-supervisor-{digest}.sock"

    # -- the daemon ----------------------------------------------------------------------------

    def configure(self, programs: list[Program]) -> None:
        """Write the config; start supervisord, or make the running one pick the changes up."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(self._config_text(programs))
        if not self.answers():
            self._start_daemon()
            return
        added, changed, removed = self._rpc().supervisor.reloadConfig()[0]
        for name in [*changed, *removed]:
            self._rpc().supervisor.stopProcessGroup(name, True)
            self._rpc().supervisor.removeProcessGroup(name)
        for name in [*added, *changed]:
            self._rpc().supervisor.addProcessGroup(name)

    def answers(self) -> bool:
        if not self.socket.exists():
            return False
        try:
            return self._rpc().supervisor.getState()["statename"] == "RUNNING"
        except (OSError, xmlrpc.client.Error):
            return False

    def shutdown(self) -> None:
        if not self.answers():
            return
        try:
            self._rpc().supervisor.shutdown()
        except (OSError, xmlrpc.client.Error):
            return
        deadline = time.monotonic() + _START_TIMEOUT_S
        while self.socket.exists() and time.monotonic() < deadline:
            time.sleep(0.1)

    def _start_daemon(self) -> None:
        log = self.directory / "supervisord-start.log"
        with log.open("wb") as output:
            # supervisord forks into the background (its own session) and outlives `up`.
            done = subprocess.run([sys.executable, "-m", "supervisor.supervisord", "-c", str(self.config_file)],
                                  stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False)
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self.answers():
            if done.returncode != 0 or time.monotonic() > deadline:
                said = " ".join(log.read_text(errors="replace").split())[-400:]
                raise StackError(f"the stack's supervisor (supervisord) did not start: {said or 'no output'}; "
                                 f"config: {self.config_file}")
            time.sleep(0.1)

    # -- programs ------------------------------------------------------------------------------

    def state(self, name: str) -> ProgramState | None:
        if not self.answers():
            return None
        try:
            info = self._rpc().supervisor.getProcessInfo(name)
        except xmlrpc.client.Fault:
            return None
        return ProgramState(name, info["statename"], info["pid"], info["exitstatus"], info["description"])

    def start(self, name: str) -> None:
        try:
            self._rpc().supervisor.startProcess(name, False)
        except xmlrpc.client.Fault as fault:
            if "ALREADY_STARTED" not in fault.faultString:
                raise StackError(f"the supervisor could not start {name}: {fault.faultString}") from None

    def stop(self, name: str) -> bool:
        """Stop a program (its whole process group); True when it was running."""
        current = self.state(name)
        if current is None or current.state not in (*ALIVE_STATES, "BACKOFF"):
            return False
        try:
            self._rpc().supervisor.stopProcess(name, True)
        except xmlrpc.client.Fault as fault:
            if "NOT_RUNNING" not in fault.faultString:
                raise StackError(f"the supervisor could not stop {name}: {fault.faultString}") from None
        return True

    # -- helpers -------------------------------------------------------------------------------

    def _rpc(self) -> xmlrpc.client.ServerProxy:
        from supervisor.xmlrpc import SupervisorTransport

        return xmlrpc.client.ServerProxy("http://127.0.0.1",
                                         transport=SupervisorTransport(None, None, f"unix://{self.socket}"))

    def _config_text(self, programs: list[Program]) -> str:
        logs = self.layout.logs
        lines = [
            "; Written by `stackctl up` (native runtime): one supervisord per stack. No secrets here:",
            "; each program is stackctl's launcher, which reads .env when it starts the service.",
            "[unix_http_server]", f"file={self.socket}", "chmod=0700",
            "[supervisord]", f"logfile={logs / 'supervisord.log'}", "logfile_maxbytes=10MB",
            f"pidfile={self.directory / 'supervisord.pid'}", f"directory={self.layout.state}",
            f"childlogdir={logs}", "nodaemon=false", "silent=true",
            "[rpcinterface:supervisor]", "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
            "[supervisorctl]", f"serverurl=unix://{self.socket}",
        ]
        for program in programs:
            lines += [
                f"[program:{program.name}]",
                f"command={sys.executable} -m stackctl.runtime.launch {program.spec_file}",
                "autostart=false", "autorestart=true",
                f"startsecs={program.start_seconds}", f"startretries={START_RETRIES}",
                # The whole process group: vLLM's engine core, nginx's workers.
                "stopasgroup=true", "killasgroup=true", f"stopwaitsecs={program.stop_grace_s}",
                f"stdout_logfile={program.log_file}", "stdout_logfile_maxbytes=0", "redirect_stderr=true",
            ]
        return "\n".join(lines) + "\n"
