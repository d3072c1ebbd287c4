"""A filter-proxy to talk to: its test keys, the SDK clients pointed at it, and stand-in servers
held for a fixture's lifetime."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar

import anthropic
import httpx
import openai

from stackctl.proxy.settings import ProxySettings
from tests.support.proxy.servers import ServerThread

T = TypeVar("T")

# Test-only keys: never real secrets, and never printed by the proxy either way.
ALICE_KEY = "sk-test-alice-0123456789"
BOB_KEY = "sk-test-bob-9876543210"


@dataclass
class RunningProxy:
    base_url: str
    settings: ProxySettings

    def anthropic(self, api_key: str = ALICE_KEY) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            base_url=self.base_url, api_key=api_key, max_retries=0, timeout=20
        )

    def openai(self, api_key: str = ALICE_KEY) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=self.base_url + "/v1", api_key=api_key, max_retries=0, timeout=20
        )

    def metric(self, name: str, **labels: str) -> float:
        """One series of the proxy's /metrics, its labels exactly these (0 when absent)."""
        text = httpx.get(self.base_url + "/metrics").text
        wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        match = re.search("^" + re.escape(f"{name}{{{wanted}}}") + r" ([0-9.e+]+)$", text, re.MULTILINE)
        return float(match.group(1)) if match else 0.0


def served(app: T) -> Iterator[tuple[T, str]]:
    """A stand-in server on loopback for a fixture's lifetime: (the app, its base URL)."""
    server = ServerThread(app, log_level="critical").start()
    try:
        yield app, server.base_url
    finally:
        server.stop()
