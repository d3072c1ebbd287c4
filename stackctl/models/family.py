"""A model's family, as far as serving it goes: which tool-call format it writes, and the vLLM
tool-call parsers that read that format."""

from __future__ import annotations

# Which tool-call format a model family emits, and the vLLM parsers that read it.
# Qwen3-Coder, Qwen3-Next and Qwen3.5/3.6 write XML-style <function=...> calls; plain Qwen3 and
# Qwen2 write JSON inside <tool_call> (hermes); gpt-oss speaks harmony (openai).
FAMILY_PARSERS = {
    "qwen3-coder-xml": {"qwen3_coder", "qwen3_xml"},
    "hermes-json": {"hermes"},
    "harmony": {"openai"},
}


def model_family(model_type: str | None, hf_id: str | None) -> str | None:
    """The tool-call format family of a model, from its config.json `model_type` and its name
    (None: unknown)."""
    name = (hf_id or "").lower()
    kind = (model_type or "").lower()
    if "coder" in name and "qwen3" in name:
        return "qwen3-coder-xml"
    if kind.startswith(("qwen3_5", "qwen3_next")) or "qwen3.5" in name or "qwen3.6" in name or "qwen3-next" in name:
        return "qwen3-coder-xml"
    if kind in {"qwen3", "qwen3_moe", "qwen2", "qwen2_moe"} or "qwen3-" in name or "qwen2" in name:
        return "hermes-json"
    if kind == "gpt_oss" or "gpt-oss" in name:
        return "harmony"
    return None
