"""The tiny demo model: a random-weight Qwen2-style causal LM that vLLM serves on a CPU in seconds.

It answers gibberish, but through the real tokenizer, chat template, tool parser and HTTP API,
which is what the stack's tests need on machines without a GPU and without a model hub.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from stackctl.engine._lock import exclusive_lock
from stackctl.engine._make_demo_model import MAX_POSITIONS as DEMO_MAX_POSITIONS
from stackctl.errors import StackError
from stackctl.paths import stackctl_home

_HERE = Path(__file__).parent
_BUILDER = _HERE / "_make_demo_model.py"
CHAT_TEMPLATE_FILE = _HERE / "chat_template.jinja"
_MARKER = "stackctl-demo-model.json"
# Bump when the model changes in a way the builder's source does not show (e.g. a new torch).
_RECIPE_VERSION = "1"

__all__ = ["DEMO_MAX_POSITIONS", "DEMO_MODEL_SHAPES", "DemoModelShape", "current_demo_model_config", "default_demo_model_dir",
           "generate_demo_model", "shaped_model_dir"]


class DemoModelError(StackError):
    """The demo model could not be generated."""


@dataclass(frozen=True)
class DemoModelShape:
    """A random-weight model sized like a real one (its widths), for measuring a GPU: the demo's
    tokenizer, chat template and tool format, fewer layers. See _make_demo_model.sized_model."""

    name: str
    description: str
    hidden_size: int
    intermediate_size: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    layers: int
    max_positions: int = 131072
    dtype: str = "bfloat16"
    # The layers' output projections, scaled: each token's embedding keeps deciding the logits.
    layer_scale: float = 0.01

    def with_layers(self, layers: int) -> DemoModelShape:
        return dataclasses.replace(self, layers=layers)

    @property
    def parameters(self) -> int:
        attention = self.hidden_size * self.head_dim * (2 * self.heads + 2 * self.kv_heads)
        mlp = 3 * self.hidden_size * self.intermediate_size
        return self.vocab_size * self.hidden_size + self.layers * (attention + mlp)


DEMO_MODEL_SHAPES = {
    shape.name: shape
    for shape in (
        DemoModelShape("qwen3-8b-widths", "Qwen3-8B's widths and vocabulary, 4 of its 36 layers", hidden_size=4096,
                   intermediate_size=12288, heads=32, kv_heads=8, head_dim=128, vocab_size=151936, layers=4),
    )
}


def default_demo_model_dir() -> Path:
    """One directory per recipe: a new recipe never rewrites the model under a running server
    (stacks and test sessions on one machine may run different versions)."""
    return stackctl_home() / "models" / f"tiny-qwen2-{recipe_hash()[:12]}"


def shaped_model_dir(shape: DemoModelShape) -> Path:
    return stackctl_home() / "models" / f"{shape.name}-{shape.layers}l-{recipe_hash(shape)[:12]}"


def recipe_hash(shape: DemoModelShape | None = None) -> str:
    """A hash of everything that decides the model's files: the builder, the template, the shape."""
    digest = hashlib.sha256(_RECIPE_VERSION.encode())
    for source in (_BUILDER, CHAT_TEMPLATE_FILE):
        digest.update(source.read_bytes())
    if shape is not None:
        digest.update(json.dumps(dataclasses.asdict(shape), sort_keys=True).encode())
    return digest.hexdigest()


def generate_demo_model(python: Path, out_dir: Path, shape: DemoModelShape | None = None) -> Path:
    """Write the demo model (or one of DEMO_MODEL_SHAPES) into out_dir with an engine's interpreter
    (torch, transformers and tokenizers live there); a no-op when up to date.

    Returns out_dir, ready for `--model out_dir`.
    """
    out_dir = Path(out_dir)
    wanted = recipe_hash(shape)
    if _built_recipe(out_dir) == wanted:
        return out_dir
    with exclusive_lock(out_dir.parent / f".{out_dir.name}.lock"):
        if _built_recipe(out_dir) == wanted:
            return out_dir
        # Build beside the target and swap it in, so a crash never leaves a half model that a
        # server would try to load.
        staging = out_dir.parent / f".{out_dir.name}.building"
        shutil.rmtree(staging, ignore_errors=True)
        python = Path(python)
        if not python.exists():
            raise DemoModelError(
                f"no engine interpreter at {python}: install the vLLM engine first (`stackctl install-engine`) "
                "and try again"
            )
        shape_argument = [json.dumps(dataclasses.asdict(shape))] if shape is not None else []
        proc = subprocess.run(
            [str(python), str(_BUILDER), str(staging), str(CHAT_TEMPLATE_FILE), *shape_argument],
            check=False,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            tail = "\n  ".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
            raise DemoModelError(
                f"generating the demo model failed (exit {proc.returncode}). Last lines:\n  "
                f"{tail}\nReinstalling the engine ({python}) may help."
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
