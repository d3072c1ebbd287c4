"""Stacks for tests that run in-process: a stack directory built from settings and loaded, or a
config rendered and written as `stackctl render` does it. The one place tests build a Stack."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from stackctl.config import RuntimeName, StackConfig, parse_stack_config
from stackctl.envfile import ensure_secrets, read_env
from stackctl.errors import ConfigError
from stackctl.layout import StackLayout
from stackctl.render import render_project
from stackctl.services import Service
from stackctl.stack import Stack
from stackctl.usecases.init_stack import DEMO_CHOICES, init_stack


def config_error(document: dict) -> str:
    """The one-line message (exit code 2) with which stack.yaml's `document` is refused."""
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(document)
    message = str(caught.value)
    assert "\n" not in message and caught.value.exit_code == 2
    return message


def make_stack(tmp_path: Path, runtime: str = "compose", *, host: str | None = None, root: Path | None = None,
               **settings) -> Stack:
    """A stack directory (`root`, else tmp_path/stack) with stack.yaml (the settings as given) and
    a real .env (mode 0600), loaded as `host` (None: the host whose address is local, if hosts:)."""
    root = root or tmp_path / "stack"
    root.mkdir(parents=True, exist_ok=True)
    (root / "stack.yaml").write_text(yaml.safe_dump({"runtime": runtime, **settings}))
    layout = StackLayout(root)
    ensure_secrets(layout.env_file)
    return Stack.load(layout, host=host)


def make_demo_stack(tmp_path: Path) -> Stack:
    """The demo stack as `stackctl init --demo` writes it (in tmp_path/stack), loaded."""
    layout = StackLayout(tmp_path / "stack")
    init_stack(layout, dict(DEMO_CHOICES))
    return Stack.load(layout)


def first_client_key(stack: Stack) -> str:
    """The first client key in the stack's .env (STACKCTL_PROXY_KEYS)."""
    return read_env(stack.layout.env_file)["STACKCTL_PROXY_KEYS"].split(",")[0].split("=", 1)[1]


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
