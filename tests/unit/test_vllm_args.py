import pytest

from stackctl.config import parse_stack_config
from stackctl.profiles import MODEL_PROFILES
from stackctl.vllm_args import vllm_args


def flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


@pytest.mark.parametrize("model", [name for name, profile in MODEL_PROFILES.items() if profile.hf_id])
def test_every_gpu_model_gets_the_serving_flags(model):
    args = vllm_args(parse_stack_config({"hardware": "rtx-pro-6000", "model": model}))
    assert flag(args, "--dtype") == "auto"  # never fp8: vLLM rejects it
    assert "--enable-auto-tool-choice" in args
    assert "--enable-prefix-caching" in args
    assert "--enable-prompt-tokens-details" in args  # cached tokens in usage, for clients and metrics
    assert flag(args, "--tool-call-parser") == MODEL_PROFILES[model].tool_call_parser
    assert int(flag(args, "--max-model-len")) > 0
    assert flag(args, "--host") == "127.0.0.1"  # clients reach vLLM only through the proxy
    assert not any("api-key" in arg for arg in args)


@pytest.mark.parametrize("model", ["qwen3.6-27b", "qwen3.6-35b-a3b-fp8", "qwen3-coder-next-fp8"])
def test_qwen_coder_style_models_use_the_qwen3_coder_parser(model):
    args = vllm_args(parse_stack_config({"model": model}))
    assert flag(args, "--tool-call-parser") == "qwen3_coder"
    assert flag(args, "--kv-cache-dtype") == "fp8"


def test_hybrid_models_cap_concurrency_within_the_mamba_cache():
    for profile in MODEL_PROFILES.values():
        if profile.hybrid:
            args = vllm_args(parse_stack_config({"model": profile.name}))
            assert int(flag(args, "--max-num-seqs")) <= 16


def test_unified_memory_gets_070_and_discrete_090():
    spark = vllm_args(parse_stack_config({"hardware": "dgx-spark", "model": "qwen3.6-27b"}))
    rtx = vllm_args(parse_stack_config({"hardware": "rtx-pro-6000", "model": "qwen3.6-27b"}))
    assert flag(spark, "--gpu-memory-utilization") == "0.70"
    assert flag(rtx, "--gpu-memory-utilization") == "0.90"


def test_user_overrides_win_and_extra_args_are_appended():
    config = parse_stack_config(
        {"model": "qwen3-32b", "vllm": {"max_model_len": 8192, "max_num_seqs": 3, "extra_args": ["--seed", "7"]}}
    )
    args = vllm_args(config)
    assert flag(args, "--max-model-len") == "8192" and flag(args, "--max-num-seqs") == "3"
    assert args[-2:] == ["--seed", "7"]


def test_cpu_demo_has_no_gpu_flags_and_uses_a_local_path():
    config = parse_stack_config({"hardware": "cpu", "model": "tiny"})
    args = vllm_args(config, model_ref="/models/tiny")
    assert flag(args, "--model") == "/models/tiny"
    assert "--gpu-memory-utilization" not in args
    assert flag(args, "--served-model-name") == "tiny"
