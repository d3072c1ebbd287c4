"""The CPU demo stack under Docker Compose, through the CLI, against a real Docker engine.

vLLM's CPU build serves the demo model from the vllm-cpu image that `stackctl up` builds; the
filter-proxy and GPU exporter run from the filter-proxy image it builds; Prometheus,
node-exporter and nginx run from local stand-ins chosen through `images:` (no registry here).
Tests in this module run in order against one stack: up, use, break, repair, down, up.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time

import anthropic
import httpx
import openai
import pytest

from tests.support.stacks import DemoStack, compose_ps, make_compose_stack, remove_compose_project

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

SERVICES_IN_ORDER = ["vllm", "node-exporter", "gpu-exporter", "prometheus", "filter-proxy", "nginx"]


@pytest.fixture(scope="module")
def started(tmp_path_factory, local_images):
    demo = make_compose_stack(tmp_path_factory.mktemp("compose") / "stack", local_images)
    try:
        began = time.monotonic()
        with demo.running(timeout=2400) as output:
            print(f"compose e2e: `stackctl up` took {time.monotonic() - began:.1f} s")
            yield demo, output
    finally:
        remove_compose_project(demo)


@pytest.fixture
def stack(started) -> DemoStack:
    return started[0]


def test_up_brings_every_service_up_in_containers_in_dependency_order(started):
    stack, output = started
    healthy = [line.split()[1] for line in output.splitlines() if line.startswith("✓") and "healthy" in line]
    assert sorted(healthy) == sorted(SERVICES_IN_ORDER)
    assert healthy.index("vllm") < healthy.index("filter-proxy") < healthy.index("nginx")
    assert f"http://127.0.0.1:{stack.ports['http']}/v1" in output
    assert stack.client_key not in output
    # Plain `docker compose`, run in the stack directory without stackctl, sees the same project.
    containers = compose_ps(stack)
    assert set(containers) == set(SERVICES_IN_ORDER)
    assert all(container["State"] == "running" for container in containers.values()), containers
    for name in ("vllm", "filter-proxy", "nginx", "prometheus"):
        assert containers[name]["Health"] == "healthy", (name, containers[name])
    logs = subprocess.run(["docker", "compose", "logs", "--no-log-prefix", "prometheus"], cwd=stack.root,
                          capture_output=True, text=True, check=True)
    assert "Server is ready to receive web requests" in logs.stdout + logs.stderr


def test_anthropic_sdk_reaches_vllm_in_its_container_through_nginx(stack: DemoStack):
    client = anthropic.Anthropic(base_url=f"http://127.0.0.1:{stack.ports['http']}", api_key=stack.client_key,
                                 max_retries=0)
    events = []
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=12,
                                messages=[{"role": "user", "content": "Say hello"}]) as stream:
        for event in stream:
            events.append(event.type)
        final = stream.get_final_message()
    assert events[0] == "message_start" and "content_block_delta" in events and events[-1] == "message_stop"
    assert final.content[0].type == "text" and final.content[0].text and final.usage.output_tokens > 0

    reply = client.messages.create(model="claude-haiku-4-5", max_tokens=8, messages=[{"role": "user", "content": "hi"}])
    assert reply.role == "assistant" and reply.content[0].text and reply.stop_reason in ("max_tokens", "end_turn")


def test_openai_sdk_works_through_nginx(stack: DemoStack):
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{stack.ports['http']}/v1", api_key=stack.client_key,
                           max_retries=0)
    chunks = list(client.chat.completions.create(model="tiny", max_tokens=12, stream=True,
                                                 messages=[{"role": "user", "content": "Say hello"}]))
    assert len(chunks) > 2 and "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    answer = client.chat.completions.create(model="tiny", max_tokens=4, messages=[{"role": "user", "content": "x"}])
    assert answer.choices[0].message.content is not None
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"http://127.0.0.1:{stack.ports['http']}/v1", api_key="sk-wrong",
                      max_retries=0).models.list()


def test_prometheus_reports_every_target_up(stack: DemoStack):
    stack.wait_for_prometheus_targets({"vllm", "filter-proxy", "node", "prometheus", "gpu"}, timeout_s=90)
    url = f"http://127.0.0.1:{stack.ports['prometheus']}/api/v1/query"
    # The GPU exporter (stackctl's own, in the filter-proxy image) says why there is no GPU.
    present = httpx.get(url, params={"query": "stackctl_gpu_present"}).json()["data"]["result"]
    assert present and present[0]["value"][1] == "0"


def test_status_shows_compose_state_health_and_uptime(stack: DemoStack):
    result = stack.cli("status")
    assert result.returncode == 0, result.stderr
    for name in SERVICES_IN_ORDER:
        row = next((line for line in result.stdout.splitlines() if line.strip("│ ").startswith(name[:10])), "")
        assert "running" in row and "healthy" in row and "unhealthy" not in row and " s " in row, result.stdout


def test_up_again_is_idempotent(stack: DemoStack):
    before = {name: container["ID"] for name, container in compose_ps(stack).items()}
    result = stack.cli("up", timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert result.stdout.count("already running") == len(SERVICES_IN_ORDER), result.stdout
    assert {name: container["ID"] for name, container in compose_ps(stack).items()} == before


def test_logs_show_and_follow_a_service_log(stack: DemoStack):
    result = stack.cli("logs", "prometheus")
    assert result.returncode == 0 and "Server is ready to receive web requests" in result.stdout
    unknown = stack.cli("logs", "grafana")
    assert unknown.returncode == 1 and "no service 'grafana'" in unknown.stderr and "Traceback" not in unknown.stderr

    # nginx writes an access line per request to its container's stdout.
    follower = subprocess.Popen([*stack.cli_argv("logs", "nginx", "-f")], cwd=stack.root, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=stack.cli_env())
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in follower.stdout], daemon=True).start()
    try:
        time.sleep(3)
        marker = f"/v1/models?follow={time.monotonic_ns()}"
        httpx.get(f"http://127.0.0.1:{stack.ports['http']}{marker}", headers={"Authorization": f"Bearer {stack.client_key}"})
        deadline = time.monotonic() + 30
        seen = ""
        while marker not in seen and time.monotonic() < deadline:
            try:
                seen += lines.get(timeout=1)
            except queue.Empty:
                continue
        assert marker in seen, seen[-2000:]
    finally:
        follower.terminate()
        follower.wait(10)


def test_killed_vllm_main_process_is_brought_back_by_the_restart_policy(stack: DemoStack):
    vllm = compose_ps(stack)["vllm"]
    inspected = docker_inspect(vllm["ID"])
    restarts_before = inspected["RestartCount"]
    os.kill(inspected["State"]["Pid"], signal.SIGKILL)
    deadline = time.monotonic() + 300
    while True:
        state = docker_inspect(vllm["ID"])
        if state["RestartCount"] > restarts_before and state["State"].get("Health", {}).get("Status") == "healthy":
            break
        assert time.monotonic() < deadline, f"vLLM was not restarted to healthy: {state['State']}"
        time.sleep(2)
    status = stack.cli("status")
    vllm_row = next(line for line in status.stdout.splitlines() if line.strip("│ ").startswith("vllm"))
    assert "healthy" in vllm_row and "unhealthy" not in vllm_row and " 1 " in vllm_row, status.stdout
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{stack.ports['http']}/v1", api_key=stack.client_key,
                           max_retries=2)
    answer = client.chat.completions.create(model="tiny", max_tokens=4, messages=[{"role": "user", "content": "x"}])
    assert answer.choices[0].message.content is not None


def test_down_then_up_keeps_prometheus_data(stack: DemoStack):
    query = f"http://127.0.0.1:{stack.ports['prometheus']}/api/v1/query"
    before_down = time.time()
    assert httpx.get(query, params={"query": "up", "time": before_down}).json()["data"]["result"]

    result = stack.cli("down")
    assert result.returncode == 0, result.stderr
    assert compose_ps(stack) == {}
    volumes = subprocess.run(["docker", "volume", "ls", "--format", "{{.Name}}"], capture_output=True, text=True,
                             check=True).stdout.split()
    assert f"{stack.project}_prometheus-data" in volumes

    result = stack.cli("up", timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    # Samples scraped before `down` are still there after it.
    old = httpx.get(query, params={"query": 'up{job="prometheus"}', "time": before_down - 5}).json()["data"]["result"]
    assert old and old[0]["value"][1] == "1"


def test_plain_docker_compose_down_in_the_stack_directory_stops_the_same_project(stack: DemoStack):
    done = subprocess.run(["docker", "compose", "down"], cwd=stack.root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert compose_ps(stack) == {}
    status = stack.cli("status")
    assert status.returncode == 0 and status.stdout.count("stopped") == len(SERVICES_IN_ORDER), status.stdout


def docker_inspect(container_id: str) -> dict:
    import json

    done = subprocess.run(["docker", "inspect", container_id], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)[0]
