"""Per-key limits and back-pressure settings: parsed from flags and STACKCTL_PROXY_* variables.

Every number is a ceiling and 0 means "no limit", so a proxy started without any of them
behaves as before. Flags win over the environment; `--key-limit` entries, when given, replace
STACKCTL_PROXY_KEY_LIMITS as a whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace

MAX_CONCURRENT_ENV = "STACKCTL_PROXY_MAX_CONCURRENT"
REQUESTS_PER_MINUTE_ENV = "STACKCTL_PROXY_REQUESTS_PER_MINUTE"
TOKENS_PER_MINUTE_ENV = "STACKCTL_PROXY_TOKENS_PER_MINUTE"
KEY_LIMITS_ENV = "STACKCTL_PROXY_KEY_LIMITS"
MAX_BACKEND_WAITING_ENV = "STACKCTL_PROXY_MAX_BACKEND_WAITING"
BACKEND_POLL_ENV = "STACKCTL_PROXY_BACKEND_POLL_SECONDS"

_KEY_LIMIT = re.compile(r"^\s*([A-Za-z0-9_.-]{1,64})\s*:(.*)$")


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
    *,
    env: Mapping[str, str],
    key_names: Iterable[str] | None,
    max_concurrent: int | None = None,
    requests_per_minute: int | None = None,
    tokens_per_minute: int | None = None,
    key_limits: list[str] | None = None,
    max_backend_waiting: int | None = None,
    backend_poll_s: float | None = None,
) -> LimitSettings:
    """`key_names`: the configured keys (None with --no-auth); an override must name one."""
    per_key = KeyLimits(
        max_concurrent=_count(max_concurrent, env, MAX_CONCURRENT_ENV, "--max-concurrent"),
        requests_per_minute=_count(
            requests_per_minute, env, REQUESTS_PER_MINUTE_ENV, "--requests-per-minute"
        ),
        tokens_per_minute=_count(
            tokens_per_minute, env, TOKENS_PER_MINUTE_ENV, "--tokens-per-minute"
        ),
    )
    if key_limits:
        entries = [(f"--key-limit {text!r}", text) for text in key_limits]
    else:
        raw = env.get(KEY_LIMITS_ENV, "")
        entries = [(f"{KEY_LIMITS_ENV} entry {text.strip()!r}", text) for text in raw.split(";")]
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
    poll = backend_poll_s if backend_poll_s is not None else _seconds(env, BACKEND_POLL_ENV, 1.0)
    if not 0 < poll <= 60:
        raise LimitConfigError(f"--backend-poll-seconds {poll} must be between 0 and 60")
    return LimitSettings(
        per_key=per_key,
        overrides=overrides,
        max_backend_waiting=_count(
            max_backend_waiting, env, MAX_BACKEND_WAITING_ENV, "--max-backend-waiting"
        ),
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


def _count(flag: int | None, env: Mapping[str, str], name: str, flag_name: str) -> int:
    if flag is not None:
        if flag < 0:
            raise LimitConfigError(f"{flag_name} {flag} must be 0 (no limit) or more")
        return flag
    raw = env.get(name, "").strip()
    return _parse_count(raw, name) if raw else 0


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
