"""The Ray head's vLLM command line through vLLM's own parser (the engine venv's vLLM): the
parallelism flags stackctl composes are accepted, and what vLLM refuses is reported."""

import pytest
import yaml

from stackctl.doctor.result import Status
from stackctl.doctor.vllm_flags import _composed_args, check_vllm_flags
from stackctl.envfile import ensure_secrets
from stackctl.layout import StackLayout
from stackctl.stack import Stack
from tests.support.fakehost import context, make_host

pytestmark = pytest.mark.vllm

PAIR = {
    "spark1": {"address": "192.168.1.21", "role": "gpu", "link_address": "10.10.0.1"},
    "spark2": {"address": "192.168.1.22", "role": "ray-worker", "link_address": "10.10.0.2"},
}


def head(tmp_path, **settings) -> Stack:
    (tmp_path / "stack.yaml").write_text(yaml.safe_dump({"hardware": "dgx-spark-pair", "model": "qwen3.6-27b",
                                                          "hosts": PAIR, **settings}))
    ensure_secrets(tmp_path / ".env")
    return Stack.load(StackLayout(tmp_path), host="spark1")


@pytest.mark.parametrize("ray", [{"interface": "enp1s0f0np0"}, {"interface": "enp1s0f0np0", "tensor_parallel_size": 2}],
                         ids=["pipeline-2", "tensor-2"])
def test_vllm_accepts_the_composed_ray_flags(tmp_path, vllm_engine, ray):
    stack = head(tmp_path, ray=ray)
    ctx = context(stack, make_host(tmp_path), engine_python=vllm_engine.python)
    args = _composed_args(ctx)
    assert args[args.index("--distributed-executor-backend") + 1] == "ray"
    result = check_vllm_flags(ctx)
    assert result.status is Status.ok, result
    assert f"accepts all {len(args)} arguments" in result.found


@pytest.mark.vllm_cuda
def test_the_cuda_build_accepts_the_pairs_head_flags(tmp_path, vllm_cuda_engine):
    """What a real Spark pair runs: the GPU build's parser and registry on the head's command line."""
    stack = head(tmp_path, ray={"interface": "enp1s0f0np0"})
    engine = vllm_cuda_engine.info
    result = check_vllm_flags(context(stack, make_host(tmp_path), engine_python=engine.python))
    assert result.status is Status.ok, result
    assert f"vLLM {engine.vllm_version} accepts all" in result.found


def test_vllm_refuses_a_parallel_size_it_cannot_parse(tmp_path, vllm_engine):
    stack = head(tmp_path, ray={"interface": "enp1s0f0np0"}, vllm={"extra_args": ["--pipeline-parallel-size", "two"]})
    result = check_vllm_flags(context(stack, make_host(tmp_path), engine_python=vllm_engine.python))
    assert result.status is Status.fail
    assert "--pipeline-parallel-size" in result.found and "invalid int value: 'two'" in result.found

