"""vLLM flags: the composed command line through vLLM's own parser in the engine venv, and the
tool-call parser against the model family."""

import pytest

from stackctl.doctor.result import Status
from stackctl.doctor.vllm_flags import check_tool_parser, check_vllm_flags
from stackctl.profiles import HARDWARE_PROFILES, MODEL_PROFILES
from tests.support.fakehost import MODEL_CACHE, context, make_host
from tests.support.stack_builder import make_stack


@pytest.mark.parametrize(("model", "parser"), [
    ("qwen3.6-27b", "qwen3_coder"), ("qwen3.6-35b-a3b-fp8", "qwen3_coder"), ("qwen3-coder-next-fp8", "qwen3_coder"),
    ("qwen3-32b", "hermes"), ("gpt-oss-120b", "openai"),
])
def test_profiles_use_their_familys_parser(tmp_path, model, parser):
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model=model, hf_cache=str(MODEL_CACHE))
    result = check_tool_parser(context(stack, make_host(tmp_path)))
    assert result.status is Status.ok, result
    assert f"--tool-call-parser {parser}" in result.found


def test_hermes_on_a_qwen3_coder_family_model_fails(tmp_path):
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model="qwen3.6-27b", hf_cache=str(MODEL_CACHE),
                       vllm={"extra_args": ["--tool-call-parser", "hermes"]})
    result = check_tool_parser(context(stack, make_host(tmp_path)))
    assert result.status is Status.fail
    assert "qwen3.6-27b writes qwen3-coder-xml tool calls" in result.found.lower() or "qwen3-coder-xml" in result.found
    assert "use --tool-call-parser qwen3_coder" in result.fix


def test_no_engine_venv_means_nothing_to_parse_with(tmp_path):
    stack = make_stack(tmp_path, hardware="rtx-pro-6000")
    result = check_vllm_flags(context(stack, make_host(tmp_path), engine_python=tmp_path / "no-engine" / "bin" / "python"))
    assert result.status is Status.ok and "no vLLM CUDA engine" in result.found


# Every GPU model profile once, every GPU hardware profile at least once (each parse starts the
# engine's interpreter and imports vLLM: ~15 s on a loaded 2-core machine).
GPU_STACKS = [
    ("rtx-pro-6000", "qwen3.6-27b"), ("h100", "qwen3-32b"), ("rtx-pro-6000", "qwen3-32b-awq"),
    ("rtx-pro-6000", "gpt-oss-120b"), ("dgx-spark", "qwen3.6-35b-a3b-fp8"), ("dgx-spark", "qwen3-coder-next-fp8"),
    ("generic", "qwen3.6-35b-a3b-fp8"),
]


def test_the_parse_list_covers_every_gpu_profile():
    assert {model for _hardware, model in GPU_STACKS} == {m.name for m in MODEL_PROFILES.values() if m.gpu_only}
    # A multi-node profile needs hosts: (its head's flags: test_ray_flags.py, with the CUDA build too).
    single_node = {h for h, p in HARDWARE_PROFILES.items() if p.has_gpu and p.nodes == 1}
    assert {hardware for hardware, _model in GPU_STACKS} == single_node
    assert all(not HARDWARE_PROFILES[h].unsupported_reason(MODEL_PROFILES[m].quantization) for h, m in GPU_STACKS)


@pytest.mark.vllm_cuda
@pytest.mark.parametrize(("hardware", "model"), GPU_STACKS)
def test_every_gpu_profile_is_accepted_by_the_cuda_builds_parser_and_registry(tmp_path, hardware, model,
                                                                              vllm_cuda_engine):
    """GPU stacks are validated by the engine that serves them: PyPI's vLLM CUDA build."""
    stack = make_stack(tmp_path, hardware=hardware, model=model)
    engine = vllm_cuda_engine.info
    result = check_vllm_flags(context(stack, make_host(tmp_path), engine_python=engine.python))
    assert result.status is Status.ok, result
    assert f"vLLM {engine.vllm_version} accepts all" in result.found
    assert f"its registry knows {MODEL_PROFILES[model].architecture}" in result.found


@pytest.mark.vllm_cuda
@pytest.mark.parametrize(("extra", "message"), [
    (["--dtype", "fp8"], "argument --dtype: invalid choice: 'fp8'"),
    (["--mxfp4-layers", "all"], "unrecognized arguments: --mxfp4-layers"),
])
def test_the_cuda_build_refuses_bad_flags(tmp_path, extra, message, vllm_cuda_engine):
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model="qwen3-32b", vllm={"extra_args": extra})
    result = check_vllm_flags(context(stack, make_host(tmp_path), engine_python=vllm_cuda_engine.info.python))
    assert result.status is Status.fail
    assert message in result.found and "vllm.extra_args" in result.fix


@pytest.mark.vllm
def test_cpu_stacks_are_checked_by_the_cpu_build(tmp_path, vllm_engine):
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny")
    result = check_vllm_flags(context(stack, make_host(tmp_path), engine_python=vllm_engine.python))
    assert result.status is Status.ok, result
    assert f"vLLM {vllm_engine.vllm_version} accepts all" in result.found


@pytest.mark.vllm
def test_unknown_vllm_environment_variable_in_native_runtime(tmp_path, vllm_engine):
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny")
    facts = make_host(tmp_path)
    facts.environ["VLLM_MXFP4_LAYERS"] = "all"
    result = check_vllm_flags(context(stack, facts, engine_python=vllm_engine.python))
    assert result.status is Status.fail
    assert "unknown environment variables VLLM_MXFP4_LAYERS" in result.found
