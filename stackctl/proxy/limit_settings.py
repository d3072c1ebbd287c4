"""Per-key limits and back-pressure settings: parsed from flags and STACKCTL_PROXY_* variables.

Every number is a ceiling and 0 means "no limit", so a proxy started without any of them
behaves as before. Flags win over the environment; `--key-limit` entries, when given, replace
STACKCTL_PROXY_KEY_LIMITS as a whole.

The knobs are listed once, in `LimitOptions`: each field names its flag, its variable and its
help; the CLI makes its flags from them (cli.py) and this module reads them back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

_KEY_LIMIT = re.compile(r"^\s*([A-Za-z0-9_.-]{1,64})\s*:(.*)$")


@dataclass(frozen=True)
class Knob:
    """How the user sets one limit: a flag, or the environment variable the flag replaces."""

    flag: str
    env: str
    help: str


def _knob(flag: str, env: str, help_text: str) -> Any:
    """A LimitOptions field: None until the flag is given. `{env}` in the help names the variable."""
    return field(default=None, metadata={"knob": Knob(flag, env, help_text.format(env=env))})


@dataclass(frozen=True)
class LimitOptions:
    """The limit flags as given (None: not given; the variable, then the default, decides)."""

    max_concurrent: int | None = _knob(
        "--max-concurrent",
        "STACKCTL_PROXY_MAX_CONCURRENT",
        "Per API key: requests served at once; 0 = no limit (or {env}).",
    )
    requests_per_minute: int | None = _knob(
        "--requests-per-minute",
        "STACKCTL_PROXY_REQUESTS_PER_MINUTE",
        "Per API key: requests admitted in any 60 s; 0 = no limit (or {env}).",
    )
    tokens_per_minute: int | None = _knob(
        "--tokens-per-minute",
        "STACKCTL_PROXY_TOKENS_PER_MINUTE",
        "Per API key: tokens charged in any 60 s; 0 = no limit (or {env}).",
    )
    key_limits: tuple[str, ...] | None = _knob(
        "--key-limit",
        "STACKCTL_PROXY_KEY_LIMITS",
        "KEY_NAME:LIMIT=N,... overrides for one key, e.g. "
        "ci:max_concurrent=2,requests_per_minute=30 (or {env}, entries separated by ';').",
    )
    max_backend_waiting: int | None = _knob(
        "--max-backend-waiting",
        "STACKCTL_PROXY_MAX_BACKEND_WAITING",
        "Refuse new requests (529/503) while vLLM has more than this many waiting; "
        "0 = off (or {env}).",
    )
    backend_poll_s: float | None = _knob(
        "--backend-poll-seconds",
        "STACKCTL_PROXY_BACKEND_POLL_SECONDS",
        "How often to read the backend's queue length (default 1; or {env}).",
    )


# Field name -> its knob, in the order the flags are listed.
KNOBS: dict[str, Knob] = {item.name: item.metadata["knob"] for item in fields(LimitOptions)}


class LimitConfigError(ValueError):
    """A limit flag or variable is invalid; the message says how to write it."""


@dataclass(frozen=True)
class KeyLimits:
    """What one API key may use; 0 means no limit."""

    max_concurrent: int = 0  # requests being served at once
    requests_per_minute: int = 0  # requests admitted in any 60 s
    tokens_per_minute: int = 0  # tokens charged in any 60 s (rate_limits.py has the rule)

    @property
    def unlimited(self) -> bool:
        return not (self.max_concurrent or self.requests_per_minute or self.tokens_per_minute)


LIMIT_NAMES = tuple(item.name for item in fields(KeyLimits))


@dataclass(frozen=True)
class LimitSettings:
    per_key: KeyLimits = KeyLimits()  # every key's limits, unless overridden by name
    overrides: Mapping[str, KeyLimits] = field(default_factory=dict)  # key name -> limits
    # Back-pressure: past this many requests waiting in vLLM, new ones get 529/503 (0: off).
    max_backend_waiting: int = 0
    backend_poll_s: float = 1.0

    def for_key(self, name: str) -> KeyLimits:
        return self.overrides.get(name, self.per_key)


def build_limit_settings(
    options: LimitOptions, *, env: Mapping[str, str], key_names: Iterable[str] | None
) -> LimitSettings:
    """`key_names`: the configured keys (None with --no-auth); an override must name one."""
    per_key = KeyLimits(**{name: _count(options, name, env) for name in LIMIT_NAMES})
    key_limits = KNOBS["key_limits"]
    if options.key_limits:
        entries = [(f"{key_limits.flag} {text!r}", text) for text in options.key_limits]
    else:
        raw = env.get(key_limits.env, "")
        entries = [(f"{key_limits.env} entry {text.strip()!r}", text) for text in raw.split(";")]
    overrides = {}
    for where, text in entries:
        if not text.strip():
            continue
        name, limits = _parse_key_limit(where, text, per_key)
        if name in overrides:
            raise LimitConfigError(f"{where}: key {name!r} has limits twice; keep one entry")
        overrides[name] = limits
    known = set(key_names) if key_names is not None else None
    for name in overrides:
        if known is not None and name not in known:
            raise LimitConfigError(
                f"limits are set for key {name!r}, but no API key has that name "
                f"(keys: {', '.join(sorted(known)) or 'none'}); fix the name or drop the entry"
            )
    poll = options.backend_poll_s
    if poll is None:
        poll = _seconds(env, KNOBS["backend_poll_s"].env, 1.0)
    if not 0 < poll <= 60:
        raise LimitConfigError(f"{KNOBS['backend_poll_s'].flag} {poll} must be between 0 and 60")
    return LimitSettings(
        per_key=per_key,
        overrides=overrides,
        max_backend_waiting=_count(options, "max_backend_waiting", env),
        backend_poll_s=poll,
    )


def _parse_key_limit(where: str, text: str, defaults: KeyLimits) -> tuple[str, KeyLimits]:
    """`NAME:max_concurrent=2,requests_per_minute=30`; unnamed limits keep the defaults."""
    example = "e.g. ci:max_concurrent=2,requests_per_minute=30"
    match = _KEY_LIMIT.match(text)
    if match is None:
        raise LimitConfigError(f"{where}: expected KEY_NAME:LIMIT=N,...; {example}")
    name, body = match.groups()
    changes: dict[str, int] = {}
    for item in body.split(","):
        limit, sep, value = (part.strip() for part in item.partition("="))
        if not sep or limit not in LIMIT_NAMES:
            raise LimitConfigError(
                f"{where}: {item.strip()!r} is not LIMIT=N with LIMIT one of "
                f"{', '.join(LIMIT_NAMES)}; {example}"
            )
        changes[limit] = _parse_count(value, f"{where}: {limit}")
    return name, replace(defaults, **changes)


def _count(options: LimitOptions, name: str, env: Mapping[str, str]) -> int:
    """The flag's count if given, else the variable's, else 0 (no limit)."""
    knob = KNOBS[name]
    flag = getattr(options, name)
    if flag is not None:
        if flag < 0:
            raise LimitConfigError(f"{knob.flag} {flag} must be 0 (no limit) or more")
        return int(flag)
    raw = env.get(knob.env, "").strip()
    return _parse_count(raw, knob.env) if raw else 0


def _parse_count(raw: str, where: str) -> int:
    if not raw.isdigit():
        raise LimitConfigError(f"{where}={raw!r} must be a whole number, 0 for no limit")
    return int(raw)


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise LimitConfigError(f"{name}={raw!r} must be a number of seconds") from None
