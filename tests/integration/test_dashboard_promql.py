"""The dashboard's PromQL checked by Prometheus' own tool: every query parses, and the GPU panels'
"no GPU" fallback evaluates right in each situation (`promtool test rules` runs real PromQL)."""

import subprocess

import pytest
import yaml

from tests.support.processes import require
from tools.dashboard import queries as q
from tools.dashboard.dashboard import build_dashboard

pytestmark = pytest.mark.integration


def promtool(tmp_path, command: str, document: dict) -> subprocess.CompletedProcess:
    path = tmp_path / f"{command}.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return subprocess.run([require("promtool"), "check" if command == "rules" else "test", "rules", str(path)],
                          capture_output=True, text=True, check=False)


def test_every_dashboard_query_parses(tmp_path):
    rules = [
        {"record": f"panel_{panel['id']}_{target['refId']}", "expr": target["expr"].replace("$__rate_interval", "1m")}
        for panel in build_dashboard()["panels"] for target in panel.get("targets", [])
    ]
    assert len(rules) > 20
    result = promtool(tmp_path, "rules", {"groups": [{"name": "dashboard", "rules": rules}]})
    assert result.returncode == 0, result.stdout + result.stderr


GPU_SERIES = [
    {"series": 'nvidia_smi_memory_used_bytes{uuid="cc20", job="gpu", instance="x"}', "values": "5e8 5e8 5e8"},
    {"series": 'nvidia_smi_gpu_info{uuid="cc20", name="NVIDIA H100 80GB HBM3", index="0", job="gpu", instance="x"}',
     "values": "1 1 1"},
    {"series": 'stackctl_gpu_present{reason="", job="gpu", instance="x"}', "values": "1 1 1"},
    {"series": 'up{job="gpu", instance="x"}', "values": "1 1 1"},
]
NO_GPU_SERIES = [
    {"series": 'stackctl_gpu_present{reason="nvml_library_not_found", job="gpu", instance="x"}', "values": "0 0 0"},
    {"series": 'up{job="gpu", instance="x"}', "values": "1 1 1"},
]
NO_EXPORTER_SERIES = [{"series": 'up{job="vllm", instance="y"}', "values": "1 1 1"}]
EXPORTER_DOWN_SERIES = [{"series": 'up{job="gpu", instance="x"}', "values": "0 0 0"}]


@pytest.mark.parametrize(("series", "expected"), [
    (GPU_SERIES, [{"labels": '{uuid="cc20", name="NVIDIA H100 80GB HBM3", job="gpu", instance="x"}', "value": 5e8}]),
    (NO_GPU_SERIES, [{"labels": '{name="no GPU (nvml_library_not_found)", reason="nvml_library_not_found", '
                                'job="gpu", instance="x"}', "value": q.NO_GPU_VALUE}]),
    (NO_EXPORTER_SERIES, [{"labels": '{name="no GPU (no exporter scraped)", job="gpu"}', "value": q.NO_GPU_VALUE}]),
    # An exporter that should answer and does not: the panel stays empty rather than claim "no GPU".
    (EXPORTER_DOWN_SERIES, []),
], ids=["gpu", "exporter-finds-no-gpu", "no-exporter", "exporter-down"])
def test_gpu_panels_say_no_gpu_only_when_there_is_none(tmp_path, series, expected):
    stat = q.gpu(f"sum({q.GPU_MEMORY_USED})")
    stat_expected = [{"labels": "{}", "value": 5e8}] if series is GPU_SERIES else expected
    document = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": series,
        "promql_expr_test": [
            {"expr": q.gpu(q.per_gpu(q.GPU_MEMORY_USED)), "eval_time": "2m", "exp_samples": expected},
            {"expr": stat, "eval_time": "2m", "exp_samples": stat_expected},
        ],
    }]}
    result = promtool(tmp_path, "test", document)
    assert result.returncode == 0, result.stdout + result.stderr


PREFIX_SERIES = [
    # alice: 1024 prompt tokens a minute, 768 of them from cache; over the last 2 minutes 3
    # follow-ups kept, 1 broken.
    {"series": 'stackctl_proxy_tokens_total{direction="in", key="alice", job="proxy"}', "values": "0 1024 2048 3072"},
    {"series": 'stackctl_proxy_cached_tokens_total{key="alice", job="proxy"}', "values": "0 768 1536 2304"},
    {"series": 'stackctl_proxy_prefix_requests_total{key="alice", outcome="kept", job="proxy"}', "values": "0 1 2 4"},
    {"series": 'stackctl_proxy_prefix_requests_total{key="alice", outcome="broken", job="proxy"}', "values": "0 0 1 1"},
    {"series": 'stackctl_proxy_prefix_broken_sessions_total{key="alice", job="proxy"}', "values": "0 0 1 1"},
    # bob: exported from 0, idle: no hit rate at all (not 0%, not NaN), no broken session.
    {"series": 'stackctl_proxy_tokens_total{direction="in", key="bob", job="proxy"}', "values": "0 0 0 0"},
    {"series": 'stackctl_proxy_cached_tokens_total{key="bob", job="proxy"}', "values": "0 0 0 0"},
    {"series": 'stackctl_proxy_prefix_broken_sessions_total{key="bob", job="proxy"}', "values": "0 0 0 0"},
]


def test_the_prefix_cache_row_per_key(tmp_path):
    window = "2m"
    document = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": PREFIX_SERIES,
        "promql_expr_test": [
            {"expr": q.CACHE_HIT_RATE_BY_KEY.replace(q.RATE, window), "eval_time": "3m",
             "exp_samples": [{"labels": '{key="alice"}', "value": 0.75}]},
            {"expr": q.PREFIX_KEPT_BY_KEY.replace(q.RATE, window), "eval_time": "3m",
             "exp_samples": [{"labels": '{key="alice"}', "value": 0.75}]},
            {"expr": q.BROKEN_SESSIONS_BY_KEY, "eval_time": "3m",
             "exp_samples": [{"labels": '{key="alice"}', "value": 1}, {"labels": '{key="bob"}', "value": 0}]},
        ],
    }]}
    result = promtool(tmp_path, "test", document)
    assert result.returncode == 0, result.stdout + result.stderr
