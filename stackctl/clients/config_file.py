"""How a client's configuration lands in its file: a document merged into what the file holds
(the user's other settings kept; the key paths in `replace` written whole), or an env file to
source. Each recipe names its file's format; Codex's TOML lives with its recipe (codex.py)."""

from __future__ import annotations

import json
import shlex
from abc import ABC, abstractmethod
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from stackctl.errors import StackError

Document = Mapping[str, Any]
KeyPaths = tuple[tuple[str, ...], ...]


class ConnectError(StackError):
    """A client configuration could not be made or written."""


def merge_into(into: MutableMapping[str, Any], new: Document, replace: KeyPaths, at: tuple[str, ...] = ()) -> None:
    """Merge `new` into `into` in place: tables merged key by key, except the paths in `replace`."""
    for key, value in new.items():
        here = (*at, key)
        if isinstance(value, Mapping) and isinstance(into.get(key), MutableMapping) and here not in replace:
            merge_into(into[key], value, replace, here)
        else:
            into[key] = value


def export_lines(env: Mapping[str, str]) -> str:
    return "\n".join(f"export {name}={shlex.quote(value)}" for name, value in env.items())


class ConfigFile(ABC):
    """One file format a client reads its configuration from."""

    @abstractmethod
    def dumps(self, document: Document) -> str:
        """The document alone, as this format writes it."""

    @abstractmethod
    def merged(self, text: str, document: Document, replace: KeyPaths, path: Path) -> str:
        """The file's new text: `document` merged into its current `text` ("" for a new file)."""

    def shown(self, document: Document, env: Mapping[str, str]) -> str:
        """What `connect` prints: the environment variables when the client takes them, else the document."""
        return export_lines(env) or self.dumps(document)


class JsonFile(ConfigFile):
    """A plain JSON settings file (Claude Code's settings.json, opencode.json, openclaw.json)."""

    def dumps(self, document: Document) -> str:
        return json.dumps(document, indent=2)

    def merged(self, text: str, document: Document, replace: KeyPaths, path: Path) -> str:
        existing = self._parsed(text, path) if text else {}
        merge_into(existing, document, replace)
        return self.dumps(existing) + "\n"

    @staticmethod
    def _parsed(text: str, path: Path) -> dict[str, Any]:
        try:
            document = json.loads(text)
        except ValueError as error:
            raise ConnectError(f"{path} is not plain JSON ({error}); add the printed entry by hand, "
                               "or pass --path for a file of its own") from None
        if not isinstance(document, dict):
            raise ConnectError(f"{path} does not hold a JSON object; pass --path for a file of its own")
        return document


class EnvFile(ConfigFile):
    """NAME=value lines a shell sources (the SDKs' variables); written whole."""

    def dumps(self, document: Document) -> str:
        return "".join(f"{name}={shlex.quote(str(value))}\n" for name, value in document.items())

    def merged(self, text: str, document: Document, replace: KeyPaths, path: Path) -> str:
        return self.dumps(document)


JSON_FILE = JsonFile()
ENV_FILE = EnvFile()
