"""Window refusals as real backends word them (recorded bodies, public issues)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackctl.proxy.backend.window_refusals import WindowRefusal, read_window_refusal

DATA = Path(__file__).resolve().parents[2] / "data"


def body_of(path: Path) -> str:
    header, *lines = path.read_text().splitlines()
    assert header.startswith("# source: ")
    return "\n".join(lines)


EXPECTED = {
    "context_refusals/vllm-0.32-max-tokens-over-window": WindowRefusal(False, 65536, None),
    "context_refusals/vllm-0.32-prompt-over-window": WindowRefusal(True, 65536, 65537, at_least=True),
    "context_refusals/vllm-0.32-prompt-characters-over-window": WindowRefusal(True, 65536, None),
    "context_refusals/vllm-requested-prompt-plus-completion": WindowRefusal(True, 16384, 112946),
    "context_refusals/openai-messages-resulted-in": WindowRefusal(True, 16385, 26620),
    "vllm_request_errors/context_overflow__specreason-issue-4": WindowRefusal(False, 8192, 7691),
    "vllm_request_errors/context_overflow__ogx-issue-4534": WindowRefusal(False, 6048, 568),
    "vllm_request_errors/context_overflow__llama-verifications-issue-58": WindowRefusal(True, 131072, 152536),
    "vllm_request_errors/context_overflow__step-audio-r1-issue-3": WindowRefusal(False, None, None),
    "vllm_request_errors/context_overflow__grounded-rl-issue-16": WindowRefusal(True, 8192, 10127),
}


def test_every_recorded_refusal_has_an_expectation():
    recorded = {f"context_refusals/{p.stem}" for p in (DATA / "context_refusals").glob("*.txt")}
    recorded |= {f"vllm_request_errors/{p.stem}" for p in (DATA / "vllm_request_errors").glob("context_overflow__*.txt")}
    assert recorded == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_refusals_are_read(name):
    assert read_window_refusal(400, body_of(DATA / f"{name}.txt")) == EXPECTED[name]


def test_other_errors_are_not_window_refusals():
    assert read_window_refusal(400, '{"error": {"message": "System message must be at the beginning."}}') is None
    assert read_window_refusal(404, body_of(DATA / "context_refusals/vllm-0.32-prompt-over-window.txt")) is None
    assert read_window_refusal(400, b"\xff not json") is None
