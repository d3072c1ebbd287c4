"""The proxy's settings: parsed once from flags and the environment, validated, then frozen.

API keys never come from argv (they would show in `ps` and shell history): only from
`STACKCTL_PROXY_KEYS` or a keys file. The backend key (`VLLM_API_KEY`) is env-only for the
same reason. Neither ever appears in a repr, a log line or an error message.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from stackctl.proxy.anthropic.system_turns import SYSTEM_PLACEMENTS, SystemPlacement
from stackctl.proxy.limit_settings import (
    LimitConfigError,
    LimitOptions,
    LimitSettings,
    build_limit_settings,
)

KEYS_ENV = "STACKCTL_PROXY_KEYS"
BACKEND_KEY_ENV = "VLLM_API_KEY"
MAX_BODY_ENV = "STACKCTL_PROXY_MAX_BODY_MB"
PING_ENV = "STACKCTL_PROXY_PING_SECONDS"
SEARCH_BACKEND_ENV = "STACKCTL_PROXY_SEARCH_BACKEND"
SEARXNG_URL_ENV = "STACKCTL_PROXY_SEARXNG_URL"
SEARCH_TIMEOUT_ENV = "STACKCTL_PROXY_SEARCH_TIMEOUT_SECONDS"
SYSTEM_PLACEMENT_ENV = "STACKCTL_PROXY_SYSTEM_PLACEMENT"
SESSIONS_ENV = "STACKCTL_PROXY_SESSIONS"
CAPTURE_DIR_ENV = "STACKCTL_PROXY_CAPTURE_DIR"
# Conversations whose prefix the proxy follows (sessions/tracker.py): ~1/8 of a prompt's bytes
# each (a Claude Code session of 50 KB: ~7 KB), so 1024 take under 10 MB.
DEFAULT_SESSIONS = 1024
SearchBackendName = Literal["ddgs", "searxng", "off"]
SEARCH_BACKENDS: tuple[SearchBackendName, ...] = ("ddgs", "searxng", "off")
# The same as nginx's client_max_body_size (nginx/stackctl-site.conf.j2): agents send whole
# repositories as context, and a body nginx lets through must not be refused behind it.
DEFAULT_MAX_BODY_MB = 64

# Key names become Prometheus label values and log words: keep them boring.
_KEY_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ProxyConfigError(Exception):
    """A flag, env var or keys file is invalid; the message says how to fix it."""


@dataclass(frozen=True)
class ModelAlias:
    """`pattern` is a glob matched against the model name a client sends."""

    pattern: str
    target: str


@dataclass(frozen=True)
class ProxySettings:
    backend_url: str
    host: str = "127.0.0.1"
    port: int = 4000
    aliases: tuple[ModelAlias, ...] = ()
    default_model: str | None = None
    # name -> key. repr=False keeps secrets out of logs and tracebacks.
    api_keys: dict[str, str] = field(default_factory=dict, repr=False)
    auth_enabled: bool = True
    backend_api_key: str | None = field(default=None, repr=False)
    ping_interval_s: float = 10.0
    # A backend silent this long (before its headers or mid-reply) is given up on; long prompts
    # can take minutes to prefill before the first byte.
    backend_read_timeout_s: float = 900.0
    max_body_bytes: int = DEFAULT_MAX_BODY_MB * 1024 * 1024
    # Web search for Anthropic clients (the web_search server tool): who answers the queries.
    search_backend: SearchBackendName = "ddgs"
    searxng_url: str | None = None
    search_timeout_s: float = 10.0
    # Per-key limits and back-pressure on the backend's queue (limit_settings.py).
    limits: LimitSettings = field(default_factory=LimitSettings)
    # Where Anthropic clients' inline system messages go (anthropic/system_turns.py).
    system_placement: SystemPlacement = "in-place"
    # Sessions whose prefix is tracked (an LRU; 0: no tracking), and where a capture writes.
    sessions: int = DEFAULT_SESSIONS
    capture_dir: Path | None = None


def parse_alias(text: str) -> ModelAlias:
    pattern, sep, target = text.partition("=")
    pattern, target = pattern.strip(), target.strip()
    if not sep or not pattern or not target:
        raise ProxyConfigError(
            f"bad --alias {text!r}: expected PATTERN=MODEL, e.g. --alias 'claude-*=qwen3-coder'"
        )
    return ModelAlias(pattern=pattern, target=target)


def parse_key_pairs(pairs: list[tuple[str, str]], source: str) -> dict[str, str]:
    """Validate (where, 'name=key') pairs; messages name the place, never the key."""
    keys: dict[str, str] = {}
    for where, text in pairs:
        name, sep, key = text.partition("=")
        name, key = name.strip(), key.strip()
        if not sep or not key:
            raise ProxyConfigError(f"{where}: expected name=key (a key name, '=', then the key)")
        if not _KEY_NAME.match(name):
            raise ProxyConfigError(
                f"{where}: key name {name!r} must be 1-64 letters, digits, '_', '.' or '-'"
            )
        if name in keys:
            raise ProxyConfigError(f"{where}: key name {name!r} appears twice in {source}")
        keys[name] = key
    return keys


def load_api_keys(env: dict[str, str], keys_file: Path | None) -> dict[str, str]:
    keys: dict[str, str] = {}
    env_value = env.get(KEYS_ENV, "").strip()
    if env_value:
        items = [item for item in env_value.split(",") if item.strip()]
        pairs = [(f"{KEYS_ENV} entry {i + 1}", item) for i, item in enumerate(items)]
        keys.update(parse_key_pairs(pairs, KEYS_ENV))
    if keys_file is not None:
        try:
            lines = keys_file.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise ProxyConfigError(
                f"cannot read keys file {keys_file}: {error.strerror or error}; "
                "check the path and its permissions"
            ) from None
        except UnicodeDecodeError:
            raise ProxyConfigError(f"keys file {keys_file} is not UTF-8 text") from None
        pairs = [
            (f"{keys_file}:{number}", line)
            for number, line in enumerate(lines, start=1)
            if line.strip() and not line.lstrip().startswith("#")
        ]
        for name, key in parse_key_pairs(pairs, str(keys_file)).items():
            if name in keys:
                raise ProxyConfigError(
                    f"key name {name!r} is set in both {KEYS_ENV} and {keys_file}; keep one"
                )
            keys[name] = key
    return keys


def _positive_float(env: dict[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ProxyConfigError(f"{name}={raw!r} must be a positive number")
    return value


def _count(env: dict[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ProxyConfigError(f"{name}={raw!r} must be a whole number") from None


def build_settings(
    *,
    backend_url: str,
    host: str = "127.0.0.1",
    port: int = 4000,
    aliases: list[str] | None = None,
    default_model: str | None = None,
    keys_file: Path | None = None,
    no_auth: bool = False,
    search_backend: str | None = None,
    searxng_url: str | None = None,
    limits: LimitOptions | None = None,
    system_placement: str | None = None,
    sessions: int | None = None,
    capture_dir: Path | None = None,
    env: dict[str, str] | None = None,
) -> ProxySettings:
    """Everything the user can get wrong is checked here, before the server binds a port."""
    env = dict(os.environ) if env is None else env
    if not re.match(r"^https?://[^/]+", backend_url):
        raise ProxyConfigError(
            f"--backend {backend_url!r} is not an http(s) URL; e.g. --backend http://127.0.0.1:8000"
        )
    if not 0 < port < 65536:
        raise ProxyConfigError(f"--port {port} is out of range 1-65535")
    parsed_aliases = tuple(parse_alias(text) for text in aliases or [])
    keys = load_api_keys(env, keys_file)
    if not keys and not no_auth:
        raise ProxyConfigError(
            f"no API keys: set {KEYS_ENV}='name=key,...' or pass --keys-file PATH "
            "(one name=key a line); or pass --no-auth to serve without keys on a trusted host"
        )
    requested = search_backend or env.get(SEARCH_BACKEND_ENV) or "ddgs"
    search = next((name for name in SEARCH_BACKENDS if name == requested), None)
    if search is None:
        raise ProxyConfigError(
            f"search backend {requested!r} (--search-backend or {SEARCH_BACKEND_ENV}) is not one of "
            f"{', '.join(SEARCH_BACKENDS)}"
        )
    searxng = (searxng_url or env.get(SEARXNG_URL_ENV) or "").strip() or None
    if search == "searxng":
        if searxng is None:
            raise ProxyConfigError(
                f"--search-backend searxng needs --searxng-url (or {SEARXNG_URL_ENV}), "
                "e.g. --searxng-url http://127.0.0.1:8888"
            )
        if not re.match(r"^https?://[^/]+", searxng):
            raise ProxyConfigError(f"--searxng-url {searxng!r} is not an http(s) URL")
    wanted_placement = system_placement or env.get(SYSTEM_PLACEMENT_ENV) or "in-place"
    placement = next((name for name in SYSTEM_PLACEMENTS if name == wanted_placement), None)
    if placement is None:
        raise ProxyConfigError(
            f"system placement {wanted_placement!r} (--system-placement or {SYSTEM_PLACEMENT_ENV}) "
            f"is not one of {', '.join(SYSTEM_PLACEMENTS)}"
        )
    tracked = sessions if sessions is not None else _count(env, SESSIONS_ENV, DEFAULT_SESSIONS)
    if tracked < 0:
        raise ProxyConfigError(f"--sessions {tracked} must be 0 (no tracking) or more")
    captures = capture_dir or (Path(env[CAPTURE_DIR_ENV]) if env.get(CAPTURE_DIR_ENV) else None)
    try:
        limit_settings = build_limit_settings(
            limits or LimitOptions(), env=env, key_names=None if no_auth else keys
        )
    except LimitConfigError as error:
        raise ProxyConfigError(str(error)) from None
    return ProxySettings(
        backend_url=backend_url.rstrip("/"),
        host=host,
        port=port,
        aliases=parsed_aliases,
        default_model=default_model or None,
        api_keys=keys,
        auth_enabled=not no_auth,
        backend_api_key=env.get(BACKEND_KEY_ENV) or None,
        ping_interval_s=_positive_float(env, PING_ENV, 10.0),
        max_body_bytes=int(_positive_float(env, MAX_BODY_ENV, DEFAULT_MAX_BODY_MB) * 1024 * 1024),
        search_backend=search,
        searxng_url=searxng,
        search_timeout_s=_positive_float(env, SEARCH_TIMEOUT_ENV, 10.0),
        limits=limit_settings,
        system_placement=placement,
        sessions=tracked,
        capture_dir=captures,
    )
