"""A client's recipe and the configuration it makes: environment variables, or a JSON document
merged into the client's own config file."""

from __future__ import annotations

import json
import shlex
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from stackctl.clients.connection import ClientKey, Connection

PROVIDER_ID = "stackctl"  # the provider's name in opencode and OpenClaw configs


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
        return ClientConfig(self.name, home / ".config" / "stackctl" / f"{self.name}.env",
                            f"an {self.sdk} SDK client with model={connection.model!r}",
                            env=self.environment(connection), key=connection.key)
