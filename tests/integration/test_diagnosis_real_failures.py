"""Failures caused for real on this machine, each diagnosed from the log the real program wrote:
Prometheus that may not read its configuration file (told apart from one it cannot parse), and
supervisord giving up on a program that exits as soon as it starts."""

import os
import shutil
import subprocess
import sys

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, diagnose_service_log
from stackctl.layout import StackLayout
from tests.support.processes import eventually, free_port, require
from tests.support.stack_builder import render_into

pytestmark = pytest.mark.integration

# The uid the prom/prometheus image runs as; root reads any file, so the test drops to it.
NOBODY = 65534


def _as_nobody(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return [require("setpriv"), f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]


def test_prometheus_that_may_not_read_its_config_is_told_apart_from_a_config_it_cannot_parse(tmp_path):
    layout = StackLayout(tmp_path / "stack")
    config = parse_stack_config({"hardware": "cpu", "model": "tiny"})
    render_into(layout, config)
    rendered = layout.rendered / "prometheus/prometheus.yml"
    # A file the user Prometheus runs as may not read (Prometheus reads it before it opens its storage).
    rendered.chmod(0o000)
    done = subprocess.run(_as_nobody([require("prometheus"), f"--config.file={rendered}",
                                      f"--storage.tsdb.path={tmp_path / 'data'}",
                                      f"--web.listen-address=127.0.0.1:{free_port()}"]),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    lines = (done.stdout + done.stderr).splitlines()
    assert any("permission denied" in line for line in lines), lines
    diagnosis = diagnose_service_log("prometheus", lines, config, failed=True)
    assert diagnosis is not None and diagnosis.cause is Cause.prometheus_config_permission, lines
    assert diagnosis.values["path"] == str(rendered)
    assert "65534" in diagnosis.fix.text and "chmod" in diagnosis.fix.text
    assert "promtool" not in diagnosis.fix.text  # the YAML is fine: nothing to correct in it


def test_supervisord_giving_up_on_a_program_that_exits_at_once_is_diagnosed(tmp_path):
    supervisord = shutil.which("supervisord", path=os.path.dirname(sys.executable)) or require("supervisord")
    log = tmp_path / "supervisord.log"
    conf = tmp_path / "supervisord.conf"
    conf.write_text(
        "[supervisord]\n"
        f"logfile={log}\npidfile={tmp_path / 'supervisord.pid'}\nnodaemon=true\n"
        f"[unix_http_server]\nfile={tmp_path / 'supervisor.sock'}\n"
        "[program:engine]\n"
        # Exits with status 3 at once: never up for startsecs, so supervisord retries and gives up
        # (a shell, not Python: on a loaded machine Python's start alone can outlast a short startsecs).
        "command=/bin/sh -c \"exit 3\"\nstartsecs=5\nstartretries=0\nautorestart=false\n"
    )
    process = subprocess.Popen([supervisord, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert eventually(lambda: log.exists() and "gave up: engine" in log.read_text(), timeout_s=20), \
            log.read_text() if log.exists() else "no log"
    finally:
        process.terminate()
        process.wait(timeout=10)
    lines = log.read_text().splitlines()
    diagnosis = diagnose_service_log("supervisord", lines, None, failed=True)
    assert diagnosis is not None and diagnosis.cause is Cause.supervisor_gave_up, lines
    assert diagnosis.values["program"] == "engine" and diagnosis.values["exit_status"] == 3
    assert "stackctl logs engine --explain" in diagnosis.fix.text
