"""Property-based fuzzing of the five body-reading routes (hypothesis, deterministic).

Over 10,000 generated requests, sent over one kept-alive connection to a real
`stackctl proxy serve` process (its own process, so its log and its memory are its alone) in
front of the scripted backend: mutated valid requests (fields removed, retyped, nested past
the parser's depth cap, huge numbers, unknown block types), random JSON documents, and
corrupted bytes, with assorted content types and keys. Every reply must be a real reply or a
well-formed 4xx in the route's API shape (a 5xx only where the backend itself failed), the
connection must survive, the proxy may log no traceback and no error, nothing may stay in
flight, and the proxy's memory must stay bounded.

derandomize=True and no example database: every run tries the same cases, so CI is stable.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.processes import free_port
from tests.support.proxy.hostile import ROUTES, VALID, check_reply, headers_for
from tests.support.proxy.running import ALICE_KEY, BOB_KEY
from tests.support.proxy.scripted_backend import SERVED_MODEL, ScriptedBackend
from tests.support.proxy.servers import KeptAliveConnection, wait_until_healthy

pytestmark = pytest.mark.integration

MUTATED, RANDOM_JSON, CORRUPTED = 6000, 2000, 2000  # 10,000 cases
_SETTINGS = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)

_TOOL = {
    "name": "read_file",
    "description": "Read a file.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
}
# Valid requests that touch most fields and block types: the seeds mutations start from.
RICH: dict[str, dict[str, Any]] = {
    "/v1/messages": {
        "model": "claude-x",
        "max_tokens": 32,
        "system": [{"type": "text", "text": "Be terse."}],
        "tools": [_TOOL, {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}],
        "tool_choice": {"type": "auto"},
        "temperature": 0.2,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "stream": False,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "u1"},
        "messages": [
            {"role": "user", "content": "scenario:text"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": ""},
                    {"type": "text", "text": "reading"},
                    {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "x = 1"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                    },
                    {"type": "text", "text": "scenario:text"},
                ],
            },
        ],
    },
    "/v1/chat/completions": {
        "model": "gpt-4o",
        "stream": False,
        "max_tokens": 32,
        "temperature": 0.5,
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "messages": [
            {"role": "system", "content": "Be terse."},
            {"role": "user", "content": [{"type": "text", "text": "scenario:text"}]},
        ],
    },
    "/v1/completions": VALID["/v1/completions"],
    # What Codex sends: namespaced tools, reasoning (encrypted too), calls and their outputs.
    "/v1/responses": {
        "model": "gpt-4o",
        "stream": False,
        "max_output_tokens": 32,
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {}},
            {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "f", "parameters": {}}]},
            {"type": "web_search", "external_web_access": False},
        ],
        "tool_choice": {"type": "function", "name": "f"},
        "include": ["reasoning.encrypted_content"],
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be terse."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "scenario:text"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}], "encrypted_content": "x"},
            {"type": "function_call", "call_id": "c1", "name": "f", "namespace": "ns", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            {"role": "user", "content": "scenario:text"},
        ],
    },
}
RICH["/v1/messages/count_tokens"] = {
    key: value for key, value in RICH["/v1/messages"].items() if key != "max_tokens"
}

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=16)
    | st.sampled_from(["scenario:text", "text", "image", "tool_use", "user", "assistant", ""])
)
json_values = st.recursive(
    _scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.text(max_size=8) | st.sampled_from(["type", "text"]), children, max_size=4
        )
    ),
    max_leaves=10,
)
_HUGE = st.sampled_from([10**20, -(10**20), 10**400, 2**63, 2**64, 1e308, -1e308, 5e-324])
_CONTENT_TYPES = st.sampled_from(
    ["application/json"] * 6
    + [None, "application/json; charset=utf-8", "application/vnd.api+json", "text/plain", ""]
)
_KEYS = st.sampled_from([ALICE_KEY] * 8 + [BOB_KEY, "sk-wrong"])


def _locations(document: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _locations(value, (*path, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _locations(value, (*path, index))


def _replace(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return document


def _get(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


_DEEP_MARK = "\u0000deep\u0000"


@st.composite
def mutated_bodies(draw: st.DrawFn, route: str) -> bytes:
    document = copy.deepcopy(RICH[route])
    deep_values: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(_locations(document))))
        target = _get(document, path)
        operation = draw(
            st.sampled_from(["replace", "delete", "add", "nest", "huge", "type", "scalar"])
        )
        if operation == "replace":
            document = _replace(document, path, draw(json_values))
        elif operation == "delete" and path:
            parent = _get(document, path[:-1])
            del parent[path[-1]]
        elif operation == "add" and isinstance(target, dict):
            target[draw(st.text(max_size=10))] = draw(json_values)
        elif operation == "nest":  # around the parser's depth cap of 200, and far past it
            depth = draw(st.integers(1, 260) | st.sampled_from([1000, 5000]))
            wrapper = draw(st.sampled_from(["list", "dict"]))
            if depth > 260:  # past what json.dumps itself can write: spliced in as text
                deep_values.append(
                    "[" * depth + "]" * depth
                    if wrapper == "list"
                    else '{"a":' * depth + "1" + "}" * depth
                )
                document = _replace(document, path, _DEEP_MARK)
                continue
            value = target
            for _ in range(depth):
                value = [value] if wrapper == "list" else {"a": value}
            document = _replace(document, path, value)
        elif operation == "huge":
            document = _replace(document, path, draw(_HUGE))
        elif operation == "type" and isinstance(target, dict):
            target["type"] = draw(st.text(max_size=12) | st.sampled_from(["hologram", None, 7]))
        else:
            document = _replace(document, path, draw(_scalars))
    text = json.dumps(document)
    for deep in deep_values:
        text = text.replace(json.dumps(_DEEP_MARK), deep, 1)
    return text.encode()


@st.composite
def corrupted_bytes(draw: st.DrawFn, route: str) -> bytes:
    body = bytearray(json.dumps(RICH[route]).encode())
    kind = draw(st.sampled_from(["flip", "truncate", "random", "invalid_utf8"]))
    if kind == "random":
        return draw(st.binary(max_size=256))
    if kind == "truncate":
        return bytes(body[: draw(st.integers(0, len(body) - 1))])
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(body) - 1))
        if kind == "invalid_utf8":
            body[index : index + 1] = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"]))
        else:
            body[index] = draw(st.integers(0, 255))
    return bytes(body)


@dataclass
class ProxyProcess:
    base_url: str
    process: subprocess.Popen[bytes]
    log: Path

    def rss_bytes(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS for the proxy")

    def log_problems(self) -> list[str]:
        lines = self.log.read_text(errors="replace").splitlines()
        return [line for line in lines if "Traceback" in line or " ERROR " in line]


class Fuzzer:
    """Sends each case, checks the reply, counts cases; the connection is kept throughout."""

    def __init__(self, proxy: ProxyProcess, backend: ScriptedBackend) -> None:
        self.proxy = proxy
        self.backend = backend
        self.connection = KeptAliveConnection(proxy.base_url)
        self.cases = 0

    def send(self, route: str, body: bytes, content_type: str | None, key: str) -> None:
        failures = self.backend.failures
        headers = headers_for(key, content_type)
        if content_type == "":
            headers["content-type"] = ""
        reply = self.connection.request("POST", route, body, headers)
        self.cases += 1
        if reply.status >= 500 and self.backend.failures > failures:
            return  # the backend failed, not the proxy
        check_reply(route, reply)

    def still_sound(self) -> None:
        for route in ROUTES:  # a normal request works, on the same connection
            body = json.dumps(VALID[route]).encode()
            reply = self.connection.request("POST", route, body, headers_for(ALICE_KEY))
            assert reply.status == 200, reply.body[:300]
        assert not self.proxy.log_problems(), self.proxy.log_problems()[:5]
        deadline = time.monotonic() + 5  # a stream ends on the proxy just after its last byte
        while True:
            metrics = httpx.get(self.proxy.base_url + "/metrics").text
            in_flight = re.findall(r"^stackctl_proxy_in_flight\{.*\} (\S+)$", metrics, re.MULTILINE)
            if all(float(value) == 0 for value in in_flight) or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert in_flight and all(float(value) == 0 for value in in_flight), in_flight


@pytest.fixture(scope="module")
def fuzzer(scripted_backend, tmp_path_factory) -> Iterator[Fuzzer]:  # type: ignore[no-untyped-def]
    backend, backend_url = scripted_backend
    port = free_port()
    log = tmp_path_factory.mktemp("fuzz") / "proxy.log"
    env = {
        **os.environ,
        "STACKCTL_PROXY_KEYS": f"alice={ALICE_KEY},bob={BOB_KEY}",
        "STACKCTL_PROXY_SEARCH_BACKEND": "off",
    }
    command = [sys.executable, "-m", "stackctl.proxy", "serve", "--port", str(port)]
    command += ["--backend", backend_url, "--alias", f"claude-*={SERVED_MODEL}"]
    command += ["--alias", f"gpt-4o*={SERVED_MODEL}"]
    with open(log, "wb") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    proxy = ProxyProcess(f"http://127.0.0.1:{port}", process, log)
    try:
        wait_until_healthy(proxy.base_url, process)
        fuzzer = Fuzzer(proxy, backend)
        yield fuzzer
        fuzzer.connection.close()
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def rss_at_start(fuzzer: Fuzzer) -> int:
    fuzzer.still_sound()  # warm: pools, caches, lazily built models
    return fuzzer.proxy.rss_bytes()


_routes = st.sampled_from(list(ROUTES))


def test_mutated_requests(fuzzer: Fuzzer, rss_at_start: int) -> None:
    @settings(_SETTINGS, max_examples=MUTATED)
    @given(data=st.data(), route=_routes, content_type=_CONTENT_TYPES, key=_KEYS)
    def case(data: st.DataObject, route: str, content_type: str | None, key: str) -> None:
        fuzzer.send(route, data.draw(mutated_bodies(route)), content_type, key)

    before = fuzzer.cases
    case()
    assert fuzzer.cases - before >= MUTATED
    fuzzer.still_sound()


def test_random_json_documents(fuzzer: Fuzzer) -> None:
    @settings(_SETTINGS, max_examples=RANDOM_JSON)
    @given(document=json_values, route=_routes, content_type=_CONTENT_TYPES, key=_KEYS)
    def case(document: Any, route: str, content_type: str | None, key: str) -> None:
        fuzzer.send(route, json.dumps(document).encode(), content_type, key)

    before = fuzzer.cases
    case()
    assert fuzzer.cases - before >= RANDOM_JSON
    fuzzer.still_sound()


def test_corrupted_bytes(fuzzer: Fuzzer, rss_at_start: int) -> None:
    @settings(_SETTINGS, max_examples=CORRUPTED)
    @given(data=st.data(), route=_routes, key=_KEYS)
    def case(data: st.DataObject, route: str, key: str) -> None:
        fuzzer.send(route, data.draw(corrupted_bytes(route)), "application/json", key)

    before = fuzzer.cases
    case()
    assert fuzzer.cases - before >= CORRUPTED
    fuzzer.still_sound()
    # Bounded memory: 10,000 hostile requests leave the proxy's RSS near where it was warm.
    rss = fuzzer.proxy.rss_bytes()
    print(
        f"fuzz: {fuzzer.cases} cases; proxy RSS {rss_at_start / 2**20:.1f} -> {rss / 2**20:.1f} MiB"
    )
    assert rss - rss_at_start < 16 * 1024 * 1024, "the proxy's memory grew with hostile input"
