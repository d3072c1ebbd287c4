"""One logged step of an engine install or bundle: a subprocess whose output goes to a log file,
with the last lines kept for the error message."""

from __future__ import annotations

import subprocess
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

_TAIL_LINES = 25


@dataclass(frozen=True)
class StepResult:
    code: int
    output: str
    tail: str  # the last lines, indented, for an error message

    @property
    def ok(self) -> bool:
        return self.code == 0


def run_logged(argv: list[str], log_path: Path, *, env: Mapping[str, str] | None = None,
               on_line: Callable[[str], None] | None = None) -> StepResult:
    """Run argv to the end, appending its output to log_path. Raises OSError when it cannot start."""
    tail: deque[str] = deque(maxlen=_TAIL_LINES)
    lines: list[str] = []
    with open(log_path, "a") as log:
        log.write(f"$ {' '.join(argv)}\n")
        log.flush()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, env=dict(env) if env is not None else None)
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            tail.append(line.rstrip())
            lines.append(line)
            if on_line is not None:
                on_line(line)
        code = proc.wait()
    return StepResult(code, "".join(lines), "\n  ".join(tail))
