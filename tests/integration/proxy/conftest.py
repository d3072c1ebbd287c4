"""Fixtures: a scripted vLLM-like backend and filter-proxies in front of it, on loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from stackctl.proxy.app import create_app
from stackctl.proxy.settings import ModelAlias, ProxySettings, build_settings
from tests.support.processes import free_port
from tests.support.proxy.fake_searxng import SEARCH_TIMEOUT_S, FakeSearxng
from tests.support.proxy.running import ALICE_KEY, BOB_KEY, RunningProxy, served
from tests.support.proxy.scripted_backend import SERVED_MODEL, ScriptedBackend
from tests.support.proxy.servers import ServerThread


@pytest.fixture(scope="session")
def scripted_backend() -> Iterator[tuple[ScriptedBackend, str]]:
    yield from served(ScriptedBackend())


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


@pytest.fixture(scope="module")
def searxng() -> Iterator[tuple[FakeSearxng, str]]:
    yield from served(FakeSearxng())


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


@pytest.fixture(scope="module")
def proxy_over_vllm(real_vllm) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The proxy in front of the real vLLM (its CPU build serving the demo model), without client
    keys: its base URL."""
    settings = ProxySettings(
        backend_url=real_vllm.base_url,
        auth_enabled=False,
        backend_api_key=real_vllm.api_key,
        default_model=real_vllm.model,
    )
    server = ServerThread(create_app(settings)).start()
    try:
        yield server.base_url
    finally:
        server.stop()
