"""A client's recipe and the configuration it makes: environment variables, or a document merged
into the client's own config file (its format: config_file.py)."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from stackctl.clients.config_file import ENV_FILE, JSON_FILE, ConfigFile
from stackctl.clients.connection import ClientKey, Connection

PROVIDER_ID = "stackctl"  # the provider's name in opencode, OpenClaw and Codex configs
KEY_VARIABLE = "STACKCTL_API_KEY"  # where a client reads the key from its environment (Codex's env_key)


@dataclass(frozen=True)
class ClientConfig:
    """One client's configuration: environment variables, and the document merged into its
    config file (`replace`: the key paths written whole, everything else merged)."""

    client: str
    path: Path  # where --write puts it
    then: str  # what to run once it is in place
    env: Mapping[str, str] = field(default_factory=dict)
    document: Mapping[str, Any] = field(default_factory=dict)
    replace: tuple[tuple[str, ...], ...] = ()
    key: ClientKey | None = None
    file: ConfigFile = JSON_FILE  # the format of `path`

    def text(self, *, show_key: bool) -> str:
        """What `connect` prints: export lines, or the document in its file's format; the key
        masked unless `show_key`."""
        masked = self if show_key or self.key is None else self._with_key_masked()
        return self.file.shown(masked.document, masked.env)

    def file_text(self, current: str, path: Path) -> str:
        """What --write leaves in `path`, which holds `current` ("" when there is no file yet)."""
        return self.file.merged(current, self.document, self.replace, path)

    @property
    def file_holds_key(self) -> bool:
        """Whether what --write puts in the file holds the key (Codex reads it from the environment)."""
        return self.key is not None and self.key.value in json.dumps(self.document)

    def _with_key_masked(self) -> ClientConfig:
        assert self.key is not None
        secret, hidden = self.key.value, f"<key {self.key.name!r}: --show-key prints it>"
        env = {name: value.replace(secret, hidden) for name, value in self.env.items()}
        document = json.loads(json.dumps(self.document).replace(secret, hidden))
        return replace(self, env=env, document=document)


class ClientRecipe(ABC):
    """How one client is pointed at the stack, following that client's own documentation."""

    name: ClassVar[str]  # the `stackctl connect NAME` argument

    @abstractmethod
    def config(self, connection: Connection, home: Path) -> ClientConfig:
        """The client's configuration; `home` is the user's home directory its files live under."""


class SdkRecipe(ClientRecipe):
    """An SDK pointed at the stack by its environment variables, in an env file to source."""

    sdk: ClassVar[str]  # "OpenAI", "Anthropic": how `then` names it

    @abstractmethod
    def environment(self, connection: Connection) -> dict[str, str]:
        """The variables the SDK reads (its base URL and key)."""

    def config(self, connection: Connection, home: Path) -> ClientConfig:
        env = self.environment(connection)
        return ClientConfig(self.name, home / ".config" / "stackctl" / f"{self.name}.env",
                            f"an {self.sdk} SDK client with model={connection.model!r}",
                            env=env, document=env, key=connection.key, file=ENV_FILE)
