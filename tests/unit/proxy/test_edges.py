"""Small pure pieces: SSE framing, tool_calls cleanup, aliases, keys, settings, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from stackctl.proxy.auth import KeyChecker
from stackctl.proxy.backend.client import ServedModel
from stackctl.proxy.cli import proxy_app
from stackctl.proxy.errors import ApiFormat, AuthenticationFailed, BackendUnavailable, ModelNotFound
from stackctl.proxy.http_io import invalid_request
from stackctl.proxy.model_router import ModelRouter
from stackctl.proxy.openai.tool_calls_cleanup import strip_empty_tool_calls
from stackctl.proxy.protocol.anthropic import MessagesRequest
from stackctl.proxy.protocol.sse import EventSplitter, event_data, event_payloads, split_events
from stackctl.proxy.settings import ModelAlias, ProxyConfigError, build_settings, parse_alias


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b'{"content":"a","tool_calls":[]}', b'{"content":"a"}'),
        (b'{"tool_calls": [ ],"content":"a"}', b'{"content":"a"}'),
        (b'{"tool_calls":[]}', b"{}"),
        (b'{"content":"a", "tool_calls" : []}', b'{"content":"a"}'),
        (b'{"tool_calls":[{"index":0}]}', b'{"tool_calls":[{"index":0}]}'),
        # Inside a string every quote is escaped: never touched.
        (b'{"content":"x,\\"tool_calls\\":[]"}', b'{"content":"x,\\"tool_calls\\":[]"}'),
        (b'data: {"delta":{"tool_calls":[]}}\n\n', b'data: {"delta":{}}\n\n'),
    ],
)
def test_strip_empty_tool_calls(before: bytes, after: bytes) -> None:
    assert strip_empty_tool_calls(before) == after
    if after.startswith(b"{"):
        json.loads(after)


def test_event_splitter_handles_any_read_boundaries() -> None:
    raw = b"data: a\n\ndata: b\r\n\r\n: comment\n\ndata: c1\ndata: c2\n\nda"
    for cut in range(1, len(raw)):
        splitter = EventSplitter()
        events = splitter.feed(raw[:cut]) + splitter.feed(raw[cut:])
        assert [event_data(e) for e in events] == [b"a", b"b", None, b"c1\nc2"]
        assert splitter.rest() == b"da"


@pytest.mark.parametrize(
    "raw",
    [
        b"data: a\n\ndata: b\n\n",
        b"data: a\n\n: comment\n\ndata: c1\ndata: c2\n\ndata:no-space\n\n",
        b"data: a\r\n\r\ndata: b\n\n\n\n",
        b"event: x\ndata: {}\n\n",
    ],
)
def test_whole_events_per_read_give_the_same_data_as_event_by_event(raw: bytes) -> None:
    for cut in range(1, len(raw)):
        splitter = EventSplitter()
        blocks = [splitter.complete(raw[:cut]), splitter.complete(raw[cut:])]
        fast = [payload for block in blocks for payload in event_payloads(block)]
        assert fast == [event_data(event) for block in blocks for event in split_events(block)]
        assert [p for p in fast if p is not None] == [
            p for p in (event_data(e) for e in EventSplitter().feed(raw)) if p is not None
        ]


def test_model_router() -> None:
    router = ModelRouter(
        aliases=(ModelAlias("claude-*", "big"), ModelAlias("gpt-4o", "small")),
        default_model=None,
        served=("big", "small"),
    )
    assert router.resolve("small") == "small"
    assert router.resolve("claude-opus-4-1") == "big"
    assert router.resolve("gpt-4o") == "small"
    with pytest.raises(ModelNotFound, match="gpt-4o-mini.*served: big, small"):
        router.resolve("gpt-4o-mini")
    assert router.match("claude-opus-4-1") == "big" and router.match("big") == "big"
    assert router.match("gpt-4o-mini") is None
    router.default_model = "small"
    assert router.resolve("anything") == "small"
    assert router.match("anything") == "small"


class _CountingBackend:
    """Stands in for the backend's model list; counts how often the proxy asks for it."""

    def __init__(self) -> None:
        self.asked = 0

    async def model_list(self) -> tuple[ServedModel, ...]:
        self.asked += 1
        return (ServedModel("big", 4096), ServedModel("new-model", 8192))


def test_routed_names_never_wait_for_a_model_list_refresh() -> None:
    import asyncio

    from stackctl.proxy.backend.window_fit import WindowFit
    from stackctl.proxy.context import ProxyContext

    backend = _CountingBackend()
    context = ProxyContext(
        settings=None,  # type: ignore[arg-type]
        backend=backend,  # type: ignore[arg-type]
        router=ModelRouter(aliases=(ModelAlias("claude-*", "big"),), default_model=None),
        keys=None,  # type: ignore[arg-type]
        metrics=None,  # type: ignore[arg-type]
        gate=None,  # type: ignore[arg-type]
        fit=WindowFit(windows={"big": 4096}),
    )
    # Stale from the start: an aliased name still resolves without a backend round trip...
    assert asyncio.run(context.resolve_model("claude-sonnet-4-6")) == "big"
    assert backend.asked == 0
    # ...while a name nothing routes asks once, and finds a model served since.
    assert asyncio.run(context.resolve_model("new-model")) == "new-model"
    assert backend.asked == 1


def test_key_checker() -> None:
    checker = KeyChecker({"alice": "k1", "bob": "k2"}, enabled=True)
    assert checker.key_name({"x-api-key": "k2"}) == "bob"
    assert checker.key_name({"authorization": "Bearer k1"}) == "alice"
    for headers in ({}, {"x-api-key": "k3"}, {"authorization": "Basic k1"}):
        with pytest.raises(AuthenticationFailed):
            checker.key_name(headers)
    assert KeyChecker({}, enabled=False).key_name({}) == "anonymous"


def test_settings_keys_from_env_and_file(tmp_path: Path) -> None:
    keys_file = tmp_path / "keys"
    keys_file.write_text("# team keys\ncarol = k3\n\n")
    settings = build_settings(
        backend_url="http://127.0.0.1:8000/",
        keys_file=keys_file,
        env={"STACKCTL_PROXY_KEYS": "alice=k1, bob=k2", "VLLM_API_KEY": "vk"},
    )
    assert settings.api_keys == {"alice": "k1", "bob": "k2", "carol": "k3"}
    assert settings.backend_url == "http://127.0.0.1:8000"
    assert settings.backend_api_key == "vk"
    assert "k1" not in repr(settings) and "vk" not in repr(settings)


@pytest.mark.parametrize(
    ("env", "file_text", "message"),
    [
        ({}, None, "no API keys"),
        ({"STACKCTL_PROXY_KEYS": "alice"}, None, "entry 1: expected name=key"),
        ({"STACKCTL_PROXY_KEYS": "a b=k"}, None, "must be 1-64 letters"),
        ({"STACKCTL_PROXY_KEYS": "a=1,a=2"}, None, "appears twice"),
        ({"STACKCTL_PROXY_KEYS": "a=1"}, "a=2", "set in both"),
        ({}, "ok=1\nbroken\n", "keys:2: expected name=key"),
        ({"STACKCTL_PROXY_PING_SECONDS": "0"}, "a=1", "must be a positive number"),
    ],
)
def test_settings_errors_name_the_problem_not_the_key(
    tmp_path: Path, env: dict[str, str], file_text: str | None, message: str
) -> None:
    keys_file = None
    if file_text is not None:
        keys_file = tmp_path / "keys"
        keys_file.write_text(file_text)
    with pytest.raises(ProxyConfigError, match=message) as caught:
        build_settings(backend_url="http://b", keys_file=keys_file, env=env)
    assert "=1" not in str(caught.value) and "=2" not in str(caught.value)


def test_alias_syntax() -> None:
    assert parse_alias(" claude-* = big ") == ModelAlias("claude-*", "big")
    for bad in ("claude", "=big", "claude="):
        with pytest.raises(ProxyConfigError, match="PATTERN=MODEL"):
            parse_alias(bad)


def test_backend_url_must_be_http() -> None:
    with pytest.raises(ProxyConfigError, match="not an http"):
        build_settings(backend_url="localhost:8000", no_auth=True, env={})


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["serve", "--backend", "http://127.0.0.1:9"], {"STACKCTL_PROXY_KEYS": ""}, "no API keys"),
        (
            ["serve", "--backend", "http://127.0.0.1:9", "--no-auth", "--alias", "x"],
            {},
            "bad --alias",
        ),
        (
            ["serve", "--backend", "http://127.0.0.1:9", "--keys-file", "/nonexistent/keys"],
            {},
            "cannot read keys file",
        ),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(
    args: list[str], env: dict[str, str], message: str
) -> None:
    result = CliRunner().invoke(proxy_app, args, env=env)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_error_shapes() -> None:
    error = BackendUnavailable("down")
    assert error.status_for(ApiFormat.ANTHROPIC) == 529
    assert error.status_for(ApiFormat.OPENAI) == 503
    assert json.loads(error.body(ApiFormat.ANTHROPIC)) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "down"},
    }
    assert json.loads(error.body(ApiFormat.OPENAI))["error"]["code"] == "backend_unavailable"


def test_validation_errors_name_the_deepest_field() -> None:
    with pytest.raises(ValidationError) as caught:
        MessagesRequest.model_validate(
            {
                "model": "m",
                "max_tokens": 1,
                "messages": [{"role": "user", "content": [{"type": "text"}]}],
            }
        )
    assert invalid_request(caught.value).message.startswith("messages.0.content.0.text.text:")
