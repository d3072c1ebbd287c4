"""The seed topology: a multihomed edge host (nginx) in front of a GPU host (vLLM CPU + the
filter-proxy), each a network namespace running `stackctl up --host NAME` inside, and the
official Anthropic SDK in a third, "client" namespace on the edge's public side.

    client 172.31.250.1 ── 172.31.250.2 edge 10.231.0.1 ── 10.231.0.2 gpu
                 (internet side)              (LAN; the edge does not route)

Tests in this module run in order against one topology: up, use, isolation, monitoring, down.
"""

import json

import pytest

from tests.support.multihost import (
    CLIENT_SCRIPT,
    host_services,
    make_multihost_stack,
    prometheus_query,
)
from tests.support.netns import lab
from tests.support.processes import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.vllm]

EDGE_PUBLIC, CLIENT = "172.31.250.2", "172.31.250.1"
EDGE_LAN, GPU = "10.231.0.1", "10.231.0.2"


@pytest.fixture(scope="module")
def topology(tmp_path_factory, vllm_engine):
    with lab("eg") as made:
        client, edge, gpu = made.host("client"), made.host("edge"), made.host("gpu")
        made.link(client, CLIENT, edge, EDGE_PUBLIC)
        made.link(edge, EDGE_LAN, gpu, GPU)
        demo = make_multihost_stack(tmp_path_factory.mktemp("edge-gpu") / "stack", {
            "edge": {"address": EDGE_LAN, "role": "edge"},
            "gpu": {"address": GPU, "role": "gpu"},
        })
        try:
            # The order an operator follows: the GPU host first, then the edge, which waits for it.
            gpu_up = gpu.stackctl(demo.root, "up", "--host", "gpu")
            assert gpu_up.returncode == 0, gpu_up.stdout[-3000:] + gpu_up.stderr[-3000:]
            edge_up = edge.stackctl(demo.root, "up", "--host", "edge")
            assert edge_up.returncode == 0, edge_up.stdout[-3000:] + edge_up.stderr[-3000:]
            yield made, demo, {"client": client, "edge": edge, "gpu": gpu}, gpu_up.stdout, edge_up.stdout
        finally:
            edge.stackctl(demo.root, "down", "--host", "edge", timeout=120)
            gpu.stackctl(demo.root, "down", "--host", "gpu", timeout=120)


def test_each_host_runs_only_its_share(topology):
    _made, demo, _hosts, gpu_out, edge_out = topology
    assert set(host_services(demo, "gpu")) == {"vllm", "filter-proxy", "prometheus", "node-exporter", "gpu-exporter"}
    assert set(host_services(demo, "edge")) == {"nginx", "prometheus", "node-exporter"}
    assert "✓ gpu: filter-proxy serving" in edge_out
    assert f"http://{EDGE_LAN}:{demo.ports['http']}/v1" in edge_out
    assert demo.client_key not in gpu_out + edge_out


def test_nginx_upstream_is_the_gpu_hosts_ip(topology):
    _made, demo, _hosts, _gpu, _edge = topology
    site = (demo.root / "hosts" / "edge" / "rendered" / "nginx" / "stackctl-site.conf").read_text()
    assert f"server {GPU}:{demo.ports['proxy']} max_fails=1 fail_timeout=10s;" in site
    assert "127.0.0.1:" not in site.split("upstream stackctl_", 1)[1].split("}", 1)[0]


def test_the_anthropic_sdk_in_the_client_namespace_reaches_vllm_through_edge_and_proxy(topology):
    _made, demo, hosts, _gpu, _edge = topology
    done = hosts["client"].python(CLIENT_SCRIPT, f"http://{EDGE_PUBLIC}:{demo.ports['http']}",
                                  env={"CLIENT_KEY": demo.client_key})
    assert done.returncode == 0, done.stderr[-3000:]
    reply = json.loads(done.stdout.strip().splitlines()[-1])
    assert reply["type"] == "message" and reply["stop_reason"] in ("end_turn", "max_tokens")
    assert reply["streamed_stop"] in ("end_turn", "max_tokens") and reply["streamed_chars"] > 0


def test_the_proxy_is_out_of_the_clients_reach_and_vllm_out_of_everyones(topology):
    _made, demo, hosts, _gpu, _edge = topology
    proxy, vllm = demo.ports["proxy"], demo.ports["vllm"]
    # The client only knows the edge's public side: the LAN is not routed to it.
    assert hosts["client"].connect(GPU, proxy) == "unreachable"
    assert hosts["client"].connect(EDGE_LAN, proxy) in ("refused", "unreachable")
    # The edge reaches the proxy on the LAN, never vLLM.
    assert hosts["edge"].connect(GPU, proxy) == "open"
    assert hosts["edge"].connect(GPU, vllm) == "refused"
    # On the GPU host itself: vLLM on loopback only, the proxy on the intranet address only.
    listening = hosts["gpu"].listeners()
    assert f"127.0.0.1:{vllm}" in listening and not any(
        entry.endswith(f":{vllm}") for entry in listening if not entry.startswith("127.0.0.1:"))
    assert [entry for entry in listening if entry.endswith(f":{proxy}")] == [f"{GPU}:{proxy}"]


def test_the_proxy_requires_a_key_on_the_lan(topology):
    _made, demo, hosts, _gpu, _edge = topology
    code = ("import httpx, sys\nr = httpx.post(sys.argv[1], json={'model': 'tiny', 'max_tokens': 1, "
            "'messages': [{'role': 'user', 'content': 'hi'}]})\nprint(r.status_code)")
    done = hosts["edge"].python(code, f"http://{GPU}:{demo.ports['proxy']}/v1/messages")
    assert done.stdout.strip() == "401", done.stderr[-2000:]


def test_the_edges_prometheus_sees_the_gpu_hosts_services(topology):
    _made, demo, hosts, _gpu, _edge = topology
    port = demo.ports["prometheus"]

    def federated() -> bool:
        found = prometheus_query(hosts["edge"], port, 'up{host="gpu"} == 1')
        return {sample["metric"]["job"] for sample in found} >= {"vllm", "filter-proxy", "node", "gpu"}

    wait_until(federated, 90, "the edge's Prometheus to federate the GPU host's targets")
    edge_own = prometheus_query(hosts["edge"], port, 'up{host="edge", job="node"}')
    assert [sample["value"][1] for sample in edge_own] == ["1"]


def test_doctor_on_each_host_checks_its_peers(topology):
    _made, demo, hosts, _gpu, _edge = topology
    edge = hosts["edge"].stackctl(demo.root, "doctor", "--host", "edge", "--fast", "--json")
    rows = {row["name"]: row for row in json.loads(edge.stdout)["checks"]}
    assert rows["host"]["status"] == "ok"
    assert rows["peer-gpu-filter-proxy"]["status"] == "ok", rows["peer-gpu-filter-proxy"]
    assert rows["peer-gpu-prometheus"]["status"] == "ok", rows["peer-gpu-prometheus"]
    assert "gpu" not in rows  # an edge host has no GPU to check
    gpu = hosts["gpu"].stackctl(demo.root, "doctor", "--host", "gpu", "--fast", "--json")
    rows = {row["name"]: row for row in json.loads(gpu.stdout)["checks"]}
    assert rows["proxy-exposure"]["status"] == "ok" and GPU in rows["proxy-exposure"]["found"]
    # The edge's doctor, run on the GPU host, says this machine is not the edge.
    wrong = hosts["gpu"].stackctl(demo.root, "doctor", "--host", "edge", "--fast", "--json")
    assert {row["name"]: row for row in json.loads(wrong.stdout)["checks"]}["host"]["status"] == "fail"


def test_without_host_the_cli_finds_which_host_this_is(topology):
    _made, demo, hosts, _gpu, _edge = topology
    status = hosts["gpu"].stackctl(demo.root, "status")
    assert status.returncode == 0, status.stderr
    assert "filter-proxy" in status.stdout and "nginx" not in status.stdout
