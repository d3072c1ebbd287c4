"""Any Hugging Face model: profiles derived from real config.json files (tests/data/models,
each with its source), and from the built-in profiles' configs (tests/data/doctor/hf_cache)."""

import json
from pathlib import Path

import pytest

from stackctl.config import parse_stack_config
from stackctl.errors import ConfigError
from stackctl.models.derive import ModelSource, derive_profile
from stackctl.models.source import load_source
from stackctl.profiles import HARDWARE_PROFILES, MODEL_PROFILES
from stackctl.vllm_args import vllm_args

DATA = Path(__file__).resolve().parents[2] / "data"
REAL = DATA / "models"
BUILT_IN = DATA / "doctor" / "hf_cache" / "hub"
RTX, SPARK, GENERIC = (HARDWARE_PROFILES[name] for name in ("rtx-pro-6000", "dgx-spark", "generic"))


def derive(directory: Path, hardware=RTX, hf_id: str | None = None, template: str | None = None):
    config = json.loads((directory / "config.json").read_text())
    reference = hf_id or directory.name.replace("--", "/")
    return derive_profile(ModelSource(reference, reference, config, template), hardware)


def choice(derivation, setting):
    return next(c for c in derivation.choices if c.setting == setting)


def test_every_real_config_has_its_source():
    for directory in REAL.iterdir():
        assert (directory / "config.json").is_file() and "https://" in (directory / "SOURCE.md").read_text()


def test_dense_qwen3_gets_hermes_thinking_and_its_window():
    derived = derive(REAL / "Qwen--Qwen3-8B")
    model = derived.model
    assert (model.architecture, model.quantization, model.kv_cache_dtype) == ("Qwen3ForCausalLM", "bf16", None)
    assert (model.tool_call_parser, model.reasoning_parser) == ("hermes", "qwen3")
    assert model.max_model_len == 40960 and model.max_num_seqs == 16 and not model.hybrid
    assert "vLLM >= 0.8.4" == choice(derived, "engine").value
    assert "JSON inside <tool_call>" in choice(derived, "tool_call_parser").reason
    assert 15 < model.weights_gb < 18  # 8.2B parameters in bf16
    assert not derived.to_choose


def test_moe_qwen3_counts_every_expert_in_the_weights():
    model = derive(REAL / "Qwen--Qwen3-30B-A3B").model
    assert model.architecture == "Qwen3MoeForCausalLM" and model.tool_call_parser == "hermes"
    assert 58 < model.weights_gb < 64  # 30.5B parameters in bf16 (~61 GB published)


def test_hybrid_qwen3_next_is_hybrid_qwen3_coder_and_too_big_in_bf16_for_a_spark():
    derived = derive(REAL / "Qwen--Qwen3-Next-80B-A3B-Instruct", GENERIC)
    model = derived.model
    assert model.hybrid and model.kv_cache_dtype == "fp8" and model.tool_call_parser == "qwen3_coder"
    assert model.reasoning_parser is None  # -Instruct does not think
    assert model.max_model_len == 131072  # 262144 capped
    assert "36 of 48 layers keep a fixed recurrent state" in choice(derived, "hybrid").reason
    assert "`stackctl doctor` computes" in choice(derived, "max_num_seqs").reason  # generic: memory unknown
    with pytest.raises(ConfigError, match=r"weights \(~15\d GB\) do not fit the vLLM budget of 'dgx-spark'"):
        derive(REAL / "Qwen--Qwen3-Next-80B-A3B-Instruct", SPARK)


def test_multimodal_hybrid_qwen35_reads_text_config_and_gets_a_mamba_safe_seq_count(tmp_path):
    from stackctl.doctor.result import Status
    from stackctl.doctor.served_model import check_model_fit
    from tests.support.fakehost import context, make_host
    from tests.support.stack_builder import make_stack

    derived = derive(REAL / "Qwen--Qwen3.5-35B-A3B", RTX)
    model = derived.model
    assert model.architecture == "Qwen3_5MoeForConditionalGeneration"
    assert choice(derived, "engine").value == "vLLM >= 0.17.0"
    assert model.hybrid and model.tool_call_parser == "qwen3_coder" and model.reasoning_parser == "qwen3"
    assert "recurrent-state slots fit at 131072 tokens" in choice(derived, "max_num_seqs").reason
    # doctor's model-fit check, on the same config in an HF cache, accepts what init chose.
    cache = tmp_path / "hf"
    snapshot = cache / "hub" / "models--Qwen--Qwen3.5-35B-A3B" / "snapshots" / "0"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text((REAL / "Qwen--Qwen3.5-35B-A3B" / "config.json").read_text())
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model=derived.name, hf_cache=str(cache),
                       models={derived.name: model.model_dump(mode="json")})
    fit = check_model_fit(context(stack, make_host(tmp_path, "rtx-pro-6000-open-570")))
    assert fit.status is not Status.fail, fit


def test_fp8_checkpoint_keeps_fp8_kv_and_a_model_too_big_is_refused():
    with pytest.raises(ConfigError, match="do not fit the vLLM budget of 'rtx-pro-6000'"):
        derive(REAL / "deepseek-ai--DeepSeek-V3")
    derived = derive(REAL / "deepseek-ai--DeepSeek-V3", GENERIC)  # memory unknown: no fit refused
    assert derived.model.quantization == "fp8" and derived.model.kv_cache_dtype == "fp8"
    assert "FP8 weights" in choice(derived, "quantization").reason
    assert derived.model.tool_call_parser is None
    assert any(line.startswith("choose a parser") and "models.deepseek-v3.tool_call_parser" in line
               for line in derived.to_choose)


def test_gptq_weights_are_four_bit_and_keep_the_activation_kv_dtype():
    config = json.loads((REAL / "Qwen--Qwen3-8B" / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False}
    derived = derive_profile(ModelSource("Qwen/Qwen3-8B-GPTQ-Int4", "Qwen/Qwen3-8B-GPTQ-Int4", config), RTX)
    assert derived.model.quantization == "gptq" and derived.model.kv_cache_dtype is None
    assert 5 < derived.model.weights_gb < 7  # 4-bit linear layers, bf16 embeddings


@pytest.mark.parametrize("name", ["qwen3.6-27b", "qwen3.6-35b-a3b-fp8", "qwen3-coder-next-fp8", "qwen3-32b", "gpt-oss-120b"])
def test_built_in_profiles_configs_derive_what_the_profiles_hold(name):
    built_in = MODEL_PROFILES[name]
    snapshot = next((BUILT_IN / ("models--" + built_in.hf_id.replace("/", "--"))).glob("snapshots/*"))
    hardware = SPARK if "35b" in name or "next" in name else RTX
    model = derive(snapshot, hardware, hf_id=built_in.hf_id).model
    assert model.architecture == built_in.architecture
    assert model.tool_call_parser == built_in.tool_call_parser
    assert model.hybrid == built_in.hybrid
    assert model.kv_cache_dtype == built_in.kv_cache_dtype
    assert model.max_model_len <= 131072 and model.max_num_seqs >= 1


def test_unknown_family_and_architecture_ask_the_user_to_choose():
    config = json.loads((REAL / "Qwen--Qwen3-8B" / "config.json").read_text())
    config.update(architectures=["GraniteMoeHybridForCausalLM"], model_type="granitemoehybrid")
    derived = derive_profile(ModelSource("ibm-granite/granite-x", "ibm-granite/granite-x", config), RTX)
    assert derived.model.tool_call_parser is None
    assert [line.split(":")[0] for line in derived.to_choose] == ["engine", "choose a parser"]


def test_the_chat_template_decides_when_the_family_does_not():
    config = json.loads((REAL / "Qwen--Qwen3-8B" / "config.json").read_text())
    config.update(architectures=["LlamaForCausalLM"], model_type="llama")
    template = '{{- "<tool_call>\\n" }}{{ tool | tojson }}'
    derived = derive_profile(ModelSource("acme/llama-tools", "acme/llama-tools", config, template), RTX)
    assert derived.model.tool_call_parser == "hermes"


def test_a_derived_profile_is_a_valid_stack_and_composes_vllm_flags():
    derived = derive(REAL / "Qwen--Qwen3-30B-A3B")
    config = parse_stack_config({"hardware": "rtx-pro-6000", "model": derived.name,
                                 "models": {derived.name: derived.model.model_dump(mode="json")}})
    args = vllm_args(config)
    assert args[args.index("--model") + 1] == "Qwen/Qwen3-30B-A3B"
    assert args[args.index("--tool-call-parser") + 1] == "hermes"
    assert args[args.index("--max-model-len") + 1] == "40960"


def test_without_a_parser_no_tool_flags_are_composed():
    derived = derive(REAL / "deepseek-ai--DeepSeek-V3", GENERIC)
    config = parse_stack_config({"hardware": "generic", "model": derived.name,
                                 "models": {derived.name: derived.model.model_dump(mode="json")}})
    assert "--tool-call-parser" not in vllm_args(config) and "--enable-auto-tool-choice" not in vllm_args(config)


def test_a_local_directory_is_read_with_its_tokenizer_config(tmp_path):
    (tmp_path / "config.json").write_text((REAL / "Qwen--Qwen3-8B" / "config.json").read_text())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": "no thinking here"}))
    source = load_source(str(tmp_path), hf_cache=tmp_path / "cache")
    assert source.hf_id is None and source.chat_template == "no thinking here"
    assert derive_profile(source, RTX).model.reasoning_parser is None
    with pytest.raises(ConfigError, match="no config.json there"):
        load_source(str(tmp_path / "missing"), hf_cache=tmp_path / "cache")
