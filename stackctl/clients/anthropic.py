"""The Anthropic SDKs: ANTHROPIC_BASE_URL (without /v1) and ANTHROPIC_API_KEY, in an env file to
source."""

from __future__ import annotations

from pathlib import Path

from stackctl.clients.connection import Connection
from stackctl.clients.recipe import ClientConfig, ClientRecipe


class AnthropicSdk(ClientRecipe):
    name = "anthropic"

    def config(self, connection: Connection, home: Path) -> ClientConfig:
        env = {"ANTHROPIC_BASE_URL": connection.base_url, "ANTHROPIC_API_KEY": connection.key.value}
        return ClientConfig(self.name, home / ".config" / "stackctl" / "anthropic.env",
                            f"an Anthropic SDK client with model={connection.model!r}", env=env, key=connection.key)


RECIPE = AnthropicSdk()
