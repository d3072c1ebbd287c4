"""`stackctl filter-proxy serve` (alias `stackctl proxy serve`): parse flags, build settings, run
uvicorn. Nothing else."""

from __future__ import annotations

import functools
import inspect
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import typer

from stackctl.proxy.limit_settings import KNOBS, LimitOptions
from stackctl.proxy.settings import ProxyConfigError, build_settings

proxy_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="The filter-proxy: the Anthropic/OpenAI gateway in front of the model backend.",
)


@proxy_app.callback()
def _group() -> None:
    """Keeps `serve` a sub-command even while it is the only one."""


def _with_limit_flags(command: Callable[..., None]) -> Callable[..., None]:
    """`command` takes `limits: LimitOptions`; the CLI shows one flag per LimitOptions field in
    its place (flag, variable and help from the field), gathered back into a LimitOptions."""
    signature = inspect.signature(command, eval_str=True)
    flags = [
        inspect.Parameter(
            name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=None,
            annotation=Annotated[_flag_type(name), typer.Option(knob.flag, help=knob.help)],
        )
        for name, knob in KNOBS.items()
    ]
    parameters = []
    for parameter in signature.parameters.values():
        parameters.extend(flags if parameter.name == "limits" else [parameter])

    @functools.wraps(command)
    def with_flags(**given: Any) -> None:
        # typer hands a repeated flag over as a list; LimitOptions, frozen, keeps a tuple.
        knobs = {name: given.pop(name) for name in KNOBS}
        knobs = {name: tuple(value) if isinstance(value, list) else value for name, value in knobs.items()}
        command(**given, limits=LimitOptions(**knobs))

    with_flags.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    with_flags.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    return with_flags


def _flag_type(name: str) -> Any:
    """The type typer parses a knob's flag as: a repeatable flag (a tuple field) is a list."""
    hint = get_type_hints(LimitOptions)[name]
    return list[str] | None if tuple in [get_origin(arg) for arg in get_args(hint)] else hint


@proxy_app.command()
@_with_limit_flags
def serve(
    backend: Annotated[
        str, typer.Option(help="OpenAI-compatible backend, e.g. http://127.0.0.1:8000")
    ],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 4000,
    alias: Annotated[
        list[str] | None,
        typer.Option(help="PATTERN=MODEL: serve MODEL for client model names matching the glob."),
    ] = None,
    default_model: Annotated[
        str | None, typer.Option(help="Served model for names no alias matches.")
    ] = None,
    keys_file: Annotated[
        Path | None,
        typer.Option(help="API keys, one name=key a line (or set STACKCTL_PROXY_KEYS)."),
    ] = None,
    no_auth: Annotated[
        bool, typer.Option("--no-auth", help="Accept requests without an API key.")
    ] = False,
    search_backend: Annotated[
        str | None,
        typer.Option(
            help="Who runs Anthropic web searches: ddgs (default), searxng or off "
            "(or set STACKCTL_PROXY_SEARCH_BACKEND)."
        ),
    ] = None,
    searxng_url: Annotated[
        str | None,
        typer.Option(help="SearXNG base URL for --search-backend searxng."),
    ] = None,
    limits: LimitOptions | None = None,  # one flag per knob: see _with_limit_flags
    workers: Annotated[
        str | None,
        typer.Option(
            help="Worker processes: N, or auto (a quarter of the cores, 1 to 4); they share the "
            "port, the limits and the metrics (default 1; or STACKCTL_PROXY_WORKERS)."
        ),
    ] = None,
    system_placement: Annotated[
        str | None,
        typer.Option(
            help="Anthropic clients' inline system messages: in-place (default: a "
            "<system-reminder> where each stood, so the prompt's cached prefix survives) or "
            "front (merged into the first message) (or STACKCTL_PROXY_SYSTEM_PLACEMENT)."
        ),
    ] = None,
    sessions: Annotated[
        int | None,
        typer.Option(
            help="Conversations whose prompt prefix is followed for `stackctl cache-report` (an LRU; "
            "0: none) (or STACKCTL_PROXY_SESSIONS; default 1024)."
        ),
    ] = None,
    capture_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where an opt-in capture (POST /admin/capture) writes prompts, owner-only "
            "(or STACKCTL_PROXY_CAPTURE_DIR; default: a private temporary directory)."
        ),
    ] = None,
) -> None:
    """Serve /v1/messages, /v1/chat/completions and friends in front of --backend."""
    try:
        settings = build_settings(
            backend_url=backend,
            host=host,
            port=port,
            aliases=alias or [],
            default_model=default_model,
            keys_file=keys_file,
            no_auth=no_auth,
            search_backend=search_backend,
            searxng_url=searxng_url,
            limits=limits,
            system_placement=system_placement,
            sessions=sessions,
            capture_dir=capture_dir,
        )
    except ProxyConfigError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None

    count = _worker_count(workers or os.environ.get("STACKCTL_PROXY_WORKERS") or "1")
    import uvicorn  # imported late: `--help` and flag errors stay instant

    from stackctl.proxy.app import create_app
    from stackctl.proxy.server import serve
    from stackctl.proxy.workers import KEEP_ALIVE_S, serve_workers

    level = os.environ.get("STACKCTL_PROXY_LOG_LEVEL", "info").upper()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # The HTTP client logs a line per backend request at INFO: noise, and time per request.
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
    try:
        if count > 1:
            serve_workers(settings, count, level)
            return
        config = uvicorn.Config(
            create_app(settings),
            host=settings.host,
            port=settings.port,
            loop="uvloop",
            http="httptools",
            # Access lines cost time on every request; /metrics counts requests instead.
            access_log=False,
            log_level=level.lower(),
            timeout_graceful_shutdown=5,
            timeout_keep_alive=KEEP_ALIVE_S,
        )
        if not serve(config):
            raise typer.Exit(3)  # uvicorn's own code for a failed startup, logged above
    except OSError as error:
        typer.echo(f"error: cannot listen on {host}:{port}: {error.strerror or error}", err=True)
        raise typer.Exit(1) from None


def _worker_count(value: str) -> int:
    from stackctl.proxy.workers import auto_workers

    if value == "auto":
        return auto_workers()
    if not value.isdigit() or not 1 <= int(value) <= 64:
        typer.echo(f"error: --workers must be 1 to 64 or auto (got {value!r})", err=True)
        raise typer.Exit(2)
    return int(value)
