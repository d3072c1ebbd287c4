"""Every dashboard panel's PromQL, run against a real Prometheus scraping real targets, returns data.

One module-scoped stack on loopback: the real vLLM CPU engine (tiny demo model), the filter-proxy
in front of it (its own process, with API keys), Debian's node-exporter, `stackctl gpu-exporter`
(no GPU here, so it exports stackctl_gpu_present 0), and Prometheus with the scrape config
`stackctl render` writes (interval shortened to 1 s so the test does not wait 10 s per sample).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
import yaml

from stackctl.config import parse_stack_config
from stackctl.layout import StackLayout
from tests.support.processes import free_port, http_ok, require, services, wait_until
from tests.support.stack_builder import render_into
from tools.dashboard import queries
from tools.dashboard.dashboard import build_dashboard

pytestmark = [pytest.mark.integration, pytest.mark.vllm]

RATE_WINDOW = "2m"  # stands in for Grafana's $__rate_interval
# Test-only keys, never real secrets.
KEYS = {"alice": "sk-test-monitoring-alice-0123", "bob": "sk-test-monitoring-bob-4567"}
STREAMED, PLAIN = 4, 2


@dataclass(frozen=True)
class MonitoredStack:
    prometheus_url: str
    proxy_url: str
    proxy_metrics: str  # the proxy's /metrics text after the traffic


def dashboard_targets() -> list[tuple[str, str, str]]:
    """(panel title, refId, expr) for every query of every panel."""
    found = []
    for panel in build_dashboard()["panels"]:
        for target in panel.get("targets", []):
            found.append((panel["title"], target["refId"], target["expr"]))
    return found


def promql(expr: str) -> str:
    return expr.replace("$__rate_interval", RATE_WINDOW)


def instant_query(prometheus_url: str, expr: str) -> list[dict]:
    reply = httpx.get(f"{prometheus_url}/api/v1/query", params={"query": promql(expr)}, timeout=10)
    body = reply.json()
    assert reply.status_code == 200 and body["status"] == "success", f"{expr}: {body.get('error', body)}"
    return body["data"]["result"]


def send_traffic(proxy_url: str, model: str, *, streamed: int, plain: int) -> None:
    """Streamed completions (key alice), plain ones (key bob), one Anthropic stream, one rejected key."""
    with httpx.Client(base_url=proxy_url, timeout=120) as client:
        for i in range(streamed):
            with client.stream("POST", "/v1/chat/completions",
                               headers={"Authorization": f"Bearer {KEYS['alice']}"},
                               json={"model": model, "stream": True, "max_tokens": 12,
                                     "messages": [{"role": "user", "content": f"count to {i + 3}"}]}) as reply:
                assert reply.status_code == 200, reply.read()
                events = [line for line in reply.iter_lines() if line.startswith("data:")]  # read to the end
                assert events[-1] == "data: [DONE]", events[-3:]
        for _ in range(plain):
            reply = client.post("/v1/chat/completions", headers={"Authorization": f"Bearer {KEYS['bob']}"},
                                json={"model": model, "max_tokens": 8,
                                      "messages": [{"role": "user", "content": "hello there"}]})
            assert reply.status_code == 200, reply.text
        with client.stream("POST", "/v1/messages", headers={"x-api-key": KEYS["alice"]},
                           json={"model": "claude-sonnet-4-5", "stream": True, "max_tokens": 8,
                                 "messages": [{"role": "user", "content": "hi"}]}) as reply:
            assert reply.status_code == 200, reply.read()
            reply.read()
        reject(client, model)


def reject(client: httpx.Client, model: str) -> None:
    reply = client.post("/v1/chat/completions", headers={"Authorization": "Bearer sk-wrong"},
                        json={"model": model, "messages": [{"role": "user", "content": "hi"}]})
    assert reply.status_code == 401


@pytest.fixture(scope="module")
def monitored_stack(real_vllm, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MonitoredStack]:
    root = tmp_path_factory.mktemp("monitoring")
    ports = {name: free_port() for name in ("proxy", "prometheus", "node_exporter", "gpu_exporter")}
    ports["vllm"] = int(real_vllm.base_url.rsplit(":", 1)[1])
    # "generic" (a CUDA host) so the scrape config has the GPU job; the exporter finds no GPU here.
    config = parse_stack_config({"hardware": "generic", "model": "tiny", "ports": ports})
    layout = StackLayout(root / "stack")
    render_into(layout, config, "native")
    prometheus_yml = layout.rendered / "prometheus/prometheus.yml"
    check = subprocess.run([require("promtool"), "check", "config", str(prometheus_yml)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    scrape = yaml.safe_load(prometheus_yml.read_text())
    assert {job["job_name"] for job in scrape["scrape_configs"]} == {"prometheus", "vllm", "filter-proxy", "node", "gpu"}
    scrape["global"].update(scrape_interval="1s", evaluation_interval="1s")
    prometheus_yml.write_text(yaml.safe_dump(scrape))

    env = {**os.environ, "STACKCTL_PROXY_KEYS": ",".join(f"{n}={k}" for n, k in KEYS.items()),
           "VLLM_API_KEY": real_vllm.api_key or ""}
    prometheus_url = f"http://127.0.0.1:{ports['prometheus']}"
    proxy_url = f"http://127.0.0.1:{ports['proxy']}"
    with services(root) as group:
        group.start("filter-proxy", [sys.executable, "-m", "stackctl.proxy", "serve", "--backend", real_vllm.base_url,
                                     "--port", str(ports["proxy"]), "--default-model", real_vllm.model,
                                     "--alias", f"claude-*={real_vllm.model}"],
                    env=env, ready=http_ok(f"{proxy_url}/health"))
        group.start("gpu-exporter", [sys.executable, "-m", "stackctl", "gpu-exporter", "--port", str(ports["gpu_exporter"])],
                    ready=http_ok(f"http://127.0.0.1:{ports['gpu_exporter']}/metrics"))
        group.start("node-exporter", [require("prometheus-node-exporter"),
                                      f"--web.listen-address=127.0.0.1:{ports['node_exporter']}",
                                      "--collector.textfile.directory="],
                    ready=http_ok(f"http://127.0.0.1:{ports['node_exporter']}/metrics"))
        group.start("prometheus", [require("prometheus"), f"--config.file={prometheus_yml}",
                                   f"--storage.tsdb.path={root / 'tsdb'}",
                                   f"--web.listen-address=127.0.0.1:{ports['prometheus']}"],
                    ready=http_ok(f"{prometheus_url}/-/ready"))

        def all_targets_up() -> bool:
            result = instant_query(prometheus_url, "up")
            return len(result) == 5 and all(sample["value"][1] == "1" for sample in result)

        wait_until(all_targets_up, 60, "every scrape target to be up", group.started[-1])
        finished = "sum(vllm:e2e_request_latency_seconds_count)"
        proxy_series = "count(stackctl_proxy_requests_total) + count(stackctl_proxy_ttft_seconds_count)"

        def scraped(requests: float, series: int, rejected: int) -> bool:
            figures = [instant_query(prometheus_url, expr) for expr in
                       (finished, proxy_series, 'sum(stackctl_proxy_requests_total{status="401"})')]
            return all(figures) and all(float(f[0]["value"][1]) >= want
                                        for f, want in zip(figures, (requests, series, rejected), strict=True))

        # Round 1 creates every proxy series (prometheus-client makes a labelled series at its first
        # use, and rate() sees only increments after a series' first sample); round 2, once those
        # are scraped, makes every rate() and histogram_quantile() in the dashboard non-zero.
        before = float(instant_query(prometheus_url, finished)[0]["value"][1])
        send_traffic(proxy_url, real_vllm.model, streamed=1, plain=1)
        # requests: alice 200 chat, bob 200 chat, alice 200 messages, 401; ttft: chat, messages.
        wait_until(lambda: scraped(before + 3, 4 + 2, 1), 30, "Prometheus to scrape the first round")
        send_traffic(proxy_url, real_vllm.model, streamed=STREAMED, plain=PLAIN)
        wait_until(lambda: scraped(before + 3 + STREAMED + PLAIN + 1, 6, 2), 30, "Prometheus to scrape the traffic")
        proxy_metrics = httpx.get(f"{proxy_url}/metrics", timeout=5).text
        yield MonitoredStack(prometheus_url, proxy_url, proxy_metrics)


def test_every_target_is_scraped(monitored_stack):
    result = instant_query(monitored_stack.prometheus_url, "up")
    assert {sample["metric"]["job"]: sample["value"][1] for sample in result} == {
        "prometheus": "1", "vllm": "1", "filter-proxy": "1", "node": "1", "gpu": "1"}


TARGETS = dashboard_targets()


@pytest.mark.parametrize(("title", "ref_id", "expr"), TARGETS, ids=[f"{t}:{r}" for t, r, _ in TARGETS])
def test_panel_query_returns_data(monitored_stack, title, ref_id, expr):
    result = instant_query(monitored_stack.prometheus_url, expr)
    assert result, f"panel '{title}' ({ref_id}) returned nothing: {promql(expr)}"
    values = [float(sample["value"][1]) for sample in result]
    if "nvidia_smi_" in expr:
        # No GPU on this host: the panel must say so (the -1 series Grafana maps to "no GPU").
        assert values == [queries.NO_GPU_VALUE], (title, result)
        assert result[0]["metric"]["name"] == "no GPU (nvml_library_not_found)", result
    else:
        assert any(math.isfinite(v) for v in values), f"panel '{title}' ({ref_id}) has no number: {result}"
