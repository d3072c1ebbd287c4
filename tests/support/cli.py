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


def error_line(result: subprocess.CompletedProcess) -> str:
    """The one `error:` line a failed command printed (and no traceback anywhere)."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    return errors[0]


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str, code: int = 2) -> None:
    """The command failed with `code` and said why in one line holding every fragment."""
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
