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
- Codex CLI (https://developers.openai.com/codex/config-reference): a `model_providers`
  entry in ~/.codex/config.toml with `wire_api = "responses"` (the only one Codex takes),
  `base_url` and `env_key` (the variable that holds the key: it stays out of the file), then
  `model`, `model_provider` and `model_context_window` / `model_auto_compact_token_limit`
  (Codex knows no window for a model it has no metadata for).
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

import tomlkit
from tomlkit.exceptions import TOMLKitError

from stackctl.envfile import read_env
from stackctl.errors import ConfigError, StackError
from stackctl.stack import Stack
from stackctl.usecases.endpoint import Endpoint, endpoint_of

PROVIDER_ID = "stackctl"  # the provider's name in opencode, OpenClaw and Codex configs
KEY_VARIABLE = "STACKCTL_API_KEY"  # where Codex reads the key (its provider's env_key)
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
    """One client's configuration: environment variables, or a JSON (or TOML) document merged
    into its config file (`replace`: the key paths written whole, everything else merged)."""

    client: str
    path: Path  # where --write puts it
    then: str  # what to run once it is in place
    env: Mapping[str, str] = field(default_factory=dict)
    document: Mapping[str, Any] = field(default_factory=dict)
    replace: tuple[tuple[str, ...], ...] = ()
    key: ClientKey | None = None
    toml: bool = False  # the document is TOML (Codex's config.toml), not JSON

    def text(self, *, show_key: bool) -> str:
        """What `connect` prints: export lines, JSON or TOML; the key masked unless `show_key`."""
        masked = self if show_key or self.key is None else self._with_key_masked()
        exports = "\n".join(f"export {name}={shlex.quote(value)}" for name, value in masked.env.items())
        if self.toml:
            return tomlkit.dumps(masked.document) + (f"\n# and in the shell Codex runs from:\n{exports}" if exports else "")
        return exports or json.dumps(masked.document, indent=2)

    @property
    def file_holds_key(self) -> bool:
        """Whether what --write puts in the file holds the key (Codex reads it from the environment)."""
        if self.key is None:
            return False
        return not self.document or self.key.value in json.dumps(self.document)

    def _with_key_masked(self) -> ClientConfig:
        assert self.key is not None
        secret, hidden = self.key.value, f"<key {self.key.name!r}: --show-key prints it>"
        env = {name: value.replace(secret, hidden) for name, value in self.env.items()}
        document = json.loads(json.dumps(self.document).replace(secret, hidden))
        return replace(self, env=env, document=document)


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


def codex_document(connection: Connection) -> dict[str, Any]:
    """Codex's settings for the stack (config.toml keys; `codex -c` takes the same)."""
    return {
        "model": connection.model,
        "model_provider": PROVIDER_ID,
        "model_context_window": connection.context_tokens,
        # Compact while a whole reply still fits (Codex's default assumes a far larger window).
        "model_auto_compact_token_limit": connection.context_tokens - connection.output_tokens,
        "model_providers": {
            PROVIDER_ID: {
                "name": "stackctl",
                "base_url": connection.openai_base_url,
                "env_key": KEY_VARIABLE,
                "wire_api": "responses",
            }
        },
    }


def _codex(connection: Connection, home: Path) -> ClientConfig:
    return ClientConfig("codex", home / ".codex" / "config.toml",
                        f"codex, with {KEY_VARIABLE} set to the client key (`connect key --show-key` prints it)",
                        env={KEY_VARIABLE: connection.key.value}, document=codex_document(connection),
                        replace=(("model_providers", PROVIDER_ID),), key=connection.key, toml=True)


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
    "codex": _codex,
    "openai": _openai,
    "anthropic": _anthropic,
}


def client_config(connection: Connection, client: str, *, home: Path | None = None) -> ClientConfig:
    recipe = CLIENTS.get(client)
    if recipe is None:
        raise ConfigError(f"unknown client {client!r}; one of: {', '.join(CLIENTS)}")
    return recipe(connection, home or Path.home())


def try_line(endpoint: Endpoint) -> str:
    """A curl request that works as printed on this machine once `KEY` holds a client key."""
    request = json.dumps({"model": endpoint.model, "messages": [{"role": "user", "content": "hi"}]})
    return (f'curl -s {endpoint.openai_base_url}/chat/completions -H "Authorization: Bearer $KEY" '
            f"-H 'content-type: application/json' -d {shlex.quote(request)}")


# ---- writing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    path: Path
    created: bool


def write_client_config(config: ClientConfig, path: Path | None = None) -> Written:
    """Merge the configuration into its file (created if missing), owner-only: it holds a key."""
    target = Path(path or config.path).expanduser()
    created = not target.exists()
    if config.toml:
        body = _merged_toml("" if created else _read_text(target), target, config)
    elif config.env and not config.document:
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


def _read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as error:
        raise ConnectError(f"cannot read {path} ({error}); pass --path for a file of its own") from None


def _merged_toml(text: str, path: Path, config: ClientConfig) -> str:
    """The document merged into the TOML file's own text: the user's comments, order and other
    settings kept (tomlkit), the key paths in `replace` written whole."""
    try:
        existing = tomlkit.parse(text)
    except TOMLKitError as error:
        raise ConnectError(f"{path} is not valid TOML ({error}); fix it, or add the printed "
                           "settings by hand") from None

    def merge(into: Any, new: Mapping[str, Any], at: tuple[str, ...]) -> None:
        for key, value in new.items():
            here = (*at, key)
            if isinstance(value, Mapping) and isinstance(into.get(key), Mapping) and here not in config.replace:
                merge(into[key], value, here)
            else:
                into[key] = value

    merge(existing, config.document, ())
    return tomlkit.dumps(existing)


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
