"""The real vLLM CPU engine serving the tiny demo model, through the official SDKs.

The model's weights are random, so the tests check the protocol (shapes, counts, finish reasons,
tool-call plumbing), never the words.
"""

import time

import anthropic
import httpx
import openai
import pytest

from stackctl.engine import (
    default_demo_model_dir,
    default_engine_dir,
    engine_python,
    generate_demo_model,
)

pytestmark = [pytest.mark.integration, pytest.mark.vllm]

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@pytest.fixture(scope="module")
def oai(real_vllm) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{real_vllm.base_url}/v1", api_key=real_vllm.api_key)


def test_chat_completion(oai, real_vllm):
    reply = oai.chat.completions.create(
        model=real_vllm.model,
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        max_tokens=4,
    )
    assert reply.model == real_vllm.model
    assert reply.choices[0].message.role == "assistant"
    assert isinstance(reply.choices[0].message.content, str)
    assert 1 <= reply.usage.completion_tokens <= 4
    assert reply.choices[0].finish_reason in {"length", "stop"}


def test_streamed_chat_completion(oai, real_vllm):
    stream = oai.chat.completions.create(
        model=real_vllm.model,
        messages=[{"role": "user", "content": "Hi"}],
        max_tokens=8,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] in {"length", "stop"}
    assert chunks[-1].usage is not None and 1 <= chunks[-1].usage.completion_tokens <= 8


def test_messages_api_with_anthropic_sdk(real_vllm):
    client = anthropic.Anthropic(base_url=real_vllm.base_url, api_key=real_vllm.api_key)
    reply = client.messages.create(
        model=real_vllm.model,
        max_tokens=4,
        system="Be brief.",
        messages=[{"role": "user", "content": "Hi"}],
    )
    assert reply.type == "message" and reply.role == "assistant"
    assert reply.content[0].type == "text"
    assert reply.stop_reason in {"max_tokens", "end_turn"}
    assert 1 <= reply.usage.output_tokens <= 4


def test_streamed_messages_api_with_anthropic_sdk(real_vllm):
    client = anthropic.Anthropic(base_url=real_vllm.base_url, api_key=real_vllm.api_key)
    with client.messages.stream(
        model=real_vllm.model, max_tokens=4, messages=[{"role": "user", "content": "Hi"}]
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason in {"max_tokens", "end_turn"}


def test_forced_tool_call_comes_back_as_tool_calls(oai, real_vllm):
    # tool_choice="required" makes vLLM constrain decoding to a call, so even random weights
    # produce one; the name is guaranteed, the arguments are not valid for the schema. Random
    # weights may ramble inside the JSON for a while: a fixed seed and room to finish (seen:
    # 37 to 150 tokens; 64 was sometimes cut short, so the call never closed).
    reply = oai.chat.completions.create(
        model=real_vllm.model,
        messages=[{"role": "user", "content": "Weather in Paris?"}],
        tools=[WEATHER_TOOL],
        tool_choice="required",
        max_tokens=1024,
        seed=7,
    )
    calls = reply.choices[0].message.tool_calls
    assert calls and calls[0].function.name == "get_weather"


def test_tool_history_renders_through_the_chat_template(real_vllm):
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    ]
    # /tokenize takes chat messages (not only a prompt) and applies the served template.
    tokens = httpx.post(
        f"{real_vllm.base_url}/tokenize",
        json={
            "model": real_vllm.model,
            "messages": messages,
            "tools": [WEATHER_TOOL],
            "add_generation_prompt": True,
        },
    ).json()["tokens"]
    prompt = httpx.post(
        f"{real_vllm.base_url}/detokenize", json={"model": real_vllm.model, "tokens": tokens}
    ).json()["prompt"]
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' in (
        prompt
    )
    assert "<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


def test_api_key_is_required(real_vllm):
    reply = httpx.post(
        f"{real_vllm.base_url}/v1/chat/completions",
        json={"model": real_vllm.model, "messages": [{"role": "user", "content": "Hi"}]},
    )
    assert reply.status_code == 401


def test_metrics_expose_running_requests(real_vllm):
    text = httpx.get(f"{real_vllm.base_url}/metrics").text
    assert "vllm:num_requests_running" in text


def test_demo_model_is_generated_once(real_vllm):
    started = time.monotonic()
    model_dir = generate_demo_model(engine_python(default_engine_dir()), default_demo_model_dir())
    assert time.monotonic() - started < 1.0
    assert (model_dir / "tokenizer.json").exists()
