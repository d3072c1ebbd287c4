"""hint_for_backend_error on real vLLM error bodies (tests/data/vllm_request_errors), and its contract."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from stackctl.proxy.backend import error_hints
from stackctl.proxy.backend.error_hints import hint_for_backend_error

ERRORS = Path(__file__).resolve().parents[2] / "data" / "vllm_request_errors"


def body_of(name: str) -> str:
    header, *lines = (ERRORS / f"{name}.txt").read_text().splitlines()
    assert header.startswith("# source: https://github.com/")
    return "\n".join(lines)


# file -> (status the backend answers with, words the hint must contain)
EXPECTED = {
    "context_overflow__ogx-issue-4534": (400, ["max_tokens (6048) alone fills the 6048-token window",
                                               "at most 5480"]),
    "context_overflow__llama-verifications-issue-58": (400, ["(152536 tokens) is longer than the 131072-token window",
                                                             "vllm.max_model_len"]),
    "context_overflow__specreason-issue-4": (400, ["(7691 tokens) plus max_tokens (512) exceed the 8192-token window",
                                                   "lower max_tokens to 501 or less"]),
    "context_overflow__step-audio-r1-issue-3": (400, ["max_tokens 32000 does not fit", "vllm.max_model_len"]),
    "system_message_position__ciso-assistant-issue-4679": (400, ["one system message, first in the list"]),
    "system_message_position__vllm-issue-41114": (400, ["merge the later system messages into the first one"]),
    "unknown_model__vllm-issue-3485": (404, ["`Qwen1.5-14B-Chat-GPTQ-Int8`", "served_model_name", "aliases:"]),
    "unknown_model__vllm-pr-58025": (404, ["`not-a-served-model`", "aliases:"]),
    "unknown_model__longbench-issue-102": (404, ["`/dev/shm/glm-4-9b-chat/`", "served_model_name"]),
    "unknown_model__qwen-agent-issue-110": (404, ["`/data/Qwen1.5-72B-Chat`", "aliases:"]),
    "auto_tool_choice__langchain4j-issue-3475": (400, ["--enable-auto-tool-choice", "vllm.extra_args",
                                                       "`stackctl up`"]),
    "context_overflow__grounded-rl-issue-16": (400, ["(10127 tokens) does not fit the 8192-token window",
                                                     "vllm.max_model_len"]),
    "roles_must_alternate__autogen-issue-1037": (400, ["strictly alternating", "--chat-template"]),
    "roles_must_alternate__conversations-issue-197": (400, ["merge the system messages into the first one"]),
    "chat_template_missing__qwen3-omni-issue-105": (400, ["no chat template", "--chat-template in vllm.extra_args"]),
    "chat_template_missing__seed-x-7b-issue-7": (400, ["no chat template", "instruct variant"]),
}


def test_every_collected_error_body_has_an_expectation():
    assert {path.stem for path in ERRORS.glob("*.txt")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_error_bodies_get_their_hint(name):
    status, words = EXPECTED[name]
    hint = hint_for_backend_error(status, body_of(name))
    assert hint is not None
    for word in words:
        assert word in hint, f"{word!r} missing from: {hint}"


def test_bytes_and_each_json_shape_vllm_uses_are_read():
    message = "This model's maximum context length is 4096 tokens. However, your prompt contains 5000 input tokens"
    shapes = [{"object": "error", "message": message}, {"error": {"message": message, "code": 400}},
              {"detail": message}]
    for shape in shapes:
        hint = hint_for_backend_error(400, json.dumps(shape).encode())
        assert hint is not None and "(5000 tokens) does not fit the 4096-token window" in hint


def test_the_current_engines_prompt_too_long_message():
    body = ("{\"error\": {\"message\": \"This model's maximum context length is 2048 tokens. However, your prompt "
            "contains at least 2049 input tokens, which exceeds this limit even without any output tokens.\"}}")
    assert "(2049 tokens) does not fit the 2048-token window" in hint_for_backend_error(400, body)


def test_no_hint_for_success_unknown_errors_or_junk():
    assert hint_for_backend_error(200, body_of("unknown_model__vllm-issue-3485")) is None
    assert hint_for_backend_error(500, '{"error": {"message": "Internal server error"}}') is None
    assert hint_for_backend_error(502, b"\xff\xfe not json") is None
    assert hint_for_backend_error(400, "") is None
    assert hint_for_backend_error(400, "[1, 2]") is None


def test_the_module_imports_nothing_outside_the_standard_library():
    tree = ast.parse(Path(error_hints.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"__future__", "json", "re"}


def test_the_proxy_adds_the_hint_to_the_error_the_client_sees():
    from stackctl.proxy.backend.client import backend_error

    body = b'{"error": {"message": "System message must be at the beginning.", "type": "BadRequestError"}}'
    error = backend_error(400, body)
    assert error.status == 400 and str(error).startswith("backend answered 400: System message must be at the beginning.")
    assert str(error) != "backend answered 400: System message must be at the beginning."  # a hint follows
    assert backend_error(400, b'{"error": {"message": "something unheard of"}}').args[0] == (
        "backend answered 400: something unheard of")
