"""`stackctl init`: a stack.yaml with the user's choices and a .env with generated secrets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from stackctl.config import parse_stack_config
from stackctl.envfile import EnsureResult, ensure_gitignored, ensure_secrets
from stackctl.layout import StackLayout

ALWAYS_WRITTEN = {"hardware", "model"}
DEMO_CHOICES = {
    "hardware": "cpu",
    "model": "tiny",
    "runtime": "native",
    # Unprivileged port, and no Grafana: the demo runs on any Linux box from Debian packages.
    "ports": {"http": 8080},
    "services": {"monitoring": True, "grafana": False, "tls": False},
}


@dataclass(frozen=True)
class InitResult:
    stack_file_written: bool
    secrets: EnsureResult
    gitignore_changed: bool


def init_stack(layout: StackLayout, choices: dict[str, Any], *, force: bool = False) -> InitResult:
    """Write stack.yaml (unless it exists and not `force`) and fill .env's missing secrets."""
    config = parse_stack_config(choices, "stackctl init")  # bad choices fail before any write
    layout.root.mkdir(parents=True, exist_ok=True)
    written = False
    if force or not layout.stack_file.exists():
        # Hardware and model are always written (StackConfig's defaults unless chosen), so the
        # file says what the stack serves on what.
        chosen = config.model_dump(mode="json", include=set(choices) | ALWAYS_WRITTEN)
        header = (
            "# stackctl stack: your choices. Profiles: `stackctl profiles`.\n"
            "# Secrets live in .env (mode 0600), never here.\n"
        )
        layout.stack_file.write_text(header + yaml.safe_dump(chosen, sort_keys=False))
        written = True
    secrets = ensure_secrets(layout.env_file)
    return InitResult(written, secrets, ensure_gitignored(layout.root))
