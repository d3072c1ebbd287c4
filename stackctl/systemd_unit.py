"""`stackctl systemd install`: a unit that brings the stack up at boot and keeps it up.

The unit references the stack's .env (EnvironmentFile=) and never holds a secret itself: unit
files are world-readable (`systemctl cat` works for every user).
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from stackctl.errors import StackError
from stackctl.layout import StackLayout
from stackctl.runtime import Runtime

SYSTEM_UNIT_DIR = Path("/etc/systemd/system")
_UNIT_NAME = re.compile(r"^[A-Za-z0-9:_.@-]+$")


@dataclass(frozen=True)
class InstalledUnit:
    path: Path
    name: str
    # systemctl invocations run (or to run, when systemctl is absent).
    commands: list[list[str]]
    ran: bool


def unit_name_for(layout: StackLayout) -> str:
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", layout.root.name).strip("-") or "stack"
    return f"stackctl-{slug}.service"


def render_unit(layout: StackLayout, runtime: Runtime, *, stackctl: list[str] | None = None, docker: str = "/usr/bin/docker",
                user: str | None = None) -> str:
    stackctl = stackctl or [sys.executable, "-m", "stackctl"]
    root = layout.root
    base = [*stackctl, "--dir", str(root)]
    lines = [
        "# Written by `stackctl systemd install`; re-run it after moving the stack directory.",
        "# Secrets stay in the stack's .env (mode 0600), referenced below, never in this file.",
        "[Unit]",
        f"Description=stackctl LLM stack in {root}",
        "Wants=network-online.target",
    ]
    lines += runtime.systemd_service_lines(base, docker)
    lines += [
        f"WorkingDirectory={root}",
        f"EnvironmentFile={layout.env_file}",
        "Restart=always",
        "RestartSec=10",
        # The first start downloads the engine and the weights (tens of GB, at the network's pace)
        # before vLLM loads them; each step bounds itself (huggingface_hub's timeouts, vLLM's
        # health gate), so systemd adds no limit of its own that would kill a healthy download.
        "TimeoutStartSec=infinity",
        "TimeoutStopSec=120",
    ]
    if user:
        lines.append(f"User={user}")
    lines += ["", "[Install]", "WantedBy=multi-user.target", ""]
    return "\n".join(lines)


def install_unit(layout: StackLayout, runtime: Runtime, *, unit_dir: Path = SYSTEM_UNIT_DIR, name: str | None = None,
                 systemctl: str | None = None, enable: bool = True, user: str | None = None,
                 stackctl: list[str] | None = None, docker: str = "/usr/bin/docker") -> InstalledUnit:
    """Write the unit; with `systemctl` given, reload and enable it (not start: the caller decides)."""
    if not layout.stack_file.exists():
        raise StackError(f"{layout.stack_file} not found; run `stackctl init` first")
    if not layout.env_file.exists():
        raise StackError(f"{layout.env_file} not found; run `stackctl init` first (the unit references it)")
    name = name or unit_name_for(layout)
    if not name.endswith(".service"):
        name += ".service"
    if not _UNIT_NAME.match(name):
        raise StackError(f"'{name}' is not a valid unit name (letters, digits, - _ . @ :)")
    path = Path(unit_dir) / name
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_unit(layout, runtime, stackctl=stackctl, docker=docker, user=user))
        path.chmod(0o644)
    except PermissionError:
        raise StackError(f"cannot write {path}: run `sudo stackctl systemd install` (or pass --unit-dir)") from None
    commands = [["systemctl", "daemon-reload"]] + ([["systemctl", "enable", name]] if enable else [])
    if systemctl is None:
        return InstalledUnit(path, name, commands, ran=False)
    for command in commands:
        done = subprocess.run([systemctl, *command[1:]], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise StackError(f"`{' '.join(command)}` failed: {(done.stderr or done.stdout).strip()}")
    return InstalledUnit(path, name, commands, ran=True)

