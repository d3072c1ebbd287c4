"""The Grafana dashboard: committed JSON == generated, the rows the issue asks for, every panel queryable."""

import json
import re
from pathlib import Path

from stackctl.config import parse_stack_config
from stackctl.layout import StackLayout
from stackctl.render import render_configs
from stackctl.resources import source_root
from stackctl.stack import Stack
from tools.dashboard import queries
from tools.dashboard.dashboard import (
    DASHBOARD_FILE,
    DATASOURCE_UID,
    build_dashboard,
    dashboard_json,
)

ROOT = source_root() or Path(__file__).resolve().parents[2]
ROWS = ["At a glance", "GPU over time", "Model performance", "Gateway", "Prefix cache by client key", "Replicas"]


def rows_and_panels(dashboard: dict) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = {}
    current = None
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            current = panel["title"]
            rows[current] = []
        else:
            assert current is not None, f"panel '{panel['title']}' sits above the first row"
            rows[current].append(panel)
    return rows


def all_panels(dashboard: dict) -> list[dict]:
    return [panel for panels in rows_and_panels(dashboard).values() for panel in panels]


def test_committed_json_is_the_generated_dashboard():
    committed = (ROOT / DASHBOARD_FILE).read_text()
    assert committed == dashboard_json(), "run: .venv/bin/python -m tools.dashboard.dashboard"


def test_rows_in_order_with_the_panels_the_issue_lists():
    rows = rows_and_panels(build_dashboard())
    assert list(rows) == ROWS
    titles = {row: [panel["title"] for panel in panels] for row, panels in rows.items()}
    assert titles["At a glance"] == [
        "Model", "GPU memory used", "GPU memory free", "GPU utilisation", "GPU temperature", "GPU power",
        "Requests running", "p95 time to first token",
    ]
    assert titles["GPU over time"] == ["GPU memory", "GPU utilisation", "GPU power", "GPU temperature"]
    for title in ("Queue depth", "Time to first token", "End-to-end latency", "Output tokens/s",
                  "KV-cache usage", "Prefix-cache hit rate"):
        assert title in titles["Model performance"]
    for title in ("Requests by client key and status", "Errors", "In flight", "Web searches",
                  "Turned away (limits, back-pressure)"):
        assert title in titles["Gateway"]
    for title in ("Prompt served from cache", "Sessions with a broken prefix (last hour)"):
        assert title in titles["Prefix cache by client key"]


def test_every_panel_uses_the_provisioned_datasource_and_has_a_query():
    dashboard = build_dashboard()
    assert dashboard["uid"] == "stackctl"
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in all_panels(dashboard):
        assert panel["datasource"] == {"type": "prometheus", "uid": DATASOURCE_UID}, panel["title"]
        assert panel["targets"], f"{panel['title']} has no query"
        for target in panel["targets"]:
            assert target["expr"].strip(), panel["title"]
            assert target["datasource"]["uid"] == DATASOURCE_UID, panel["title"]
        ref_ids = [target["refId"] for target in panel["targets"]]
        assert len(ref_ids) == len(set(ref_ids)), panel["title"]


def test_datasource_uid_matches_the_provisioning_file():
    text = (ROOT / "grafana/provisioning/datasources/prometheus.yml.j2").read_text()
    assert f"uid: {DATASOURCE_UID}" in text


def test_gpu_panels_fall_back_to_no_gpu_and_map_it_to_text():
    for panel in all_panels(build_dashboard()):
        gpu_exprs = [t["expr"] for t in panel["targets"] if "nvidia_smi_" in t["expr"]]
        if not gpu_exprs:
            continue
        for expr in gpu_exprs:
            assert queries.NO_GPU in expr, panel["title"]
        mapped = [options for mapping in panel["fieldConfig"]["defaults"]["mappings"]
                  for value, options in mapping["options"].items() if value == str(queries.NO_GPU_VALUE)]
        assert mapped and mapped[0]["text"] == "no GPU", panel["title"]


def test_queries_use_the_metric_names_vllm_and_the_proxy_expose():
    exprs = " ".join(t["expr"] for panel in all_panels(build_dashboard()) for t in panel["targets"])
    for name in ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:time_to_first_token_seconds_bucket",
                 "vllm:e2e_request_latency_seconds_bucket", "vllm:generation_tokens_total",
                 "vllm:kv_cache_usage_perc", "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total",
                 "stackctl_proxy_requests_total", "stackctl_proxy_in_flight", "stackctl_proxy_rejections_total",
                 "stackctl_proxy_cached_tokens_total", "stackctl_proxy_prefix_requests_total",
                 "stackctl_proxy_prefix_broken_sessions_total"):
        assert name in exprs, name
    # Grafana variables other than $__rate_interval would not be substituted in tests (label_replace's
    # $1 is no variable name Grafana knows, so it passes through).
    assert set(re.findall(r"\$[A-Za-z_]\w*", exprs)) == {"$__rate_interval"}


def test_render_ships_the_dashboard_with_grafana(tmp_path):
    files = render_configs(Stack.from_config(parse_stack_config({}), StackLayout(tmp_path)))
    rendered = json.loads(files[Path("grafana/dashboards/stackctl.json")])
    assert rendered["uid"] == "stackctl"
    files = render_configs(Stack.from_config(parse_stack_config({"services": {"grafana": False}}), StackLayout(tmp_path)))
    assert Path("grafana/dashboards/stackctl.json") not in files
