"""Healthy logs of stackctl's own native stack (tests/data/healthy_logs) read as `stackctl logs SERVICE
--explain` reads them: no failure. A warning (a GPU-less host's exporter, udev's database missing in
a container) may stay; each log's reading is printed (`pytest -s`) so a reader sees it."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from stackctl.commands.diagnosis_output import explain_logs
from stackctl.diagnosis import Cause, Severity, diagnose_service_log
from tests.unit.diagnosis.reading import DEFAULTS, diagnosed
from tests.unit.diagnosis.real_logs import DATA

HEALTHY_LOGS = DATA / "healthy_logs"
NATIVE_SERVICES = ("vllm", "filter-proxy", "nginx", "prometheus", "node-exporter", "gpu-exporter", "supervisord")


def test_every_service_of_the_native_stack_has_its_healthy_log():
    assert sorted(path.stem for path in HEALTHY_LOGS.glob("*.log")) == sorted(NATIVE_SERVICES)


@pytest.mark.parametrize("service", NATIVE_SERVICES)
def test_a_healthy_services_log_shows_no_failure(service: str):
    lines = (HEALTHY_LOGS / f"{service}.log").read_text().splitlines(keepends=True)
    output = io.StringIO()
    exit_code = explain_logs(Console(file=output, width=200), lines, service, DEFAULTS)
    shown = output.getvalue()
    print(f"{service}: {shown}")
    diagnosis = diagnose_service_log(service, lines, DEFAULTS)
    assert diagnosis is None or diagnosis.severity is Severity.advisory, shown
    assert exit_code == 0 and "cause:" not in shown and "failure:" not in shown, shown




def test_stackctls_gpu_exporter_without_a_gpu_is_a_warning_and_vllm_without_one_still_fails():
    exporter = diagnosed([("gpu-exporter: no GPU (nvml_library_not_found: NVML Shared Library Not Found); "
                          "serving http://127.0.0.1:9835/metrics")], "gpu-exporter")
    assert exporter.cause is Cause.no_gpu and exporter.severity is Severity.advisory
    assert exporter.values["reason"] == "nvml_library_not_found" and "nvidia-smi" in exporter.fix.text
    engine = diagnosed(["pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found"], "vllm")
    assert engine.cause is Cause.no_gpu and engine.severity is Severity.fatal


def test_supervisords_start_up_notices_at_crit_are_no_failure_and_its_crit_errors_still_are():
    notices = [("2026-11-25 01:04:42,273 CRIT Supervisor is running as root.  Privileges were not dropped because no "
               "user is specified in the config file.  If you intend to run as root, you can set user=root in the "
               "config file to avoid this message."),
               "2013-02-21 09:44:41,482 CRIT Supervisor running as root (no user in config file)",
               "2016-04-12 10:02:11,008 CRIT Set uid to user 1000",
               "2026-11-25 01:04:42,275 CRIT Server 'unix_http_server' running without any HTTP authentication checking",
               "2019-07-01 12:00:00,001 CRIT Server 'inet_http_server' running without any HTTP authentication checking"]
    assert diagnose_service_log("supervisord", notices, DEFAULTS) is None
    failed = diagnosed([*notices, "2019-07-01 12:00:00,002 CRIT could not write pidfile /var/run/supervisord.pid"],
                       "supervisord")
    assert failed.severity is Severity.fatal and "could not write pidfile" in failed.summary
