"""stackctl: one GPU box -> a private, secure, observable LLM endpoint for coding agents."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from stackctl.errors import StackError
from stackctl.layout import StackLayout, find_layout

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__, pretty_exceptions_enable=False)
secrets_app = typer.Typer(no_args_is_help=True, help="Manage the secrets in .env.")
app.add_typer(secrets_app, name="secrets")
console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False)


class RuntimeChoice(str, Enum):
    compose = "compose"
    native = "native"


def _mount_proxy() -> None:
    # The filter-proxy is its own subpackage (and image); the CLI only mounts its commands.
    try:
        from stackctl.proxy.cli import proxy_app
    except ImportError:
        return
    app.add_typer(proxy_app, name="proxy", help="The filter-proxy: the gateway clients talk to.")


_mount_proxy()


@app.callback()
def _options(
    ctx: typer.Context,
    directory: Annotated[
        Optional[Path],
        typer.Option("--dir", "-C", envvar="STACKCTL_DIR", help="Stack directory (holds stack.yaml and .env)."),
    ] = None,
) -> None:
    ctx.obj = find_layout(directory)


def _layout(ctx: typer.Context) -> StackLayout:
    return ctx.find_root().obj


@app.command()
def init(
    ctx: typer.Context,
    hardware: Annotated[Optional[str], typer.Option(help="Hardware profile (see `stackctl profiles`).")] = None,
    model: Annotated[Optional[str], typer.Option(help="Model profile (see `stackctl profiles`).")] = None,
    runtime: Annotated[Optional[RuntimeChoice], typer.Option(help="How services run.")] = None,
    hostname: Annotated[Optional[str], typer.Option(help="Public DNS name, for TLS.")] = None,
    demo: Annotated[bool, typer.Option(help="CPU demo stack: tiny local model, native runtime.")] = False,
    force: Annotated[bool, typer.Option(help="Rewrite stack.yaml (secrets in .env are always kept).")] = False,
) -> None:
    """Write stack.yaml and .env (generated secrets, mode 0600). Safe to run again."""
    from stackctl.init import DEMO_CHOICES, init_stack

    choices: dict = dict(DEMO_CHOICES) if demo else {}
    for key, value in {"hardware": hardware, "model": model, "hostname": hostname}.items():
        if value is not None:
            choices[key] = value
    if runtime is not None:
        choices["runtime"] = runtime.value
    choices.setdefault("hardware", "generic")
    choices.setdefault("model", "qwen3.6-27b")
    layout = _layout(ctx)
    result = init_stack(layout, choices, force=force)
    verb = "wrote" if result.stack_file_written else "kept existing"
    console.print(f"{verb} {layout.stack_file}")
    if result.secrets.created:
        console.print(f"generated {', '.join(result.secrets.created)} in {layout.env_file} (mode 0600)")
    if result.secrets.kept:
        console.print(f"kept existing {', '.join(result.secrets.kept)}")
    if result.secrets.tightened_mode:
        console.print(f"tightened {layout.env_file} to mode 0600")
    if result.gitignore_changed:
        console.print(f"added .env to {layout.root / '.gitignore'}")
    console.print("next: `stackctl render` (Compose project) or `stackctl up`")


@app.command()
def render(ctx: typer.Context) -> None:
    """Write docker-compose.yml and the service configs; `docker compose up -d` then works."""
    from stackctl.config import load_stack_config
    from stackctl.render import render_project

    layout = _layout(ctx)
    project = render_project(load_stack_config(layout.stack_file), layout)
    console.print(f"wrote {project.compose_file} ({len(project.services)} services: "
                  f"{', '.join(service.name for service in project.services)})")
    for path in project.config_files:
        console.print(f"wrote {path}")
    if not layout.env_file.exists():
        console.print("[yellow]no .env yet: run `stackctl init` before `docker compose up -d`[/yellow]")


@app.command()
def profiles() -> None:
    """List the hardware and model profiles."""
    from stackctl.profiles import HARDWARE_PROFILES, MODEL_PROFILES

    hardware = Table("hardware", "description", "gpu-memory-utilization", title="Hardware profiles")
    for profile in HARDWARE_PROFILES.values():
        utilization = f"{profile.gpu_memory_utilization:.2f}" if profile.gpu_memory_utilization else "-"
        hardware.add_row(profile.name, profile.description, utilization)
    models = Table("model", "description", "tool parser", "reasoning parser", title="Model profiles")
    for model in MODEL_PROFILES.values():
        models.add_row(model.name, model.description, model.tool_call_parser, model.reasoning_parser or "-")
    console.print(hardware)
    console.print(models)


@secrets_app.command("rotate")
def secrets_rotate(ctx: typer.Context, name: Annotated[str, typer.Argument(help="e.g. VLLM_API_KEY")]) -> None:
    """Replace one generated secret (the new value is written to .env, never printed)."""
    from stackctl.envfile import rotate_secret

    layout = _layout(ctx)
    rotate_secret(layout.env_file, name)
    console.print(f"rotated {name} in {layout.env_file}; restart the stack (`stackctl up`) to use it")


def _compose_runtime(ctx: typer.Context):
    from stackctl.runtime.compose import ComposeRuntime
    from stackctl.stack import Stack

    stack = Stack.load(_layout(ctx), "compose")
    return stack, ComposeRuntime(stack.layout)


def _native_unavailable() -> None:
    raise StackError("the native runtime is not available in this build; use --runtime compose")


@app.command()
def up(
    ctx: typer.Context,
    runtime: Annotated[Optional[RuntimeChoice], typer.Option(help="Override stack.yaml's runtime.")] = None,
) -> None:
    """Start every enabled service in dependency order, each behind its health gate."""
    from stackctl.config import load_stack_config
    from stackctl.render import render_project

    layout = _layout(ctx)
    config = load_stack_config(layout.stack_file)
    chosen = runtime.value if runtime else config.runtime
    if chosen == "native":
        _native_unavailable()
    from stackctl.runtime.compose import ComposeRuntime

    compose = ComposeRuntime(layout)
    compose.check_available()
    project = render_project(config, layout)

    def tick(service, elapsed, result) -> None:
        console.print(f"  {service.name}: {elapsed:5.0f}/{service.start_timeout:.0f} s  {result.detail}")

    compose.up(project.services, config.served_name, on_tick=tick)
    console.print("[green]all services healthy[/green]")


@app.command()
def down(ctx: typer.Context) -> None:
    """Stop the stack. Data (model cache, metrics, certificates) is kept."""
    _stack, compose = _compose_runtime(ctx)
    compose.down()
    console.print("stack stopped; data kept")


@app.command()
def status(ctx: typer.Context) -> None:
    """One row per service: state and health."""
    stack, compose = _compose_runtime(ctx)
    table = Table("service", "state", "health", "detail")
    for row in compose.status(stack.services(), stack.config.served_name):
        health = {True: "[green]healthy[/green]", False: "[red]unhealthy[/red]", None: "-"}[row.healthy]
        table.add_row(row.name, row.state, health, row.detail)
    console.print(table)


@app.command()
def logs(
    ctx: typer.Context,
    service: Annotated[str, typer.Argument(help="Service name, e.g. vllm")],
    follow: Annotated[bool, typer.Option("--follow", "-f")] = False,
) -> None:
    """Show a service's logs."""
    _stack, compose = _compose_runtime(ctx)
    for line in compose.logs(service, follow):
        sys.stdout.write(line)


def main() -> None:
    try:
        app()
    except StackError as error:
        err_console.print(f"[red]error:[/red] {error}", soft_wrap=True)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
