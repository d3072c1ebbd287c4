"""The official SDKs against one base URL (nginx or the filter-proxy) with a client key from
STACKCTL_CLIENT_KEY: Anthropic Messages and OpenAI chat completions, each plain and streamed.
Prints one JSON object: per call, what came back (text length, usage, stop reason) or the error.

    python tools/gpu_check/sdk_requests.py BASE_URL MODEL
"""

from __future__ import annotations

import json
import os
import sys
import time

import anthropic
import openai


def main(base_url: str, model: str) -> None:
    key = os.environ["STACKCTL_CLIENT_KEY"]
    claude = anthropic.Anthropic(base_url=base_url, api_key=key, max_retries=0)
    gpt = openai.OpenAI(base_url=f"{base_url}/v1", api_key=key, max_retries=0)
    prompt = [{"role": "user", "content": "Say hello in one short sentence."}]
    calls = {
        "anthropic": lambda: _message(claude.messages.create(model=model, max_tokens=32, messages=prompt)),
        "anthropic_stream": lambda: _anthropic_stream(claude, model, prompt),
        "openai": lambda: _chat(gpt.chat.completions.create(model=model, max_tokens=32, messages=prompt)),
        "openai_stream": lambda: _openai_stream(gpt, model, prompt),
    }
    results = {}
    for name, call in calls.items():
        began = time.perf_counter()
        try:
            results[name] = {**call(), "seconds": round(time.perf_counter() - began, 3)}
        except Exception as error:  # noqa: BLE001 - reported, the next call still runs
            results[name] = {"error": f"{type(error).__name__}: {error}"[:500]}
    print(json.dumps(results))


def _message(message) -> dict:  # type: ignore[no-untyped-def]
    text = "".join(block.text for block in message.content if block.type == "text")
    return {"chars": len(text), "stop_reason": message.stop_reason, "input_tokens": message.usage.input_tokens,
            "output_tokens": message.usage.output_tokens}


def _anthropic_stream(client, model: str, prompt) -> dict:  # type: ignore[no-untyped-def]
    with client.messages.stream(model=model, max_tokens=32, messages=prompt) as stream:
        deltas = sum(1 for _ in stream.text_stream)
        final = stream.get_final_message()
    return {**_message(final), "text_deltas": deltas}


def _chat(completion) -> dict:  # type: ignore[no-untyped-def]
    choice = completion.choices[0]
    return {"chars": len(choice.message.content or ""), "finish_reason": choice.finish_reason,
            "prompt_tokens": completion.usage.prompt_tokens, "completion_tokens": completion.usage.completion_tokens}


def _openai_stream(client, model: str, prompt) -> dict:  # type: ignore[no-untyped-def]
    chunks = text = 0
    finish = None
    for chunk in client.chat.completions.create(model=model, max_tokens=32, messages=prompt, stream=True):
        chunks += 1
        if chunk.choices:
            text += len(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
    return {"chars": text, "chunks": chunks, "finish_reason": finish}


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
