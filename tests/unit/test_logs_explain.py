"""`stackctl logs SERVICE --explain` through the real CLI on a native stack's log files."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from stackctl.cli import app
from stackctl.errors import StackError
from tests.support.stack_builder import make_stack
from tests.unit.diagnosis.real_logs import FAILURE_LOGS, SERVICE_FAILURES, read_headers, read_log


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
    assert result.output.strip() == "no error found in the last 2 lines of vllm's log"


def test_a_service_never_started_is_one_error(tmp_path):
    result = explain(tmp_path, "vllm", None)
    assert result.exit_code != 0 and isinstance(result.exception, StackError)
    assert "has it been started?" in str(result.exception)


def test_log_text_is_printed_as_is_not_as_markup(tmp_path):
    line = "[rank0]: RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    result = explain(tmp_path, "vllm", [line])
    assert f"from the log line: {line}" in result.output.splitlines()


# One real failure log (tests/data/service_failures) for every service a native stack runs, and the
# supervisor that runs them: each is explained with a cause and a whole fix.
KNOWN = [
    ("nginx", "nginx_upstream_down__docker-nginx-issue-450.log", "warning: nginx could not reach its upstream"),
    ("prometheus", "prometheus_storage_permission__prometheus-issue-9704.log", "cause: Prometheus may not write"),
    ("grafana", "grafana_data_permission__gordo-issue-922.log", "cause: Grafana may not write"),
    ("node-exporter", "mount_propagation__node-exporter-issue-2518.log", "cause: "),
    ("certbot", "certbot_dns_missing__certbot-issue-2777.log", "cause: "),
    ("supervisord", "supervisor_command_missing__supervisor-issue-748.log", "cause: supervisord cannot find"),
]


@pytest.mark.parametrize(("service", "name", "cause"), KNOWN, ids=[service for service, *_ in KNOWN])
def test_every_service_s_log_is_explained(tmp_path, service, name, cause):
    headers, lines = read_headers(SERVICE_FAILURES / name)
    assert headers["service"] == service
    result = explain(tmp_path, service, lines)
    output = result.output.splitlines()
    assert any(line.startswith(cause) for line in output), result.output
    assert any(line.startswith("fix: ") for line in output), result.output


# An error no signature knows, in each service's own log format: the fallback leads with it. A
# crash (an exception, [emerg], a fatal record) is fatal; an error record a service may survive is
# a warning, since --explain cannot tell whether the service is still up.
UNKNOWN = [
    ("vllm", "(EngineCore_DP0 pid=7) ERROR 01-01 00:00:00 [core.py:1] ZeroDivisionError: an unheard-of failure",
     True),
    ("filter-proxy", "RuntimeError: an unheard-of failure", True),
    ("nginx", "2026/01/01 00:00:00 [emerg] 1#1: an unheard-of failure (38: Function not implemented)", True),
    ("prometheus", 'ts=2026-01-01T00:00:00Z level=error caller=main.go:1 msg="an unheard-of failure"', False),
    ("prometheus", "ERRO[0000] an unheard-of failure  source=main.go:126", False),
    ("grafana", 'logger=server t=2026-01-01T00:00:00Z level=error msg="an unheard-of failure"', False),
    ("node-exporter", 'ts=2026-01-01T00:00:00Z level=fatal caller=node_exporter.go:1 err="an unheard-of failure"',
     True),
    ("certbot", "certbot.errors.FailedChallenges: an unheard-of failure", True),
    ("supervisord", "2026-01-01 00:00:00,000 CRIT an unheard-of failure", True),
]


@pytest.mark.parametrize(("service", "line", "fatal"), UNKNOWN, ids=[f"{service}-{index}" for index, (service, *_)
                                                                     in enumerate(UNKNOWN)])
def test_an_unknown_error_in_any_service_s_log_leads_with_the_error_line(tmp_path, service, line, fatal):
    result = explain(tmp_path, service, ["INFO starting", line, "INFO shutting down"])
    assert result.exit_code == (1 if fatal else 0), result.output
    output = result.output.splitlines()
    label, what = ("failure: ", f"what stopped {service}") if fatal else ("warning: ", f"the last error {service} logged")
    assert output[0].startswith(label) and "unheard-of" in output[0], result.output
    assert output[1].startswith(f"fix: no fix is named in the log: the error shown is {what}"), result.output
    assert f"stackctl logs {service}" in output[1]
