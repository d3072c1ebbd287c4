"""Claude Code (https://code.claude.com/docs/en/env-vars, .../llm-gateway): ANTHROPIC_BASE_URL,
ANTHROPIC_AUTH_TOKEN (a bearer token), ANTHROPIC_MODEL and ANTHROPIC_DEFAULT_{HAIKU,SONNET,OPUS}
_MODEL (the small/fast model and the /model picks), CLAUDE_CODE_AUTO_COMPACT_WINDOW (the window it
compacts against: unknown model names count as 1M tokens otherwise); as environment variables, or
the `env` block of ~/.claude/settings.json."""

from __future__ import annotations

from pathlib import Path

from stackctl.clients.connection import Connection, ReachableModel
from stackctl.clients.recipe import ClientConfig, ClientRecipe


def claude_code_env(endpoint: ReachableModel, key: str) -> dict[str, str]:
    """Claude Code's environment (also the `env` block of its settings.json)."""
    model = endpoint.model
    return {
        "ANTHROPIC_BASE_URL": endpoint.base_url,
        "ANTHROPIC_AUTH_TOKEN": key,
        "ANTHROPIC_MODEL": model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,  # the small/fast model: titles, summaries
        "ANTHROPIC_DEFAULT_SONNET_MODEL": model,
        "ANTHROPIC_DEFAULT_OPUS_MODEL": model,
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(endpoint.context_tokens),
        # A private endpoint: no telemetry, error reports or update checks to Anthropic.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


class ClaudeCode(ClientRecipe):
    name = "claude-code"

    def config(self, connection: Connection, home: Path) -> ClientConfig:
        env = claude_code_env(connection, connection.key.value)
        return ClientConfig(self.name, home / ".claude" / "settings.json", "claude", env=env,
                            document={"env": env}, key=connection.key)


RECIPE = ClaudeCode()
