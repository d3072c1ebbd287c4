"""Failures caused for real on this machine, each diagnosed from the log the real program wrote:
Prometheus that may not read its configuration file (told apart from one it cannot parse), and
supervisord giving up on a program that exits as soon as it starts; nginx refused its key, Prometheus
finding a gap in its WAL segments, and supervisorctl with no supervisord behind its socket."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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


def test_nginx_refused_its_certificate_key_is_told_apart_from_a_key_that_is_not_there():
    # The key there, but not readable by the user nginx reads it as (natively: whoever runs it). A
    # directory of its own under /tmp: pytest's tmp_path sits in a directory only its owner may enter.
    with tempfile.TemporaryDirectory(prefix="stackctl-nginx-key-") as name:
        _nginx_key_refused_then_missing(Path(name))


def _nginx_key_refused_then_missing(tmp_path: Path) -> None:
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(tmp_path / "key.pem"),
                    "-out", str(tmp_path / "cert.pem"), "-days", "1", "-subj", "/CN=llm.lab.net"],
                   capture_output=True, check=True, timeout=60)
    (tmp_path / "key.pem").chmod(0o000 if os.geteuid() != 0 else 0o600)
    tmp_path.chmod(0o755)
    conf = tmp_path / "nginx.conf"
    conf.write_text(f"pid {tmp_path}/nginx.pid;\nerror_log stderr;\nevents {{}}\nhttp {{ server {{ listen 127.0.0.1:"
                    f"{free_port()} ssl; ssl_certificate {tmp_path}/cert.pem; ssl_certificate_key {tmp_path}/key.pem; "
                    "access_log off; } }\n")
    done = subprocess.run(_as_nobody([require("nginx"), "-t", "-q", "-p", str(tmp_path), "-c", str(conf)]),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    lines = (done.stdout + done.stderr).splitlines()
    diagnosis = diagnose_service_log("nginx", lines, None, failed=True)
    assert diagnosis is not None and diagnosis.cause is Cause.nginx_certificate_unreadable, lines
    assert diagnosis.values["certificate"] == str(tmp_path / "key.pem") and diagnosis.fix.key == "letsencrypt_dir"
    (tmp_path / "key.pem").unlink()
    done = subprocess.run(_as_nobody([require("nginx"), "-t", "-q", "-p", str(tmp_path), "-c", str(conf)]),
                          capture_output=True, text=True, timeout=60, check=False)
    lines = (done.stdout + done.stderr).splitlines()
    assert diagnose_service_log("nginx", lines, None, failed=True).cause is Cause.nginx_certificate_missing, lines


def test_prometheus_stopped_by_a_gap_in_its_wal_segments_is_the_wal_not_a_block(tmp_path):
    layout = StackLayout(tmp_path / "stack")
    config = parse_stack_config({"hardware": "cpu", "model": "tiny"})
    render_into(layout, config)
    wal = tmp_path / "data" / "wal"
    wal.mkdir(parents=True)
    # Segments 0 and 2, with 1 gone (a disk that filled up, a copy cut short).
    for segment in ("00000000", "00000002"):
        (wal / segment).write_bytes(os.urandom(32 * 1024))
    done = subprocess.run([require("prometheus"), f"--config.file={layout.rendered / 'prometheus/prometheus.yml'}",
                           f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{free_port()}"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    lines = (done.stdout + done.stderr).splitlines()
    diagnosis = diagnose_service_log("prometheus", lines, config, failed=True)
    assert diagnosis is not None and diagnosis.cause is Cause.prometheus_wal_corrupt, lines
    assert "df -h" in diagnosis.fix.text and "chunks_head/" in diagnosis.fix.text


def test_supervisorctl_with_no_supervisord_behind_its_socket_names_each_way_to_reach_one(tmp_path):
    supervisorctl = shutil.which("supervisorctl", path=os.path.dirname(sys.executable)) or require("supervisorctl")
    conf = tmp_path / "supervisord.conf"
    conf.write_text(f"[unix_http_server]\nfile={tmp_path / 'supervisor.sock'}\n[supervisorctl]\n"
                    f"serverurl=unix://{tmp_path / 'supervisor.sock'}\n[supervisord]\n")
    # `status` prints supervisorctl's own message; `update` lets Python's FileNotFoundError through.
    for command in ("status", "update"):
        done = subprocess.run([supervisorctl, "-c", str(conf), command], capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode != 0
        lines = (done.stdout + done.stderr).splitlines()
        diagnosis = diagnose_service_log("supervisord", lines, None, failed=True)
        assert diagnosis is not None and diagnosis.cause is Cause.supervisor_not_running, lines
        assert "supervisorctl -c FILE" in diagnosis.fix.text and "[unix_http_server]" in diagnosis.fix.text
