"""A vLLM environment of the user's own, at a path stackctl did not choose: a venv whose
interpreter also imports what another environment holds (a `.pth` line running
`site.addsitedir`, so that environment's own .pth files work too)."""

from __future__ import annotations

import subprocess
from pathlib import Path

_SITE = "import sysconfig; print(sysconfig.get_paths()['purelib'])"


def environment_seeing(engine_python: Path, where: Path) -> Path:
    """Make a venv at `where` that sees `engine_python`'s packages; returns its interpreter."""
    base = _ask(engine_python, "import sys; print(sys._base_executable)")
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True, capture_output=True)
    python = where / "bin" / "python"
    Path(_ask(python, _SITE), "brought-engine.pth").write_text(
        f"import site; site.addsitedir({_ask(engine_python, _SITE)!r})\n")
    return python


def _ask(python: Path, script: str) -> str:
    return subprocess.run([str(python), "-c", script], check=True, capture_output=True, text=True).stdout.strip()
