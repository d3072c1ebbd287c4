"""Client disconnects cancel the backend request; metrics count what happened."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.support.processes import eventually
from tests.support.proxy.running import ALICE_KEY, BOB_KEY, RunningProxy
from tests.support.proxy.scripted_backend import ScriptedBackend

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/v1/messages",
            {
                "model": "claude-x",
                "max_tokens": 9,
                "stream": True,
                "messages": [{"role": "user", "content": "scenario:hang"}],
            },
        ),
        (
            "/v1/chat/completions",
            {
                "model": "gpt-4o",
                "stream": True,
                "messages": [{"role": "user", "content": "scenario:hang"}],
            },
        ),
    ],
)
def test_client_disconnect_cancels_the_backend_request(
    proxy: RunningProxy, backend: ScriptedBackend, path: str, body: dict[str, object]
) -> None:
    before = len(backend.disconnects)
    with httpx.stream(
        "POST", proxy.base_url + path, json=body, headers={"x-api-key": ALICE_KEY}
    ) as response:
        assert response.status_code == 200
        next(response.iter_raw())  # the stream is flowing; now the client walks away
    assert eventually(lambda: len(backend.disconnects) > before), "backend kept generating"


def test_client_disconnect_during_prefill_cancels_the_backend_request(
    proxy: RunningProxy, backend: ScriptedBackend
) -> None:
    # Nothing is written to the client while the backend is silent, so only watching the
    # connection (not a failed write) can notice the client left.
    before = len(backend.disconnects)
    body = {
        "model": "gpt-4o",
        "stream": True,
        "messages": [{"role": "user", "content": "scenario:hang delay=60"}],
    }
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            proxy.base_url + "/v1/chat/completions",
            json=body,
            headers={"x-api-key": ALICE_KEY},
            timeout=httpx.Timeout(5, read=0.3),
        )
    assert eventually(lambda: len(backend.disconnects) > before)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/v1/messages",
            {"model": "claude-x", "max_tokens": 9, "stream": True,
             "messages": [{"role": "user", "content": "scenario:text pace=0.01"}]},
        ),
        (
            "/v1/chat/completions",
            {"model": "gpt-4o", "stream": True,
             "messages": [{"role": "user", "content": "scenario:text pace=0.01"}]},
        ),
    ],
)
def test_whole_streams_keep_their_backend_connection(
    proxy: RunningProxy, backend: ScriptedBackend, path: str, body: dict[str, object]
) -> None:
    # Like vLLM, the backend writes the body's end apart from [DONE] (paced: it comes later);
    # a reply not read to that end would cost each request a new connection to vLLM.
    before = len(backend.requests)
    with httpx.Client(headers={"x-api-key": ALICE_KEY}, timeout=30) as client:
        opened_before = _connections_opened(client, proxy)
        for _ in range(4):
            with client.stream("POST", proxy.base_url + path, json=body) as response:
                assert response.status_code == 200
                assert response.read().rstrip().endswith((b"[DONE]", b'{"type":"message_stop"}'))
        opened = _connections_opened(client, proxy) - opened_before
    peers = {r.peer for r in list(backend.requests)[before:] if r.path == "/v1/chat/completions"}
    assert len(peers) == 1, f"4 streamed replies came over {len(peers)} backend connections"
    # The metric says the same: at most the first of them needed a new connection.
    assert opened <= 1, opened


def _connections_opened(client: httpx.Client, proxy: RunningProxy) -> float:
    text = client.get(proxy.base_url + "/metrics").text
    found = re.search(r"^stackctl_proxy_backend_connections_total (\S+)$", text, re.MULTILINE)
    assert found, "the proxy exports no stackctl_proxy_backend_connections_total"
    return float(found.group(1))


def test_metrics_count_requests_tokens_and_latency(proxy: RunningProxy) -> None:
    client = proxy.anthropic(api_key=BOB_KEY)
    client.messages.create(
        model="claude-x", max_tokens=9, messages=[{"role": "user", "content": "scenario:text"}]
    )
    with client.messages.stream(
        model="claude-x", max_tokens=9, messages=[{"role": "user", "content": "scenario:thinking"}]
    ) as s:
        s.get_final_message()
    proxy.openai(api_key=BOB_KEY).chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "scenario:text"}]
    )
    httpx.post(proxy.base_url + "/v1/messages", json={}, headers={"x-api-key": "wrong"})

    text = httpx.get(proxy.base_url + "/metrics").text

    def value(pattern: str) -> float:
        match = re.search("^" + re.escape(pattern) + r" ([0-9.e+]+)$", text, re.MULTILINE)
        assert match, f"{pattern} not in /metrics"
        return float(match.group(1))

    assert value('stackctl_proxy_requests_total{key="bob",route="/v1/messages",status="200"}') >= 2
    assert (
        value('stackctl_proxy_requests_total{key="bob",route="/v1/chat/completions",status="200"}')
        >= 1
    )
    assert (
        value(
            'stackctl_proxy_requests_total{key="unauthenticated",route="/v1/messages",status="401"}'
        )
        >= 1
    )
    assert value('stackctl_proxy_tokens_total{direction="in",key="bob"}') >= 42 + 31 + 42
    assert value('stackctl_proxy_tokens_total{direction="out",key="bob"}') >= 14 + 15 + 14
    assert value('stackctl_proxy_ttft_seconds_count{route="/v1/messages"}') >= 1
    assert value('stackctl_proxy_request_duration_seconds_count{route="/v1/messages"}') >= 2
    assert 'stackctl_proxy_in_flight{route="/v1/messages"} 0.0' in text
    # Key values never show up, only names.
    assert ALICE_KEY not in text and BOB_KEY not in text


def test_a_stream_the_backend_refuses_is_counted_and_leaves_nothing_in_flight(
    start_proxy, base_settings
) -> None:  # type: ignore[no-untyped-def]
    proxy = start_proxy(base_settings)  # its own metrics
    response = httpx.post(
        proxy.base_url + "/v1/chat/completions",
        json={
            "model": "qwen3-coder",
            "stream": True,
            "messages": [{"role": "user", "content": "scenario:backend_error"}],
        },
        headers={"authorization": f"Bearer {ALICE_KEY}"},
    )
    assert response.status_code == 400
    assert "max_tokens is too large" in response.json()["error"]["message"]

    text = httpx.get(proxy.base_url + "/metrics").text
    route = 'route="/v1/chat/completions"'
    assert f'stackctl_proxy_requests_total{{key="alice",{route},status="400"}} 1.0' in text
    assert f"stackctl_proxy_in_flight{{{route}}} 0.0" in text
