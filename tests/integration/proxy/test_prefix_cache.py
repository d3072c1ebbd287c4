"""vLLM's prefix cache, visible through the proxy, against the real vLLM CPU engine (started with
--enable-prompt-tokens-details, as a stack starts it): the cached prompt tokens of each reply reach
the client and the per-key metrics."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from stackctl.proxy.app import create_app
from stackctl.proxy.settings import ProxySettings
from tests.support.processes import eventually
from tests.support.proxy.running import ALICE_KEY, RunningProxy
from tests.support.proxy.servers import ServerThread

pytestmark = [pytest.mark.integration, pytest.mark.vllm, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def vllm_proxy(real_vllm) -> Iterator[RunningProxy]:  # type: ignore[no-untyped-def]
    settings = ProxySettings(
        backend_url=real_vllm.base_url,
        api_keys={"alice": ALICE_KEY},
        backend_api_key=real_vllm.api_key,
        default_model=real_vllm.model,
    )
    server = ServerThread(create_app(settings)).start()
    try:
        yield RunningProxy(base_url=server.base_url, settings=settings)
    finally:
        server.stop()


def long_prompt() -> str:
    """Several hundred tokens, new to the cache (a fresh id up front)."""
    return f"[{uuid.uuid4().hex}] " + " ".join(f"line {n}: the quick brown fox." for n in range(80))


def cached_counted(proxy: RunningProxy, before: float) -> float:
    """The key's cached tokens counted since `before`."""
    return proxy.metric("stackctl_proxy_cached_tokens_total", key="alice") - before


def test_openai_clients_get_vllms_cached_tokens_and_the_key_counts_them(vllm_proxy: RunningProxy) -> None:
    client = vllm_proxy.openai()
    messages = [{"role": "user", "content": long_prompt()}]
    before = vllm_proxy.metric("stackctl_proxy_cached_tokens_total", key="alice")
    first = client.chat.completions.create(model="any", messages=messages, max_tokens=2)
    second = client.chat.completions.create(model="any", messages=messages, max_tokens=2)
    assert first.usage and second.usage and second.usage.prompt_tokens_details
    cached = second.usage.prompt_tokens_details.cached_tokens or 0
    # The second request is the first again: vLLM serves all but the last block from its cache.
    assert 0 < cached < second.usage.prompt_tokens
    assert cached >= second.usage.prompt_tokens - 64, second.usage
    first_cached = (first.usage.prompt_tokens_details.cached_tokens or 0) if first.usage.prompt_tokens_details else 0
    counted = cached_counted(vllm_proxy, before)
    assert counted == cached + first_cached
    # Streamed, the usage chunk passes through untouched.
    stream = client.chat.completions.create(model="any", messages=messages, max_tokens=2, stream=True,
                                            stream_options={"include_usage": True})
    usage = [chunk.usage for chunk in stream if chunk.usage is not None][-1]
    assert usage.prompt_tokens_details and usage.prompt_tokens_details.cached_tokens == cached
    # ... and the key counts it as well (the relay reads the last usage report), once the
    # proxy's side of the stream ends (maybe just after the client read its last event).
    total = counted + cached
    assert eventually(lambda: cached_counted(vllm_proxy, before) == total), cached_counted(vllm_proxy, before)


def test_anthropic_clients_get_cache_reads_with_input_tokens_the_uncached_rest(vllm_proxy: RunningProxy) -> None:
    """Anthropic's usage: the whole prompt is input_tokens + cache_read_input_tokens. Both shapes
    of the reply, read by the official SDK (streamed: its accumulator over message_start and
    message_delta)."""
    client = vllm_proxy.anthropic()
    request = {"model": "any", "max_tokens": 2, "messages": [{"role": "user", "content": long_prompt()}]}
    before = vllm_proxy.metric("stackctl_proxy_cached_tokens_total", key="alice")
    first = client.messages.create(**request)
    second = client.messages.create(**request)
    with client.messages.stream(**request) as stream:
        streamed = stream.get_final_message()
    prompt = first.usage.input_tokens + (first.usage.cache_read_input_tokens or 0)
    for reply in (second, streamed):
        cached = reply.usage.cache_read_input_tokens or 0
        assert prompt - 64 <= cached < prompt, reply.usage  # all but the last block, from cache
        assert reply.usage.input_tokens == prompt - cached, reply.usage
        assert reply.usage.cache_creation_input_tokens == 0, reply.usage
    expected = sum(reply.usage.cache_read_input_tokens or 0 for reply in (first, second, streamed))
    assert eventually(lambda: cached_counted(vllm_proxy, before) == expected), cached_counted(vllm_proxy, before)


def test_responses_clients_get_vllms_cached_tokens(vllm_proxy: RunningProxy) -> None:
    """/v1/responses: usage.input_tokens_details.cached_tokens as vLLM sent it, streamed or not."""
    client = vllm_proxy.openai()
    request = {"model": "any", "input": long_prompt(), "max_output_tokens": 16}
    before = vllm_proxy.metric("stackctl_proxy_cached_tokens_total", key="alice")
    first = client.responses.create(**request)
    second = client.responses.create(**request)
    streamed = [event for event in client.responses.create(**request, stream=True)
                if event.type == "response.completed"][-1].response  # fmt: skip
    assert first.usage and second.usage and streamed.usage
    for reply in (second, streamed):
        assert reply.usage is not None
        cached = reply.usage.input_tokens_details.cached_tokens
        assert reply.usage.input_tokens - 64 <= cached < reply.usage.input_tokens, reply.usage
    expected = sum(r.usage.input_tokens_details.cached_tokens for r in (first, second, streamed) if r.usage)
    assert eventually(lambda: cached_counted(vllm_proxy, before) == expected), cached_counted(vllm_proxy, before)
