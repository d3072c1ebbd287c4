"""`stackctl render`: docker-compose.yml and the service configs, for `docker compose` alone."""

from __future__ import annotations

import typer

from stackctl.commands._shared import HostOption, RuntimeChoice, RuntimeOption, console, load_stack


def register(app: typer.Typer) -> None:
    app.command()(render)


def render(ctx: typer.Context, runtime: RuntimeOption = None, host: HostOption = None) -> None:
    """Write docker-compose.yml and the service configs; `docker compose up -d` then works."""
    from stackctl.render import render_project

    # The Compose project unless asked otherwise: that is what `docker compose up -d` runs.
    stack = load_stack(ctx, runtime or RuntimeChoice("compose"), host)
    project = render_project(stack)
    written = project.write(stack.layout)
    console.print(f"wrote {written.compose_file} ({len(project.services)} services: "
                  f"{', '.join(service.name for service in project.services)})")
    for path in written.config_files:
        console.print(f"wrote {path}")
    if not stack.layout.env_file.exists():
        console.print("[yellow]no .env yet: run `stackctl init` before `docker compose up -d`[/yellow]")
