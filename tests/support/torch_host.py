"""A GPU host's Python that already has torch, as the offline bundle tests need one.

A venv holding exactly torch and torch's own dependencies, taken from the CUDA test engine
(tests/support/cuda_engine.py): every file each of those distributions' RECORD lists is
hard-linked into the new venv's site-packages (copied where links cannot cross filesystems).
It is what `pip install torch==2.13.0` from the engine's wheelhouse would make, in seconds
instead of minutes, and it has no vLLM: whatever a bundle leaves out that the host lacks shows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Run by the CUDA engine's python: torch's dependency closure as installed there, with every
# file of each distribution relative to site-packages.
_CLOSURE = r"""
import json, sys
from importlib import metadata
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
environment = default_environment()
seen, todo, files = set(), [("torch", frozenset())], []
while todo:
    name, extras = todo.pop()
    if name in seen:
        continue
    seen.add(name)
    dist = metadata.distribution(name)
    files += [str(path) for path in dist.files or ()]
    for text in dist.requires or ():
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({**environment, "extra": extra}) for extra in ("", *extras)):
            todo.append((canonicalize_name(requirement.name), frozenset(requirement.extras)))
print(json.dumps({"names": sorted(seen), "files": files}))
"""


def make_torch_host(engine_python: Path, where: Path) -> tuple[Path, list[str]]:
    """A venv at `where` with the engine's torch and its closure; returns its python and the names."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(where)], check=True, capture_output=True)
    done = subprocess.run([str(engine_python), "-c", _CLOSURE], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    source = _site_packages(engine_python)
    target = _site_packages(where / "bin" / "python")
    for relative in found["files"]:
        origin = (source / relative).resolve()
        if not origin.is_file() or not origin.is_relative_to(source.resolve()):
            continue  # scripts under bin/, or RECORD's own .pyc entries that were never written
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(origin, destination)
        except OSError:
            shutil.copy2(origin, destination)
    return where / "bin" / "python", found["names"]


def _site_packages(python: Path) -> Path:
    done = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())
