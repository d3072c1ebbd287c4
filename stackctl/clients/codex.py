"""Codex CLI (https://developers.openai.com/codex/config-reference): a `model_providers` entry in
~/.codex/config.toml with `wire_api = "responses"` (the only one Codex takes), `base_url` and
`env_key` (the variable that holds the key: it stays out of the file), then `model`,
`model_provider` and `model_context_window` / `model_auto_compact_token_limit` (Codex knows no
window for a model it has no metadata for)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from stackctl.clients.config_file import (
    ConfigFile,
    ConnectError,
    Document,
    KeyPaths,
    export_lines,
    merge_into,
)
from stackctl.clients.connection import Connection
from stackctl.clients.recipe import KEY_VARIABLE, PROVIDER_ID, ClientConfig, ClientRecipe


def codex_document(connection: Connection) -> dict[str, Any]:
    """Codex's settings for the stack (config.toml keys; `codex -c` takes the same)."""
    return {
        "model": connection.model,
        "model_provider": PROVIDER_ID,
        "model_context_window": connection.context_tokens,
        # Compact while a whole reply still fits (Codex's default assumes a far larger window).
        "model_auto_compact_token_limit": connection.context_tokens - connection.output_tokens,
        "model_providers": {
            PROVIDER_ID: {
                "name": "stackctl",
                "base_url": connection.openai_base_url,
                "env_key": KEY_VARIABLE,
                "wire_api": "responses",
            }
        },
    }


class CodexToml(ConfigFile):
    """config.toml, merged into its own text: the user's comments, order and other settings kept
    (tomlkit)."""

    def dumps(self, document: Document) -> str:
        return tomlkit.dumps(document)

    def merged(self, text: str, document: Document, replace: KeyPaths, path: Path) -> str:
        try:
            existing = tomlkit.parse(text)
        except TOMLKitError as error:
            raise ConnectError(f"{path} is not valid TOML ({error}); fix it, or add the printed "
                               "settings by hand") from None
        merge_into(existing, document, replace)
        return tomlkit.dumps(existing)

    def shown(self, document: Document, env: Mapping[str, str]) -> str:
        # The key stays out of the file: Codex reads it from the variable its provider names.
        exports = export_lines(env)
        return self.dumps(document) + (f"\n# and in the shell Codex runs from:\n{exports}" if exports else "")


class Codex(ClientRecipe):
    name = "codex"

    def config(self, connection: Connection, home: Path) -> ClientConfig:
        return ClientConfig(self.name, home / ".codex" / "config.toml",
                            f"codex, with {KEY_VARIABLE} set to the client key (`connect key --show-key` prints it)",
                            env={KEY_VARIABLE: connection.key.value}, document=codex_document(connection),
                            replace=(("model_providers", PROVIDER_ID),), key=connection.key, file=CodexToml())


RECIPE = Codex()
