"""doctor's request-failures rows: the requests a running vLLM failed, per class, from its log
(real request failures from tests/data/service_failures), each with its count, the latest one and
its fix; one failure's traceback counts once."""

from __future__ import annotations

from stackctl.diagnosis import Cause
from stackctl.diagnosis.request_tally import tally_request_failures
from stackctl.doctor.request_failures import check_request_failures
from stackctl.doctor.result import Status
from tests.support.fakehost import context, make_host
from tests.support.stack_builder import make_stack
from tests.unit.diagnosis.real_logs import SERVICE_FAILURES, read_headers


def lines_of(name: str) -> list[str]:
    return read_headers(SERVICE_FAILURES / f"{name}.log")[1]


SERVING = ['INFO:     127.0.0.1:50000 - "POST /v1/chat/completions HTTP/1.1" 200 OK']
TOOL_PARSER = lines_of("tool_parser_failure__vllm-issue-26561")
OVERFLOW = lines_of("request_context_overflow__vllm-issue-20409")
SYSTEM = lines_of("system_message_position__eta-issue-59")


def native_stack_with_vllm_log(tmp_path, lines: list[str] | None):
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny")
    if lines is not None:
        stack.layout.logs.mkdir(parents=True, exist_ok=True)
        (stack.layout.logs / "vllm.log").write_text("\n".join(lines) + "\n")
    return stack


def test_each_class_is_counted_once_per_failure_and_read_from_its_latest():
    log = [*SERVING, *TOOL_PARSER, *SERVING, *OVERFLOW, *SERVING, *TOOL_PARSER, *SYSTEM, *SERVING, *TOOL_PARSER]
    tallies = {tally.cause: tally for tally in tally_request_failures(log)}
    assert {cause: tally.count for cause, tally in tallies.items()} == {
        Cause.tool_parser_failure: 3, Cause.request_context_overflow: 1, Cause.system_message_position: 1}
    overflow = tallies[Cause.request_context_overflow].latest
    assert overflow.fix.key == "vllm.max_model_len" and overflow.values["window"] == 16384
    assert tallies[Cause.tool_parser_failure].latest.fix.flag == "--tool-call-parser"


def test_doctor_shows_a_row_per_class_with_its_count_and_fix(tmp_path):
    stack = native_stack_with_vllm_log(tmp_path, [*SERVING, *OVERFLOW, *SERVING, *OVERFLOW, *TOOL_PARSER])
    rows = check_request_failures(context(stack, make_host(tmp_path)))
    assert [row.status for row in rows] == [Status.warn, Status.warn]
    assert rows[0].name == "request-failures" and rows[0].found.startswith("2 × a conversation (112946 tokens)")
    assert "latest: ValueError: This model's maximum context length is 16384 tokens" in rows[0].found
    assert "vllm.max_model_len" in rows[0].fix
    assert rows[1].found.startswith("1 × vLLM's tool-call parser (hermes)") and "--tool-call-parser" in rows[1].fix


def test_a_clean_log_or_none_at_all_is_ok(tmp_path):
    clean = check_request_failures(context(native_stack_with_vllm_log(tmp_path / "a", SERVING * 3),
                                           make_host(tmp_path / "a")))
    expected = "no request failed in the last 3 lines of vLLM's log"
    assert [(row.status, row.found) for row in clean] == [(Status.ok, expected)]
    missing = check_request_failures(context(native_stack_with_vllm_log(tmp_path / "b", None), make_host(tmp_path / "b")))
    assert [(row.status, row.found) for row in missing] == [(Status.ok, "vLLM has no log yet (not started)")]
