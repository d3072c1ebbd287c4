"""Each host's share of a multi-host stack, rendered: valid Compose files, nginx pinned to the GPU
hosts' IPs, the proxy on the intranet address, vLLM on loopback, Prometheus federating, Ray."""

import json
from importlib import resources

import jsonschema
import pytest
import yaml

from stackctl.envfile import secret_values
from stackctl.errors import ConfigError
from stackctl.render import render_project
from stackctl.stack import Stack
from tests.support.stack_builder import make_stack

EDGE_GPU = {"edge": {"address": "192.168.1.10", "role": "edge"}, "gpu": {"address": "192.168.1.20", "role": "gpu"}}
REPLICAS = {**EDGE_GPU, "gpu2": {"address": "192.168.1.30", "role": "gpu"}}
PAIR = {
    "edge": {"address": "192.168.1.10", "role": "edge"},
    "spark1": {"address": "192.168.1.21", "role": "gpu", "link_address": "10.10.0.1"},
    "spark2": {"address": "192.168.1.22", "role": "ray-worker", "link_address": "10.10.0.2", "interface": "enP2p1s0f0np0"},
}


@pytest.fixture(scope="module")
def compose_schema():
    schema = json.loads((resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json").read_text())
    return jsonschema.validators.validator_for(schema)(schema)


def rendered(tmp_path, host: str, compose_schema, **settings) -> tuple[Stack, dict]:
    stack = make_stack(tmp_path, root=tmp_path, host=host, **settings)
    written = render_project(stack).write(stack.layout)
    document = yaml.safe_load(written.compose_file.read_text())
    compose_schema.validate(document)
    texts = [written.compose_file.read_text(), *(path.read_text() for path in written.config_files)]
    assert not any(secret in text for secret in secret_values(tmp_path / ".env") for text in texts)
    return stack, document


def test_each_host_renders_its_own_project_under_hosts(tmp_path, compose_schema):
    stack, document = rendered(tmp_path, "gpu", compose_schema, hosts=EDGE_GPU)
    assert stack.layout.compose_file == tmp_path / "hosts" / "gpu" / "docker-compose.yml"
    assert document["name"] == "stackctl-gpu"
    assert set(document["services"]) == {"vllm", "filter-proxy", "prometheus", "node-exporter", "gpu-exporter"}
    # `docker compose up -d` in hosts/gpu finds the stack's one .env.
    assert (tmp_path / "hosts" / "gpu" / ".env").resolve() == (tmp_path / ".env").resolve()
    _edge, edge = rendered(tmp_path, "edge", compose_schema, hosts=EDGE_GPU)
    assert set(edge["services"]) == {"nginx", "prometheus", "node-exporter", "grafana"}


def test_behind_an_edge_the_proxy_binds_the_intranet_address_and_vllm_stays_on_loopback(tmp_path, compose_schema):
    _stack, document = rendered(tmp_path, "gpu", compose_schema, hosts=EDGE_GPU)
    proxy = document["services"]["filter-proxy"]["command"]
    assert proxy[proxy.index("--host") + 1] == "192.168.1.20"
    assert proxy[proxy.index("--backend") + 1].startswith("http://127.0.0.1:")
    assert "STACKCTL_PROXY_KEYS" in document["services"]["filter-proxy"]["environment"]
    vllm = document["services"]["vllm"]["command"]
    assert vllm[vllm.index("--host") + 1] == "127.0.0.1"
    assert "--distributed-executor-backend" not in vllm


def test_the_edges_nginx_upstream_is_the_gpu_hosts_ip(tmp_path, compose_schema):
    _stack, _document = rendered(tmp_path, "edge", compose_schema, hosts=EDGE_GPU)
    site = (tmp_path / "hosts" / "edge" / "rendered" / "nginx" / "stackctl-site.conf").read_text()
    upstream = site.split("upstream stackctl_", 1)[1].split("}", 1)[0]
    assert "server 192.168.1.20:4000 max_fails=1 fail_timeout=10s;" in upstream
    assert "hash " not in upstream and "127.0.0.1" not in upstream and ".local" not in upstream


def test_replicas_hash_on_the_client_key_and_retry_on_the_next(tmp_path, compose_schema):
    _stack, _document = rendered(tmp_path, "edge", compose_schema, hosts=REPLICAS)
    site = (tmp_path / "hosts" / "edge" / "rendered" / "nginx" / "stackctl-site.conf").read_text()
    assert "hash $http_x_api_key$http_authorization consistent;" in site
    assert "server 192.168.1.20:4000" in site and "server 192.168.1.30:4000" in site
    assert "proxy_next_upstream error timeout http_502 http_503 non_idempotent;" in site


def test_the_edges_prometheus_federates_every_other_host(tmp_path, compose_schema):
    rendered(tmp_path, "edge", compose_schema, hosts=REPLICAS)
    prometheus = yaml.safe_load((tmp_path / "hosts" / "edge" / "rendered" / "prometheus" / "prometheus.yml").read_text())
    jobs = {job["job_name"]: job for job in prometheus["scrape_configs"]}
    assert set(jobs) == {"prometheus", "node", "federate"}
    federate = jobs["federate"]
    assert federate["honor_labels"] is True and federate["honor_timestamps"] is False
    assert [(item["targets"], item["labels"]) for item in federate["static_configs"]] == [
        (["192.168.1.20:9090"], {"host": "gpu", "role": "gpu"}),
        (["192.168.1.30:9090"], {"host": "gpu2", "role": "gpu"}),
    ]
    _gpu, gpu = rendered(tmp_path, "gpu2", compose_schema, hosts=REPLICAS)
    assert "--web.listen-address=192.168.1.30:9090" in gpu["services"]["prometheus"]["command"]


def test_a_ray_head_runs_ray_and_vllm_joins_it_over_the_link(tmp_path, compose_schema):
    _stack, document = rendered(tmp_path, "spark1", compose_schema, hardware="dgx-spark-pair", hosts=PAIR,
                                ray={"interface": "enp1s0f0np0", "environment": {"NCCL_IB_HCA": "mlx5_0"}})
    assert set(document["services"]) >= {"ray-head", "vllm", "filter-proxy"}
    head = document["services"]["ray-head"]
    assert head["image"] == document["services"]["vllm"]["image"]  # the vLLM image's own Ray
    assert head["command"][:4] == ["ray", "start", "--head", "--block"]
    assert "--node-ip-address=10.10.0.1" in head["command"] and "--num-gpus=1" in head["command"]
    for environment in (head["environment"], document["services"]["vllm"]["environment"]):
        assert {"NCCL_SOCKET_IFNAME=enp1s0f0np0", "GLOO_SOCKET_IFNAME=enp1s0f0np0", "VLLM_HOST_IP=10.10.0.1",
                "RAY_ADDRESS=10.10.0.1:6379", "NCCL_IB_HCA=mlx5_0"} <= set(environment)
    assert head["healthcheck"]["test"][-3:] == ["10.10.0.1:6379", "2", "2"]
    assert document["services"]["vllm"]["depends_on"] == {"ray-head": {"condition": "service_healthy"}}


def test_a_ray_worker_joins_its_head_on_its_own_interface(tmp_path, compose_schema):
    stack, document = rendered(tmp_path, "spark2", compose_schema, hardware="dgx-spark-pair", hosts=PAIR,
                               ray={"interface": "enp1s0f0np0"})
    assert set(document["services"]) == {"ray-worker", "prometheus", "node-exporter", "gpu-exporter"}
    worker = document["services"]["ray-worker"]
    assert "--address=10.10.0.1:6379" in worker["command"] and "--node-ip-address=10.10.0.2" in worker["command"]
    assert "NCCL_SOCKET_IFNAME=enP2p1s0f0np0" in worker["environment"]
    assert [(gate.host, gate.url) for gate in stack.plan.peers] == [("spark1", "tcp://10.10.0.1:6379")]


def test_the_cluster_gate_is_the_heads_health_and_runs_in_its_container(tmp_path):
    stack = make_stack(tmp_path, root=tmp_path, host="spark1", hardware="dgx-spark-pair", hosts=PAIR, ray={"interface": "eth1"})
    gate = {service.name: service for service in stack.services}["ray-head"].health
    assert gate is not None and gate.probe == "command"
    assert gate.command[-3:] == ("10.10.0.1:6379", "2", "2")
    assert "exec" in gate.command and "ray-head" in gate.command and "python3" in gate.command


def test_the_edge_waits_for_every_gpu_hosts_proxy(tmp_path):
    stack = make_stack(tmp_path, root=tmp_path, host="edge", hosts=REPLICAS)
    assert [(gate.host, gate.service, gate.url) for gate in stack.plan.peers] == [
        ("gpu", "filter-proxy", "http://192.168.1.20:4000/health"),
        ("gpu2", "filter-proxy", "http://192.168.1.30:4000/health"),
    ]
    assert stack.plan.endpoint_address == "192.168.1.10"


def test_a_host_name_must_be_one_of_the_hosts(tmp_path):
    with pytest.raises(ConfigError, match=r"--host gpu9: not in stack.yaml's hosts \(edge, gpu\)"):
        make_stack(tmp_path, root=tmp_path, host="gpu9", hosts=EDGE_GPU)
    with pytest.raises(ConfigError, match="stack.yaml lists hosts .* pass --host NAME"):
        make_stack(tmp_path, root=tmp_path, host=None, hosts=EDGE_GPU)  # none of these addresses is this machine's
    with pytest.raises(ConfigError, match="stack.yaml has no hosts: section"):
        make_stack(tmp_path, root=tmp_path, host="gpu")


def test_the_host_whose_address_is_local_is_found_without_host(tmp_path):
    stack = make_stack(tmp_path, root=tmp_path, host=None, hosts={"edge": {"address": "192.168.1.10", "role": "edge"},
                                             "here": {"address": "127.0.0.1", "role": "gpu"}})
    assert stack.layout.host == "here"


def test_one_box_renders_as_before(tmp_path, compose_schema):
    stack, document = rendered(tmp_path, None, compose_schema)
    assert stack.layout.home == tmp_path and document["name"] == "stackctl"
    prometheus = (tmp_path / "rendered" / "prometheus" / "prometheus.yml").read_text()
    assert "host:" not in prometheus and "federate" not in prometheus
    site = (tmp_path / "rendered" / "nginx" / "stackctl-site.conf").read_text()
    assert "server 127.0.0.1:4000;" in site and "hash" not in site and "max_fails" not in site
