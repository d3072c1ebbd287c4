"""Per-key admission and its settings: the windows, the token rule, retry-after, parsing."""

from __future__ import annotations

import pytest

from stackctl.proxy.backend.queue_watch import waiting_requests
from stackctl.proxy.errors import RateLimited
from stackctl.proxy.limit_settings import (
    KeyLimits,
    LimitConfigError,
    LimitOptions,
    LimitSettings,
    build_limit_settings,
)
from stackctl.proxy.rate_limits import KeyLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limiter(clock: Clock, **limits: int) -> KeyLimiter:
    return KeyLimiter(LimitSettings(per_key=KeyLimits(**limits)), clock=clock)


def refused(limiter: KeyLimiter, key: str = "alice") -> RateLimited:
    with pytest.raises(RateLimited) as caught:
        limiter.admit(key)
    return caught.value


def test_concurrency_frees_a_slot_when_a_request_ends() -> None:
    clock = Clock()
    limits = limiter(clock, max_concurrent=2)
    first, _second = limits.admit("alice"), limits.admit("alice")
    error = refused(limits)
    assert (error.reason, error.headers()) == ("concurrent", {"retry-after": "1"})
    limits.admit("bob")  # keys are counted apart
    first.release(0)
    first.release(0)  # twice is once
    limits.admit("alice")
    refused(limits)


def test_requests_per_minute_slide_and_say_when_to_retry() -> None:
    clock = Clock()
    limits = limiter(clock, requests_per_minute=2)
    limits.admit("alice").release(0)
    clock.now += 20
    limits.admit("alice").release(0)
    error = refused(limits)
    assert error.reason == "requests_per_minute"
    assert error.retry_after_s == pytest.approx(40)
    clock.now += 40.01  # the first request left the window
    limits.admit("alice")


def test_tokens_estimate_then_reported_usage() -> None:
    clock = Clock()
    limits = limiter(clock, tokens_per_minute=1000)
    first = limits.admit("alice")
    first.reserve(4000)  # a 4000-byte body: 1000 tokens estimated, the whole budget
    error = refused(limits)
    assert error.reason == "tokens_per_minute" and error.retry_after_s == pytest.approx(60)
    clock.now += 30
    first.release(300)  # the backend reported 300 tokens: they replace the estimate, now
    second = limits.admit("alice")
    second.reserve(2800)  # 700 more: 1000 in the window
    refused(limits)
    clock.now += 10
    second.release(0)  # nothing reported (the client left): the estimate stays
    error = refused(limits)
    # The 300 charged at t+30 leave at t+90: 60 s after they were charged.
    assert error.retry_after_s == pytest.approx(50)
    clock.now += 50.01
    limits.admit("alice")


def test_unlimited_keys_cost_nothing() -> None:
    limits = KeyLimiter(LimitSettings(overrides={"ci": KeyLimits(max_concurrent=1)}), clock=Clock())
    for _ in range(1000):
        limits.admit("alice").reserve(10**6)
    limits.admit("ci")
    assert refused(limits, "ci").reason == "concurrent"


def test_settings_from_env_and_flags() -> None:
    env = {
        "STACKCTL_PROXY_MAX_CONCURRENT": "4",
        "STACKCTL_PROXY_TOKENS_PER_MINUTE": "90000",
        "STACKCTL_PROXY_KEY_LIMITS": "ci:max_concurrent=1,requests_per_minute=30; bot:tokens_per_minute=0",
        "STACKCTL_PROXY_MAX_BACKEND_WAITING": "32",
    }
    settings = build_limit_settings(LimitOptions(), env=env, key_names=["ci", "bot", "alice"])
    assert settings.per_key == KeyLimits(max_concurrent=4, tokens_per_minute=90000)
    assert settings.for_key("ci") == KeyLimits(1, 30, 90000)
    assert settings.for_key("bot") == KeyLimits(max_concurrent=4)
    assert settings.for_key("alice") == settings.per_key
    assert (settings.max_backend_waiting, settings.backend_poll_s) == (32, 1.0)
    # Flags win; --key-limit entries replace the variable's as a whole.
    flagged = build_limit_settings(
        LimitOptions(max_concurrent=0, key_limits=("bot:max_concurrent=9",)), env=env, key_names=["ci", "bot"]
    )
    assert flagged.per_key == KeyLimits(tokens_per_minute=90000)
    assert flagged.overrides == {"bot": KeyLimits(max_concurrent=9, tokens_per_minute=90000)}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"env": {"STACKCTL_PROXY_MAX_CONCURRENT": "-2"}}, "must be a whole number"),
        ({"max_concurrent": -1}, "--max-concurrent -1 must be 0"),
        ({"key_limits": ("ci",)}, "expected KEY_NAME:LIMIT=N"),
        ({"key_limits": ("ci:rpm=3",)}, "'rpm=3' is not LIMIT=N"),
        ({"key_limits": ("ci:max_concurrent=two",)}, "must be a whole number"),
        ({"key_limits": ("nobody:max_concurrent=1",)}, "no API key has that name"),
        ({"key_limits": ("ci:max_concurrent=1", "ci:max_concurrent=2")}, "twice"),
        ({"backend_poll_s": 0.0}, "between 0 and 60"),
    ],
)
def test_bad_limits_say_how_to_write_them(arguments: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(LimitConfigError, match=message):
        env = arguments.pop("env", {})
        build_limit_settings(LimitOptions(**arguments), env=env, key_names=["ci"])


def test_waiting_requests_reads_only_its_metric() -> None:
    text = (
        "# HELP vllm:num_requests_waiting Number of requests waiting.\n"
        "# TYPE vllm:num_requests_waiting gauge\n"
        'vllm:num_requests_waiting{engine="0",model_name="a"} 3.0\n'
        'vllm:num_requests_waiting{engine="1",model_name="a"} 4.0\n'
        'vllm:num_requests_waiting_by_reason{reason="capacity"} 99.0\n'
        'vllm:num_requests_running{model_name="a"} 8.0\n'
    )
    assert waiting_requests(text) == 7.0
    assert waiting_requests("up 1\n") is None
