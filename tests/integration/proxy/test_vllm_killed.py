"""vLLM killed mid-reply: the streams running through the proxy end with the API's own error,
which the official SDKs raise (Anthropic `event: error` api_error, OpenAI's error chunk), never a
bare close; then the proxy answers 529/503 until a backend is back. The real vLLM CPU engine, a
private one (this test kills it), started for this test."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from stackctl.proxy.app import create_app
from stackctl.proxy.model_router import ModelAlias
from stackctl.proxy.settings import ProxySettings
from tests.support.proxy.cut_streams import StreamsUnderFire, assert_ended_with_an_api_error
from tests.support.proxy.running import ALICE_KEY, RunningProxy
from tests.support.proxy.servers import ServerThread
from tests.support.vllm_server import VllmServer, running_vllm

pytestmark = [pytest.mark.integration, pytest.mark.vllm, pytest.mark.timeout(900)]


@pytest.fixture
def doomed_vllm(tmp_path: Path) -> Iterator[VllmServer]:
    with running_vllm(tmp_path) as server:
        yield server


@pytest.fixture
def proxy(doomed_vllm: VllmServer) -> Iterator[RunningProxy]:
    settings = ProxySettings(
        backend_url=doomed_vllm.base_url,
        backend_api_key=doomed_vllm.api_key,
        api_keys={"alice": ALICE_KEY},
        aliases=(ModelAlias("claude-*", doomed_vllm.model),),
        default_model=doomed_vllm.model,
    )
    server = ServerThread(create_app(settings)).start()
    try:
        yield RunningProxy(server.base_url, settings)
    finally:
        server.stop()


def test_vllm_killed_mid_stream_ends_both_sdk_streams_with_the_apis_error(
    doomed_vllm: VllmServer, proxy: RunningProxy
) -> None:
    # The demo model writes until max_tokens (ignore_eos on the OpenAI side); on 2 CPU cores
    # 1500 tokens take far longer than the kill below.
    streams = StreamsUnderFire(proxy.anthropic(), proxy.openai(), model="claude-demo",
                               prompt="Write a long story.", max_tokens=1500,
                               extra_openai={"ignore_eos": True})
    streams.start(timeout_s=180)
    os.killpg(doomed_vllm.pid, signal.SIGKILL)  # the engine and its engine-core child, at once
    assert_ended_with_an_api_error(*streams.outcomes(timeout_s=60))

    down = httpx.post(proxy.base_url + "/v1/messages", headers={"x-api-key": ALICE_KEY},
                      json={"model": "claude-demo", "max_tokens": 8,
                            "messages": [{"role": "user", "content": "hi"}]}, timeout=30)
    assert down.status_code == 529 and down.json()["error"]["type"] == "overloaded_error", down.text
