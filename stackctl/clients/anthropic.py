"""The Anthropic SDKs: ANTHROPIC_BASE_URL (without /v1) and ANTHROPIC_API_KEY, in an env file to
source."""

from __future__ import annotations

from stackctl.clients.connection import Connection
from stackctl.clients.recipe import SdkRecipe


class AnthropicSdk(SdkRecipe):
    name = "anthropic"
    sdk = "Anthropic"

    def environment(self, connection: Connection) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": connection.base_url, "ANTHROPIC_API_KEY": connection.key.value}


RECIPE = AnthropicSdk()
