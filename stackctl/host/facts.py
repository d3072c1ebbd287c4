"""HostFacts: everything stackctl reads from the machine, with every path and command injectable.

Tests point `root` at a directory of fake /proc and /etc files and `path` at a directory of fake
`nvidia-smi` / `docker` scripts that print outputs recorded on real machines; the checks then run
their real code path on those facts.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from stackctl.host.command import CommandOutput
from stackctl.host.gpu import (
    NVIDIA_SMI_QUERY,
    GpuQuery,
    driver_version,
    major_version,
    parse_gpu_query,
)
from stackctl.host.meminfo import meminfo_values

COMMAND_TIMEOUT_S = 20
# cgroup v2 `0::/system.slice/docker-<id>.scope`, v1 `...:/docker/<id>`
_CONTAINER_ID = re.compile(r"docker[-/]([0-9a-f]{64})")


@dataclass(frozen=True)
class DockerFacts:
    reachable: bool
    error: str = ""
    server_version: str = ""
    runtimes: tuple[str, ...] = ()
    compose_version: str | None = None
    # CDI specs (`nvidia-ctk cdi generate`) also make `gpus: all` work without the runtime entry.
    cdi_devices: tuple[str, ...] = ()


@dataclass(frozen=True)
class PortHolder:
    pid: int
    command: str
    # Full id of the Docker container the process runs in (host networking), if any.
    container_id: str | None = None


@dataclass(frozen=True)
class PortProbe:
    port: int
    # "free" | "in_use" | "denied" (binding needs privileges this user lacks)
    state: str
    # Processes listening on it, where /proc tells.
    holders: tuple[PortHolder, ...] = ()


@dataclass
class HostFacts:
    """The host as doctor (and `pull`, the engine choice) sees it. Defaults read the real machine."""

    # Prefix for /proc and /etc paths (a tmp dir of fake files in tests).
    root: Path = Path("/")
    # PATH used to find nvidia-smi and docker; None: the process's own PATH.
    path: str | None = None
    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))

    def file(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def read_text(self, absolute: str) -> str | None:
        try:
            return self.file(absolute).read_text(errors="replace")
        except OSError:
            return None

    def which(self, command: str) -> str | None:
        return shutil.which(command, path=self.path if self.path is not None else os.environ.get("PATH"))

    def run(self, argv: list[str]) -> CommandOutput | None:
        """Run a host command found on `path`; None when it is not installed."""
        executable = self.which(argv[0])
        if executable is None:
            return None
        try:
            done = subprocess.run(
                [executable, *argv[1:]], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False,
                env={**self.environ, "PATH": self.path or os.environ.get("PATH", "")},
            )
        except subprocess.TimeoutExpired:
            return CommandOutput(124, "", f"{argv[0]} did not answer within {COMMAND_TIMEOUT_S} s")
        return CommandOutput(done.returncode, done.stdout, done.stderr)

    # --- GPU -----------------------------------------------------------------------------------

    def nvidia_smi(self) -> CommandOutput | None:
        return self.run(NVIDIA_SMI_QUERY)

    def gpu_query(self) -> GpuQuery:
        """The GPUs nvidia-smi lists (or why it lists none)."""
        return parse_gpu_query(self.nvidia_smi())

    def driver_major(self, gpus: GpuQuery | None = None) -> int | None:
        """The NVIDIA driver's major version (None without a driver); `gpus`: a query already made."""
        return major_version(driver_version(self.driver_version_text(), (gpus or self.gpu_query()).gpus))

    def driver_version_text(self) -> str | None:
        return self.read_text("/proc/driver/nvidia/version")

    def gpu_information(self, bus_id: str) -> str | None:
        """/proc/driver/nvidia/gpus/<bus id>/information (lists the GSP firmware version)."""
        directory = self.file("/proc/driver/nvidia/gpus")
        wanted = bus_id.lower()[-12:]  # nvidia-smi pads the domain to 8 digits, /proc to 4
        try:
            entries = sorted(directory.iterdir())
        except OSError:
            return None
        for entry in entries:
            if entry.name.lower().endswith(wanted):
                try:
                    return (entry / "information").read_text(errors="replace")
                except OSError:
                    return None
        return None

    # --- memory, disk --------------------------------------------------------------------------

    def memory_total_bytes(self) -> int | None:
        """MemTotal of /proc/meminfo (None when unreadable)."""
        return meminfo_values(self.read_text("/proc/meminfo") or "").get("MemTotal")

    def disk_free_bytes(self, path: Path) -> tuple[Path, int]:
        """Free bytes on the filesystem that holds `path` (or would, once created)."""
        existing = nearest_existing(path)
        return existing, shutil.disk_usage(existing).free

    def mount_source(self, path: Path) -> tuple[str, str] | None:
        """(device, mount point) of the filesystem holding `path`, from /proc/self/mounts."""
        target = str(nearest_existing(path).resolve())
        best: tuple[str, str] | None = None
        for line in (self.read_text("/proc/self/mounts") or "").splitlines():
            fields = line.split()
            if len(fields) < 2:
                continue
            device, mount_point = fields[0], fields[1].replace("\\040", " ")
            inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
            if inside and (best is None or len(mount_point) >= len(best[1])):
                best = (device, mount_point)
        return best

    # --- docker --------------------------------------------------------------------------------

    def docker(self) -> DockerFacts:
        executable = self.which("docker")
        cdi = self.cdi_devices()
        if executable is None:
            return DockerFacts(False, "the docker client is not installed", cdi_devices=cdi)
        # Imported here: python-on-whales costs 0.3 s, and every `stackctl` command loads this module.
        from python_on_whales import DockerClient
        from python_on_whales.exceptions import DockerException

        client = DockerClient(client_call=[executable])
        try:
            info = client.info()
        except DockerException as error:
            return DockerFacts(False, _last_line(error.stderr or str(error)), cdi_devices=cdi)
        compose_version = None
        try:
            compose_version = client.compose.version().strip() or None
        except DockerException:
            compose_version = None
        return DockerFacts(
            True,
            server_version=info.server_version or "",
            runtimes=tuple(sorted((info.runtimes or {}).keys())),
            compose_version=compose_version,
            cdi_devices=cdi,
        )

    def cdi_devices(self) -> tuple[str, ...]:
        found = []
        for directory in ("/etc/cdi", "/var/run/cdi"):
            try:
                found += [p.name for p in sorted(self.file(directory).glob("nvidia*.y*ml"))]
            except OSError:
                continue
        return tuple(found)

    # --- network -------------------------------------------------------------------------------

    def probe_port(self, port: int, host: str = "0.0.0.0") -> PortProbe:
        holders = self.listeners(port)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            # SO_REUSEADDR, as the servers themselves bind: connections in TIME_WAIT from a service
            # that just stopped do not block a restart; only a listener does.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except PermissionError:
                return PortProbe(port, "in_use" if holders else "denied", holders)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    return PortProbe(port, "in_use", holders)
                raise
        return PortProbe(port, "in_use" if holders else "free", holders)

    def listeners(self, port: int) -> tuple[PortHolder, ...]:
        """Processes with a TCP socket listening on `port`, from /proc/net/tcp{,6} and /proc/*/fd."""
        inodes = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in (self.read_text(table) or "").splitlines()[1:]:
                fields = line.split()
                if len(fields) < 10 or fields[3] != "0A":  # 0A: LISTEN
                    continue
                if int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(fields[9])
        if not inodes:
            return ()
        holders = []
        for proc in self.file("/proc").glob("[0-9]*"):
            if inodes & _socket_inodes(proc):
                try:
                    cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                except OSError:
                    cmdline = "?"
                holders.append(PortHolder(int(proc.name), cmdline, self._container_of(proc)))
        return tuple(sorted(holders, key=lambda holder: holder.pid))

    def _container_of(self, proc: Path) -> str | None:
        try:
            cgroup = (proc / "cgroup").read_text(errors="replace")
        except OSError:
            return None
        match = _CONTAINER_ID.search(cgroup)
        return match.group(1) if match else None

    def compose_container_ids(self, project: str) -> set[str]:
        """Full ids of the running containers of a Compose project (empty without Docker)."""
        output = self.run(["docker", "ps", "-q", "--no-trunc", "--filter", f"label=com.docker.compose.project={project}"])
        if output is None or output.returncode != 0:
            return set()
        return {line.strip() for line in output.stdout.splitlines() if line.strip()}

    def file_mode(self, path: Path) -> int | None:
        try:
            return path.stat().st_mode & 0o777
        except OSError:
            return None


def _socket_inodes(proc: Path) -> set[str]:
    """Socket inodes a process holds open (other users' processes are unreadable: empty)."""
    found: set[str] = set()
    try:
        descriptors = list((proc / "fd").iterdir())
    except OSError:
        return found
    for descriptor in descriptors:
        try:
            target = os.readlink(descriptor)
        except OSError:  # closed since the listing (e.g. the listing's own descriptor)
            continue
        if target.startswith("socket:["):
            found.add(target[8:-1])
    return found


def nearest_existing(path: Path) -> Path:
    path = Path(path).expanduser()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _last_line(text: str) -> str:
    """The last non-blank line of a command's error output ("no answer" when there is none)."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[-1] if lines else "no answer"
