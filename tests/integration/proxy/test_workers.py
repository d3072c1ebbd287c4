"""`serve --workers 3`: several processes on one port, one truth. A key's limits hold whichever
worker a request reaches (connections pinned to known workers through /health), a burst of
concurrent requests admits exactly the limit, /metrics sums every worker's counts, and a
conversation whose turns reach different workers is one session to the cache report."""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from tests.support.processes import free_port
from tests.support.proxy.running import ALICE_KEY, BOB_KEY
from tests.support.proxy.scripted_backend import SERVED_MODEL, ScriptedBackend
from tests.support.proxy.servers import wait_until_healthy

pytestmark = pytest.mark.integration

WORKERS = 3
BACKEND_KEY = "sk-backend-for-the-admin-api"
ALICE_CONCURRENT = 2
BOB_PER_MINUTE = 4


@dataclass
class WorkersProxy:
    port: int
    process: subprocess.Popen[bytes]

    def connection(self) -> tuple[http.client.HTTPConnection, int]:
        """A kept-alive connection and the worker that serves it (the kernel picked)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        connection.request("GET", "/health")
        worker = json.loads(connection.getresponse().read())["worker"]
        return connection, int(worker)

    def connections_on_every_worker(self) -> dict[int, list[http.client.HTTPConnection]]:
        found: dict[int, list[http.client.HTTPConnection]] = {}
        # /health answered by one worker says nothing of the others: on a loaded machine they may
        # still be starting (not yet listening), so keep trying for a while.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            connection, worker = self.connection()
            found.setdefault(worker, []).append(connection)
            if len(found) == WORKERS and all(len(pool) >= 3 for pool in found.values()):
                return found
            if sum(map(len, found.values())) % 50 == 0:
                time.sleep(0.2)
        raise AssertionError(f"connections reached only workers {sorted(found)}")


@pytest.fixture(scope="module")
def workers_proxy(scripted_backend: tuple[ScriptedBackend, str]) -> Iterator[WorkersProxy]:
    port = free_port()
    env = {**os.environ, "STACKCTL_PROXY_KEYS": f"alice={ALICE_KEY},bob={BOB_KEY}",
           "STACKCTL_PROXY_LOG_LEVEL": "warning", "VLLM_API_KEY": BACKEND_KEY}
    argv = [sys.executable, "-m", "stackctl.proxy", "serve", "--backend", scripted_backend[1], "--port", str(port),
            "--alias", f"claude-*={SERVED_MODEL}", "--alias", f"gpt-4o*={SERVED_MODEL}", "--search-backend", "off",
            "--workers", str(WORKERS), "--key-limit", f"alice:max_concurrent={ALICE_CONCURRENT}",
            "--key-limit", f"bob:requests_per_minute={BOB_PER_MINUTE}"]
    process = subprocess.Popen(argv, env=env)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", process, timeout_s=60)
        yield WorkersProxy(port, process)
    finally:
        process.terminate()
        assert process.wait(30) == 0, "the proxy's workers did not stop cleanly"


def post(connection: http.client.HTTPConnection, path: str, body: dict[str, object],
         key: str) -> http.client.HTTPResponse:
    connection.request("POST", path, json.dumps(body), {"x-api-key": key, "content-type": "application/json"})
    return connection.getresponse()


HANG = {"model": "claude-x", "max_tokens": 9, "stream": True, "messages": [{"role": "user", "content": "scenario:hang"}]}
TEXT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "scenario:text"}]}


def test_a_keys_concurrency_limit_holds_across_workers(workers_proxy: WorkersProxy) -> None:
    pools = workers_proxy.connections_on_every_worker()
    first, *others = sorted(pools)
    running = []
    for connection in pools[first][:ALICE_CONCURRENT]:  # the limit, all on one worker
        reply = post(connection, "/v1/messages", HANG, ALICE_KEY)
        assert reply.status == 200
        assert reply.read1(64)  # flowing
        running.append(connection)
    for worker in [first, *others]:  # one more, on each worker: refused everywhere
        reply = post(pools[worker][-1], "/v1/messages", HANG, ALICE_KEY)
        body = json.loads(reply.read())
        assert reply.status == 429 and body["error"]["type"] == "rate_limit_error", (worker, body)
        assert "max_concurrent 2" in body["error"]["message"]
    for connection in running:  # the streams end: the slots free up, on every worker
        connection.close()
    deadline = time.monotonic() + 10
    while True:
        connection, _ = workers_proxy.connection()
        reply = post(connection, "/v1/messages", {**HANG, "stream": False,
                                                   "messages": [{"role": "user", "content": "scenario:text"}]},
                     ALICE_KEY)
        reply.read()
        if reply.status == 200:
            break
        assert time.monotonic() < deadline, f"alice's slots were never released ({reply.status})"
        time.sleep(0.1)


def wait_until_idle(workers_proxy: WorkersProxy) -> None:
    deadline = time.monotonic() + 10
    while True:
        connection, _ = workers_proxy.connection()
        connection.request("GET", "/metrics")
        if metric(connection.getresponse().read().decode(), "stackctl_proxy_in_flight") == 0:
            return
        assert time.monotonic() < deadline, "requests stayed in flight"
        time.sleep(0.1)


def test_a_burst_admits_exactly_the_limit(workers_proxy: WorkersProxy) -> None:
    wait_until_idle(workers_proxy)
    pools = workers_proxy.connections_on_every_worker()
    connections = [connection for pool in pools.values() for connection in pool[:3]]  # 9, on 3 workers

    def one(connection: http.client.HTTPConnection) -> int:
        reply = post(connection, "/v1/messages", HANG, ALICE_KEY)
        if reply.status == 200:
            reply.read1(64)
        else:
            reply.read()
        return reply.status

    with ThreadPoolExecutor(len(connections)) as pool:
        statuses = list(pool.map(one, connections))
    try:
        assert sorted(statuses) == [200] * ALICE_CONCURRENT + [429] * (len(connections) - ALICE_CONCURRENT), statuses
    finally:
        for connection in connections:
            connection.close()


def metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for found_labels, value in re.findall(rf"^{name}\{{([^}}]*)\}} (\S+)$", text, re.MULTILINE):
        pairs = dict(re.findall(r'(\w+)="([^"]*)"', found_labels))
        if all(pairs.get(key) == wanted for key, wanted in labels.items()):
            total += float(value)
    return total


def test_per_minute_limits_and_metrics_are_one_truth(workers_proxy: WorkersProxy) -> None:
    pools = workers_proxy.connections_on_every_worker()
    workers = sorted(pools)
    for index in range(BOB_PER_MINUTE):  # spread over the workers
        reply = post(pools[workers[index % WORKERS]][0], "/v1/chat/completions", TEXT, BOB_KEY)
        reply.read()
        assert reply.status == 200, index
    for worker in workers:
        reply = post(pools[worker][1], "/v1/chat/completions", TEXT, BOB_KEY)
        body = json.loads(reply.read())
        assert reply.status == 429 and "requests per minute" in body["error"]["message"], (worker, body)
        assert reply.getheader("retry-after")
    # Every worker's /metrics is the sum over all of them.
    pages = []
    for worker in workers:
        connection = pools[worker][2]
        connection.request("GET", "/metrics")
        pages.append(connection.getresponse().read().decode())
    wait_until_idle(workers_proxy)
    for page in pages:
        ok = metric(page, "stackctl_proxy_requests_total", route="/v1/chat/completions", status="200", key="bob")
        assert ok == BOB_PER_MINUTE, ok
        assert metric(page, "stackctl_proxy_rejections_total", reason="requests_per_minute", key="bob") == WORKERS
        assert metric(page, "stackctl_proxy_in_flight") == 0


def test_a_conversation_across_workers_is_one_session(workers_proxy: WorkersProxy) -> None:
    pools = workers_proxy.connections_on_every_worker()
    kept_before = kept_requests(pools[2][1], "alice")
    system = "You answer briefly.\nClock: {now}"
    history: list[dict[str, object]] = [{"role": "user", "content": f"{uuid.uuid4().hex} hello"}]
    for turn, worker in enumerate((0, 1, 2, 0)):
        now = "08:00:00" if turn < 3 else "08:00:30"  # the last turn's system prompt changed
        body = {"model": "gpt-4o", "max_tokens": 4,
                "messages": [{"role": "system", "content": system.format(now=now)}, *history]}
        reply = post(pools[worker][0], "/v1/chat/completions", body, ALICE_KEY)
        assert reply.status == 200, reply.read()
        reply.read()
        history += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": f"turn {turn + 2}"}]
    time.sleep(0.5)  # the workers' observations reach the keeper after their replies
    connection = pools[1][1]
    connection.request("GET", "/admin/cache-report?key=alice", headers={"authorization": f"Bearer {BACKEND_KEY}"})
    report = json.loads(connection.getresponse().read())
    session = next(s for s in report["keys"][0]["sessions"] if s["turns_total"] == 4)
    assert [t["outcome"] for t in session["turns"]] == ["first", "kept", "kept", "broken"]
    assert session["turns"][3]["change"] == (
        f"messages[0] (system).content changed at byte {system.index('{now}')}: a time of day")
    assert all(t["prompt_tokens"] for t in session["turns"])  # usage came back through the workers
    # Each worker counted what it served; any worker's /metrics is the sum.
    assert kept_requests(connection, "alice") == kept_before + 2


def kept_requests(connection: http.client.HTTPConnection, key: str) -> float:
    connection.request("GET", "/metrics")
    metrics = connection.getresponse().read().decode()
    found = re.search(rf'stackctl_proxy_prefix_requests_total\{{key="{key}",outcome="kept"\}} (\S+)', metrics)
    assert found, metrics
    return float(found.group(1))
