"""doctor asks a brought engine (`engine.python`) the two things a start needs: does `import vllm`
work there, and does its torch see a GPU. Real interpreters: the vLLM CUDA build (on this
machine without a driver: a stub libcuda, so it imports and sees no GPU) and the CPU build."""

from __future__ import annotations

import pytest

from stackctl.doctor.engine import check_engine, check_engine_version
from stackctl.doctor.result import Status
from tests.support.brought_engine import environment_seeing
from tests.support.fakehost import context, make_host
from tests.support.stack_builder import make_stack

pytestmark = [pytest.mark.integration]


@pytest.mark.vllm_cuda
def test_the_cuda_build_imports_and_doctor_says_it_sees_no_gpu_here(vllm_cuda_engine, tmp_path):
    python = environment_seeing(vllm_cuda_engine.info.python, tmp_path / "vllm-env")
    stack = make_stack(tmp_path, runtime="native", hardware="generic", model="qwen3.6-27b",
                       engine={"python": str(python)})
    ctx = context(stack, make_host(tmp_path))
    fast = check_engine(ctx)
    assert fast.status is Status.ok and f"vLLM {vllm_cuda_engine.info.vllm_version}" in fast.found, fast
    full = check_engine_version(ctx)
    assert full.status is Status.fail, full
    assert f"vLLM {vllm_cuda_engine.info.vllm_version} (torch {vllm_cuda_engine.info.torch_version}" in full.found
    assert "torch sees no GPU" in full.found and "nvidia-smi" in full.fix


@pytest.mark.vllm
def test_a_cpu_build_named_for_a_gpu_stack_is_refused_with_the_fix(vllm_engine, tmp_path):
    stack = make_stack(tmp_path, runtime="native", hardware="generic", model="qwen3.6-27b",
                       engine={"python": str(vllm_engine.python)})
    result = check_engine_version(context(stack, make_host(tmp_path)))
    assert result.status is Status.fail and "its torch is a CPU build" in result.found, result
    assert "install the CUDA torch that vLLM pins" in result.fix
