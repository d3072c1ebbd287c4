"""The stack's `.env`: secrets for Compose and the native runtime, kept at mode 0600."""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dotenv import dotenv_values

from stackctl.errors import ConfigError

ENV_MODE = 0o600

# Secrets stackctl generates. Values are hex/url-safe, so they need no quoting in .env.
GENERATED_SECRETS: dict[str, Callable[[], str]] = {
    # The backend key: only the filter-proxy (and health probes) ever send it to vLLM.
    "VLLM_API_KEY": lambda: "sk-" + secrets.token_hex(32),
    # Client keys for the filter-proxy, `name=key,name=key`.
    "STACKCTL_PROXY_KEYS": lambda: "default=sk-" + secrets.token_hex(32),
    "GRAFANA_ADMIN_PASSWORD": lambda: secrets.token_urlsafe(24),
}
# Secrets only the user can supply: init writes the key empty, with a pointer.
USER_SECRETS = {"HF_TOKEN": "Hugging Face token for gated models: https://huggingface.co/settings/tokens"}

_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")


@dataclass(frozen=True)
class EnsureResult:
    created: list[str]
    kept: list[str]
    tightened_mode: bool


def read_env(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    return {key: value or "" for key, value in dotenv_values(path).items()}


def ensure_secrets(path: Path) -> EnsureResult:
    """Add missing secrets; never overwrite one that exists (re-running init is safe)."""
    existing = read_env(path)
    created, kept = [], []
    updates: dict[str, str] = {}
    for name, generate in GENERATED_SECRETS.items():
        if existing.get(name):
            kept.append(name)
        else:
            updates[name] = generate()
            created.append(name)
    for name in USER_SECRETS:
        if name not in existing:
            updates[name] = ""
    tightened = path.exists() and stat.S_IMODE(path.stat().st_mode) != ENV_MODE
    write_env_values(path, updates)
    return EnsureResult(created, kept, tightened)


def rotate_secret(path: Path, name: str) -> None:
    if name in USER_SECRETS:
        raise ConfigError(f"{name} is yours to set ({USER_SECRETS[name]}); edit {path}")
    if name not in GENERATED_SECRETS:
        raise ConfigError(f"unknown secret '{name}'; rotatable: {', '.join(GENERATED_SECRETS)}")
    if not path.exists():
        raise ConfigError(f"{path} not found; run `stackctl init` first")
    write_env_values(path, {name: GENERATED_SECRETS[name]()})


def write_env_values(path: Path, updates: dict[str, str]) -> None:
    """Set keys in place (other lines and comments untouched); atomic, always mode 0600."""
    lines = path.read_text().splitlines() if path.exists() else []
    pending = dict(updates)
    for index, line in enumerate(lines):
        match = _ASSIGNMENT.match(line)
        if match and match.group(1) in pending:
            name = match.group(1)
            lines[index] = f"{name}={pending.pop(name)}"
    for name, value in pending.items():
        if name in USER_SECRETS:
            lines.append(f"# {USER_SECRETS[name]}")
        lines.append(f"{name}={value}")
    temporary = path.with_name(path.name + ".tmp")
    # Create with 0600 from the start: a secret must never sit in a world-readable file.
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, ENV_MODE)
    with os.fdopen(descriptor, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    os.chmod(temporary, ENV_MODE)
    os.replace(temporary, path)


def ensure_gitignored(directory: Path, entry: str = ".env") -> bool:
    """Add `.env` to the directory's .gitignore; True when the file changed."""
    gitignore = directory / ".gitignore"
    lines = gitignore.read_text().splitlines() if gitignore.exists() else []
    if any(line.strip() in {entry, "/" + entry} for line in lines):
        return False
    lines.append(entry)
    gitignore.write_text("\n".join(lines) + "\n")
    return True


def secret_values(path: Path) -> list[str]:
    """Every non-empty secret value in .env (for leak checks)."""
    values = []
    for name, value in read_env(path).items():
        if not value:
            continue
        values.append(value)
        if name == "STACKCTL_PROXY_KEYS":
            values += [item.split("=", 1)[-1] for item in value.split(",") if item]
    return values
