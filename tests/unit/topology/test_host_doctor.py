"""doctor on a host of a multi-host stack: the proxy off public addresses, the Ray link there,
model fit over every node's memory, no GPU checks on an edge."""


from stackctl.doctor import run_checks
from stackctl.doctor.result import Status
from stackctl.doctor.served_model import check_model_fit
from stackctl.doctor.topology import check_proxy_exposure, check_ray_link, check_this_host
from tests.support.fakehost import context, make_host, write_index
from tests.support.stack_builder import make_stack

PAIR = {
    "spark1": {"address": "192.168.1.21", "role": "gpu", "link_address": "10.10.0.1"},
    "spark2": {"address": "192.168.1.22", "role": "ray-worker", "link_address": "10.10.0.2"},
}


def test_a_proxy_on_a_public_address_is_warned_about(tmp_path):
    hosts = {"edge": {"address": "192.168.1.10", "role": "edge"}, "gpu": {"address": "203.0.114.20", "role": "gpu"}}
    # 203.0.114.20 is a global unicast address (never contacted: the check only reads the plan).
    [result] = check_proxy_exposure(context(make_stack(tmp_path, host="gpu", hosts=hosts), make_host(tmp_path)))
    assert result.status is Status.warn
    assert "203.0.114.20:4000, a public address" in result.found
    assert "hosts.gpu.address the GPU host's intranet IP" in result.fix


def test_a_proxy_on_the_intranet_is_fine_and_one_box_says_nothing(tmp_path):
    hosts = {"edge": {"address": "192.168.1.10", "role": "edge"}, "gpu": {"address": "192.168.1.20", "role": "gpu"}}
    [result] = check_proxy_exposure(context(make_stack(tmp_path, host="gpu", hosts=hosts), make_host(tmp_path)))
    assert result.status is Status.ok and "192.168.1.20:4000 (the intranet address only" in result.found
    one_box = context(make_stack(tmp_path / "one", host=None), make_host(tmp_path))
    assert check_proxy_exposure(one_box) == [] and check_this_host(one_box) == [] and check_ray_link(one_box) == []


def test_a_host_that_is_not_this_machine_fails_with_the_fix(tmp_path):
    hosts = {"edge": {"address": "192.168.1.10", "role": "edge"}, "gpu": {"address": "192.168.1.20", "role": "gpu"}}
    [result] = check_this_host(context(make_stack(tmp_path, host="gpu", hosts=hosts), make_host(tmp_path)))
    assert result.status is Status.fail and "192.168.1.20 is not an address of this machine" in result.found


def test_a_ray_node_without_its_link_interface_fails(tmp_path):
    stack = make_stack(tmp_path, host="spark1", hardware="dgx-spark-pair", hosts=PAIR, ray={"interface": "enp1s0f0np0"})
    [result] = check_ray_link(context(stack, make_host(tmp_path, "dgx-spark-gb10-580")))
    assert result.status is Status.fail and "interface enp1s0f0np0 (NCCL_SOCKET_IFNAME" in result.found


def test_a_ray_node_with_its_link_passes(tmp_path):
    hosts = {"head": {"address": "127.0.0.1", "role": "gpu"}, "worker": {"address": "192.168.1.22", "role": "ray-worker"}}
    stack = make_stack(tmp_path, host="head", hosts=hosts, ray={"interface": "lo"})
    facts = make_host(tmp_path)
    (facts.root / "sys" / "class" / "net" / "lo").mkdir(parents=True)
    [result] = check_ray_link(context(stack, facts))
    assert result.status is Status.ok, result
    assert "cluster 127.0.0.1:6379: 2 nodes x 1 GPU, TP 1 x PP 2" in result.found


def test_model_fit_counts_the_memory_of_both_sparks(tmp_path):
    hf_cache = tmp_path / "hf"
    # A checkpoint of 120 GB: more than one Spark's 0.70 budget, less than two.
    write_index(hf_cache, "Qwen/Qwen3.6-27B", 120 * 10**9)
    one = make_stack(tmp_path / "one", host=None, hardware="dgx-spark", model="qwen3.6-27b", hf_cache=str(hf_cache))
    pair = make_stack(tmp_path / "pair", host="spark1", hardware="dgx-spark-pair", model="qwen3.6-27b",
                     hf_cache=str(hf_cache), hosts=PAIR, ray={"interface": "enp1s0f0np0"})
    facts = make_host(tmp_path, "dgx-spark-gb10-580")
    alone = check_model_fit(context(one, facts))
    assert alone.status is Status.fail and "the weights alone exceed the budget" in alone.found
    together = check_model_fit(context(pair, facts))
    assert together.status is not Status.fail, together
    assert "x 2 GPUs on 2 nodes x 0.70" in together.found


def test_an_edge_host_skips_the_gpu_and_model_checks(tmp_path):
    # Loopback addresses: the peer check connects to them (no traffic leaves this machine).
    hosts = {"edge": {"address": "127.0.0.1", "role": "edge"}, "gpu": {"address": "127.0.0.2", "role": "gpu"}}
    names = {result.name for result in run_checks(make_stack(tmp_path, host="edge", hardware="rtx-pro-6000", hosts=hosts),
                                                  facts=make_host(tmp_path))}
    assert not names & {"gpu", "driver", "model-fit", "tool-parser", "memory", "disk", "hf-token"}
    assert {"host", "ports", "env-file", "nginx-upstream", "peer-gpu-filter-proxy"} <= names
