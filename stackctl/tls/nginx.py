"""nginx's side of TLS: re-render the site for the certificate now present (the runtime then
checks and reloads it)."""

from __future__ import annotations

from pathlib import Path

from stackctl.project import write_config_files
from stackctl.render import render_configs
from stackctl.stack import Stack


def render_nginx_site(stack: Stack) -> list[Path]:
    """Write the nginx files of rendered/ again (the TLS server block appears once a certificate exists)."""
    files = {relative: text for relative, text in render_configs(stack).items() if relative.parts[0] == "nginx"}
    return write_config_files(stack.layout, files)
