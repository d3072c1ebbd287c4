"""A real Docker engine for the Compose tests: the one at DOCKER_HOST (or the default socket) if
it answers, else a private dockerd, shared by the test sessions running at the same time and
stopped by the last of them.

The private engine keeps its data root under ~/.cache, keyed by its version, so images built in
one run (the vLLM CPU image takes minutes) are there in the next. Kept free of pytest: failures
are plain StackErrors, which the fixture turns into test failures.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from stackctl.engine._lock import exclusive_lock
from stackctl.errors import StackError

DEFAULT_SOCKET = "unix:///var/run/docker.sock"
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0
# Images of stackctl's own kept in the cached data root, newest first (older tags are removed).
KEEP_NEWEST = {"stackctl/filter-proxy": 3, "stackctl/vllm-cpu": 2}


@dataclass(frozen=True)
class DockerEngine:
    host: str  # what DOCKER_HOST must say to reach it
    private: bool  # started by these tests


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "stackctl-tests"


def answers(host: str) -> bool:
    try:
        done = subprocess.run(["docker", "-H", host, "version", "--format", "{{.Server.Version}}"],
                              capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


@contextmanager
def docker_engine() -> Iterator[DockerEngine]:
    for host in filter(None, (os.environ.get("DOCKER_HOST"), DEFAULT_SOCKET)):
        if answers(host):
            yield DockerEngine(host, private=False)
            return
    with _private_engine() as host:
        yield DockerEngine(host, private=True)


@contextmanager
def _private_engine() -> Iterator[str]:
    """One private dockerd per data root, shared by the test sessions that run at the same time
    (each holds a shared lock while it uses it); the last one to finish stops it."""
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise StackError("no Docker engine answers and dockerd is not installed: run scripts/setup (docker.io)")
    if os.geteuid() != 0:
        raise StackError("no Docker engine answers, and starting a private dockerd needs root; "
                         "start Docker and set DOCKER_HOST")
    version = _dockerd_version(dockerd)
    base = cache_root()
    base.mkdir(parents=True, exist_ok=True)
    record_file = base / f".docker-{version}.json"
    users = open(base / f".docker-{version}.users", "a")  # noqa: SIM115 (held for the session)
    try:
        with exclusive_lock(base / f".docker-{version}.lock"):
            host = _running_engine(record_file)
            if host is None:
                _stop_orphan(record_file)
                host = _start_engine(dockerd, base / f"docker-{version}", record_file)
            if _alone(users):
                # Nobody else uses it: what dead sessions left behind can go.
                _remove_leftovers(host)
            fcntl.flock(users, fcntl.LOCK_SH)
        yield host
    finally:
        with exclusive_lock(base / f".docker-{version}.lock"):
            if _alone(users):
                _stop_orphan(record_file)
        users.close()


def _alone(users: IO[str]) -> bool:
    """No other session holds the engine (this one's shared lock, if any, becomes exclusive)."""
    try:
        fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _start_engine(dockerd: str, data_root: Path, record_file: Path) -> str:
    # Sockets have a 108-byte path limit: keep the run directory short.
    run_dir = Path(tempfile.mkdtemp(prefix="stackctl-dockerd-", dir="/tmp"))
    socket = run_dir / "docker.sock"
    log_path = run_dir / "dockerd.log"
    argv = [
        dockerd, "--data-root", str(data_root), "--exec-root", str(run_dir / "exec"),
        "--pidfile", str(run_dir / "docker.pid"), "--host", f"unix://{socket}",
        # Every stackctl service uses host networking: no bridge, no iptables rules.
        "--bridge=none", "--iptables=false", "--ip6tables=false",
    ]
    with open(log_path, "wb") as log:
        # Its own session: it outlives the test session that started it while others use it.
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    host = f"unix://{socket}"
    record_file.write_text(json.dumps({"pid": process.pid, "host": host, "run_dir": str(run_dir)}))
    _wait_until_answering(process, host, log_path)
    _share_root_mount()
    return host


def _running_engine(record_file: Path) -> str | None:
    """The recorded engine's address, if its dockerd is alive and answers."""
    try:
        record = json.loads(record_file.read_text())
        alive = b"dockerd" in Path(f"/proc/{record['pid']}/cmdline").read_bytes()
    except (OSError, ValueError, KeyError):
        return None
    return record["host"] if alive and answers(record["host"]) else None


def _dockerd_version(dockerd: str) -> str:
    done = subprocess.run([dockerd, "--version"], capture_output=True, text=True, check=False)
    # "Docker version 20.10.24+dfsg1, build 297e128"
    words = done.stdout.replace(",", " ").split()
    return words[2] if len(words) > 2 else "unknown"


def _wait_until_answering(process: subprocess.Popen, host: str, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not answers(host):
        if process.poll() is not None or time.monotonic() > deadline:
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-20:])
            raise StackError(f"the private dockerd did not start (exit {process.poll()}); its log ends:\n{tail}")
        time.sleep(0.5)


def _share_root_mount() -> None:
    """node-exporter binds / with `rslave` (as its docs say), which Docker refuses when / is a
    private mount; systemd makes / shared at boot, a bare container sandbox may not."""
    propagation = subprocess.run(["findmnt", "-no", "PROPAGATION", "/"], capture_output=True, text=True, check=False)
    if propagation.stdout.strip() == "private":
        subprocess.run(["mount", "--make-rshared", "/"], check=False)


def _stop_orphan(record_file: Path) -> None:
    """Stop the recorded dockerd (if any is alive) and forget it."""
    try:
        record = json.loads(record_file.read_text())
        pid, run_dir = int(record["pid"]), Path(record["run_dir"])
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, KeyError):
        record_file.unlink(missing_ok=True)
        return
    if b"dockerd" in command:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        if Path(f"/proc/{pid}").exists():
            os.kill(pid, signal.SIGKILL)
    record_file.unlink(missing_ok=True)
    shutil.rmtree(run_dir, ignore_errors=True)


def _remove_leftovers(host: str) -> None:
    """Containers and volumes that sessions which died left in the cached data root (their
    `restart: unless-stopped` would bring them back, holding ports). Images stay: they are the
    cache."""
    docker = ["docker", "-H", host]
    ids = subprocess.run([*docker, "ps", "-aq"], capture_output=True, text=True, check=False).stdout.split()
    if ids:
        subprocess.run([*docker, "rm", "-f", *ids], capture_output=True, check=False)
    subprocess.run([*docker, "volume", "prune", "-f"], capture_output=True, check=False)
    # Every source change tags a new stackctl image; the newest few stay as the cache.
    for repository, keep in KEEP_NEWEST.items():
        listed = subprocess.run([*docker, "images", repository, "--format", "{{.CreatedAt}}\t{{.ID}}"],
                                capture_output=True, text=True, check=False).stdout.splitlines()
        stale = [line.split("\t")[1] for line in sorted(listed, reverse=True)[keep:]]
        if stale:
            subprocess.run([*docker, "rmi", "-f", *stale], capture_output=True, check=False)
    subprocess.run([*docker, "image", "prune", "-f"], capture_output=True, check=False)
