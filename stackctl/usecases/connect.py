"""`stackctl connect CLIENT`: find where clients reach this stack's filter-proxy (the LAN address
or the HTTPS hostname, a client key from .env, the served model and its window) and write a
client's configuration into its file. The recipes, and how each merges into its client's file,
live in stackctl/clients/.

The key is read from .env (STACKCTL_PROXY_KEYS) and stays out of everything printed unless asked
for; a written file that holds it is made readable by its owner only.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
from dataclasses import dataclass, replace
from pathlib import Path

from stackctl.clients import ClientConfig, ClientKey, Connection
from stackctl.clients.config_file import ConnectError
from stackctl.envfile import read_env
from stackctl.errors import ConfigError
from stackctl.stack import Stack
from stackctl.usecases.endpoint import Endpoint, endpoint_of

_KEYS = "STACKCTL_PROXY_KEYS"


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
    body = config.file_text("" if created else _read_text(target), target)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(body)
    return Written(target, created)


def _read_text(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise ConnectError(f"cannot read {path} ({error}); pass --path for a file of its own") from None
