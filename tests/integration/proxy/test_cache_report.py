"""The cache report over HTTP (`/admin/cache-report`, `/admin/capture`): real SDK clients
through the proxy to the scripted backend, sessions followed turn by turn, a client whose system
prompt carries the time named at the right byte, and the admin API's keys."""

from __future__ import annotations

import stat
import uuid
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from stackctl.proxy.settings import ProxySettings
from tests.support.proxy.running import ALICE_KEY, BOB_KEY, RunningProxy
from tests.support.proxy.scripted_backend import SERVED_MODEL

pytestmark = pytest.mark.integration

ADMIN = {"authorization": "Bearer sk-backend-secret"}  # conftest's backend key (VLLM_API_KEY)
SYSTEM = "You are a careful coding agent. Answer briefly.\nCurrent time: {now}\nWork in /repo."


@pytest.fixture
def tracked(start_proxy, base_settings: ProxySettings, tmp_path: Path) -> RunningProxy:  # type: ignore[no-untyped-def]
    return start_proxy(replace(base_settings, capture_dir=tmp_path / "captures"))


def report(proxy: RunningProxy, **params: str) -> dict:
    reply = httpx.get(proxy.base_url + "/admin/cache-report", params=params, headers=ADMIN, timeout=10)
    assert reply.status_code == 200, reply.text
    return reply.json()


def sessions_of(document: dict, key: str) -> list[dict]:
    return next(entry["sessions"] for entry in document["keys"] if entry["key"] == key)


def test_an_anthropic_conversation_keeps_its_prefix_streamed_and_not(tracked: RunningProxy) -> None:
    client = tracked.anthropic()
    marker = uuid.uuid4().hex
    messages: list[dict] = [{"role": "user", "content": f"{marker} list the files"}]
    for turn in range(3):
        request = {"model": "claude-stack", "max_tokens": 32, "system": "You are terse.", "messages": messages}
        if turn == 1:
            reply = client.messages.create(**request)
        else:
            with client.messages.stream(**request) as stream:
                reply = stream.get_final_message()
        messages = [*messages, {"role": "assistant", "content": reply.content[0].text},
                    {"role": "user", "content": f"and turn {turn + 2}"}]
    session = sessions_of(report(tracked), "alice")[0]
    assert [t["outcome"] for t in session["turns"]] == ["first", "kept", "kept"]
    assert session["breaks"] == 0 and session["turns_total"] == 3
    assert [t["messages"] for t in session["turns"]] == [2, 4, 6]  # the system message, then the turns
    assert all(t["route"] == "/v1/messages" for t in session["turns"])
    # The scripted backend's usage reached the turns (prompt tokens; it caches nothing).
    assert all(t["prompt_tokens"] and t["cached_tokens"] == 0 for t in session["turns"])
    metrics = httpx.get(tracked.base_url + "/metrics", timeout=10).text
    assert 'stackctl_proxy_prefix_requests_total{key="alice",outcome="kept"} 2.0' in metrics


def test_a_system_prompt_with_the_time_in_it_is_named_at_the_right_byte(tracked: RunningProxy) -> None:
    client = tracked.openai(BOB_KEY)
    marker = uuid.uuid4().hex
    history: list[dict] = [{"role": "user", "content": f"{marker} fix the failing test"}]
    for second in (3, 4, 5):
        system = SYSTEM.format(now=f"2026-11-24T08:15:0{second}Z")
        reply = client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "system", "content": system}, *history], max_tokens=16,
            stream=second == 4,
        )
        text = "ok" if second == 4 else reply.choices[0].message.content  # type: ignore[union-attr]
        history += [{"role": "assistant", "content": text}, {"role": "user", "content": "go on"}]
    session = sessions_of(report(tracked), "bob")[0]
    turns = session["turns"]
    assert [t["outcome"] for t in turns] == ["first", "broken", "broken"] and session["breaks"] == 2
    byte = SYSTEM.index("{now}")
    assert turns[1]["change"] == f"messages[0] (system).content changed at byte {byte}: a timestamp"
    # Kept: the model's name (the served one, as the backend got it), then the text up to the time.
    assert turns[1]["kept_messages"] == 0 and turns[1]["kept_bytes"] == len(SERVED_MODEL) + byte
    metrics = httpx.get(tracked.base_url + "/metrics", timeout=10).text
    assert 'stackctl_proxy_prefix_broken_sessions_total{key="bob"} 1.0' in metrics


def test_a_capture_adds_the_diff_and_the_exact_byte_in_owner_only_files(tracked: RunningProxy,
                                                                         tmp_path: Path) -> None:
    switched = httpx.post(tracked.base_url + "/admin/capture", json={"minutes": 5}, headers=ADMIN, timeout=10)
    assert switched.status_code == 200 and switched.json()["active"] is True
    client = tracked.openai()
    marker = uuid.uuid4().hex
    for second in (3, 7):
        system = SYSTEM.format(now=f"2026-11-24T08:15:0{second}Z")
        client.chat.completions.create(model="gpt-4o", max_tokens=8, messages=[
            {"role": "system", "content": system}, {"role": "user", "content": f"{marker} hello"}])
    turn = sessions_of(report(tracked), "alice")[0]["turns"][1]
    exact = SYSTEM.index("{now}") + len("2026-11-24T08:15:0")
    assert turn["change"] == f"messages[0] (system).content changed at byte {exact}: a timestamp"
    assert "-Current time: 2026-11-24T08:15:03Z\n+Current time: 2026-11-24T08:15:07Z\n" in turn["diff"]
    captured = sorted((tmp_path / "captures").rglob("*.jsonl"))
    assert len(captured) == 2
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in captured)
    assert not any(key in path.read_text() for path in captured for key in (ALICE_KEY, "sk-backend-secret"))
    stopped = httpx.post(tracked.base_url + "/admin/capture", json={"minutes": 0}, headers=ADMIN, timeout=10)
    assert stopped.json()["active"] is False
    assert not list((tmp_path / "captures").rglob("*.jsonl"))
    assert report(tracked)["capture"]["active"] is False


@pytest.mark.parametrize(("headers", "status", "words"), [
    ({}, 401, "missing key"),
    ({"authorization": f"Bearer {ALICE_KEY}"}, 403, "not a client key"),
    ({"x-api-key": "sk-wrong"}, 403, "backend key (VLLM_API_KEY)"),
])
def test_the_admin_api_answers_the_backend_key_only(tracked: RunningProxy, headers: dict, status: int,
                                                    words: str) -> None:
    for method, path, body in (("GET", "/admin/cache-report", None), ("POST", "/admin/capture", {"minutes": 1})):
        reply = httpx.request(method, tracked.base_url + path, json=body, headers=headers, timeout=10)
        assert reply.status_code == status, reply.text
        assert words in reply.json()["error"]["message"]


def test_without_a_backend_key_the_admin_api_is_off(start_proxy, base_settings: ProxySettings) -> None:  # type: ignore[no-untyped-def]
    keyless = start_proxy(replace(base_settings, backend_api_key=None))
    reply = httpx.get(keyless.base_url + "/admin/cache-report", headers=ADMIN, timeout=10)
    assert reply.status_code == 403 and "the admin API is off" in reply.json()["error"]["message"]


@pytest.mark.parametrize(("path", "params", "body", "words"), [
    ("/admin/cache-report", {"sessions": "0"}, None, "1 to 1000"),
    ("/admin/cache-report", {"sessions": "many"}, None, "1 to 1000"),
    ("/admin/capture", None, {"minutes": -1}, "minutes"),
    ("/admin/capture", None, {"minutes": 100000}, "minutes"),
])
def test_bad_admin_requests_say_what_to_send(tracked: RunningProxy, path: str, params: dict | None,
                                             body: dict | None, words: str) -> None:
    method = "POST" if body is not None else "GET"
    reply = httpx.request(method, tracked.base_url + path, params=params, json=body, headers=ADMIN, timeout=10)
    assert reply.status_code == 400 and words in reply.json()["error"]["message"]


def test_no_tracking_means_an_empty_report(start_proxy, base_settings: ProxySettings) -> None:  # type: ignore[no-untyped-def]
    untracked = start_proxy(replace(base_settings, sessions=0))
    untracked.openai().chat.completions.create(model="gpt-4o", max_tokens=4,
                                               messages=[{"role": "user", "content": "hi"}])
    document = report(untracked)
    assert document["capacity"] == 0 and document["keys"] == []
