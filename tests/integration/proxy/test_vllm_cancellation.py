"""A client that walks away mid-stream frees vLLM's slot: proven on the real vLLM CPU engine
by its own gauge, `vllm:num_requests_running`, returning to 0 (and generation stopping well
short of max_tokens), through both the Anthropic translation and the OpenAI pass-through."""

from __future__ import annotations

import re
import time

import httpx
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.vllm, pytest.mark.timeout(900)]

MAX_TOKENS = 1500  # the demo model's context is 2048; on 2 CPU cores this takes many seconds


def vllm_metric(base_url: str, name: str) -> float:
    text = httpx.get(base_url + "/metrics", timeout=10).text
    pattern = "^" + re.escape(name) + r"(?:\{[^}]*\})? (\S+)$"
    return sum(float(value) for value in re.findall(pattern, text, re.MULTILINE))


def wait_for(condition, timeout: float) -> float | None:  # type: ignore[no-untyped-def]
    """Seconds until `condition()` held, or None if it never did."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if condition():
            return time.monotonic() - started
        time.sleep(0.05)
    return None


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/messages", {"max_tokens": MAX_TOKENS, "temperature": 1.0}),
        # ignore_eos (a vLLM extension, passed through): the model cannot end by itself.
        ("/v1/chat/completions", {"max_tokens": MAX_TOKENS, "ignore_eos": True}),
    ],
)
def test_client_disconnect_frees_the_vllm_slot(
    real_vllm, proxy_over_vllm: str, path: str, body: dict[str, object]
) -> None:  # type: ignore[no-untyped-def]
    def running() -> float:
        return vllm_metric(real_vllm.base_url, "vllm:num_requests_running")

    request = {
        "model": "any",
        "stream": True,
        "messages": [{"role": "user", "content": "Write a very long story."}],
        **body,
    }
    # The demo model has 504 tokens, one of them EOS: through /v1/messages (no ignore_eos) it
    # may end by itself early. Such an attempt proves nothing; the next one is taken.
    for _attempt in range(5):
        assert wait_for(lambda: running() == 0, 60)
        generated_before = vllm_metric(real_vllm.base_url, "vllm:generation_tokens_total")
        with httpx.stream("POST", proxy_over_vllm + path, json=request, timeout=120) as response:
            assert response.status_code == 200
            deltas = 0
            lines = response.iter_lines()  # kept: a dropped iterator would close the connection
            for line in lines:
                deltas += '"content_block_delta"' in line or '"delta":{"content"' in line
                if deltas >= 20:
                    break
            if running() == 1:
                break  # caught while generating: leaving the block, the client walks away
    else:
        pytest.fail("the model ended by itself five times in a row before 20 tokens")
    # The client left (the connection is closed). vLLM must stop generating for it.
    freed_after = wait_for(lambda: running() == 0, 15)
    assert freed_after is not None, "vLLM kept generating for a client that left"
    time.sleep(0.5)  # let the counter settle
    generated = vllm_metric(real_vllm.base_url, "vllm:generation_tokens_total") - generated_before
    print(
        f"{path}: slot freed {freed_after:.2f} s after the disconnect; "
        f"{generated:.0f} of {MAX_TOKENS} tokens generated"
    )
    assert generated < MAX_TOKENS * 0.8
