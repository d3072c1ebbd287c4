"""Client model names -> the served model: exact served names, then aliases (globs), then
the default model. Clients send names like `claude-sonnet-4-5-20250929` or `gpt-4o` that no
local backend serves."""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from stackctl.proxy.errors import ModelNotFound
from stackctl.proxy.settings import ModelAlias


@dataclass
class ModelRouter:
    aliases: tuple[ModelAlias, ...]
    default_model: str | None
    served: tuple[str, ...] = ()  # refreshed from the backend's /v1/models

    def match(self, requested: str) -> str | None:
        """The served model the name routes to (exact, alias, default); None: nothing routes it."""
        if requested in self.served:
            return requested
        for alias in self.aliases:
            if fnmatchcase(requested, alias.pattern):
                return alias.target
        return self.default_model

    def resolve(self, requested: str) -> str:
        target = self.match(requested)
        if target is not None:
            return target
        if not self.served:
            # Backend not asked yet (or down): let it judge the name itself.
            return requested
        served = ", ".join(self.served)
        if len(requested) > 100:  # echoed back: a client's megabyte name is not worth it
            requested = requested[:100] + "..."
        raise ModelNotFound(
            f"model {requested!r} is not served here (served: {served}); use one of those, "
            f"or start the proxy with --alias '{requested}={self.served[0]}' or --default-model",
            param="model",
        )
