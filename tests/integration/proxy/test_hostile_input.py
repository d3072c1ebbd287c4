"""Known hostile inputs, on every route: a well-formed 4xx in the route's API shape, the same
kept-alive connection still serving, and no traceback in the log (issue 13's findings)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.proxy.hostile import ANTHROPIC, ROUTES, VALID, check_reply, headers_for
from tests.support.proxy.running import ALICE_KEY, RunningProxy
from tests.support.proxy.servers import KeptAliveConnection, LogProblems

pytestmark = pytest.mark.integration

MIB = 1024 * 1024
_WRONG_VALUES = [None, True, -1, 1.5, "x", [], {}, [[]], {"type": "nope"}, 10**30]


def _with(route: str, **changes: object) -> bytes:
    return json.dumps({**VALID[route], **changes}).encode()


def hostile_bodies(route: str) -> Iterator[tuple[str, bytes, str | None, int | None]]:
    """(name, body, content type, the status it must get: None = any well-formed answer)."""
    json_type = "application/json"
    yield "deep arrays (the RecursionError finding)", b"[" * 5000, json_type, 400
    yield "deep objects", b'{"a":' * 5000, json_type, 400
    deep = json.loads("[" * 150 + "]" * 150)  # under the parser's depth cap: judged by content
    yield "deep value in a field", _with(route, metadata={"x": deep}, extra=deep), json_type, None
    yield "invalid UTF-8", b'{"model": "\xff\xfe", "messages": []}', json_type, 400
    yield "lone surrogate", b'{"model": "\\ud800", "messages": []}', json_type, 400
    yield "NUL bytes", b"\x00" * 64, json_type, 400
    yield "empty body", b"", json_type, 400
    yield "whitespace body", b"  \n ", json_type, 400
    yield "JSON null", b"null", json_type, 400
    yield "JSON array", b"[1, 2]", json_type, 400
    yield "trailing garbage", _with(route) + b"}", json_type, 400
    yield "NaN", _with(route)[:-1] + b', "temperature": NaN}', json_type, None
    yield (
        "huge integer",
        _with(route)[:-1] + b', "max_tokens": ' + b"9" * 5000 + b"}",
        json_type,
        400,
    )
    yield "1e999", _with(route)[:-1] + b', "temperature": 1e999}', json_type, None
    yield "text/plain", _with(route), "text/plain", 415
    yield "form", b"model=x&messages=y", "application/x-www-form-urlencoded", 415
    yield "multipart", b"--b\r\n\r\n--b--", "multipart/form-data; boundary=b", 415
    yield "no content type", _with(route), None, None
    yield "1 MB model name", _with(route, model="m" * MIB), json_type, None
    for field in VALID[route]:
        for value in _WRONG_VALUES:
            yield f"{field}={value!r}"[:60], _with(route, **{field: value}), json_type, None
    if ROUTES[route] == ANTHROPIC:
        unknown = [{"role": "user", "content": [{"type": "hologram", "data": "x"}]}]
        yield "unknown block type", _with(route, messages=unknown), json_type, 400
        untyped = [{"role": "user", "content": [{"text": "no type"}]}]
        yield "block without type", _with(route, messages=untyped), json_type, 400
        yield "temperature 1e999", _with(route, temperature=1e999), json_type, None


CASES = [
    pytest.param(route, body, content_type, status, id=f"{route}:{name}")
    for route in ROUTES
    for name, body, content_type, status in hostile_bodies(route)
]


@pytest.fixture(scope="module")
def connection(proxy: RunningProxy) -> Iterator[KeptAliveConnection]:
    kept = KeptAliveConnection(proxy.base_url)
    yield kept
    kept.close()


@pytest.fixture
def log_problems(proxy: RunningProxy) -> Iterator[LogProblems]:
    handler = LogProblems().attach()
    yield handler
    handler.detach()


@pytest.mark.parametrize(("route", "body", "content_type", "status"), CASES)
def test_hostile_body_gets_a_proper_error_and_keeps_the_connection(
    connection: KeptAliveConnection,
    log_problems: LogProblems,
    route: str,
    body: bytes,
    content_type: str | None,
    status: int | None,
) -> None:
    reply = connection.request("POST", route, body, headers_for(ALICE_KEY, content_type))
    check_reply(route, reply)
    if status is not None:
        assert reply.status == status, reply.body[:300]
    # The same connection serves the next client request.
    normal = connection.request(
        "POST", route, json.dumps(VALID[route]).encode(), headers_for(ALICE_KEY)
    )
    assert normal.status == 200, normal.body[:300]
    assert not log_problems.records, log_problems.lines()


def _over_the_limit() -> Iterator[bytes]:
    piece = b" " * MIB
    for _ in range(64):
        yield piece
    yield b"{}"


@pytest.mark.parametrize("route", list(ROUTES))
def test_bodies_over_64_mib_get_413_and_keep_the_connection(
    connection: KeptAliveConnection, log_problems: LogProblems, route: str
) -> None:
    body = b" " * (64 * MIB) + b"{}"
    for content in (body, _over_the_limit()):  # declared (content-length) and chunked
        reply = connection.request("POST", route, content, headers_for(ALICE_KEY))
        assert reply.status == 413, reply.body[:300]
        check_reply(route, reply)
        assert "64 MiB limit" in reply.json()["error"]["message"]
    normal = connection.request(
        "POST", route, json.dumps(VALID[route]).encode(), headers_for(ALICE_KEY)
    )
    assert normal.status == 200
    assert not log_problems.records, log_problems.lines()


def test_the_body_limit_is_nginx_s(proxy: RunningProxy) -> None:
    site = Path(__file__).resolve().parents[3] / "nginx" / "stackctl-site.conf.j2"
    assert "client_max_body_size 64m;" in site.read_text()
    assert proxy.settings.max_body_bytes == 64 * MIB
