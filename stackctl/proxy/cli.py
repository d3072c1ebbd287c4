"""`stackctl filter-proxy serve` (alias `stackctl proxy serve`): parse flags, build settings, run
uvicorn. Nothing else."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated

import typer

from stackctl.proxy.settings import ProxyConfigError, build_settings

proxy_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="The filter-proxy: the Anthropic/OpenAI gateway in front of the model backend.",
)


@proxy_app.callback()
def _group() -> None:
    """Keeps `serve` a sub-command even while it is the only one."""


@proxy_app.command()
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
    max_concurrent: Annotated[
        int | None,
        typer.Option(
            help="Per API key: requests served at once; 0 = no limit "
            "(or STACKCTL_PROXY_MAX_CONCURRENT)."
        ),
    ] = None,
    requests_per_minute: Annotated[
        int | None,
        typer.Option(
            help="Per API key: requests admitted in any 60 s; 0 = no limit "
            "(or STACKCTL_PROXY_REQUESTS_PER_MINUTE)."
        ),
    ] = None,
    tokens_per_minute: Annotated[
        int | None,
        typer.Option(
            help="Per API key: tokens charged in any 60 s; 0 = no limit "
            "(or STACKCTL_PROXY_TOKENS_PER_MINUTE)."
        ),
    ] = None,
    key_limit: Annotated[
        list[str] | None,
        typer.Option(
            help="KEY_NAME:LIMIT=N,... overrides for one key, e.g. "
            "ci:max_concurrent=2,requests_per_minute=30 (or STACKCTL_PROXY_KEY_LIMITS, "
            "entries separated by ';')."
        ),
    ] = None,
    max_backend_waiting: Annotated[
        int | None,
        typer.Option(
            help="Refuse new requests (529/503) while vLLM has more than this many waiting; "
            "0 = off (or STACKCTL_PROXY_MAX_BACKEND_WAITING)."
        ),
    ] = None,
    backend_poll_seconds: Annotated[
        float | None,
        typer.Option(
            help="How often to read the backend's queue length (default 1; or "
            "STACKCTL_PROXY_BACKEND_POLL_SECONDS)."
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
            max_concurrent=max_concurrent,
            requests_per_minute=requests_per_minute,
            tokens_per_minute=tokens_per_minute,
            key_limits=key_limit or None,
            max_backend_waiting=max_backend_waiting,
            backend_poll_s=backend_poll_seconds,
        )
    except ProxyConfigError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None

    import uvicorn  # imported late: `--help` and flag errors stay instant

    from stackctl.proxy.app import create_app

    level = os.environ.get("STACKCTL_PROXY_LOG_LEVEL", "info").upper()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # The HTTP client logs a line per backend request at INFO: noise, and time per request.
    for noisy in ("httpx", "httpx2", "httpcore", "httpcore2"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
    try:
        uvicorn.run(
            create_app(settings),
            host=settings.host,
            port=settings.port,
            loop="uvloop",
            http="httptools",
            # Access lines cost time on every request; /metrics counts requests instead.
            access_log=False,
            log_level=level.lower(),
            timeout_graceful_shutdown=5,
        )
    except OSError as error:
        typer.echo(f"error: cannot listen on {host}:{port}: {error.strerror or error}", err=True)
        raise typer.Exit(1) from None
