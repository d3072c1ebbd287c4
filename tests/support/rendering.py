"""A config rendered and written into a stack directory, as `stackctl render` does it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stackctl.config import RuntimeName, StackConfig
from stackctl.layout import StackLayout
from stackctl.render import render_project
from stackctl.services import Service
from stackctl.stack import Stack


@dataclass(frozen=True)
class Rendered:
    services: list[Service]
    compose_file: Path
    config_files: list[Path]


def render_into(layout: StackLayout, config: StackConfig, runtime: RuntimeName | None = None) -> Rendered:
    """Render `config` for `runtime` (the config's own when None) and write it into `layout`."""
    stack = Stack.from_config(config, layout, runtime)
    project = render_project(stack)
    written = project.write(stack.layout)
    return Rendered(project.services, written.compose_file, written.config_files)
