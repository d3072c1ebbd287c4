"""The record a failed `up` leaves for `doctor`: written whole, secrets masked, private, cleared."""

from __future__ import annotations

import stat

from stackctl.diagnosis.start_record import (
    clear_failed_start,
    read_failed_start,
    record_failed_start,
    record_path,
    stack_file_sha256,
)
from stackctl.envfile import read_env, secret_values
from tests.support.stack_builder import make_stack


def test_a_failed_start_round_trips_with_secrets_masked(tmp_path):
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny")
    key = read_env(stack.layout.env_file)["VLLM_API_KEY"]
    lines = [f"INFO non-default args: {{'api_key': '{key}'}}", "vllm: error: unrecognized arguments: --typo"]
    path = record_failed_start(stack.layout, service="vllm", message=f"vllm exited (key {key})", log_tail=lines,
                               runtime="native")
    assert path == record_path(stack.layout) and stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    for secret in secret_values(stack.layout.env_file):
        assert secret not in text
    record = read_failed_start(stack.layout)
    assert record.service == "vllm" and record.runtime == "native"
    assert record.log_tail == ["INFO non-default args: {'api_key': '***'}", lines[1]]
    assert record.message == "vllm exited (key ***)"
    assert record.stack_file_sha256 == stack_file_sha256(stack.layout) != ""


def test_clearing_and_unreadable_records_read_as_none(tmp_path):
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny")
    assert read_failed_start(stack.layout) is None
    record_failed_start(stack.layout, service="nginx", message="m", log_tail=[], runtime="native")
    clear_failed_start(stack.layout)
    assert read_failed_start(stack.layout) is None
    clear_failed_start(stack.layout)  # nothing to clear is fine
    record_path(stack.layout).write_text("{not json")
    assert read_failed_start(stack.layout) is None
