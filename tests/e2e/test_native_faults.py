"""Fault paths of `stackctl up --runtime native`: a clear error, a hint, nothing left running."""

import json
import socket

import pytest

from tests.support.cli import error_line, run_cli
from tests.support.stacks import DemoStack, make_demo_stack

pytestmark = [pytest.mark.e2e, pytest.mark.vllm]


def assert_nothing_running(stack: DemoStack, before: set[int]) -> None:
    assert not stack.pid_records(), "a failed `up` left services recorded as running"
    after = stack_process_ids(stack)
    assert after <= before, f"processes left running: {after - before}"


def stack_process_ids(stack: DemoStack) -> set[int]:
    """Processes whose command line mentions this stack's directory or its vLLM port."""
    import os

    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(stack.root) in command or f"--port {stack.ports['vllm']}" in command:
            found.add(int(entry))
    return found


def test_service_that_exits_at_start_shows_log_tail_and_its_fix(tmp_path):
    stack = make_demo_stack(tmp_path / "stack", vllm={"extra_args": ["--no-such-flag"]})
    before = stack_process_ids(stack)
    # An 80-column terminal: the fix is still printed whole, on one line.
    result = run_cli("up", cwd=stack.root, env={"COLUMNS": "80"}, timeout=900)
    assert result.returncode == 1
    line = error_line(result)
    assert "vllm exited during start" in line
    assert "unrecognized arguments: --no-such-flag" in result.stderr  # the log tail
    fix = ("fix: remove --no-such-flag from vllm.extra_args in stack.yaml: this vLLM has no such flag (removed, "
           "newer than this engine, or only in a patched build; `stackctl doctor` parses the flags with the installed "
           "engine venv's vLLM, where one is installed)")
    lines = result.stderr.splitlines()
    assert "cause: vLLM does not know --no-such-flag" in lines and fix in lines
    assert "…" not in result.stderr
    assert_nothing_running(stack, before)

    # The failure stays explainable after the fact: from the service's log, and in doctor.
    assert (stack.root / ".stackctl" / "last-failed-start.json").exists()
    explained = stack.cli("logs", "vllm", "--explain")
    assert explained.returncode == 1 and fix in explained.stdout.splitlines()
    doctor = stack.cli("doctor", "--json", timeout=300)
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    assert checks["last-start"]["status"] == "fail"
    assert checks["last-start"]["fix"] == fix.removeprefix("fix: ")


def up_while_the_proxy_port_is_taken(stack, *flags: str):  # type: ignore[no-untyped-def]
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", stack.ports["proxy"]))
        squatter.listen()
        return stack.cli("up", *flags, timeout=300)


def test_doctor_preflight_stops_up_on_a_busy_port(tmp_path):
    stack = make_demo_stack(tmp_path / "stack")
    before = stack_process_ids(stack)
    result = up_while_the_proxy_port_is_taken(stack)
    assert result.returncode == 1
    line = error_line(result)
    assert "`doctor --fast` found 1 failing check(s), so nothing was started" in line
    assert f"fail ports: in use: proxy {stack.ports['proxy']}" in result.stderr
    assert "fix: stop what holds them" in result.stderr
    assert not (stack.root / ".stackctl" / "logs").exists(), "a service was started anyway"
    assert_nothing_running(stack, before)


def test_port_in_use_fails_before_starting_anything(tmp_path):
    """With the doctor skipped, the native runtime's own preflight still refuses."""
    stack = make_demo_stack(tmp_path / "stack")
    before = stack_process_ids(stack)
    result = up_while_the_proxy_port_is_taken(stack, "--skip-checks")
    assert result.returncode == 1
    assert "starting anyway (--skip-checks)" in result.stderr
    line = error_line(result)
    assert f"port {stack.ports['proxy']} (filter-proxy) is already in use" in line
    assert "ports:" in line
    assert not (stack.root / ".stackctl" / "logs" / "vllm.log").exists(), "vLLM was started anyway"
    assert_nothing_running(stack, before)


def test_health_gate_timeout_stops_the_service(tmp_path):
    stack = make_demo_stack(tmp_path / "stack", start_timeouts={"vllm": 3})
    before = stack_process_ids(stack)
    result = stack.cli("up")
    assert result.returncode == 1
    line = error_line(result)
    assert "vllm did not become healthy in 3 s (last check:" in line
    assert "full log:" in line and "log lines" in result.stderr
    assert_nothing_running(stack, before)


def test_a_window_past_the_models_positions_is_refused_before_start_and_vllm_agrees(tmp_path):
    stack = make_demo_stack(tmp_path / "stack", vllm={"max_model_len": 262144})
    before = stack_process_ids(stack)
    result = stack.cli("up")
    assert result.returncode == 1
    assert "`doctor --fast` found 1 failing check(s), so nothing was started" in error_line(result)
    assert "fail model-window: max_model_len 262144; the model takes 131072 tokens" in result.stderr
    assert "fix: set vllm.max_model_len: 131072 (or less) in stack.yaml" in result.stderr
    assert not (stack.root / ".stackctl" / "logs").exists(), "a service was started anyway"
    # Started anyway, vLLM refuses the same window for the same reason.
    forced = stack.cli("up", "--skip-checks")
    assert forced.returncode == 1
    assert "is greater than the derived max_model_len (max_position_embeddings=131072" in forced.stderr
    assert_nothing_running(stack, before)
