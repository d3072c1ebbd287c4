"""opencode (https://opencode.ai/docs/providers, "Custom provider"): an `@ai-sdk/openai-compatible`
provider in opencode.json with `options.baseURL`, `options.apiKey` and per model `limit.context` /
`limit.output`, which opencode compacts against."""

from __future__ import annotations

from pathlib import Path

from stackctl.clients.connection import Connection
from stackctl.clients.recipe import PROVIDER_ID, ClientConfig, ClientRecipe


class Opencode(ClientRecipe):
    name = "opencode"

    def config(self, connection: Connection, home: Path) -> ClientConfig:
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
        return ClientConfig(self.name, home / ".config" / "opencode" / "opencode.json", "opencode",
                            document=document, replace=(("provider", PROVIDER_ID),), key=connection.key)


RECIPE = Opencode()
