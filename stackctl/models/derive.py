"""A model profile for any Hugging Face model, derived from its config.json (and its tokenizer
config's chat template where the family alone does not tell), every choice with its reason.

architecture -> the first vLLM that serves it (compat table); quantization -> weight format and
KV-cache dtype; layer types -> hybrid, and then max_num_seqs from the recurrent-state fit;
context window -> max_model_len, shortened when one sequence would not fit the KV pool; family
and chat template -> tool-call and reasoning parsers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from stackctl.errors import ConfigError
from stackctl.models.family import model_family
from stackctl.models.fit import fit_model, round_down_len
from stackctl.models.shape import GIB, ModelShape, model_shape
from stackctl.profiles.compat import architecture_floor
from stackctl.profiles.custom import CustomModel
from stackctl.profiles.hardware import HardwareProfile

GB = 10**9
# Longer windows are rare in coding-agent traffic and every token of window is reserved per
# sequence on hybrid models; `vllm.max_model_len` raises it.
CONTEXT_CAP = 131072
# Sequences scheduled at once on attention-only models: vLLM preempts when the KV pool is full.
DEFAULT_MAX_NUM_SEQS = 16
_PARSER_OF_FAMILY = {"qwen3-coder-xml": "qwen3_coder", "hermes-json": "hermes", "harmony": "openai"}
_NAME = re.compile(r"[^a-z0-9._-]+")


@dataclass(frozen=True)
class ModelSource:
    """What derivation reads: config.json, and the chat template when there is one."""

    reference: str  # hf id (ORG/NAME) or a local directory
    hf_id: str | None
    config: dict
    chat_template: str | None = None


@dataclass(frozen=True)
class Choice:
    setting: str
    value: str
    reason: str


@dataclass
class Derivation:
    name: str
    model: CustomModel
    choices: list[Choice] = field(default_factory=list)
    # Lines the user must act on (an unknown family's parser, an architecture no table knows).
    to_choose: list[str] = field(default_factory=list)


def derive_profile(source: ModelSource, hardware: HardwareProfile) -> Derivation:
    config = source.config
    architectures = config.get("architectures") or []
    if not architectures:
        raise ConfigError(f"{source.reference}: config.json names no `architectures`; is it a transformers model?")
    try:
        shape = model_shape(config)
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(f"{source.reference}: config.json lacks {error} (needed for the memory fit)") from None
    name = _profile_name(source.reference)
    choices: list[Choice] = []
    to_choose: list[str] = []
    architecture = str(architectures[0])

    floor = architecture_floor(architecture)
    if floor:
        choices.append(Choice("engine", f"vLLM >= {floor.vllm}", f"{architecture} is served from vLLM {floor.vllm} "
                              "(stackctl/profiles/compat.yaml); the default image and install-engine follow it"))
    else:
        to_choose.append(f"engine: {architecture} is not in stackctl's compatibility table; `stackctl doctor` asks "
                         "the installed engine's registry, or add it to stackctl/profiles/compat.yaml")

    quantization, kv_dtype, reasons = _quantization(config, shape)
    choices.append(Choice("quantization", quantization, reasons[0]))
    choices.append(Choice("dtype", hardware.dtype, "`auto` takes the checkpoint's dtype; quantized checkpoints carry "
                          "their own quantization config (`--dtype fp8` is not a valid choice)"))
    choices.append(Choice("kv_cache_dtype", kv_dtype or "auto", reasons[1]))

    weights_gb = shape.weight_bytes / GB
    choices.append(Choice("weights", f"{weights_gb:.1f} GB", f"{shape.parameters / 1e9:.1f}B parameters in the "
                          "checkpoint's format, estimated from config.json (`stackctl pull` reads the real size)"))

    max_len, seqs, fit_reason = _fit(shape, hardware, kv_dtype)
    window = shape.max_position_embeddings
    choices.append(Choice("max_model_len", str(max_len), fit_reason[0] if window else
                          f"config.json has no max_position_embeddings; {max_len} is a safe start"))
    choices.append(Choice("max_num_seqs", str(seqs), fit_reason[1]))
    if shape.hybrid:
        choices.append(Choice("hybrid", "yes", f"{shape.recurrent_layers} of {shape.layers} layers keep a fixed "
                              "recurrent state per sequence (Gated DeltaNet / Mamba)"))

    family = model_family(shape.model_type, source.hf_id or source.reference) or _family_from_template(source.chat_template)
    tool_parser = _PARSER_OF_FAMILY.get(family or "")
    if tool_parser:
        choices.append(Choice("tool_call_parser", tool_parser, _family_reason(family)))
    else:
        to_choose.append(
            f"choose a parser: the tool-call format of {shape.model_type} ({architecture}) is not known to stackctl; "
            f"set models.{name}.tool_call_parser in stack.yaml to the vLLM parser its model card names "
            "(e.g. hermes for JSON inside <tool_call>, qwen3_coder for <function=...> XML, llama3_json, mistral, "
            "deepseek_v3, granite); until then tool calls are off")
    reasoning = _reasoning_parser(shape.model_type, source)
    choices.append(Choice("reasoning_parser", reasoning or "none", _reasoning_reason(reasoning, source)))

    model = CustomModel(
        description=f"{source.reference} ({architecture}, {quantization}{', hybrid' if shape.hybrid else ''}; "
                    "derived from config.json)",
        hf_id=source.hf_id,
        served_name=name,
        architecture=architecture,
        quantization=quantization,
        weights_gb=round(weights_gb, 1),
        max_model_len=max_len,
        max_num_seqs=seqs,
        tool_call_parser=tool_parser,
        reasoning_parser=reasoning,
        kv_cache_dtype=kv_dtype,
        hybrid=shape.hybrid,
    )
    return Derivation(name, model, choices, to_choose)


def _profile_name(reference: str) -> str:
    tail = reference.rstrip("/").split("/")[-1] or "model"
    return _NAME.sub("-", tail.lower()).strip("-") or "model"


def _quantization(config: dict, shape: ModelShape) -> tuple[str, str | None, tuple[str, str]]:
    text = config.get("text_config") or {}
    quant = config.get("quantization_config") or text.get("quantization_config") or {}
    method = str(quant.get("quant_method") or "").lower()
    if method == "fp8":
        return "fp8", "fp8", ("FP8 weights (quantization_config.quant_method fp8)",
                              "fp8: the checkpoint already runs in FP8; an fp8 KV cache halves the KV per token")
    if method in {"gptq", "awq"}:
        bits = quant.get("bits") or quant.get("w_bit") or 4
        return method, None, (f"{method.upper()} {bits}-bit weights (quantization_config)",
                              ("auto (the activation dtype): an fp8 KV cache on top of 4-bit weights costs accuracy; "
                              "add --kv-cache-dtype fp8 in vllm.extra_args for a longer context"))
    if method == "mxfp4":
        return "mxfp4", None, ("MXFP4 MoE weights (quantization_config.quant_method mxfp4)",
                               "auto: the attention-sink kernels gpt-oss uses keep a bf16 KV cache")
    if method:
        return method, None, (f"{method} weights (quantization_config)", "auto: the checkpoint's activation dtype")
    dtype = str(config.get("torch_dtype") or config.get("dtype") or text.get("dtype") or text.get("torch_dtype")
                or "bfloat16")
    if shape.hybrid:
        return "bf16", "fp8", (f"{dtype} weights (no quantization_config)",
                               ("fp8: only 1 layer in 4 keeps a KV cache on this hybrid model and an fp8 one doubles "
                               "the context per GB, as the built-in Qwen3.6 profiles do"))
    return "bf16", None, (f"{dtype} weights (no quantization_config)",
                          "auto (bf16): full-precision weights keep a full-precision KV cache")


def _fit(shape: ModelShape, hardware: HardwareProfile, kv_dtype: str | None) -> tuple[int, int, tuple[str, str]]:
    window = int(shape.max_position_embeddings or 32768)
    wanted = min(window, CONTEXT_CAP)
    capped = f"the model's window ({window} tokens)" if wanted == window else \
        f"the model's window is {window} tokens; capped at {CONTEXT_CAP} (raise vllm.max_model_len for more)"
    if not hardware.memory_gb or not hardware.gpu_memory_utilization:
        seqs = 4 if shape.hybrid else DEFAULT_MAX_NUM_SEQS
        why = ("a cautious start for a hybrid model: `stackctl doctor` computes the real recurrent-state fit on this GPU"
               if shape.hybrid else "vLLM's scheduler limit; it preempts when the KV pool is full")
        return wanted, seqs, ((f"{capped}; fit not computed (hardware '{hardware.name}' has no memory size: "
                              "`stackctl doctor` computes it)"), why)
    report = fit_model(shape, weight_bytes=shape.weight_bytes, memory_bytes=int(hardware.memory_gb * GIB),
                       gpu_memory_utilization=hardware.gpu_memory_utilization, max_model_len=wanted,
                       max_num_seqs=1, kv_cache_dtype=kv_dtype)
    budget = f"{hardware.memory_gb:.0f} GB x {hardware.gpu_memory_utilization:.2f}"
    if report.pool_bytes <= 0:
        raise ConfigError(f"the weights (~{shape.weight_bytes / GB:.0f} GB) do not fit the vLLM budget of "
                          f"'{hardware.name}' ({budget}); pick a smaller or quantized model")
    length = wanted
    length_reason = f"{capped}; {report.max_seqs_at(wanted)} such sequences fit the KV pool ({budget})"
    if not report.one_sequence_fits:
        length = round_down_len(report.max_len_at(1))
        if length < 256:
            raise ConfigError(f"no room for a KV cache on '{hardware.name}' after ~{shape.weight_bytes / GB:.0f} GB "
                              "of weights; pick a smaller or quantized model")
        length_reason = f"{capped}; one such sequence does not fit the KV pool ({budget}), {length} does"
        report = fit_model(shape, weight_bytes=shape.weight_bytes, memory_bytes=int(hardware.memory_gb * GIB),
                           gpu_memory_utilization=hardware.gpu_memory_utilization, max_model_len=length,
                           max_num_seqs=1, kv_cache_dtype=kv_dtype)
    if shape.hybrid:
        slots = report.seq_cap
        seqs = max(1, slots - 1) if slots > 1 else 1
        seq_reason = (f"hybrid: {slots} recurrent-state slots fit at {length} tokens and vLLM cannot preempt into "
                      f"none, so {seqs} leaves one slot of headroom (Mamba-safe)")
    else:
        seqs = DEFAULT_MAX_NUM_SEQS
        seq_reason = (f"{report.max_seqs_at(length)} full-length sequences fit; vLLM preempts beyond the KV pool, "
                      f"so {seqs} is the scheduler limit")
    return length, seqs, (length_reason, seq_reason)


def _family_from_template(template: str | None) -> str | None:
    """The tool-call format a chat template writes, for families the config does not name."""
    if not template:
        return None
    if "<function=" in template:
        return "qwen3-coder-xml"
    if "<tool_call>" in template and ("tojson" in template or '"name"' in template):
        return "hermes-json"
    return None


def _family_reason(family: str | None) -> str:
    return {
        "qwen3-coder-xml": "Qwen3-Coder / Qwen3-Next / Qwen3.5-3.6 write XML <function=...> tool calls; "
                           "`hermes` would drop them silently",
        "hermes-json": "this family writes JSON inside <tool_call> tags (the hermes format)",
        "harmony": "gpt-oss speaks OpenAI's harmony format",
    }.get(family or "", "")


def _reasoning_parser(model_type: str, source: ModelSource) -> str | None:
    kind = model_type.lower()
    name = (source.hf_id or source.reference).lower()
    template = source.chat_template
    if kind == "gpt_oss":
        return "openai_gptoss"
    if kind.startswith(("qwen3", "qwen3_5", "qwen3_next")):
        if template is not None:
            return "qwen3" if "<think>" in template else None
        # Qwen3-Coder and the -Instruct releases (2507, Next) do not think; base Qwen3/3.5/3.6 do.
        return None if ("coder" in name or "instruct" in name) else "qwen3"
    if kind.startswith("deepseek") and template and "<think>" in template:
        return "deepseek_r1"
    return None


def _reasoning_reason(parser: str | None, source: ModelSource) -> str:
    seen = "its chat template" if source.chat_template is not None else "its family"
    if parser == "openai_gptoss":
        return "gpt-oss reasons in harmony's analysis channel"
    if parser:
        return f"{seen} thinks in <think>...</think>: the parser moves it to reasoning_content"
    return f"{seen} shows no thinking block"
