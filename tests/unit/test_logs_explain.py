"""`stackctl logs SERVICE --explain` through the real CLI on a native stack's log files."""

from __future__ import annotations

from typer.testing import CliRunner

from stackctl.cli import app
from stackctl.errors import StackError
from tests.support.stack_builder import make_stack
from tests.unit.diagnosis.real_logs import FAILURE_LOGS, read_log


def explain(tmp_path, service: str, log: list[str] | None):
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny")
    if log is not None:
        stack.layout.logs.mkdir(parents=True, exist_ok=True)
        (stack.layout.logs / f"{service}.log").write_text("\n".join(log) + "\n")
    return CliRunner().invoke(app, ["--dir", str(stack.layout.root), "logs", service, "--explain"],
                              env={"COLUMNS": "80"})


def test_a_fatal_failure_is_named_with_its_whole_fix_and_exit_1(tmp_path):
    _source, lines = read_log(FAILURE_LOGS / "kv_cache_too_small__vllm-issue-34076.log")
    result = explain(tmp_path, "vllm", ["INFO starting", *lines])
    assert result.exit_code == 1, result.output
    output = result.output.splitlines()
    assert "cause: one sequence of max_model_len 262144 needs 24 GiB of KV cache; 3.18 GiB is available" in output
    assert ("fix: set vllm.max_model_len to 34736 or less (--max-model-len), or raise vllm.gpu_memory_utilization "
            "if the GPU has room") in output
    assert any(line.startswith("from the log line: (EngineCore_DP0 pid=1094) ValueError") for line in output)


def test_nginx_port_clash_names_the_stack_yaml_key(tmp_path):
    _source, lines = read_log(FAILURE_LOGS / "port_in_use__docker-nginx-issue-50.log")
    result = explain(tmp_path, "nginx", lines)  # make_stack keeps the default ports: http is 80
    assert result.exit_code == 1
    assert ("fix: stop what holds port 80 (`ss -ltnp 'sport = :80'`) or move ports.http in stack.yaml to a free "
            "port") in result.output.splitlines()


def test_a_warning_only_log_exits_0(tmp_path):
    result = explain(tmp_path, "vllm", ["WARNING [envs.py:1] Unknown vLLM environment variable detected: VLLM_TYPO"])
    assert result.exit_code == 0
    assert result.output.startswith("warning: vLLM ignores VLLM_TYPO")


def test_a_clean_log_says_so_and_exits_0(tmp_path):
    result = explain(tmp_path, "vllm", ["INFO vLLM API server version 0.32.0", "INFO Application startup complete."])
    assert result.exit_code == 0
    assert result.output.strip() == "no known failure found in the last 2 lines of vllm's log"


def test_a_service_never_started_is_one_error(tmp_path):
    result = explain(tmp_path, "vllm", None)
    assert result.exit_code != 0 and isinstance(result.exception, StackError)
    assert "has it been started?" in str(result.exception)


def test_log_text_is_printed_as_is_not_as_markup(tmp_path):
    line = "[rank0]: RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    result = explain(tmp_path, "vllm", [line])
    assert f"from the log line: {line}" in result.output.splitlines()
