"""Render a stack: one merged docker-compose.yml plus the service configs it mounts, as a
`RenderedProject` value (stackctl/project.py writes it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from stackctl.config import StackConfig
from stackctl.project import RenderedProject
from stackctl.resources import resource_dir
from stackctl.services import Service
from stackctl.stack import Stack
from stackctl.templating import render_template

PROJECT_NAME = "stackctl"
_HEADER = (
    "# Rendered by `stackctl render` from stack.yaml: edit stack.yaml and render again.\n"
    "# Secrets stay in .env; this file only references them as ${VAR}.\n"
    "# Run it without stackctl: docker compose up -d\n"
)
# Services whose config folder (of the same name, at the top of the repository) is rendered.
_CONFIGURED_SERVICES = ("prometheus", "grafana", "nginx")


@dataclass(frozen=True)
class TlsCertificate:
    fullchain: str
    privkey: str


def render_project(stack: Stack) -> RenderedProject:
    """The stack's services, docker-compose.yml and config files, for its runtime and host."""
    services = stack.services
    compose_text = _HEADER + yaml.safe_dump(compose_document(services, stack.config.project), sort_keys=False,
                                            width=1000)
    return RenderedProject(services, compose_text, render_configs(stack))


def compose_document(services: list[Service], project: str = PROJECT_NAME) -> dict[str, Any]:
    volumes: dict[str, Any] = {}
    for service in services:
        volumes.update(service.named_volumes)
    document: dict[str, Any] = {
        "name": project,
        "services": {service.name: service.compose for service in services},
    }
    if volumes:
        document["volumes"] = volumes
    return document


def config_context(stack: Stack) -> dict[str, Any]:
    """Template values for the rendered service configs (nginx, prometheus, grafana)."""
    config, runtime = stack.config, stack.runtime
    context = dict(stack.template_context)
    context.update(
        scrape_interval="10s",
        gpu_exporter="gpu-exporter" in stack.plan.services,
        hostname=config.hostname,
        allow_networks=config.allow_networks,
        # Unique per stack: the duplicate-upstream trap (two sites defining one name) stops nginx.
        upstream_name=f"stackctl_filter_proxy_{config.ports.proxy}",
        monitoring="prometheus" in stack.plan.services,
        acme_root=runtime.acme_webroot(),
        # Looked up on every render: the TLS server block appears once a certificate exists.
        tls_certificate=find_tls_certificate(config, runtime.certificate_root()),
        nginx_user=runtime.nginx_user,
    )
    context["paths"] = {**context["paths"], "state": str(stack.layout.state), "rendered": str(stack.layout.rendered)}
    return context


def find_tls_certificate(config: StackConfig, mounted_at: str | None = None) -> TlsCertificate | None:
    """HTTP-only until a certificate exists; then the TLS server block is rendered.

    `mounted_at`: where nginx sees certbot's directory (inside the container under Compose)."""
    if not (config.services.tls and config.hostname):
        return None
    host_dir = Path(config.letsencrypt_dir).expanduser()
    if not all((host_dir / "live" / config.hostname / name).exists() for name in ("fullchain.pem", "privkey.pem")):
        return None
    live = Path(mounted_at or host_dir) / "live" / config.hostname
    return TlsCertificate(str(live / "fullchain.pem"), str(live / "privkey.pem"))


def render_configs(stack: Stack) -> dict[Path, str]:
    """Relative path under `rendered/` -> file text, for the enabled services."""
    context = config_context(stack)
    files: dict[Path, str] = {}
    for folder in _CONFIGURED_SERVICES:
        if folder not in stack.plan.services:
            continue
        source = resource_dir(folder)
        for path in sorted(source.rglob("*")):
            if not path.is_file():
                continue
            relative = Path(folder) / path.relative_to(source)
            if path.suffix == ".j2":
                files[relative.with_suffix("")] = render_template(path.read_text(), context, name=str(relative))
            else:
                files[relative] = path.read_text()
    if not stack.runtime.renders_nginx_main_config:
        files.pop(Path("nginx/nginx.conf"), None)
    return files
