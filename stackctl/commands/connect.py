"""`stackctl connect CLIENT`: print (or write) a working client configuration for this stack."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stackctl.clients import RECIPES, client_config
from stackctl.commands._shared import cli_invocation, console, err_console, layout_of, load_stack

# Every client's recipe (stackctl/clients/), then the key alone.
CLIENT_NAMES = (*RECIPES, "key")


def register(app: typer.Typer) -> None:
    app.command()(connect)


def connect(
    ctx: typer.Context,
    client: Annotated[str, typer.Argument(help=f"{', '.join(RECIPES)}, or key "
                                               "(the client key alone, for scripts).")],
    key: Annotated[str | None, typer.Option("--key", help="Client key name from .env (default: the first).")] = None,
    host: Annotated[str | None, typer.Option(help="Address or name clients use (default: this machine's LAN "
                                                  "address; the stack's hostname when TLS is on).")] = None,
    show_key: Annotated[bool, typer.Option("--show-key", help="Print the key itself (hidden otherwise).")] = False,
    write: Annotated[bool, typer.Option("--write", help="Write it into the client's config file (merged; "
                                                        "owner-only, since it holds the key).")] = False,
    path: Annotated[Path | None, typer.Option(help="The file --write writes (default: the client's "
                                                   "user config).")] = None,
) -> None:
    """A working configuration for a coding agent or SDK: endpoint, key, model, context limits."""
    from stackctl.errors import ConfigError
    from stackctl.usecases.connect import connection_of, write_client_config

    if client not in CLIENT_NAMES:
        raise ConfigError(f"unknown client {client!r}; one of: {', '.join(CLIENT_NAMES)}")
    connection = connection_of(load_stack(ctx), key_name=key, host=host)
    if client == "key":
        if not show_key:
            raise ConfigError(f"the client key is a secret: add --show-key, e.g. "
                              f"KEY=$({cli_invocation(layout_of(ctx))} connect key --show-key)")
        console.print(connection.key.value, markup=False)
        return
    config = client_config(connection, client)
    err_console.print(f"# {client} -> {connection.base_url} (model {connection.model}, "
                      f"{connection.context_tokens}-token window, key {connection.key.name!r})", markup=False)
    if write:
        written = write_client_config(config, path)
        verb = "created" if written.created else "updated"
        private = (f"owner-only: it holds key {connection.key.name!r}" if config.file_holds_key
                   else "owner-only; the key stays out of it")
        console.print(f"{verb} {written.path} ({private}); then run: {config.then}", markup=False)
        return
    console.print(config.text(show_key=show_key), markup=False)
    err_console.print(f"# then: {config.then}   (--write puts it in {config.path})", markup=False)
