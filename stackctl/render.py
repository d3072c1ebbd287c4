"""Render a stack: one merged docker-compose.yml plus the service configs it mounts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from stackctl.config import StackConfig
from stackctl.layout import StackLayout
from stackctl.resources import resource_dir
from stackctl.services import Service, load_services
from stackctl.template_values import template_context
from stackctl.templating import render_template

if TYPE_CHECKING:
    from stackctl.config import RuntimeName
    from stackctl.runtime.base import Runtime

PROJECT_NAME = "stackctl"
_HEADER = (
    "# Rendered by `stackctl render` from stack.yaml: edit stack.yaml and render again.\n"
    "# Secrets stay in .env; this file only references them as ${VAR}.\n"
    "# Run it without stackctl: docker compose up -d\n"
)
# Services whose config folder (of the same name, at the top of the repository) is rendered.
_CONFIGURED_SERVICES = ("prometheus", "grafana", "nginx")


@dataclass(frozen=True)
class RenderedProject:
    compose_file: Path
    config_files: list[Path]
    services: list[Service]


@dataclass(frozen=True)
class TlsCertificate:
    fullchain: str
    privkey: str


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


def as_runtime(runtime: Runtime | RuntimeName, layout: StackLayout, config: StackConfig) -> Runtime:
    """The runtime object (a name is looked up in stackctl.runtime's one factory)."""
    if isinstance(runtime, str):
        from stackctl.runtime import runtime_for

        return runtime_for(runtime, layout, config)
    return runtime


def config_context(config: StackConfig, layout: StackLayout, runtime: Runtime) -> dict[str, Any]:
    """Template values for the rendered service configs (nginx, prometheus, grafana)."""
    context = template_context(config, layout, runtime)
    context.update(
        scrape_interval="10s",
        gpu_exporter="gpu-exporter" in context["host"].services,
        hostname=config.hostname,
        allow_networks=config.allow_networks,
        # Unique per stack: the duplicate-upstream trap (two sites defining one name) stops nginx.
        upstream_name=f"stackctl_filter_proxy_{config.ports.proxy}",
        monitoring="prometheus" in context["host"].services,
        acme_root=runtime.acme_webroot(),
        tls_certificate=find_tls_certificate(config, runtime.certificate_root()),
        nginx_user=runtime.nginx_user,
    )
    context["paths"] = {**context["paths"], "state": str(layout.state), "rendered": str(layout.rendered)}
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


def render_configs(config: StackConfig, layout: StackLayout, runtime: Runtime | RuntimeName) -> dict[Path, str]:
    """Relative path under `rendered/` -> file text, for the enabled services."""
    runtime = as_runtime(runtime, layout, config)
    context = config_context(config, layout, runtime)
    enabled = context["host"].services
    files: dict[Path, str] = {}
    for folder in _CONFIGURED_SERVICES:
        if folder not in enabled:
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
    if not runtime.renders_nginx_main_config:
        files.pop(Path("nginx/nginx.conf"), None)
    return files


def render_project(config: StackConfig, layout: StackLayout,
                   runtime: Runtime | RuntimeName = "compose") -> RenderedProject:
    """Write docker-compose.yml and rendered/ into the stack directory."""
    runtime = as_runtime(runtime, layout, config)
    services = load_services(config, template_context(config, layout, runtime))
    layout.home.mkdir(parents=True, exist_ok=True)
    written = write_rendered(layout, render_configs(config, layout, runtime))
    compose_text = _HEADER + yaml.safe_dump(compose_document(services, config.project), sort_keys=False, width=1000)
    layout.compose_file.write_text(compose_text)
    env_link = layout.home / ".env"
    if layout.home != layout.root and not (env_link.is_symlink() or env_link.exists()):
        # `docker compose up -d` in hosts/NAME reads ${VAR} from the stack's one .env.
        env_link.symlink_to(Path("..") / ".." / ".env")
    return RenderedProject(layout.compose_file, written, services)


def write_rendered(layout: StackLayout, files: dict[Path, str]) -> list[Path]:
    """Write rendered config files (paths relative to rendered/); returns where they went."""
    written = []
    for relative, text in files.items():
        target = layout.rendered / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
    return written
