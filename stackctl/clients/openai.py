"""The OpenAI SDKs: OPENAI_BASE_URL (with /v1) and OPENAI_API_KEY, in an env file to source."""

from __future__ import annotations

from stackctl.clients.connection import Connection
from stackctl.clients.recipe import SdkRecipe


class OpenAISdk(SdkRecipe):
    name = "openai"
    sdk = "OpenAI"

    def environment(self, connection: Connection) -> dict[str, str]:
        return {"OPENAI_BASE_URL": connection.openai_base_url, "OPENAI_API_KEY": connection.key.value}


RECIPE = OpenAISdk()
