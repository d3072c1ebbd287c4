"""Compose-style `${VAR}` interpolation, for running the same fragments as native processes.

Supports what our fragments use and Compose documents: `$VAR`, `${VAR}`, `${VAR:-default}`,
`${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, and `$$` for a literal `$`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from stackctl.errors import ConfigError

_PATTERN = re.compile(
    r"\$(?:(?P<escaped>\$)|(?P<bare>[A-Za-z_][A-Za-z0-9_]*)|\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\})"
)


def interpolate(text: str, variables: Mapping[str, str]) -> str:
    def replace(match: re.Match) -> str:
        if match.group("escaped"):
            return "$"
        name = match.group("bare") or match.group("name")
        operator, argument = match.group("op"), match.group("arg") or ""
        value = variables.get(name)
        unset_or_empty = value is None or (value == "" and operator is not None and operator.startswith(":"))
        if operator in (":-", "-") and (value is None if operator == "-" else unset_or_empty):
            return argument
        if operator in (":?", "?") and (value is None if operator == "?" else unset_or_empty):
            raise ConfigError(f"{name}: {argument or 'is not set'}")
        return value or ""

    return _PATTERN.sub(replace, text)
