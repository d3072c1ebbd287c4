"""The native runtime's nginx: `nginx -t`, then a reload that waits until new workers serve the
freshly rendered config (the Compose runtime reloads nginx inside its container)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
from pathlib import Path

from stackctl.errors import StackError
from stackctl.layout import StackLayout


def nginx_binary() -> str:
    path = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/bin")
    if not path:
        raise StackError("nginx is not installed: apt-get install nginx")
    return path


def native_nginx_reload_argv(layout: StackLayout) -> list[str]:
    """What reloads the native runtime's nginx: `nginx -s reload` with the -c/-p it was started
    with, so nginx finds the same pid file."""
    return [nginx_binary(), "-c", str(layout.rendered / "nginx/nginx.conf"), "-p", str(layout.state / "nginx"),
            "-s", "reload"]


def reload_native_nginx(layout: StackLayout) -> None:
    """`nginx -t` first, so a bad config never replaces the working one; then reload, and wait
    until new workers serve it."""
    conf = layout.rendered / "nginx/nginx.conf"
    _run([nginx_binary(), "-t", "-q", "-c", str(conf), "-p", str(layout.state / "nginx")],
         "the re-rendered nginx config does not pass `nginx -t`")
    master = _master_pid(layout.state / "nginx/nginx.pid")
    old_workers = _workers(master)
    _run(native_nginx_reload_argv(layout), "nginx did not reload; is it running (`stackctl up`)?")
    _wait_for_new_workers(master, old_workers)


def _wait_for_new_workers(master: int | None, old_workers: set[int], timeout_s: float = 10) -> None:
    """`nginx -s reload` only signals the master. Until the old workers stop accepting, a new
    connection can still get the old config (plain HTTP, no redirect). Old workers with open
    streams keep serving those ("is shutting down"): they are not waited for."""
    if master is None:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        current = _workers(master)
        if current - old_workers and all(
            pid not in current or "shutting down" in _title(pid) for pid in old_workers
        ):
            return
        time.sleep(0.05)
    raise StackError(f"nginx (pid {master}) did not start new workers within {timeout_s:.0f} s of the reload; "
                     "see its error log")


def _master_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _workers(master: int | None) -> set[int]:
    if master is None:
        return set()
    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    except OSError:
        return set()
    return {int(pid) for pid in children if "worker process" in _title(int(pid))}


def _title(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _run(argv: list[str], what: str) -> None:
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise StackError(f"{what}: {shlex.join(argv)}: {error}") from None
    if result.returncode != 0:
        output = " ".join((result.stderr or result.stdout).split())[-600:]
        raise StackError(f"{what}: {output}")
