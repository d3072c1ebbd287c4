"""stackctl: one GPU box -> a private, secure, observable LLM endpoint for coding agents."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from stackctl.commands import (
    bundle,
    cache_report,
    connect,
    doctor,
    down,
    engine,
    gpu_exporter,
    init,
    install_engine,
    launch,
    logs,
    profiles,
    pull,
    render,
    secrets,
    status,
    systemd,
    tls,
    up,
)
from stackctl.commands._shared import err_console
from stackctl.errors import StackError
from stackctl.layout import find_layout

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__, pretty_exceptions_enable=False)

# In the order `stackctl --help` lists them.
COMMANDS = (init, render, up, down, status, logs, connect, launch, cache_report, doctor, profiles, pull,
            install_engine, bundle, engine, secrets, tls, systemd, gpu_exporter)


@app.callback()
def _options(
    ctx: typer.Context,
    directory: Annotated[
        Path | None,
        typer.Option("--dir", "-C", envvar="STACKCTL_DIR", help="Stack directory (holds stack.yaml and .env)."),
    ] = None,
) -> None:
    ctx.obj = find_layout(directory)


def _mount_proxy() -> None:
    # The filter-proxy is its own subpackage (and image); the CLI only mounts its commands.
    try:
        from stackctl.proxy.cli import proxy_app
    except ImportError:
        return
    # One name for the component everywhere (fragment, image, service): `filter-proxy`; `proxy`
    # stays as a hidden alias for scripts written against it.
    app.add_typer(proxy_app, name="filter-proxy", help="The filter-proxy: the gateway clients talk to.")
    app.add_typer(proxy_app, name="proxy", hidden=True)


for _command in COMMANDS:
    _command.register(app)
_mount_proxy()


def main() -> None:
    try:
        app()
    except StackError as error:
        err_console.print(f"[red]error:[/red] {error}", soft_wrap=True)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
