"""`stackctl connect CLIENT`: a working configuration for a coding agent or SDK, pointed at this
stack's filter-proxy: the endpoint clients reach (LAN or HTTPS), a client key from .env, the
served model's name and its window.

Each client's recipe follows its own documentation:
- Claude Code (https://code.claude.com/docs/en/env-vars, .../llm-gateway): ANTHROPIC_BASE_URL,
  ANTHROPIC_AUTH_TOKEN (a bearer token), ANTHROPIC_MODEL and ANTHROPIC_DEFAULT_{HAIKU,SONNET,OPUS}
  _MODEL (the small/fast model and the /model picks), CLAUDE_CODE_AUTO_COMPACT_WINDOW (the
  window it compacts against: unknown model names count as 1M tokens otherwise); as environment
  variables, or the `env` block of ~/.claude/settings.json.
- opencode (https://opencode.ai/docs/providers, "Custom provider"): an `@ai-sdk/openai-compatible`
  provider in opencode.json with `options.baseURL`, `options.apiKey` and per model
  `limit.context` / `limit.output`, which opencode compacts against.
- OpenClaw (https://docs.openclaw.ai/providers/vllm, "Explicit configuration"): a
  `models.providers` entry with `api: "openai-completions"`, `baseUrl`, `apiKey` and per model
  `contextWindow` / `maxTokens`, then `agents.defaults.model.primary`.
- The OpenAI and Anthropic SDKs: OPENAI_BASE_URL / OPENAI_API_KEY, ANTHROPIC_BASE_URL /
  ANTHROPIC_API_KEY.

The key is read from .env (STACKCTL_PROXY_KEYS) and stays out of everything printed unless asked
for; a written file that holds it is made readable by its owner only.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stackctl.envfile import read_env
from stackctl.errors import ConfigError, StackError
from stackctl.stack import Stack
from stackctl.usecases.endpoint import Endpoint, endpoint_of

PROVIDER_ID = "stackctl"  # the provider's name in opencode and OpenClaw configs
_KEYS = "STACKCTL_PROXY_KEYS"
# What clients may spend on one reply: a quarter of the window, at most 32k (Claude Code's own
# default); opencode and OpenClaw keep this much of the window free when they compact.
_MAX_OUTPUT = 32768


@dataclass(frozen=True)
class ClientKey:
    name: str
    value: str = field(repr=False)


@dataclass(frozen=True)
class Connection:
    """What every client configuration is made of."""

    base_url: str  # without /v1
    model: str  # the served model's name: it resolves on every proxy, aliases or not
    context_tokens: int
    key: ClientKey

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def output_tokens(self) -> int:
        return min(_MAX_OUTPUT, self.context_tokens // 4)


class ConnectError(StackError):
    """A client configuration could not be made or written."""


def connection_of(stack: Stack, *, key_name: str | None = None, host: str | None = None) -> Connection:
    """The stack as clients reach it: HTTPS when TLS is on, else this machine's LAN address
    (or `host`), nginx's port; a client key from .env (`key_name`, else the first)."""
    endpoint = endpoint_of(stack)
    config = stack.config
    if not (config.hostname and config.services.tls):
        endpoint = replace(endpoint, base_url=f"http://{host or lan_address()}:{config.ports.http}")
    elif host:
        endpoint = replace(endpoint, base_url=f"https://{host}")
    return Connection(endpoint.base_url, endpoint.model, endpoint.context_tokens,
                      client_key(endpoint.key_file, key_name))


def client_key(env_file: Path, name: str | None = None) -> ClientKey:
    pairs = [item.split("=", 1) for item in read_env(env_file).get(_KEYS, "").split(",") if "=" in item]
    keys = {key_name.strip(): value.strip() for key_name, value in pairs}
    if not keys:
        raise ConnectError(f"no client key in {env_file} ({_KEYS}); run `stackctl init` to generate one")
    if name is None:
        first = next(iter(keys))
        return ClientKey(first, keys[first])
    if name not in keys:
        raise ConfigError(f"no client key named {name!r} in {env_file}; the keys there: {', '.join(keys)}")
    return ClientKey(name, keys[name])


def lan_address() -> str:
    """This machine's address on its default route, as LAN clients reach it (no packet is
    sent: a UDP socket only picks the route); 127.0.0.1 on a machine without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: routed like any outside address
            address = str(probe.getsockname()[0])
        except OSError:
            return "127.0.0.1"
    return address if not address.startswith("0.") else "127.0.0.1"


# ---- the clients ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientConfig:
    """One client's configuration: environment variables, or a JSON document merged into its
    config file (`replace`: the key paths written whole, everything else merged)."""

    client: str
    path: Path  # where --write puts it
    then: str  # what to run once it is in place
    env: Mapping[str, str] = field(default_factory=dict)
    document: Mapping[str, Any] = field(default_factory=dict)
    replace: tuple[tuple[str, ...], ...] = ()
    key: ClientKey | None = None

    def text(self, *, show_key: bool) -> str:
        """What `connect` prints: export lines or JSON; the key masked unless `show_key`."""
        masked = self if show_key or self.key is None else self._with_key_masked()
        if masked.env:
            return "\n".join(f"export {name}={shlex.quote(value)}" for name, value in masked.env.items())
        return json.dumps(masked.document, indent=2)

    def _with_key_masked(self) -> ClientConfig:
        assert self.key is not None
        secret, hidden = self.key.value, f"<key {self.key.name!r}: --show-key prints it>"
        env = {name: value.replace(secret, hidden) for name, value in self.env.items()}
        document = json.loads(json.dumps(self.document).replace(secret, hidden))
        return ClientConfig(self.client, self.path, self.then, env, document, self.replace, self.key)


def claude_code_env(endpoint: Endpoint | Connection, key: str) -> dict[str, str]:
    """Claude Code's environment (also the `env` block of its settings.json)."""
    model = endpoint.model
    return {
        "ANTHROPIC_BASE_URL": endpoint.base_url,
        "ANTHROPIC_AUTH_TOKEN": key,
        "ANTHROPIC_MODEL": model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,  # the small/fast model: titles, summaries
        "ANTHROPIC_DEFAULT_SONNET_MODEL": model,
        "ANTHROPIC_DEFAULT_OPUS_MODEL": model,
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(endpoint.context_tokens),
        # A private endpoint: no telemetry, error reports or update checks to Anthropic.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def _claude_code(connection: Connection, home: Path) -> ClientConfig:
    env = claude_code_env(connection, connection.key.value)
    return ClientConfig("claude-code", home / ".claude" / "settings.json", "claude", env=env,
                        document={"env": env}, key=connection.key)


def _opencode(connection: Connection, home: Path) -> ClientConfig:
    ref = f"{PROVIDER_ID}/{connection.model}"
    document = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            PROVIDER_ID: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "stackctl",
                "options": {"baseURL": connection.openai_base_url, "apiKey": connection.key.value},
                "models": {
                    connection.model: {
                        "name": connection.model,
                        "tool_call": True,
                        "limit": {"context": connection.context_tokens, "output": connection.output_tokens},
                    }
                },
            }
        },
        "model": ref,
        "small_model": ref,
    }
    return ClientConfig("opencode", home / ".config" / "opencode" / "opencode.json", "opencode",
                        document=document, replace=(("provider", PROVIDER_ID),), key=connection.key)


def _openclaw(connection: Connection, home: Path) -> ClientConfig:
    document = {
        "models": {
            "providers": {
                PROVIDER_ID: {
                    "baseUrl": connection.openai_base_url,
                    "apiKey": connection.key.value,
                    "api": "openai-completions",
                    # A LAN or loopback endpoint is private by design.
                    "request": {"allowPrivateNetwork": True},
                    "models": [
                        {
                            "id": connection.model,
                            "name": connection.model,
                            "reasoning": False,
                            "input": ["text"],
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            "contextWindow": connection.context_tokens,
                            "maxTokens": connection.output_tokens,
                        }
                    ],
                }
            }
        },
        "agents": {"defaults": {"model": {"primary": f"{PROVIDER_ID}/{connection.model}"}}},
    }
    return ClientConfig("openclaw", home / ".openclaw" / "openclaw.json", "openclaw", document=document,
                        replace=(("models", "providers", PROVIDER_ID),), key=connection.key)


def _openai(connection: Connection, home: Path) -> ClientConfig:
    env = {"OPENAI_BASE_URL": connection.openai_base_url, "OPENAI_API_KEY": connection.key.value}
    return ClientConfig("openai", home / ".config" / "stackctl" / "openai.env",
                        f"an OpenAI SDK client with model={connection.model!r}", env=env, key=connection.key)


def _anthropic(connection: Connection, home: Path) -> ClientConfig:
    env = {"ANTHROPIC_BASE_URL": connection.base_url, "ANTHROPIC_API_KEY": connection.key.value}
    return ClientConfig("anthropic", home / ".config" / "stackctl" / "anthropic.env",
                        f"an Anthropic SDK client with model={connection.model!r}", env=env, key=connection.key)


CLIENTS: dict[str, Callable[[Connection, Path], ClientConfig]] = {
    "claude-code": _claude_code,
    "opencode": _opencode,
    "openclaw": _openclaw,
    "openai": _openai,
    "anthropic": _anthropic,
}


def client_config(connection: Connection, client: str, *, home: Path | None = None) -> ClientConfig:
    recipe = CLIENTS.get(client)
    if recipe is None:
        raise ConfigError(f"unknown client {client!r}; one of: {', '.join(CLIENTS)}")
    return recipe(connection, home or Path.home())


def try_lines(endpoint: Endpoint) -> dict[str, str]:
    """One shell line per client that works as printed, once `KEY` holds a client key: what
    `up` prints for this machine."""
    request = json.dumps({"model": endpoint.model, "messages": [{"role": "user", "content": "hi"}]})
    env = claude_code_env(endpoint, "$KEY")
    claude = " ".join(f"{name}={value if value == '$KEY' else shlex.quote(value)}" for name, value in env.items())
    return {
        "curl": f'curl -s {endpoint.openai_base_url}/chat/completions -H "Authorization: Bearer $KEY" '
                f"-H 'content-type: application/json' -d {shlex.quote(request)}",
        "Claude Code": f"{claude} claude",
    }


# ---- writing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    path: Path
    created: bool


def write_client_config(config: ClientConfig, path: Path | None = None) -> Written:
    """Merge the configuration into its file (created if missing), owner-only: it holds a key."""
    target = Path(path or config.path).expanduser()
    created = not target.exists()
    if config.env and not config.document:
        body = "".join(f"{name}={shlex.quote(value)}\n" for name, value in config.env.items())
    else:
        existing = {} if created else _read_json(target)
        body = json.dumps(_merged(existing, config.document, config.replace), indent=2) + "\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(body)
    return Written(target, created)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ConnectError(f"{path} is not plain JSON ({error}); add the printed entry by hand, "
                           "or pass --path for a file of its own") from None
    if not isinstance(document, dict):
        raise ConnectError(f"{path} does not hold a JSON object; pass --path for a file of its own")
    return document


def _merged(existing: Mapping[str, Any], new: Mapping[str, Any], replace: tuple[tuple[str, ...], ...],
            at: tuple[str, ...] = ()) -> dict[str, Any]:
    merged = dict(existing)
    for key, value in new.items():
        path = (*at, key)
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping) and path not in replace:
            merged[key] = _merged(merged[key], value, replace, path)
        else:
            merged[key] = value
    return merged
