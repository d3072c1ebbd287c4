"""The backend's usage report, read the same way on every route (protocol/usage.py)."""

from __future__ import annotations

import pytest

from stackctl.proxy.protocol.usage import ReportedUsage, chat_usage, chat_usage_in, responses_usage


def test_chat_usage_with_vllms_prompt_token_details() -> None:
    # vLLM 0.32 with --enable-prompt-tokens-details, as recorded on the CPU engine.
    usage = {"prompt_tokens": 426, "total_tokens": 429, "completion_tokens": 3,
             "prompt_tokens_details": {"cached_tokens": 384, "created_cache_tokens": 0}}
    assert chat_usage(usage) == ReportedUsage(prompt=426, completion=3, cached=384)


@pytest.mark.parametrize("details", [None, {}, {"cached_tokens": None}, {"cached_tokens": "12"}, "x"])
def test_chat_usage_without_a_cached_count_reads_zero_cached(details: object) -> None:
    # Without the flag, and on releases before vllm-project/vllm#44383 when nothing was cached.
    usage = {"prompt_tokens": 12, "completion_tokens": 4, "prompt_tokens_details": details}
    assert chat_usage(usage) == ReportedUsage(prompt=12, completion=4, cached=0)


def test_responses_usage() -> None:
    usage = {"input_tokens": 900, "output_tokens": 20, "total_tokens": 920,
             "input_tokens_details": {"cached_tokens": 880}, "output_tokens_details": {"reasoning_tokens": 0}}
    assert responses_usage(usage) == ReportedUsage(prompt=900, completion=20, cached=880)


@pytest.mark.parametrize("usage", [None, [], "usage", 3])
def test_no_usage_object_is_no_report(usage: object) -> None:
    assert chat_usage(usage) is None
    assert responses_usage(usage) is None


@pytest.mark.parametrize("value", [-5, True, 1.5, "7"])
def test_what_is_not_a_count_reads_zero(value: object) -> None:
    assert chat_usage({"prompt_tokens": value, "completion_tokens": 1}) == ReportedUsage(0, 1, 0)


def test_a_reply_document() -> None:
    document = b'{"id":"x","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,' \
               b'"prompt_tokens_details":{"cached_tokens":4}}}'
    assert chat_usage_in(document) == ReportedUsage(prompt=5, completion=2, cached=4)
    assert chat_usage_in(b"not json") is None
    assert chat_usage_in(b"[1, 2]") is None
    assert chat_usage_in(b'{"choices": []}') is None
