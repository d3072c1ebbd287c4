"""Ray for the native runtime: the engine venv's own, installed there on first use.

The vLLM images carry Ray; the engine venv (vLLM's CPU build, or a GPU host's own vLLM) may not.
It is added next to vLLM, never changing a package vLLM pinned (pip's constraints are the
venv's own `pip freeze`), so the engine that already serves stays exactly as it was.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from stackctl.engine._lock import exclusive_lock
from stackctl.engine.install import default_engine_dir, engine_python
from stackctl.errors import StackError

RAY_VERSION = "2.60.0"
INSTALL_TIMEOUT_S = 900


def ray_version(python: Path) -> str | None:
    done = subprocess.run([str(python), "-c", "import ray; print(ray.__version__)"], capture_output=True, text=True,
                          check=False, timeout=120)
    return done.stdout.strip() if done.returncode == 0 else None


def ensure_ray(on_progress: Callable[[str], None] = lambda _message: None, engine_dir: Path | None = None) -> str:
    """The engine venv's Ray version, installing ray==RAY_VERSION first when it has none."""
    engine_dir = engine_dir or default_engine_dir()
    python = engine_python(engine_dir)
    found = ray_version(python)
    if found:
        return found
    with exclusive_lock(engine_dir.parent / f".{engine_dir.name}.lock"):
        found = ray_version(python)
        if found:
            return found
        on_progress(f"installing ray=={RAY_VERSION} into {engine_dir} (its packages pinned as they are)")
        constraints = engine_dir / "stackctl-ray-constraints.txt"
        freeze = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True, text=True, check=False)
        constraints.write_text(freeze.stdout)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--no-input", "--disable-pip-version-check", "-q",
             f"ray=={RAY_VERSION}", "-c", str(constraints)],
            capture_output=True, text=True, check=False, timeout=INSTALL_TIMEOUT_S,
        )
        if done.returncode != 0:
            tail = "\n  ".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise StackError(f"installing ray=={RAY_VERSION} into {engine_dir} failed:\n  {tail}\n"
                             f"install a Ray that fits this vLLM by hand ({python} -m pip install ray), or use "
                             "--runtime compose (the vLLM image carries its own)")
    found = ray_version(python)
    if not found:
        raise StackError(f"ray was installed into {engine_dir} but does not import; reinstall it there")
    return found
