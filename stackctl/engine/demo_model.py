"""The tiny demo model: a random-weight Qwen2-style causal LM that vLLM serves on a CPU in seconds.

It answers gibberish, but through the real tokenizer, chat template, tool parser and HTTP API,
which is what the stack's tests need on machines without a GPU and without a model hub.
"""

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from stackctl.engine._lock import exclusive_lock
from stackctl.engine._make_demo_model import MAX_POSITIONS as DEMO_MAX_POSITIONS
from stackctl.engine.install import engine_python
from stackctl.errors import StackError
from stackctl.paths import stackctl_home

_HERE = Path(__file__).parent
_BUILDER = _HERE / "_make_demo_model.py"
CHAT_TEMPLATE_FILE = _HERE / "chat_template.jinja"
_MARKER = "stackctl-demo-model.json"
# Bump when the model changes in a way the builder's source does not show (e.g. a new torch).
_RECIPE_VERSION = "1"

__all__ = ["DEMO_MAX_POSITIONS", "current_demo_model_config", "default_demo_model_dir", "generate_demo_model"]


class DemoModelError(StackError):
    """The demo model could not be generated."""


def default_demo_model_dir() -> Path:
    """One directory per recipe: a new recipe never rewrites the model under a running server
    (stacks and test sessions on one machine may run different versions)."""
    return stackctl_home() / "models" / f"tiny-qwen2-{recipe_hash()[:12]}"


def recipe_hash() -> str:
    """A hash of everything that decides the model's files: the builder and the template."""
    digest = hashlib.sha256(_RECIPE_VERSION.encode())
    for source in (_BUILDER, CHAT_TEMPLATE_FILE):
        digest.update(source.read_bytes())
    return digest.hexdigest()


def generate_demo_model(engine_dir: Path, out_dir: Path) -> Path:
    """Write the demo model into out_dir with the engine's python; a no-op when up to date.

    Returns out_dir, ready for `--model out_dir`.
    """
    out_dir = Path(out_dir)
    wanted = recipe_hash()
    if _built_recipe(out_dir) == wanted:
        return out_dir
    with exclusive_lock(out_dir.parent / f".{out_dir.name}.lock"):
        if _built_recipe(out_dir) == wanted:
            return out_dir
        # Build beside the target and swap it in, so a crash never leaves a half model that a
        # server would try to load.
        staging = out_dir.parent / f".{out_dir.name}.building"
        shutil.rmtree(staging, ignore_errors=True)
        python = engine_python(engine_dir)
        if not python.exists():
            raise DemoModelError(
                f"the vLLM engine is not installed at {engine_dir}; install it first "
                "(stackctl.engine.install_engine) and try again"
            )
        proc = subprocess.run(
            [str(python), str(_BUILDER), str(staging), str(CHAT_TEMPLATE_FILE)],
            check=False,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            tail = "\n  ".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
            raise DemoModelError(
                f"generating the demo model failed (exit {proc.returncode}). Last lines:\n  "
                f"{tail}\nReinstalling the engine (delete {engine_dir}) may help."
            )
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
        (staging / _MARKER).write_text(json.dumps({"recipe": wanted, **summary}, indent=2) + "\n")
        shutil.rmtree(out_dir, ignore_errors=True)
        staging.rename(out_dir)
    return out_dir


def current_demo_model_config(out_dir: Path) -> Path | None:
    """The generated model's config.json, if it is there and from the current recipe."""
    config = Path(out_dir) / "config.json"
    return config if _built_recipe(out_dir) == recipe_hash() and config.is_file() else None


def _built_recipe(out_dir: Path) -> str | None:
    try:
        return json.loads((out_dir / _MARKER).read_text()).get("recipe")
    except (OSError, ValueError, AttributeError):
        return None
