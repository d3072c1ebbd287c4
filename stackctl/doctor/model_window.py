"""The model's own context window against `vllm.max_model_len`, before anything starts.

vLLM derives the longest sequence a model takes from its config.json (the smallest of
max_position_embeddings and its kin, times a RoPE scaling factor, capped by the tokenizer's
model_max_length) and refuses a longer `--max-model-len` at start ("User-specified
max_model_len (65536) is greater than the derived max_model_len"). The rule here is vLLM
0.32's (vllm/config/model.py, `_get_and_verify_max_len`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn
from stackctl.engine.demo_model import DEMO_MAX_POSITIONS, current_demo_model_config
from stackctl.models.shape import find_config, load_config
from stackctl.vllm_settings import local_model_dir

NAME = "model-window"
# vLLM takes the smallest of these it finds (model_arch_config_convertor.py).
_LENGTH_KEYS = (
    "max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
    "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len",
)  # fmt: skip
# RoPE types whose max_position_embeddings is already the scaled length: no factor applied.
_PRESCALED_ROPE = {"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"}


@dataclass(frozen=True)
class ModelWindow:
    tokens: int
    source: str  # how it was derived, in the config's own terms

    @property
    def described(self) -> str:
        return f"{self.tokens} tokens ({self.source})"


def model_window(config: dict[str, Any], tokenizer_config: dict[str, Any] | None = None) -> ModelWindow | None:
    """The window vLLM derives from a config.json (and tokenizer_config.json); None: no length key."""
    text = {**config, **(config.get("text_config") or {})}
    found = [(int(text[key]), key) for key in _LENGTH_KEYS if isinstance(text.get(key), int | float)]
    if not found:
        return None
    length, key = min(found)
    if isinstance(text.get("model_max_length"), int | float):  # Command-R: this key wins outright
        length, key = int(text["model_max_length"]), "model_max_length"
    source = f"{key} {length}"
    limit = (tokenizer_config or {}).get("model_max_length")
    if isinstance(limit, int | float) and limit < length:
        length, source = int(limit), f"tokenizer model_max_length {int(limit)}"
    factor, rope_type = _rope_factor(text)
    if factor != 1.0 and "gemma3" not in str(text.get("model_type", "")):
        source += f" x rope_scaling factor {factor:g} ({rope_type})"
        length = int(length * factor)
    return ModelWindow(length, source)


def _rope_factor(text: dict[str, Any]) -> tuple[float, str]:
    # transformers < 5: rope_scaling; 5+: rope_parameters, possibly one dict per layer type.
    rope = text.get("rope_parameters") or text.get("rope_scaling")
    if not isinstance(rope, dict):
        return 1.0, ""
    parameters = [rope] if "rope_type" in rope or "type" in rope else [v for v in rope.values() if isinstance(v, dict)]
    factor, kind = 1.0, ""
    for entry in parameters:
        rope_type = str(entry.get("rope_type") or entry.get("type") or "default")
        if rope_type not in _PRESCALED_ROPE and isinstance(entry.get("factor"), int | float):
            factor, kind = float(entry["factor"]), rope_type
    return factor, kind


def check_model_window(ctx: DoctorContext) -> CheckResult:
    wanted = ctx.stack.vllm.max_model_len
    located = _window_of_served_model(ctx)
    if isinstance(located, str):
        return warn(NAME, f"max_model_len {wanted}; the model's own window is not known yet: {located}",
                    "fetch the model's config.json (`hf download MODEL config.json`, a few KB), then run "
                    "`stackctl doctor` again")
    window, where = located
    if window is None:
        return ok(NAME, f"max_model_len {wanted}; {where} names no maximum length (vLLM takes max_model_len as given)")
    found = f"max_model_len {wanted}; the model takes {window.described} ({where})"
    if wanted <= window.tokens:
        return ok(NAME, found)
    return fail(NAME, found + "; vLLM refuses to start with a longer window",
                f"set vllm.max_model_len: {window.tokens} (or less) in stack.yaml; a longer context needs RoPE "
                "scaling the model supports (its model card says which, e.g. YaRN: rope_scaling in its "
                "config.json, or --hf-overrides in vllm.extra_args)")


def _window_of_served_model(ctx: DoctorContext) -> tuple[ModelWindow | None, str] | str:
    """(the window, where it was read), or why it cannot be known yet."""
    config = ctx.config
    if config.vllm.model_path or config.model_profile.hf_id is None:
        directory = local_model_dir(config)
        assert directory is not None
        if not config.vllm.model_path and current_demo_model_config(directory) is None:
            # Not generated yet (or from an older recipe): `up` writes it with this window.
            return ModelWindow(DEMO_MAX_POSITIONS, f"max_position_embeddings {DEMO_MAX_POSITIONS}"), \
                "the demo model `up` generates"
        config_path: Path | None = directory / "config.json"
    else:
        config_path = find_config(ctx.hf_cache, config.model_profile.hf_id)
    if config_path is None or not config_path.is_file():
        return f"no config.json for {config.model_profile.hf_id or config.vllm.model_path} in {ctx.hf_cache}"
    return model_window(load_config(config_path), _tokenizer_config(config_path.parent)), str(config_path)


def _tokenizer_config(directory: Path) -> dict[str, Any] | None:
    try:
        loaded = json.loads((directory / "tokenizer_config.json").read_text())
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None
