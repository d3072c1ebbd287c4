"""Rendered configs checked by the real tools: `nginx -t` and `promtool check config`; and the real
nginx running the rendered site with its upstream down, its own log diagnosed."""

import shutil
import socket
import subprocess
from contextlib import contextmanager

import httpx
import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, diagnose_service_log
from stackctl.layout import StackLayout
from tests.support.processes import eventually, free_port, services
from tests.support.stack_builder import render_into

pytestmark = pytest.mark.integration


def require(tool: str) -> str:
    path = shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/usr/bin")
    assert path, f"{tool} is not installed: run .ci/run (or apt-get install nginx prometheus)"
    return path


def nginx_test(layout: StackLayout) -> subprocess.CompletedProcess:
    (layout.state / "nginx").mkdir(parents=True, exist_ok=True)
    (layout.state / "logs").mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [require("nginx"), "-t", "-c", str(layout.rendered / "nginx/nginx.conf"), "-p", str(layout.state / "nginx")],
        capture_output=True, text=True, check=False,
    )


def self_signed(directory, hostname):
    live = directory / "live" / hostname
    live.mkdir(parents=True)
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={hostname}",
         "-keyout", str(live / "privkey.pem"), "-out", str(live / "fullchain.pem")],
        check=True, capture_output=True,
    )


def test_http_site_passes_nginx_t(tmp_path):
    layout = StackLayout(tmp_path)
    config = parse_stack_config({"hardware": "cpu", "model": "tiny", "ports": {"http": 18080},
                                 "allow_networks": ["192.168.1.0/24"]})
    render_into(layout, config, "native")
    result = nginx_test(layout)
    assert result.returncode == 0, result.stderr
    site = (layout.rendered / "nginx/stackctl-site.conf").read_text()
    for directive in ("proxy_buffering off", "proxy_cache off", "X-Accel-Buffering no", "proxy_read_timeout 3600s",
                      "proxy_send_timeout 3600s", "client_max_body_size 64m", "proxy_http_version 1.1",
                      "allow 192.168.1.0/24", "deny all", "upstream stackctl_filter_proxy_4000"):
        assert directive in site, directive
    assert "ssl_certificate" not in site  # HTTP-only until a certificate exists


def test_tls_site_with_certificate_passes_nginx_t(tmp_path):
    layout = StackLayout(tmp_path / "stack")
    self_signed(tmp_path / "le", "llm.example.org")
    config = parse_stack_config({"hostname": "llm.example.org", "services": {"tls": True},
                                 "letsencrypt_dir": str(tmp_path / "le"), "ports": {"http": 18080, "https": 18443}})
    render_into(layout, config, "native")
    result = nginx_test(layout)
    assert result.returncode == 0, result.stderr
    site = (layout.rendered / "nginx/stackctl-site.conf").read_text()
    assert "return 301 https://" in site and "listen 18443 ssl" in site
    assert str(tmp_path / "le" / "live" / "llm.example.org" / "fullchain.pem") in site


def test_nginx_in_front_of_a_filter_proxy_that_is_not_up_is_diagnosed_from_its_own_log(tmp_path):
    # Nothing listens on ports.proxy: nginx answers 502 and logs why; `logs nginx --explain` reads that log.
    ports, config = _native_nginx_stack()
    with _running_nginx(tmp_path, config) as nginx:
        answer = httpx.get(f"http://127.0.0.1:{ports['http']}/v1/models", timeout=10)
        assert answer.status_code == 502
        assert eventually(lambda: "while connecting to upstream" in nginx.log_path.read_text())
        lines = nginx.log_path.read_text().splitlines()
    diagnosis = diagnose_service_log("nginx", lines, config)
    assert diagnosis is not None and diagnosis.cause is Cause.nginx_upstream_down, lines
    assert diagnosis.fix.key == "ports.proxy" and "stackctl logs filter-proxy" in diagnosis.fix.text
    assert str(ports["proxy"]) in diagnosis.values["upstream"]


def _native_nginx_stack():
    ports = {"http": free_port(), "proxy": free_port()}
    return ports, parse_stack_config({"hardware": "cpu", "model": "tiny", "runtime": "native", "ports": ports,
                                      "services": {"monitoring": False}})


@contextmanager
def _running_nginx(tmp_path, config):
    """The real nginx running the site rendered for `config` (nothing behind it)."""
    layout = StackLayout(tmp_path / "stack")
    render_into(layout, config, "native")
    (layout.state / "nginx").mkdir(parents=True, exist_ok=True)
    (layout.state / "logs").mkdir(parents=True, exist_ok=True)
    with services(tmp_path) as group:
        yield group.start("nginx", [require("nginx"), "-c", str(layout.rendered / "nginx/nginx.conf"),
                                    "-p", str(layout.state / "nginx"), "-g", "daemon off;"],
                          ready=lambda: _listening(config.ports.http))


def _listening(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def test_prometheus_config_passes_promtool(tmp_path):
    for hardware, model in (("rtx-pro-6000", "qwen3.6-27b"), ("cpu", "tiny")):
        layout = StackLayout(tmp_path / hardware)
        render_into(layout, parse_stack_config({"hardware": hardware, "model": model}))
        result = subprocess.run([require("promtool"), "check", "config", str(layout.rendered / "prometheus/prometheus.yml")],
                                capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_real_prometheus_refusing_a_broken_prometheus_yml_is_diagnosed_with_the_line(tmp_path):
    # The rendered file with an old release's field and a broken indentation, run by the real binary.
    layout = StackLayout(tmp_path / "stack")
    config = parse_stack_config({"hardware": "cpu", "model": "tiny"})
    render_into(layout, config)
    rendered = layout.rendered / "prometheus/prometheus.yml"
    for broken, wanted in (("target_groups:\n  - targets: ['127.0.0.1:1']\n", "target_groups"),
                           ("global:\n  scrape_interval: 5s\n   evaluation_interval: 5s\n", None)):
        rendered.write_text(rendered.read_text() + broken if wanted else broken)
        done = subprocess.run([require("prometheus"), f"--config.file={rendered}",
                               f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{free_port()}"],
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode != 0
        lines = (done.stdout + done.stderr).splitlines()
        diagnosis = diagnose_service_log("prometheus", lines, config, failed=True)
        assert diagnosis is not None and diagnosis.cause is Cause.prometheus_config_invalid, lines
        assert "promtool check config" in diagnosis.fix.text and f"line {diagnosis.values['line']}" in diagnosis.fix.text
        if wanted:
            assert "static_configs" in diagnosis.fix.text and wanted in str(diagnosis.values["fields"])


def test_a_body_larger_than_the_rendered_nginx_accepts_is_diagnosed_from_what_the_client_gets(tmp_path):
    ports, config = _native_nginx_stack()
    with _running_nginx(tmp_path, config) as nginx:
        # nginx refuses on the announced length, before the body: 100 MiB is only announced.
        with socket.create_connection(("127.0.0.1", ports["http"]), timeout=10) as client:
            client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 104857600\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := client.recv(65536):
                answer += chunk
        assert eventually(lambda: "too large body" in nginx.log_path.read_text())
        server_lines = nginx.log_path.read_text().splitlines()
    client_lines = answer.decode(errors="replace").splitlines()
    assert client_lines[0].startswith("HTTP/1.1 413")
    for lines in (client_lines, server_lines):
        diagnosis = diagnose_service_log("nginx", lines, config)
        assert diagnosis is not None and diagnosis.cause is Cause.nginx_body_too_large, lines
        assert "client_max_body_size" in diagnosis.fix.text


def test_the_real_prometheus_without_its_config_file_is_told_to_create_it_not_to_correct_it(tmp_path):
    # A bind mount's host path without the file looks the same inside: --config.file names nothing.
    config = parse_stack_config({"hardware": "cpu", "model": "tiny"})
    missing = tmp_path / "prometheus/prometheus.yml"
    done = subprocess.run([require("prometheus"), f"--config.file={missing}", f"--storage.tsdb.path={tmp_path / 'data'}",
                           f"--web.listen-address=127.0.0.1:{free_port()}"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    lines = (done.stdout + done.stderr).splitlines()
    diagnosis = diagnose_service_log("prometheus", lines, config, failed=True)
    assert diagnosis is not None and diagnosis.cause is Cause.prometheus_config_missing, lines
    assert diagnosis.values["path"] == str(missing) and "create the prometheus.yml" in diagnosis.fix.text
