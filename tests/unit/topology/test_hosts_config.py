"""stack.yaml's hosts: and ray: sections: what is accepted, and every refusal names its key."""

import pytest

from stackctl.config import parse_stack_config
from stackctl.vllm_args import vllm_args
from tests.support.stack_builder import config_error

EDGE_GPU = {"edge": {"address": "10.0.0.1", "role": "edge"}, "gpu": {"address": "10.0.0.2", "role": "gpu"}}
PAIR = {
    "spark1": {"address": "192.168.1.21", "role": "gpu", "link_address": "10.10.0.1"},
    "spark2": {"address": "192.168.1.22", "role": "ray-worker", "link_address": "10.10.0.2"},
}


def test_a_stack_without_hosts_is_one_box():
    config = parse_stack_config({})
    assert config.hosts == {} and config.ray is None


def test_an_edge_and_a_gpu_host_are_accepted():
    config = parse_stack_config({"hosts": EDGE_GPU})
    assert {name: host.role for name, host in config.hosts.items()} == {"edge": "edge", "gpu": "gpu"}


@pytest.mark.parametrize("address", ["spark-1.local", "gpu.example.org", "10.0.0"])
def test_a_host_address_is_an_ip_never_a_name(address):
    message = config_error({"hosts": {"gpu": {"address": address, "role": "gpu"}}})
    assert message.startswith("stack.yaml: hosts.gpu.address:") and "is not an IP address" in message
    assert ".local name fails when mDNS is slow" in message


@pytest.mark.parametrize(("hosts", "expected"), [
    ({"a": {"address": "10.0.0.1", "role": "edge"}}, "at least one host needs role: gpu"),
    ({**EDGE_GPU, "edge2": {"address": "10.0.0.3", "role": "edge"}}, "one edge host per stack"),
    ({"g1": {"address": "10.0.0.1", "role": "gpu"}, "g2": {"address": "10.0.0.2", "role": "gpu"}},
     "are replicas and need an edge host in front"),
    ({**EDGE_GPU, "gpu2": {"address": "10.0.0.2", "role": "gpu"}}, "hosts.gpu2.address 10.0.0.2 is also hosts.gpu's"),
    ({"GPU": {"address": "10.0.0.2", "role": "gpu"}}, "hosts.GPU: lowercase letters"),
    ({**EDGE_GPU, "w": {"address": "10.0.0.9", "role": "ray-worker", "head": "edge"}},
     "hosts.w.head: 'edge' is not a gpu host"),
    ({**EDGE_GPU, "g": {"address": "10.0.0.8", "role": "gpu"}, "w": {"address": "10.0.0.9", "role": "ray-worker"}},
     "hosts.w.head: name the gpu host this ray-worker serves (gpu or g)"),
    ({**EDGE_GPU, "w": {"address": "10.0.0.9", "role": "ray-worker"}}, "ray.interface: the link interface"),
])
def test_hosts_that_cannot_work_are_refused_with_the_fix(hosts, expected):
    assert expected in config_error({"hosts": hosts})


def test_an_unknown_host_key_lists_the_allowed_ones():
    message = config_error({"hosts": {"gpu": {"address": "10.0.0.2", "role": "gpu", "port": 1}}})
    assert "unknown key 'hosts.gpu.port'; allowed keys here: address, role, head, link_address, interface" in message


def test_the_parallel_sizes_must_cover_every_gpu_of_the_cluster():
    message = config_error({"hosts": PAIR, "ray": {"interface": "enp1s0f0np0", "pipeline_parallel_size": 4}})
    assert "tensor_parallel_size 1 x pipeline_parallel_size 4 = 4 GPUs, but each cluster has 2 nodes x 1 GPU(s) = 2" in message


def test_parallel_sizes_without_a_worker_are_refused():
    message = config_error({"hosts": EDGE_GPU, "ray": {"tensor_parallel_size": 2}})
    assert "ray: parallel sizes without any ray-worker host" in message


def test_ray_passes_only_nccl_gloo_ucx_and_ray_variables():
    message = config_error({"hosts": PAIR, "ray": {"interface": "eth1", "environment": {"LD_PRELOAD": "x"}}})
    assert "'LD_PRELOAD' is not an NCCL_*, GLOO_*, UCX_* or RAY_* variable" in message


def test_dgx_spark_pair_needs_its_two_nodes():
    assert "hardware 'dgx-spark-pair' is 2 nodes serving one model" in config_error({"hardware": "dgx-spark-pair"})
    config = parse_stack_config({"hardware": "dgx-spark-pair", "hosts": PAIR, "ray": {"interface": "enp1s0f0np0"}})
    assert config.hardware_profile.gpu_memory_utilization == 0.70 and config.hardware_profile.unified_memory


def test_the_pair_gets_rays_executor_pipeline_across_nodes_by_default():
    args = vllm_args(parse_stack_config({"hardware": "dgx-spark-pair", "hosts": PAIR,
                                         "ray": {"interface": "enp1s0f0np0"}}))
    joined = " ".join(args)
    assert "--distributed-executor-backend ray --tensor-parallel-size 1 --pipeline-parallel-size 2" in joined
    assert "--gpu-memory-utilization 0.70" in joined and "--host 127.0.0.1" in joined


def test_tensor_parallel_two_over_the_link_is_a_choice():
    args = vllm_args(parse_stack_config({"hardware": "dgx-spark-pair", "hosts": PAIR,
                                         "ray": {"interface": "enp1s0f0np0", "tensor_parallel_size": 2}}))
    assert "--tensor-parallel-size 2 --pipeline-parallel-size 1" in " ".join(args)


def test_on_the_cpu_build_ray_replaces_the_single_process_executor():
    args = vllm_args(parse_stack_config({"hardware": "cpu", "model": "tiny", "hosts": PAIR, "ray": {"interface": "veth0"}}))
    assert args.count("--distributed-executor-backend") == 1
    assert args[args.index("--distributed-executor-backend") + 1] == "ray"


def test_one_box_flags_are_unchanged_by_the_hosts_feature():
    assert "--distributed-executor-backend" not in vllm_args(parse_stack_config({"hardware": "rtx-pro-6000"}))
