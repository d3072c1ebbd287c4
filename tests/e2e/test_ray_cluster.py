"""Two nodes serving one model through Ray: a gpu host (the Ray head) and a ray-worker, each a
network namespace running `stackctl up --host NAME`, joined by one link whose interface names
stack.yaml gives (NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME). Ray is PyPI's, in the engine venv.

    head 10.232.0.1 ──(link)── 10.232.0.2 worker

The head's gate holds vLLM back until the cluster reports both nodes and both GPUs (logical GPUs
here: `ray start --num-gpus`). vLLM's CPU build then stops where it stops; the test pins that.
"""

import subprocess
import sys
import time

import pytest

from stackctl.topology.ray_engine import ensure_ray
from tests.support.multihost import host_services, make_multihost_stack
from tests.support.netns import lab
from tests.support.processes import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.vllm]

HEAD, WORKER = "10.232.0.1", "10.232.0.2"
# What vLLM 0.32's CPU build answers to `--distributed-executor-backend ray`: its CPU platform
# names no Ray device key (vllm/v1/executor/ray_utils.py, initialize_ray_cluster).
CPU_BUILD_STOPS_AT = "current platform cpu does not support ray"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, vllm_engine):
    # `up` installs Ray into the engine venv on first use; the namespaces have no route to PyPI,
    # so the suite does it here first (what a node with a network does at its first `up`).
    ensure_ray()
    with lab("ry") as made:
        head, worker = made.host("head"), made.host("worker")
        made.link(head, HEAD, worker, WORKER)
        demo = make_multihost_stack(tmp_path_factory.mktemp("ray") / "stack", {
            "head": {"address": HEAD, "role": "gpu", "interface": made.interface_of(head, HEAD)},
            "worker": {"address": WORKER, "role": "ray-worker", "interface": made.interface_of(worker, WORKER)},
        }, services={"monitoring": False, "grafana": False}, ray={"gpus_per_node": 1},
            start_timeouts={"vllm": 300, "ray-head": 300})
        head_up = subprocess.Popen(head.argv(sys.executable, "-m", "stackctl", "-C", str(demo.root), "up", "--host",
                                             "head"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            yield [demo, head, worker, head_up]
        finally:
            if head_up.poll() is None:
                head_up.kill()
            for name, host in (("worker", worker), ("head", head)):
                host.stackctl(demo.root, "down", "--host", name, timeout=120)


def _status_rows(host, demo, name: str) -> str:
    """`stackctl status` on a host, as its operator would read it."""
    return host.stackctl(demo.root, "status", "--host", name).stdout


def test_the_heads_gate_waits_for_every_node(cluster):
    demo, head, _worker, head_up = cluster[:4]

    def head_alone() -> bool:
        return "1/2 nodes" in _status_rows(head, demo, "head")

    wait_until(head_alone, 300, "the Ray head to run, alone in its cluster")
    time.sleep(5)
    assert head_up.poll() is None, "the head's `up` went on without the worker"
    assert "vllm" in _status_rows(head, demo, "head") and "stopped" in _status_rows(head, demo, "head")


def test_the_head_renders_rays_flags_and_the_links_variables(cluster):
    demo, _head, _worker, _up = cluster[:4]
    # What `up --host head` rendered (the services it runs, and the Compose file of the same).
    vllm = host_services(demo, "head")["vllm"]
    command = " ".join(vllm["command"])
    assert "--distributed-executor-backend ray --tensor-parallel-size 1 --pipeline-parallel-size 2" in command
    assert f"VLLM_HOST_IP={HEAD}" in vllm["environment"] and f"RAY_ADDRESS={HEAD}:6379" in vllm["environment"]
    assert any(item.startswith("NCCL_SOCKET_IFNAME=v") for item in vllm["environment"])
    assert vllm["depends_on"] == {"ray-head": {"condition": "service_healthy"}}


def test_the_worker_joins_and_the_gate_opens(cluster):
    demo, _head, worker, head_up = cluster[:4]
    joined = worker.stackctl(demo.root, "up", "--host", "worker")
    assert joined.returncode == 0, joined.stdout[-3000:] + joined.stderr[-3000:]
    assert "✓ head: ray-head serving" in joined.stdout
    assert "✓ ray-worker healthy" in joined.stdout
    output, _ = head_up.communicate(timeout=600)
    assert "✓ ray-head healthy (2/2 nodes" in output, output[-3000:]
    assert "2/2 GPUs" in output
    cluster.append(output)  # for the next test: the head's whole `up` output


def test_vllm_cpu_across_the_two_nodes_stops_where_the_cpu_build_stops(cluster):
    """vLLM's CPU build cannot run the Ray executor: `up` on the head fails at vLLM's start with
    vLLM's own error, after the cluster formed. (On GPU hosts the same flags run the model.)"""
    demo, _head, _worker, head_up, output = cluster
    log = (demo.root / "hosts" / "head" / ".stackctl" / "logs" / "vllm.log").read_text(errors="replace")
    assert head_up.returncode == 1
    assert "vllm exited during start" in output
    assert f"ValueError: {CPU_BUILD_STOPS_AT}" in log, log[-3000:]
    # It stops in vLLM's Ray executor, after joining the cluster stackctl formed.
    assert "vllm/v1/executor/ray_utils.py" in log and "initialize_ray_cluster" in log
