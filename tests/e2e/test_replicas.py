"""Replicas: two GPU hosts (each vLLM CPU + the filter-proxy) behind one edge's nginx, every host
a network namespace running `stackctl up --host NAME`; a client namespace on the edge's public
side. nginx hashes each client key to one replica; killing a replica mid-run loses no request.

    client 172.31.251.1 ── edge ──┬── 10.231.1.2 gpu1
                                  └── 10.231.2.2 gpu2
"""

import json
import os
import subprocess
import sys
import time

import pytest

from tests.support.multihost import (
    make_multihost_stack,
    prometheus_query,
    proxy_requests_by_key,
    set_client_keys,
)
from tests.support.netns import lab
from tests.support.processes import wait_until
from tools.dashboard import queries as q

pytestmark = [pytest.mark.e2e, pytest.mark.vllm]

CLIENT, EDGE_PUBLIC = "172.31.251.1", "172.31.251.2"
GPUS = {"gpu1": ("10.231.1.1", "10.231.1.2"), "gpu2": ("10.231.2.1", "10.231.2.2")}
KEY_NAMES = [f"agent{index}" for index in range(8)]
REQUESTS_PER_KEY = 2
RUN_REQUESTS = 32  # the mid-run kill's loop: every key, in turn

# Sends requests in turn with each key (CLIENT_KEYS: name=key,...), one JSON line per answer as it
# comes; no SDK retries, so a lost request shows as lost.
LOOP_SCRIPT = """
import json, os, sys, time, anthropic
keys = [item.split("=", 1) for item in os.environ["CLIENT_KEYS"].split(",")]
base, count, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
for index in range(count):
    name, key = keys[index % len(keys)]
    client = anthropic.Anthropic(base_url=base, api_key=key, max_retries=0, timeout=120)
    try:
        reply = client.messages.create(model="tiny", max_tokens=2, messages=[{"role": "user", "content": "hi"}])
        outcome = reply.type
    except anthropic.APIError as error:
        outcome = f"{type(error).__name__}: {getattr(error, 'status_code', '')}"
    print(json.dumps({"index": index, "key": name, "outcome": outcome}), flush=True)
    time.sleep(pause)
"""


@pytest.fixture(scope="module")
def replicas(tmp_path_factory, vllm_engine):
    with lab("rp") as made:
        client, edge = made.host("client"), made.host("edge")
        made.link(client, CLIENT, edge, EDGE_PUBLIC)
        gpus = {}
        for name, (edge_side, gpu_side) in GPUS.items():
            gpus[name] = made.host(name)
            made.link(edge, edge_side, gpus[name], gpu_side)
        demo = make_multihost_stack(tmp_path_factory.mktemp("replicas") / "stack", {
            "edge": {"address": GPUS["gpu1"][0], "role": "edge"},
            **{name: {"address": gpu_side, "role": "gpu"} for name, (_edge, gpu_side) in GPUS.items()},
        })
        keys = set_client_keys(demo, KEY_NAMES)
        try:
            # Both GPU hosts start at once, as two operators (or two systemd units) would.
            starts = {name: subprocess.Popen(host.argv(*_up(demo, name)), stdout=subprocess.PIPE,
                                             stderr=subprocess.STDOUT, text=True) for name, host in gpus.items()}
            for name, process in starts.items():
                output, _ = process.communicate(timeout=900)
                assert process.returncode == 0, f"{name}: {output[-3000:]}"
            edge_up = edge.stackctl(demo.root, "up", "--host", "edge")
            assert edge_up.returncode == 0, edge_up.stdout[-3000:] + edge_up.stderr[-3000:]
            yield demo, keys, {"client": client, "edge": edge, **gpus}, edge_up.stdout
        finally:
            for name, host in [("edge", edge), *gpus.items()]:
                host.stackctl(demo.root, "down", "--host", name, timeout=120)


def _up(demo, name: str) -> list[str]:
    return [sys.executable, "-m", "stackctl", "-C", str(demo.root), "up", "--host", name]


def _endpoint(demo) -> str:
    return f"http://{EDGE_PUBLIC}:{demo.ports['http']}"


def _run_loop(demo, keys, client, count: int, pause: float = 0.0) -> list[dict]:
    done = client.python(LOOP_SCRIPT, _endpoint(demo), str(count), str(pause),
                         env={"CLIENT_KEYS": ",".join(f"{name}={key}" for name, key in keys.items())})
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _counts(demo, hosts) -> dict[str, dict[str, float]]:
    return {name: proxy_requests_by_key(hosts["edge"], GPUS[name][1], demo.ports["proxy"]) for name in GPUS}


def test_the_edge_waited_for_both_replicas_and_balances_them(replicas):
    demo, _keys, _hosts, edge_out = replicas
    assert "✓ gpu1: filter-proxy serving" in edge_out and "✓ gpu2: filter-proxy serving" in edge_out
    site = (demo.root / "hosts" / "edge" / "rendered" / "nginx" / "stackctl-site.conf").read_text()
    assert "hash $http_x_api_key$http_authorization consistent;" in site


def test_each_key_always_lands_on_the_same_replica_and_both_replicas_serve(replicas):
    demo, keys, hosts, _out = replicas
    before = _counts(demo, hosts)
    results = _run_loop(demo, keys, hosts["client"], len(keys) * REQUESTS_PER_KEY)
    assert [result["outcome"] for result in results] == ["message"] * len(keys) * REQUESTS_PER_KEY
    after = _counts(demo, hosts)
    placement = {}
    for name in keys:
        served = {gpu: after[gpu].get(name, 0) - before[gpu].get(name, 0) for gpu in GPUS}
        assert sorted(served.values()) == [0, REQUESTS_PER_KEY], f"{name} was split: {served}"
        placement[name] = max(served, key=served.__getitem__)
    assert set(placement.values()) == set(GPUS), f"one replica got every key: {placement}"


def test_prometheus_on_the_edge_shows_each_replica(replicas):
    demo, keys, hosts, _out = replicas

    def both() -> bool:
        found = prometheus_query(hosts["edge"], demo.ports["prometheus"], q.REPLICA_UP)
        return {sample["metric"].get("host"): sample["value"][1] for sample in found} == {"gpu1": "1", "gpu2": "1"}

    wait_until(both, 90, "the edge's Prometheus to show both replicas up")
    # Requests after federation began (one per key: both replicas serve some), so the federated
    # counters rise between two scrapes.
    assert {result["outcome"] for result in _run_loop(demo, keys, hosts["client"], len(keys))} == {"message"}

    def requests_by_replica() -> bool:
        found = prometheus_query(hosts["edge"], demo.ports["prometheus"],
                                 q.REPLICA_REQUESTS.replace("$__rate_interval", "5m"))
        return {sample["metric"]["host"] for sample in found if float(sample["value"][1]) > 0} == set(GPUS)

    # A rate needs two scrapes of the federated counter after the requests (10 s apart).
    wait_until(requests_by_replica, 90, "requests to show per replica on the edge's Prometheus")


def test_killing_a_replica_mid_run_loses_no_new_request(replicas):
    demo, keys, hosts, _out = replicas
    before = _counts(demo, hosts)
    placement = {name: next(gpu for gpu in GPUS if before[gpu].get(name)) for name in keys}
    env = {"CLIENT_KEYS": ",".join(f"{name}={key}" for name, key in keys.items())}
    loop = subprocess.Popen(hosts["client"].argv(*_python_argv(), "-c", LOOP_SCRIPT, _endpoint(demo),
                                                 str(RUN_REQUESTS), "0.1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_environ(env))
    lines = []
    assert loop.stdout is not None
    while len(lines) < 8:
        line = loop.stdout.readline()
        assert line, f"the client loop ended early: {loop.stderr.read() if loop.stderr else ''}"
        lines.append(line)
    killed_at = time.monotonic()
    hosts["gpu2"].kill_all()  # the whole box: supervisor, vLLM, proxy, exporters (SIGKILL)
    rest, errors = loop.communicate(timeout=600)
    results = [json.loads(line) for line in [*lines, *rest.splitlines()] if line.startswith("{")]
    assert loop.returncode == 0, errors[-3000:]
    assert len(results) == RUN_REQUESTS
    lost = [result for result in results if result["outcome"] != "message"]
    assert lost == [], f"lost after killing gpu2 ({time.monotonic() - killed_at:.0f} s of run): {lost}"
    # Keys that lived on gpu1 stayed there; gpu2's moved to gpu1 (the consistent hash moves only them).
    after = proxy_requests_by_key(hosts["edge"], GPUS["gpu1"][1], demo.ports["proxy"])
    per_key = RUN_REQUESTS // len(keys)
    for name in keys:
        gained = after.get(name, 0) - before["gpu1"].get(name, 0)
        if placement[name] == "gpu1":
            assert gained == per_key, f"{name} (on gpu1) was served elsewhere: {gained}"
        else:
            assert 0 < gained <= per_key, f"{name} (on gpu2) never reached gpu1: {gained}"
    assert hosts["edge"].connect(GPUS["gpu2"][1], demo.ports["proxy"]) == "refused"

    # The dashboard's replica panel turns gpu2 to 0 (its federation target is down).
    seen: list[dict] = []

    def gpu2_down() -> bool:
        found = prometheus_query(hosts["edge"], demo.ports["prometheus"], q.REPLICA_UP)
        seen[:] = [{sample["metric"].get("host"): sample["value"][1] for sample in found}]
        return seen[0] == {"gpu1": "1", "gpu2": "0"}

    try:
        wait_until(gpu2_down, 90, "the replica panel to show gpu2 down")
    except AssertionError as error:
        federate = prometheus_query(hosts["edge"], demo.ports["prometheus"], 'up{job=~"federate|vllm"}')
        raise AssertionError(f"{error}; last: {seen}; up: {federate}") from None


def _python_argv() -> list[str]:
    return [sys.executable]


def _environ(extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **extra}
