"""Run the real `stackctl` CLI in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    # A wide virtual terminal: tables are not wrapped, so tests read whole rows.
    environment = {**os.environ, "COLUMNS": "200", **(env or {})}
    environment.pop("STACKCTL_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "stackctl", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
