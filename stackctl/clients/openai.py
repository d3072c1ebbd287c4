"""The OpenAI SDKs: OPENAI_BASE_URL (with /v1) and OPENAI_API_KEY, in an env file to source."""

from __future__ import annotations

from pathlib import Path

from stackctl.clients.connection import Connection
from stackctl.clients.recipe import ClientConfig, ClientRecipe


class OpenAISdk(ClientRecipe):
    name = "openai"

    def config(self, connection: Connection, home: Path) -> ClientConfig:
        env = {"OPENAI_BASE_URL": connection.openai_base_url, "OPENAI_API_KEY": connection.key.value}
        return ClientConfig(self.name, home / ".config" / "stackctl" / "openai.env",
                            f"an OpenAI SDK client with model={connection.model!r}", env=env, key=connection.key)


RECIPE = OpenAISdk()
