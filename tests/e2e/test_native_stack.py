"""The whole demo stack through the CLI: vLLM (CPU, tiny) + filter-proxy + Prometheus +
node-exporter + nginx as native processes, used by the official SDKs through nginx.

Tests in this module run in order against one stack: up, use, break, repair, down.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anthropic
import openai
import pytest
import yaml

from stackctl.diagnosis.start_record import record_failed_start
from stackctl.layout import StackLayout
from stackctl.runtime.supervisor import START_RETRIES
from tests.support.brought_engine import environment_seeing
from tests.support.stacks import DemoStack, group_members, make_demo_stack, process_alive

pytestmark = [pytest.mark.e2e, pytest.mark.vllm]

REPO = Path(__file__).resolve().parents[2]

SERVICES_IN_ORDER = ["vllm", "node-exporter", "gpu-exporter", "prometheus", "filter-proxy", "nginx"]


@pytest.fixture(scope="module")
def started(tmp_path_factory, vllm_engine):
    scratch = tmp_path_factory.mktemp("demo")
    # The user's own vLLM environment beside the stack (engine.python), not stackctl's venv.
    python = environment_seeing(vllm_engine.python, scratch / "vllm-env")
    demo = make_demo_stack(scratch / "stack", engine={"python": str(python)})
    # A failure an earlier `up` left for `doctor`: a successful `up` must clear it.
    record_failed_start(StackLayout(demo.root), service="vllm", message="an earlier failure", log_tail=[],
                        runtime="native")
    with demo.running() as output:
        yield demo, output


@pytest.fixture
def stack(started) -> DemoStack:
    return started[0]


def test_up_brings_every_service_up_in_dependency_order(started):
    stack, output = started
    healthy = [line.split()[1] for line in output.splitlines() if line.startswith("✓")]
    assert sorted(healthy) == sorted(SERVICES_IN_ORDER)
    assert healthy.index("vllm") < healthy.index("filter-proxy") < healthy.index("nginx")
    assert f"http://127.0.0.1:{stack.ports['http']}/v1" in output
    assert all(f"launch {agent}" in output for agent in ("claude", "codex", "opencode", "openclaw")), output[-2000:]
    assert stack.client_key not in output


def test_a_successful_up_clears_the_last_failed_start(stack: DemoStack):
    assert not (stack.root / ".stackctl" / "last-failed-start.json").exists()


def test_explaining_a_healthy_services_log_finds_no_failure(stack: DemoStack):
    result = stack.cli("logs", "vllm", "--explain")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "cause:" not in result.stdout


def test_anthropic_sdk_streams_through_nginx(stack: DemoStack):
    client = anthropic.Anthropic(base_url=f"http://127.0.0.1:{stack.ports['http']}", api_key=stack.client_key, max_retries=0)
    events = []
    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=12, messages=[{"role": "user", "content": "Say hello"}]
    ) as stream:
        for event in stream:
            events.append(event.type)
        final = stream.get_final_message()
    assert events[0] == "message_start" and "content_block_delta" in events and events[-1] == "message_stop"
    assert final.role == "assistant" and final.content[0].type == "text" and final.content[0].text
    assert final.usage.output_tokens > 0 and final.stop_reason in ("max_tokens", "end_turn")


def test_openai_sdk_streams_through_nginx(stack: DemoStack):
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{stack.ports['http']}/v1", api_key=stack.client_key, max_retries=0)
    chunks = list(client.chat.completions.create(
        model="tiny", max_tokens=12, stream=True, messages=[{"role": "user", "content": "Say hello"}]
    ))
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert len(chunks) > 2 and text


def test_wrong_key_is_refused_at_the_gateway(stack: DemoStack):
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{stack.ports['http']}/v1", api_key="sk-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="tiny", max_tokens=1, messages=[{"role": "user", "content": "x"}])


def test_prometheus_scrapes_every_target(stack: DemoStack):
    stack.wait_for_prometheus_targets({"vllm", "filter-proxy", "node", "prometheus", "gpu"}, timeout_s=60)


def test_status_lists_every_service_healthy(stack: DemoStack):
    result = stack.cli("status")
    assert result.returncode == 0, result.stderr
    for name in SERVICES_IN_ORDER:
        row = next((line for line in result.stdout.splitlines() if line.strip("│ ").startswith(name[:10])), "")
        assert "running" in row and "healthy" in row and "unhealthy" not in row, result.stdout


def test_status_names_the_engine_that_runs_and_vllm_is_that_interpreter(stack: DemoStack):
    python = yaml.safe_load((stack.root / "stack.yaml").read_text())["engine"]["python"]
    result = stack.cli("status")
    line = next((line for line in result.stdout.splitlines() if line.startswith("engine: ")), "")
    assert line.startswith("engine: vLLM ") and f"— {python} (engine.python in stack.yaml)" in line, result.stdout
    argv = Path(f"/proc/{stack.pid_records()['vllm']['pid']}/cmdline").read_bytes().split(b"\0")
    assert argv[0].decode() == python


def test_the_route_benchmark_measures_every_route_of_the_stack(stack: DemoStack, tmp_path):
    out = tmp_path / "routes.json"
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "engine_routes.py"), "--stack", str(stack.root),
                           "--levels", "1,2", "--tokens", "8", "--json", str(out)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads(out.read_text())["results"]
    assert sorted({result["route"] for result in results}) == ["anthropic route", "direct", "direct+usage", "openai route"]
    assert all(result["failed"] == 0 and result["tokens_per_s"] > 0 for result in results), results
    # Each proxied route is paired with direct round by round (3 rounds by default).
    assert all(len(result["share_of_direct_by_round"]) == 3 for result in results), results
    # Where the CPU went: vLLM's server works on every route, the proxy only on its own routes.
    cores = {(result["route"], result["concurrency"]): result["server_cores"] for result in results}
    for (route, level), used in cores.items():
        assert used["vllm"] > 0, (route, level, used)
        if route.endswith(" route"):
            assert used["proxy"] > 2 * cores[("direct", level)]["proxy"], (route, level, cores)


def test_the_route_benchmark_runs_each_route_beside_direct(stack: DemoStack, tmp_path):
    out = tmp_path / "mixed.json"
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "engine_routes.py"), "--stack", str(stack.root),
                           "--levels", "2", "--tokens", "8", "--rounds", "2", "--mixed", "--json", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = json.loads(out.read_text())["mixed"]
    assert sorted(row["route"] for row in rows) == ["anthropic route", "direct+usage", "openai route"]
    for row in rows:  # both sides streamed in every round, and none failed
        assert row["failed"] == row["direct_failed"] == 0, rows
        assert len(row["share_of_direct_by_round"]) == 2 and all(share > 0 for share in row["share_of_direct_by_round"])


def test_up_again_is_a_noop_for_healthy_services(stack: DemoStack):
    before = {name: record["pid"] for name, record in stack.pid_records().items()}
    result = stack.cli("up")
    assert result.returncode == 0, result.stderr
    assert {name: record["pid"] for name, record in stack.pid_records().items()} == before
    assert result.stdout.count("already running") == len(SERVICES_IN_ORDER)


def test_up_restarts_only_what_stack_yaml_changed(stack: DemoStack):
    before = {name: record["pid"] for name, record in stack.pid_records().items()}
    stack_file = stack.root / "stack.yaml"
    config = yaml.safe_load(stack_file.read_text())
    config["limits"] = {"max_concurrent": 64}  # the filter-proxy's flags, nothing else's
    stack_file.write_text(yaml.safe_dump(config))
    result = stack.cli("up")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "filter-proxy changed (its command): restarting" in result.stdout
    after = {name: record["pid"] for name, record in stack.pid_records().items()}
    assert after["filter-proxy"] != before["filter-proxy"]
    assert {name: pid for name, pid in after.items() if name != "filter-proxy"} == \
        {name: pid for name, pid in before.items() if name != "filter-proxy"}
    assert "--max-concurrent 64" in " ".join(json.loads(
        (stack.root / ".stackctl" / "launch" / "filter-proxy.json").read_text())["argv"])


def test_killed_vllm_is_restarted_by_the_supervisor(stack: DemoStack):
    old_pid = stack.pid_records()["vllm"]["pid"]
    os.kill(old_pid, signal.SIGKILL)
    deadline = time.monotonic() + 240
    while True:
        record = stack.pid_records().get("vllm", {})
        row = status_row(stack, "vllm")
        if record.get("pid") not in (None, old_pid) and "healthy" in row and "unhealthy" not in row:
            break
        assert time.monotonic() < deadline, f"vLLM was not restarted to healthy: {row}"
        time.sleep(2)
    new_pid = stack.pid_records()["vllm"]["pid"]
    assert process_alive(new_pid) and not group_members(old_pid), "the killed vLLM left processes behind"
    assert column(row, "restarts") == "1", row
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{stack.ports['http']}/v1", api_key=stack.client_key, max_retries=0)
    answer = client.chat.completions.create(model="tiny", max_tokens=4, messages=[{"role": "user", "content": "x"}])
    assert answer.choices[0].message.content is not None


def test_a_crash_loop_is_given_up_on_and_up_starts_it_again(stack: DemoStack):
    # node-exporter killed as soon as each start appears: every start dies before it is up.
    killed: set[int] = set()
    deadline = time.monotonic() + 120
    while column(status_row(stack, "node-exporter"), "state") != "failed":
        pid = stack.pid_records().get("node-exporter", {}).get("pid")
        if pid and pid not in killed and process_alive(pid):
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        assert time.monotonic() < deadline, status_row(stack, "node-exporter")
        time.sleep(0.1)
    row = status_row(stack, "node-exporter")
    # Up for long already, the first death is a plain crash (restarted); then every start dies
    # before it is up: the first try and START_RETRIES more, and the supervisor gives up.
    assert len(killed) == 1 + 1 + START_RETRIES, (row, killed)
    assert "the supervisor gave up" in row and column(row, "restarts") == str(1 + START_RETRIES), row
    result = stack.cli("up")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "node-exporter was dead: restarting" in result.stdout
    assert "healthy" in status_row(stack, "node-exporter") and "unhealthy" not in status_row(stack, "node-exporter")


STATUS_COLUMNS = ["service", "state", "pid", "health", "url", "uptime", "restarts", "detail"]


def column(row: str, name: str) -> str:
    cells = [cell.strip() for cell in row.strip().strip("│").split("│")]
    return cells[STATUS_COLUMNS.index(name)] if len(cells) == len(STATUS_COLUMNS) else ""


def status_row(stack: DemoStack, name: str) -> str:
    result = stack.cli("status")
    return next((line for line in result.stdout.splitlines() if line.strip("│ ").startswith(name)), "")


def test_logs_show_a_service_log(stack: DemoStack):
    result = stack.cli("logs", "prometheus")
    assert result.returncode == 0 and "Server is ready to receive web requests" in result.stdout


def test_down_leaves_no_process_and_keeps_data(stack: DemoStack):
    records = stack.pid_records()
    assert set(records) == set(SERVICES_IN_ORDER)
    result = stack.cli("down")
    assert result.returncode == 0, result.stderr
    for name, record in records.items():
        assert not process_alive(record["pid"]), f"{name} still running"
        assert not group_members(record["pid"]), f"{name} left processes in its group"
    assert not stack.pid_records()
    assert not (stack.root / ".stackctl" / "supervisor" / "supervisor.sock").exists(), "the supervisor kept running"
    prometheus_data = stack.root / "data" / "prometheus"
    assert prometheus_data.is_dir() and any(prometheus_data.iterdir())
    assert (stack.root / ".env").exists() and (stack.root / "stack.yaml").exists()
