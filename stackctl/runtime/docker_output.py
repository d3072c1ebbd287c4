"""What a failed docker command said, as the one line that matters."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from python_on_whales.exceptions import DockerException

_ERROR_WORDS = re.compile(r"error|failed|denied|not found|no such|unable", re.IGNORECASE)


def docker_output(error: DockerException) -> str:
    """A failed docker command's stderr, else its stdout."""
    text = (error.stderr or error.stdout or str(error) or "").strip()
    return text or "no output"


def error_line(output: str) -> str:
    """The last line of a docker command's output that says what went wrong."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if _ERROR_WORDS.search(line):
            return line[:300]
    return lines[-1][:300] if lines else "no output"
