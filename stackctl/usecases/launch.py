"""`stackctl launch CLIENT [-- ARGS]`: run a coding agent against this stack, set up for this run
only, as `ollama launch` does: the endpoint, key, model and window go into the client's
environment, its command line (`codex -c`) or a temporary config; nothing is written into the
user's own files, and the key is never in an argument (other users see those in `ps`).

- Claude Code: its environment variables (connect's `claude-code`).
- Codex CLI: `-c` overrides of config.toml's keys (connect's `codex`), the key in
  STACKCTL_API_KEY (the provider's `env_key`).
- opencode: OPENCODE_CONFIG_CONTENT, an inline config layered over the user's own.
- OpenClaw: OPENCLAW_CONFIG_PATH, a config in a private temporary folder removed after the run;
  its `apiKey` reads `${STACKCTL_API_KEY}`, so the file holds no key.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from stackctl.clients import ClientKey, Connection, client_config
from stackctl.clients.claude_code import claude_code_env
from stackctl.clients.codex import codex_document
from stackctl.clients.recipe import KEY_VARIABLE
from stackctl.errors import StackError
from stackctl.stack import Stack
from stackctl.usecases.connect import client_key
from stackctl.usecases.endpoint import endpoint_of

# How long the stack gets to answer before it counts as not up.
_PROBE_TIMEOUT_S = 5.0


class LaunchError(StackError):
    """The client cannot be launched: not installed, or the stack is not up."""


@dataclass(frozen=True)
class Launch:
    """One run of a client: what to run, what to add to its environment, and temporary files
    (name -> content) made in a private folder whose path replaces `{dir}` in the environment."""

    argv: list[str]
    env: dict[str, str]
    files: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Launcher:
    title: str  # how `up` names it
    executable: str
    install: str  # how to install it, when it is not
    plan: Callable[[Connection, Sequence[str]], Launch]


def _claude(connection: Connection, args: Sequence[str]) -> Launch:
    return Launch(["claude", *args], claude_code_env(connection, connection.key.value))


def _codex(connection: Connection, args: Sequence[str]) -> Launch:
    overrides = [arg for name, value in _dotted(codex_document(connection)) for arg in ("-c", f"{name}={json.dumps(value)}")]
    return Launch(["codex", *overrides, *args], {KEY_VARIABLE: connection.key.value})


def _opencode(connection: Connection, args: Sequence[str]) -> Launch:
    document = client_config(connection, "opencode").document
    return Launch(["opencode", *args], {"OPENCODE_CONFIG_CONTENT": json.dumps(document)})


def _openclaw(connection: Connection, args: Sequence[str]) -> Launch:
    # OpenClaw resolves `${VAR}` in any config string: the file holds no key.
    keyless = replace(connection, key=ClientKey(connection.key.name, "${" + KEY_VARIABLE + "}"))
    document = client_config(keyless, "openclaw").document
    return Launch(["openclaw", *args],
                  {"OPENCLAW_CONFIG_PATH": "{dir}/openclaw.json", KEY_VARIABLE: connection.key.value},
                  files={"openclaw.json": json.dumps(document, indent=2)})


LAUNCHERS: dict[str, Launcher] = {
    "claude": Launcher("Claude Code", "claude", "npm install -g @anthropic-ai/claude-code", _claude),
    "codex": Launcher("Codex", "codex", "npm install -g @openai/codex", _codex),
    "opencode": Launcher("opencode", "opencode", "npm install -g opencode-ai", _opencode),
    "openclaw": Launcher("OpenClaw", "openclaw", "npm install -g openclaw (it needs Node.js 24 or newer)",
                         _openclaw),
}


def launch_lines(invocation: str) -> dict[str, str]:
    """One line per client that runs it against the stack as printed (what `up` prints)."""
    return {launcher.title: f"{invocation} launch {name}" for name, launcher in LAUNCHERS.items()}


def local_connection(stack: Stack, key_name: str | None = None) -> Connection:
    """The stack as a client on this machine reaches it (what `up` prints), with a client key."""
    endpoint = endpoint_of(stack)
    return Connection(endpoint.base_url, endpoint.model, endpoint.context_tokens,
                      client_key(endpoint.key_file, key_name))


def launch_plan(stack: Stack, client: str, args: Sequence[str], *, key_name: str | None = None) -> Launch:
    launcher = _launcher(client)
    return launcher.plan(local_connection(stack, key_name), list(args))


def run_client(stack: Stack, client: str, args: Sequence[str], *, key_name: str | None = None,
               environ: Mapping[str, str] | None = None) -> int:
    """Run the client against the stack; its exit code. Refuses with one line when the client
    is not installed or the stack does not answer."""
    launcher = _launcher(client)
    environ = dict(os.environ if environ is None else environ)
    if shutil.which(launcher.executable, path=environ.get("PATH")) is None:
        raise LaunchError(f"{launcher.executable} is not installed here (not on PATH): {launcher.install}")
    connection = local_connection(stack, key_name)
    _require_up(connection)
    launch = launcher.plan(connection, list(args))
    with tempfile.TemporaryDirectory(prefix="stackctl-launch-") as folder:  # mode 0700
        for name, content in launch.files.items():
            descriptor = os.open(Path(folder) / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(content)
        env = {**environ, **{name: value.replace("{dir}", folder) for name, value in launch.env.items()}}
        try:
            return subprocess.run(launch.argv, env=env, check=False).returncode
        except KeyboardInterrupt:  # the client got the Ctrl-C too, and has ended
            return 130


def _launcher(client: str) -> Launcher:
    launcher = LAUNCHERS.get(client)
    if launcher is None:
        raise StackError(f"unknown client {client!r}; one of: {', '.join(LAUNCHERS)}")
    return launcher


def _require_up(connection: Connection) -> None:
    url = f"{connection.openai_base_url}/models"
    try:
        reply = httpx.get(url, headers={"authorization": f"Bearer {connection.key.value}"},
                          timeout=_PROBE_TIMEOUT_S)
    except httpx.HTTPError as error:
        raise LaunchError(f"the stack is not up ({connection.base_url} does not answer: "
                          f"{type(error).__name__}): run `stackctl up`") from None
    if reply.status_code != 200:
        raise LaunchError(f"the stack at {connection.base_url} answered {reply.status_code} to {url}: "
                          "check `stackctl status`")


def _dotted(document: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A nested settings document as `a.b.c = value` pairs (what `codex -c` takes)."""
    pairs = []
    for name, value in document.items():
        if isinstance(value, Mapping):
            pairs += _dotted(value, f"{prefix}{name}.")
        else:
            pairs.append((f"{prefix}{name}", value))
    return pairs
