"""OpenClaw (https://docs.openclaw.ai/providers/vllm, "Explicit configuration"): a
`models.providers` entry with `api: "openai-completions"`, `baseUrl`, `apiKey` and per model
`contextWindow` / `maxTokens`, then `agents.defaults.model.primary`."""

from __future__ import annotations

from pathlib import Path

from stackctl.clients.connection import Connection
from stackctl.clients.recipe import PROVIDER_ID, ClientConfig, ClientRecipe


class OpenClaw(ClientRecipe):
    name = "openclaw"

    def config(self, connection: Connection, home: Path) -> ClientConfig:
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
        return ClientConfig(self.name, home / ".openclaw" / "openclaw.json", "openclaw", document=document,
                            replace=(("models", "providers", PROVIDER_ID),), key=connection.key)


RECIPE = OpenClaw()
