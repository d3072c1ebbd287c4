"""The coding agents and SDKs `stackctl connect` configures: one module per client, each a small
recipe that turns a `Connection` (the stack as clients reach it) into that client's configuration.

Adding a client is adding its module and one line in `RECIPES`.
"""

from __future__ import annotations

from pathlib import Path

from stackctl.clients import anthropic, claude_code, codex, openai, openclaw, opencode
from stackctl.clients.connection import ClientKey, Connection, ReachableModel
from stackctl.clients.recipe import ClientConfig, ClientRecipe
from stackctl.errors import ConfigError

# In the order `connect --help` and its errors list them.
RECIPES: dict[str, ClientRecipe] = {
    recipe.name: recipe
    for recipe in (claude_code.RECIPE, opencode.RECIPE, openclaw.RECIPE, codex.RECIPE, openai.RECIPE, anthropic.RECIPE)
}


def client_config(connection: Connection, client: str, *, home: Path | None = None) -> ClientConfig:
    """`client`'s configuration for this connection (its files under `home`, else the user's)."""
    recipe = RECIPES.get(client)
    if recipe is None:
        raise ConfigError(f"unknown client {client!r}; one of: {', '.join(RECIPES)}")
    return recipe.config(connection, home or Path.home())


__all__ = ["RECIPES", "ClientConfig", "ClientKey", "ClientRecipe", "Connection", "ReachableModel", "client_config"]
