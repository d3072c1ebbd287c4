"""`stackctl tls issue` for real: certbot gets a certificate from pebble (Let's Encrypt's test CA)
through the running nginx (HTTP-01 webroot), nginx switches to HTTPS, streams pass unbuffered and
survive a 70 s silence (nginx's default proxy_read_timeout is 60 s), and a renewal reloads nginx.

Honest validation: pebble resolves the test domain through a loopback DNS server (`-dnsserver`)
and fetches the challenge from nginx itself; PEBBLE_VA_ALWAYS_VALID is not used.
"""

from __future__ import annotations

import os
import shlex
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import httpx
import pytest
import typer
import yaml
from typer.testing import CliRunner

from stackctl.commands import tls as tls_commands
from stackctl.config import parse_stack_config
from stackctl.layout import StackLayout
from tests.support.processes import free_port, http_ok, require, services, wait_until
from tests.support.proxy.servers import ServerThread
from tests.support.stack_builder import render_into
from tests.support.tls import LoopbackDns, SseBackend, make_tls_material, pebble_config

pytestmark = pytest.mark.integration

DOMAIN = "llm.stackctl.test"
CLIENT_KEY = "sk-test-tls-client-0123456789"  # test-only, never a real secret
LONG_PAUSE_S = 70  # > nginx's 60 s default proxy_read_timeout


@dataclass
class TlsStack:
    layout: StackLayout
    letsencrypt: Path
    ports: dict[str, int]
    backend: SseBackend
    acme_server: str
    pebble_roots_url: str
    requests_ca: Path  # trusts pebble's own HTTPS listener (for certbot's ACME calls)
    app: typer.Typer


def cli_app() -> typer.Typer:
    """What cli.py will do: a root callback holding the stack layout, plus `register(app)`."""
    app = typer.Typer()

    @app.callback()
    def _root(ctx: typer.Context, directory: Annotated[Path, typer.Option("--dir")]) -> None:
        ctx.obj = StackLayout(directory.resolve())

    tls_commands.register(app)
    return app


@pytest.fixture(scope="module")
def tls_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsStack]:
    root = tmp_path_factory.mktemp("tls")
    ports = {name: free_port() for name in ("http", "https", "proxy", "pebble", "pebble_mgmt", "pebble_tls")}
    letsencrypt = root / "letsencrypt"
    stack_yaml = {"hardware": "cpu", "model": "tiny", "runtime": "native", "hostname": DOMAIN,
                  "services": {"tls": True, "monitoring": False},
                  "letsencrypt_dir": str(letsencrypt),
                  "ports": {"http": ports["http"], "https": ports["https"], "proxy": ports["proxy"]}}
    layout = StackLayout(root / "stack")
    layout.root.mkdir()
    layout.stack_file.write_text(yaml.safe_dump(stack_yaml))
    render_into(layout, parse_stack_config(stack_yaml), "native")
    for directory in (layout.state / "nginx", layout.logs, layout.data / "acme"):
        directory.mkdir(parents=True, exist_ok=True)

    ca, cert, key = make_tls_material(root / "pebble-tls")
    config = pebble_config(root / "pebble.json", listen_port=ports["pebble"], management_port=ports["pebble_mgmt"],
                           http_port=ports["http"], tls_port=ports["pebble_tls"], cert=cert, key=key)
    backend = SseBackend()
    backend_server = ServerThread(backend.app).start()
    dns = LoopbackDns(DOMAIN).start()
    pebble_env = {**os.environ, "PEBBLE_VA_NOSLEEP": "1", "PEBBLE_WFE_NONCEREJECT": "0"}
    proxy_env = {**os.environ, "STACKCTL_PROXY_KEYS": f"client={CLIENT_KEY}", "VLLM_API_KEY": "",
                 # No SSE keep-alive pings from the proxy: the 70 s silence must reach nginx as silence.
                 "STACKCTL_PROXY_PING_SECONDS": "3600"}
    try:
        with services(root) as group:
            group.start("filter-proxy", [sys.executable, "-m", "stackctl.proxy", "serve", "--backend",
                                         backend_server.base_url, "--port", str(ports["proxy"]),
                                         "--default-model", "sse-test"],
                        env=proxy_env, ready=http_ok(f"http://127.0.0.1:{ports['proxy']}/health"))
            group.start("nginx", [require("nginx"), "-c", str(layout.rendered / "nginx/nginx.conf"),
                                  "-p", str(layout.state / "nginx"), "-g", "daemon off;"],
                        ready=http_ok(f"http://127.0.0.1:{ports['http']}/health"))
            group.start("pebble", [require("pebble"), "-config", str(config), "-dnsserver", f"127.0.0.1:{dns.port}"],
                        env=pebble_env, ready=http_ok(f"https://127.0.0.1:{ports['pebble']}/dir", verify=ssl.create_default_context(cafile=ca)))
            yield TlsStack(layout, letsencrypt, ports, backend, f"https://127.0.0.1:{ports['pebble']}/dir",
                           f"https://127.0.0.1:{ports['pebble_mgmt']}/roots/0", ca, cli_app())
    finally:
        dns.stop()
        backend_server.stop()


def https_client(stack: TlsStack, **kwargs) -> httpx.Client:  # type: ignore[no-untyped-def]
    """Trusts only pebble's root; connects to 127.0.0.1 with SNI and Host set to the domain."""
    root = httpx.get(stack.pebble_roots_url, verify=ssl.create_default_context(cafile=stack.requests_ca), timeout=10).text
    context = ssl.create_default_context(cadata=root)
    return httpx.Client(base_url=f"https://127.0.0.1:{stack.ports['https']}", verify=context,
                        headers={"Host": DOMAIN}, **kwargs)


def https_get(client: httpx.Client, path: str, **kwargs) -> httpx.Response:  # type: ignore[no-untyped-def]
    return client.get(path, extensions={"sni_hostname": DOMAIN}, **kwargs)


def served_certificate(stack: TlsStack) -> bytes:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", stack.ports["https"]), timeout=5) as raw, \
            context.wrap_socket(raw, server_hostname=DOMAIN) as sock:
        return sock.getpeercert(binary_form=True)


def leaf_der(fullchain: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(fullchain.read_text().split("-----END CERTIFICATE-----")[0]
                                    + "-----END CERTIFICATE-----\n")


@dataclass
class StreamResult:
    events: list[tuple[float, str]]  # (seconds since the request, data line)
    started: float
    error: Exception | None = None


def stream_chat(stack: TlsStack, tag: str, pause_s: float) -> StreamResult:
    result = StreamResult([], time.monotonic())
    try:
        with https_client(stack, timeout=httpx.Timeout(10, read=pause_s + 60)) as client, client.stream(
            "POST", "/v1/chat/completions", extensions={"sni_hostname": DOMAIN},
            headers={"Authorization": f"Bearer {CLIENT_KEY}"},
            json={"model": "sse-test", "stream": True, "messages": [{"role": "user", "content": f"{tag} pause={pause_s}"}]},
        ) as reply:
            assert reply.status_code == 200, reply.read()
            assert reply.headers.get("x-accel-buffering") == "no"
            for line in reply.iter_lines():
                if line.startswith("data:"):
                    result.events.append((time.monotonic() - result.started, line))
    except (httpx.HTTPError, AssertionError, OSError) as error:  # reported by the test joining the thread
        result.error = error
    return result


@pytest.fixture(scope="module")
def issued(tls_stack: TlsStack) -> TlsStack:
    # Before: HTTP only, and the site has no TLS block.
    assert "ssl_certificate" not in (tls_stack.layout.rendered / "nginx/stackctl-site.conf").read_text()
    result = CliRunner().invoke(
        tls_stack.app,
        ["--dir", str(tls_stack.layout.root), "tls", "issue", "--domain", DOMAIN, "--email", "admin@stackctl.test",
         "--acme-server", tls_stack.acme_server],
        env={"REQUESTS_CA_BUNDLE": str(tls_stack.requests_ca)},
    )
    assert result.exit_code == 0, f"{result.output}\n{result.exception!r}"
    assert f"certificate for {DOMAIN}" in result.output
    return tls_stack


def test_issue_renders_tls_and_https_reaches_the_proxy(issued: TlsStack):
    live = issued.letsencrypt / "live" / DOMAIN
    assert (live / "fullchain.pem").exists() and (live / "privkey.pem").exists()
    site = (issued.layout.rendered / "nginx/stackctl-site.conf").read_text()
    assert f"ssl_certificate {live / 'fullchain.pem'};" in site
    with https_client(issued, timeout=10) as client:
        health = https_get(client, "/health")
        assert health.status_code == 200, health.text
        models = https_get(client, "/v1/models", headers={"Authorization": f"Bearer {CLIENT_KEY}"})
        assert models.status_code == 200 and models.json()["data"][0]["id"] == "sse-test"  # the proxy answered
    plain = httpx.get(f"http://127.0.0.1:{issued.ports['http']}/v1/models", headers={"Host": DOMAIN}, timeout=5)
    assert plain.status_code == 301 and plain.headers["location"] == f"https://{DOMAIN}/v1/models"


def test_stream_arrives_incrementally_through_nginx(issued: TlsStack):
    result = stream_chat(issued, "incremental", pause_s=4)
    assert result.error is None, repr(result.error)
    sent = issued.backend.sent["incremental"]
    (first_at, first), (second_at, _), (_, done) = result.events
    assert '"first"' in first and done == "data: [DONE]"
    # The first event reached the client while the backend was still silent, before it finished.
    assert result.started + first_at < sent["second"], (first_at, sent)
    assert second_at - first_at >= 3.5


def test_long_silent_stream_is_not_cut_and_renewal_reloads_nginx(issued: TlsStack):
    streams: list[StreamResult] = []
    waiter = threading.Thread(target=lambda: streams.append(stream_chat(issued, "long", LONG_PAUSE_S)))
    waiter.start()
    try:
        # Meanwhile: a forced renewal with the stored deploy hook, which must reload nginx.
        renewal_conf = (issued.letsencrypt / "renewal" / f"{DOMAIN}.conf").read_text()
        hook = next(line for line in renewal_conf.splitlines() if line.startswith("renew_hook"))
        assert "-s reload" in hook and str(issued.layout.rendered / "nginx/nginx.conf") in hook
        before = served_certificate(issued)
        state = issued.layout.state / "certbot"
        renew = subprocess.run(
            # certbot sleeps up to 8 min before a renewal run without a terminal, unless told not to.
            [require("certbot"), "renew", "--force-renewal", "--non-interactive", "--no-random-sleep-on-renew",
             "--config-dir", str(issued.letsencrypt), "--work-dir", str(state / "work"),
             "--logs-dir", str(state / "logs")],
            capture_output=True, text=True, timeout=180, check=False,
            env={**os.environ, "REQUESTS_CA_BUNDLE": str(issued.requests_ca)},
        )
        assert renew.returncode == 0, renew.stdout + renew.stderr
        renewed = leaf_der(issued.letsencrypt / "live" / DOMAIN / "fullchain.pem")
        assert renewed != before
        wait_until(lambda: served_certificate(issued) == renewed, 15, "nginx to serve the renewed certificate")
    finally:
        waiter.join(timeout=LONG_PAUSE_S + 90)
    assert streams and streams[0].error is None, repr(streams and streams[0].error)
    events = streams[0].events
    assert [line for _, line in events][-1] == "data: [DONE]", events
    (first_at, _), (second_at, second) = events[0], events[1]
    assert '"second"' in second and second_at - first_at >= LONG_PAUSE_S - 1, events


def test_issue_refuses_a_domain_the_stack_does_not_name(tls_stack: TlsStack):
    result = CliRunner().invoke(tls_stack.app, ["--dir", str(tls_stack.layout.root), "tls", "issue",
                                                "--domain", "other.stackctl.test", "--email", "a@b.test"])
    assert result.exit_code != 0
    assert "hostname: other.stackctl.test" in str(result.exception)


def test_deploy_hook_is_a_plain_shell_command(tls_stack: TlsStack):
    from stackctl.stack import Stack

    hook = Stack.load(tls_stack.layout).runtime.certificate_deploy_hook()
    assert hook and shlex.split(hook)[-2:] == ["-s", "reload"] and "-c" in shlex.split(hook)
