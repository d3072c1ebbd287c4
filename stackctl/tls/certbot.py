"""Obtain a certificate with certbot through the running nginx (HTTP-01, webroot)."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from stackctl.errors import ConfigError, StackError
from stackctl.stack import Stack
from stackctl.tls.nginx import render_nginx_site

LETS_ENCRYPT_STAGING = "https://acme-staging-v02.api.letsencrypt.org/directory"
CERTBOT_TIMEOUT_S = 300


@dataclass(frozen=True)
class IssueRequest:
    domain: str
    email: str
    acme_server: str | None = None  # an ACME directory URL (e.g. a private CA, pebble); default Let's Encrypt
    staging: bool = False


@dataclass(frozen=True)
class IssuedCertificate:
    domain: str
    fullchain: Path
    privkey: Path
    site_files: list[Path]
    renewal_hook: str


def acme_webroot(stack: Stack) -> Path:
    """Where nginx serves /.well-known/acme-challenge/ from, on the host (mounted under Compose)."""
    return stack.layout.data / "acme"


def certbot_command(stack: Stack, request: IssueRequest) -> list[str]:
    certbot = shutil.which("certbot")
    if not certbot:
        raise StackError("certbot is not installed: apt-get install certbot")
    state = stack.layout.state / "certbot"
    argv = [
        certbot, "certonly", "--webroot", "-w", str(acme_webroot(stack)),
        "-d", request.domain, "--cert-name", request.domain,
        "--email", request.email, "--agree-tos", "--no-eff-email", "--non-interactive",
        "--config-dir", str(Path(stack.config.letsencrypt_dir).expanduser()),
        "--work-dir", str(state / "work"), "--logs-dir", str(state / "logs"),
    ]
    hook = stack.runtime.certificate_deploy_hook()
    if hook:
        argv += ["--deploy-hook", hook]
    if request.acme_server:
        argv += ["--server", request.acme_server]
    elif request.staging:
        argv += ["--server", LETS_ENCRYPT_STAGING]
    return argv


def issue_certificate(stack: Stack, request: IssueRequest, env: Mapping[str, str] | None = None) -> IssuedCertificate:
    """certbot through the running nginx, then the TLS server block and an nginx reload."""
    _check_config(stack, request)
    _check_webroot_is_served(stack)
    argv = certbot_command(stack, request)
    for directory in (stack.layout.state / "certbot/work", stack.layout.state / "certbot/logs"):
        directory.mkdir(parents=True, exist_ok=True)
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=CERTBOT_TIMEOUT_S, check=False,
                                env=dict(os.environ if env is None else env))
    except subprocess.TimeoutExpired:
        raise StackError(f"certbot did not finish in {CERTBOT_TIMEOUT_S} s; see {stack.layout.state / 'certbot/logs'}") from None
    if result.returncode != 0:
        lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()][-8:]
        raise StackError(f"certbot failed for {request.domain}: {' | '.join(lines)}; "
                         f"full log in {stack.layout.state / 'certbot/logs'}")
    live = Path(stack.config.letsencrypt_dir).expanduser() / "live" / request.domain
    site_files = render_nginx_site(stack)
    if not any("ssl_certificate" in path.read_text() for path in site_files):
        raise StackError(f"certbot succeeded but {live} has no fullchain.pem/privkey.pem; nothing to serve")
    stack.runtime.reload_nginx()
    return IssuedCertificate(request.domain, live / "fullchain.pem", live / "privkey.pem", site_files,
                             stack.runtime.renewal_note())


def _check_config(stack: Stack, request: IssueRequest) -> None:
    config = stack.config
    if config.hostname != request.domain or not config.services.tls:
        raise ConfigError(
            f"stack.yaml must name the domain before a certificate is issued: set `hostname: {request.domain}` "
            "and `services: {tls: true}`, run `stackctl up`, then run `stackctl tls issue` again"
        )
    if "@" not in request.email:
        raise ConfigError(f"--email {request.email!r} is not an e-mail address (the CA sends expiry notices there)")


def _check_webroot_is_served(stack: Stack) -> None:
    """Fail fast, before the CA counts a failed validation, when nginx is not answering challenges."""
    webroot = acme_webroot(stack) / ".well-known/acme-challenge"
    webroot.mkdir(parents=True, exist_ok=True)
    token = f"stackctl-probe-{secrets.token_hex(8)}"
    (webroot / token).write_text(token)
    url = f"http://127.0.0.1:{stack.config.ports.http}/.well-known/acme-challenge/{token}"
    try:
        reply = httpx.get(url, headers={"Host": stack.config.hostname or "localhost"}, timeout=10)
        served = reply.status_code == 200 and reply.text == token
    except httpx.HTTPError:
        served = False
    finally:
        (webroot / token).unlink(missing_ok=True)
    if not served:
        raise StackError(
            f"nginx does not serve the ACME webroot ({webroot}) on port {stack.config.ports.http}; "
            "start the stack first (`stackctl up`), and make sure port 80 reaches this box from the internet"
        )
