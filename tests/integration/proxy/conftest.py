"""Fixtures: a scripted vLLM-like backend and filter-proxies in front of it, on loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TypeVar

import anthropic
import openai
import pytest

from stackctl.proxy.app import create_app
from stackctl.proxy.settings import ModelAlias, ProxySettings, build_settings
from tests.integration.proxy.fake_searxng import FakeSearxng
from tests.integration.proxy.scripted_backend import SERVED_MODEL, ScriptedBackend
from tests.integration.proxy.servers import ServerThread, free_port

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


@pytest.fixture(scope="session")
def scripted_backend() -> Iterator[tuple[ScriptedBackend, str]]:
    yield from _served(ScriptedBackend())


@pytest.fixture(scope="session")
def backend(scripted_backend: tuple[ScriptedBackend, str]) -> ScriptedBackend:
    return scripted_backend[0]


@pytest.fixture(scope="session")
def base_settings(scripted_backend: tuple[ScriptedBackend, str]) -> ProxySettings:
    return ProxySettings(
        backend_url=scripted_backend[1],
        aliases=(ModelAlias("claude-*", SERVED_MODEL), ModelAlias("gpt-4o*", SERVED_MODEL)),
        api_keys={"alice": ALICE_KEY, "bob": BOB_KEY},
        backend_api_key="sk-backend-secret",
        ping_interval_s=5.0,
    )


@pytest.fixture(scope="session")
def start_proxy() -> Iterator[Callable[[ProxySettings], RunningProxy]]:
    servers: list[ServerThread] = []

    def start(settings: ProxySettings) -> RunningProxy:
        server = ServerThread(create_app(settings)).start()
        servers.append(server)
        return RunningProxy(base_url=server.base_url, settings=settings)

    try:
        yield start
    finally:
        for server in servers:
            server.stop()


@pytest.fixture(scope="session")
def proxy(start_proxy, base_settings: ProxySettings) -> RunningProxy:  # type: ignore[no-untyped-def]
    """The default proxy: keys alice and bob, aliases claude-* and gpt-4o*, no default."""
    return start_proxy(base_settings)


@pytest.fixture(scope="session")
def proxy_with_default(start_proxy, base_settings: ProxySettings) -> RunningProxy:  # type: ignore[no-untyped-def]
    return start_proxy(replace(base_settings, aliases=(), default_model=SERVED_MODEL))


@pytest.fixture(scope="session")
def fast_ping_proxy(start_proxy, base_settings: ProxySettings) -> RunningProxy:  # type: ignore[no-untyped-def]
    return start_proxy(replace(base_settings, ping_interval_s=0.1))


@pytest.fixture(scope="session")
def dead_backend_proxy(start_proxy, base_settings: ProxySettings) -> RunningProxy:  # type: ignore[no-untyped-def]
    # A port nothing listens on: connection refused, as when vLLM is down.
    return start_proxy(replace(base_settings, backend_url=f"http://127.0.0.1:{free_port()}"))


# The proxy's search-time limit in the web-search tests (the SearXNG stand-in's `slow` mode waits past it).
SEARCH_TIMEOUT_S = 1.0


@pytest.fixture(scope="module")
def searxng() -> Iterator[tuple[FakeSearxng, str]]:
    yield from _served(FakeSearxng())


@pytest.fixture(scope="module")
def search_proxy(start_proxy, scripted_backend, searxng) -> RunningProxy:  # type: ignore[no-untyped-def]
    """Built the way `stackctl proxy serve --search-backend searxng --searxng-url URL` is."""
    settings = build_settings(
        backend_url=scripted_backend[1],
        aliases=[f"claude-*={SERVED_MODEL}"],
        search_backend="searxng",
        searxng_url=searxng[1],
        env={
            "STACKCTL_PROXY_KEYS": f"alice={ALICE_KEY}",
            "STACKCTL_PROXY_SEARCH_TIMEOUT_SECONDS": str(SEARCH_TIMEOUT_S),
            "STACKCTL_PROXY_PING_SECONDS": "0.1",
        },
    )
    return start_proxy(settings)


def _served(app: T) -> Iterator[tuple[T, str]]:
    """A stand-in server on loopback for a fixture's lifetime: (the app, its base URL)."""
    server = ServerThread(app, log_level="critical").start()
    try:
        yield app, server.base_url
    finally:
        server.stop()
