"""`stackctl systemd install`: bring the stack up at boot (Restart=always, secrets stay in .env)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from stackctl.commands._shared import load_stack
from stackctl.systemd_unit import SYSTEM_UNIT_DIR, install_unit

systemd_app = typer.Typer(no_args_is_help=True, help="Run the stack as a systemd service.")


def register(app: typer.Typer) -> None:
    app.add_typer(systemd_app, name="systemd")


@systemd_app.command("install")
def install(
    ctx: typer.Context,
    unit_dir: Annotated[Path, typer.Option(help="Where unit files go.")] = SYSTEM_UNIT_DIR,
    name: Annotated[str | None, typer.Option(help="Unit name (default: stackctl-<directory>.service).")] = None,
    enable: Annotated[bool, typer.Option(help="Run `systemctl daemon-reload` and `enable` after writing.")] = True,
    user: Annotated[str | None, typer.Option(help="Run as this user (default: root).")] = None,
) -> None:
    """Write a systemd unit that starts the stack at boot and restarts it when it dies."""
    stack = load_stack(ctx)
    layout = stack.layout
    systemctl = shutil.which("systemctl") if enable else None
    docker = shutil.which("docker") or "/usr/bin/docker"
    unit = install_unit(layout, stack.runtime, unit_dir=unit_dir, name=name, systemctl=systemctl,
                        enable=enable, user=user, docker=docker)
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"wrote {unit.path} (EnvironmentFile={layout.env_file}; no secret in the unit)")
    if unit.ran:
        console.print(f"enabled {unit.name}; start it now with `sudo systemctl start {unit.name}`")
    else:
        steps = " && ".join(" ".join(command) for command in unit.commands) or "systemctl daemon-reload"
        console.print(f"next: `sudo {steps}`, then `sudo systemctl start {unit.name}`")
