"""API-key check: `x-api-key` (Anthropic SDKs) or `Authorization: Bearer` (OpenAI SDKs)."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from stackctl.proxy.errors import AuthenticationFailed

ANONYMOUS = "anonymous"


class KeyChecker:
    def __init__(self, keys: dict[str, str], *, enabled: bool) -> None:
        self._keys = [(name, key.encode()) for name, key in keys.items()]
        self.enabled = enabled

    def key_name(self, headers: Mapping[str, str]) -> str:
        """The name of the key the request carries; raises AuthenticationFailed."""
        if not self.enabled:
            return ANONYMOUS
        presented = presented_key(headers)
        if presented is None:
            raise AuthenticationFailed(
                "missing API key: send it as the x-api-key header or as Authorization: Bearer"
            )
        candidate = presented.encode()
        match = None
        # Compare against every key, whatever matches first, so timing reveals nothing.
        for name, key in self._keys:
            if hmac.compare_digest(candidate, key) and match is None:
                match = name
        if match is None:
            raise AuthenticationFailed(
                "invalid API key: check the key you were given (ask the admin for a new one)"
            )
        return match


def presented_key(headers: Mapping[str, str]) -> str | None:
    key = headers.get("x-api-key")
    if key:
        return key.strip()
    authorization = headers.get("authorization")
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
    return None
