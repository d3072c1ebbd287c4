"""Where stackctl keeps what it downloads or builds: one root, overridable for tests and CI."""

import os
from pathlib import Path

# Engines and models are large (GBs) and shared by every stack on the machine, so they live in
# the user's data directory rather than next to a stack.yaml.
_DEFAULT_HOME = Path("~/.local/share/stackctl")


def stackctl_home() -> Path:
    """The data root: $STACKCTL_HOME, else ~/.local/share/stackctl."""
    raw = os.environ.get("STACKCTL_HOME", "").strip()
    return Path(raw).expanduser() if raw else _DEFAULT_HOME.expanduser()
