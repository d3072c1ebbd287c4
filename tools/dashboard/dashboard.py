"""The stackctl Grafana dashboard, built with grafana-foundation-sdk and kept as JSON in the repo.

`grafana/dashboards/stackctl.json` is this module's output; Grafana loads it on first boot through
the file provider in grafana/provisioning/. Regenerate it after editing the panels below:

    .venv/bin/python -m tools.dashboard.dashboard

(a unit test fails while the committed file and this module disagree).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from grafana_foundation_sdk.builders import dashboard as gdash
from grafana_foundation_sdk.builders import prometheus as gprom
from grafana_foundation_sdk.builders import stat as gstat
from grafana_foundation_sdk.builders import timeseries as gts
from grafana_foundation_sdk.builders.common import ReduceDataOptions, StackingConfig
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as model
from grafana_foundation_sdk.models.common import BigValueGraphMode, StackingMode

from tools.dashboard import queries as q

DASHBOARD_UID = "stackctl"
DATASOURCE_UID = "stackctl-prometheus"  # grafana/provisioning/datasources/prometheus.yml.j2
DASHBOARD_FILE = Path("grafana/dashboards/stackctl.json")
_DATASOURCE = model.DataSourceRef(type_val="prometheus", uid=DATASOURCE_UID)


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str = ""


@dataclass(frozen=True)
class PanelSpec:
    title: str
    kind: Literal["stat", "timeseries"]
    queries: Sequence[Query]
    unit: str = "short"
    description: str = ""
    gpu: bool = False  # maps the "no GPU" fallback value to text
    mappings: Sequence[model.ValueMap] = ()
    no_value: str | None = None  # shown when the query returns nothing (only where that is normal)
    stacked: bool = False
    width: int = 6


@dataclass(frozen=True)
class RowSpec:
    title: str
    panels: Sequence[PanelSpec] = field(default_factory=tuple)


def _stat(title: str, expr: str, unit: str, **extra: Any) -> PanelSpec:
    return PanelSpec(title, "stat", (Query(expr),), unit=unit, width=3, **extra)


def _gpu_stat(title: str, expr: str, unit: str) -> PanelSpec:
    return _stat(title, q.gpu(expr), unit, gpu=True)


def _gpu_series(title: str, metric: str, unit: str, legend: str = "{{name}}") -> PanelSpec:
    return PanelSpec(title, "timeseries", (Query(q.gpu(q.per_gpu(metric)), legend),), unit=unit, gpu=True)


_MODEL_STATE = model.ValueMap({
    "0": model.ValueMappingResult(text="down", color="red", index=0),
    "1": model.ValueMappingResult(text="up", color="green", index=1),
})

ROWS: tuple[RowSpec, ...] = (
    RowSpec("At a glance", (
        _stat("Model", q.MODEL_UP, "none", mappings=(_MODEL_STATE,),
              description="vLLM answers Prometheus' scrape (up) or not (down)."),
        _gpu_stat("GPU memory used", f"sum({q.GPU_MEMORY_USED})", "bytes"),
        _gpu_stat("GPU memory free", f"sum({q.GPU_MEMORY_FREE})", "bytes"),
        _gpu_stat("GPU utilisation", f"avg({q.GPU_UTILIZATION})", "percentunit"),
        _gpu_stat("GPU temperature", f"max({q.GPU_TEMPERATURE})", "celsius"),
        _gpu_stat("GPU power", f"sum({q.GPU_POWER})", "watt"),
        _stat("Requests running", q.RUNNING, "none"),
        _stat("p95 time to first token", q.quantile(0.95, q.TTFT), "s",
              no_value="no requests", description="Over the last rate window; empty while idle."),
    )),
    RowSpec("GPU over time", (
        PanelSpec("GPU memory", "timeseries", (
            Query(q.gpu(q.per_gpu(q.GPU_MEMORY_USED)), "used {{name}}"),
            Query(q.gpu(q.per_gpu(q.GPU_MEMORY_FREE)), "free {{name}}"),
        ), unit="bytes", gpu=True, stacked=True,
            description="On unified memory (GB10) the pool shared with the OS; free is MemAvailable."),
        _gpu_series("GPU utilisation", q.GPU_UTILIZATION, "percentunit"),
        _gpu_series("GPU power", q.GPU_POWER, "watt"),
        _gpu_series("GPU temperature", q.GPU_TEMPERATURE, "celsius"),
    )),
    RowSpec("Model performance", (
        PanelSpec("Queue depth", "timeseries", (
            Query(q.RUNNING, "running"),
            Query(q.WAITING, "waiting"),
        ), unit="none", stacked=True),
        PanelSpec("Time to first token", "timeseries", (
            Query(q.quantile(0.5, q.TTFT), "p50"),
            Query(q.quantile(0.95, q.TTFT), "p95"),
        ), unit="s"),
        PanelSpec("End-to-end latency", "timeseries", (
            Query(q.quantile(0.5, q.E2E), "p50"),
            Query(q.quantile(0.95, q.E2E), "p95"),
        ), unit="s"),
        PanelSpec("Output tokens/s", "timeseries", (Query(q.OUTPUT_TOKENS_PER_S, "tokens/s"),), unit="none"),
        PanelSpec("KV-cache usage", "timeseries", (Query(q.KV_CACHE_USAGE, "KV cache"),), unit="percentunit"),
        PanelSpec("Prefix-cache hit rate", "timeseries", (Query(q.PREFIX_CACHE_HIT_RATE, "hit rate"),),
                  unit="percentunit", description="Cached prompt tokens / queried prompt tokens."),
    )),
    RowSpec("Gateway", (
        PanelSpec("Requests by client key and status", "timeseries", (
            Query(f"sum by (key, status) (rate({q.PROXY_REQUESTS}[{q.RATE}]))", "{{key}} {{status}}"),
        ), unit="reqps"),
        PanelSpec("Errors", "timeseries", (
            Query(f'sum by (route, status) (rate({q.PROXY_REQUESTS}{{status=~"[45].."}}[{q.RATE}]))',
                  "{{status}} {{route}}"),
        ), unit="reqps", no_value="no errors"),
        PanelSpec("In flight", "timeseries", (Query(q.PROXY_IN_FLIGHT, "in flight"),), unit="none"),
        PanelSpec("Turned away (limits, back-pressure)", "timeseries", (
            Query(f"sum by (reason, key) (rate({q.PROXY_REJECTIONS}[{q.RATE}]))", "{{reason}} {{key}}"),
        ), unit="reqps", no_value="none turned away",
            description="429: a key over max_concurrent, requests_per_minute or tokens_per_minute; "
                        "backend_queue: 529/503 while vLLM's waiting queue is past max_backend_waiting."),
        PanelSpec("Web searches", "timeseries", (
            Query(f"sum by (outcome) (rate({q.PROXY_SEARCHES}[{q.RATE}]))", "{{outcome}}"),
        ), unit="reqps", no_value="no searches"),
        PanelSpec("Gateway time to first event (p95)", "timeseries", (
            Query(q.quantile(0.95, q.PROXY_TTFT, by="route"), "{{route}}"),
        ), unit="s"),
        PanelSpec("Tokens by client key", "timeseries", (
            Query(f"sum by (key, direction) (rate({q.PROXY_TOKENS}[{q.RATE}]))", "{{key}} {{direction}}"),
        ), unit="none"),
    )),
    RowSpec("Prefix cache by client key", (
        PanelSpec("Prompt served from cache", "timeseries", (Query(q.CACHE_HIT_RATE_BY_KEY, "{{key}}"),),
                  unit="percentunit", no_value="no prompts",
                  description="Per client key: prompt tokens vLLM served from its prefix cache, of all prompt "
                              "tokens (vLLM's cached_tokens, which the proxy reads from every reply)."),
        PanelSpec("Requests that kept their prefix", "timeseries", (Query(q.PREFIX_KEPT_BY_KEY, "{{key}}"),),
                  unit="percentunit", no_value="no follow-up requests",
                  description="Of each conversation's follow-up requests, those that repeat the previous "
                              "request whole (vLLM can reuse all of it)."),
        PanelSpec("Sessions with a broken prefix (last hour)", "timeseries",
                  (Query(q.BROKEN_SESSIONS_BY_KEY, "{{key}}"),), unit="none", no_value="none broken",
                  description="Conversations whose prompt changed inside what was sent before (counted at "
                              "their first break). `stackctl cache-report` says where and what stood there."),
        PanelSpec("Requests by prefix outcome", "timeseries", (
            Query(f"sum by (outcome) (rate({q.PROXY_PREFIX_REQUESTS}[{q.RATE}]))", "{{outcome}}"),
        ), unit="reqps", stacked=True, no_value="no conversations",
            description="first: a conversation's first request; kept: extends the previous one whole; "
                        "broken: differs inside it."),
    )),
    RowSpec("Replicas", (
        PanelSpec("Replicas serving", "timeseries", (Query(q.REPLICA_UP, "{{host}}"),), unit="none",
                  mappings=(_MODEL_STATE,), no_value="one host",
                  description="Each GPU host behind the edge (stack.yaml's hosts:): 1 while its vLLM answers "
                              "Prometheus, 0 once it stops."),
        PanelSpec("Requests by replica", "timeseries", (Query(q.REPLICA_REQUESTS, "{{host}}"),), unit="reqps",
                  description="nginx hashes each client key to one replica: the split follows the keys."),
        PanelSpec("Running by replica", "timeseries", (Query(q.REPLICA_RUNNING, "{{host}}"),), unit="none"),
        PanelSpec("KV-cache usage by replica", "timeseries", (Query(q.REPLICA_KV_CACHE, "{{host}}"),),
                  unit="percentunit"),
    )),
)


def _target(query: Query, ref_id: str) -> gprom.Dataquery:
    target = gprom.Dataquery().expr(query.expr).ref_id(ref_id).datasource(_DATASOURCE)
    return target.legend_format(query.legend) if query.legend else target


def _panel(spec: PanelSpec, panel_id: int) -> gstat.Panel | gts.Panel:
    panel: gstat.Panel | gts.Panel
    if spec.kind == "stat":
        panel = (gstat.Panel().graph_mode(BigValueGraphMode.NONE).height(4)
                 .reduce_options(ReduceDataOptions().calcs(["lastNotNull"]).values(False)))
    else:
        panel = gts.Panel().fill_opacity(30 if spec.stacked else 10).height(8)
        if spec.stacked:
            panel = panel.stacking(StackingConfig().mode(StackingMode.NORMAL))
    panel = (
        panel.id(panel_id).title(spec.title).span(spec.width).unit(spec.unit).datasource(_DATASOURCE)
        .targets([_target(query, chr(ord("A") + i)) for i, query in enumerate(spec.queries)])
    )
    if spec.description:
        panel = panel.description(spec.description)
    mappings: list[model.ValueMapping] = list(spec.mappings)
    if spec.gpu:
        mappings.append(model.ValueMap({
            str(q.NO_GPU_VALUE): model.ValueMappingResult(text=q.NO_GPU_TEXT, color="text", index=len(mappings)),
        }))
    if mappings:
        panel = panel.mappings(mappings)
    if spec.no_value:
        panel = panel.no_value(spec.no_value)
    return panel


def build_dashboard(rows: Sequence[RowSpec] = ROWS) -> dict[str, Any]:
    """The dashboard as Grafana's JSON model (a plain dict)."""
    builder = (
        gdash.Dashboard("stackctl").uid(DASHBOARD_UID)
        .description("Is the model healthy, is it keeping up: vLLM, GPU, and the filter-proxy gateway.")
        .tags(["stackctl", "vllm"]).refresh("10s").time("now-1h", "now").timezone("browser").readonly()
    )
    panel_id = 1
    for row in rows:
        builder = builder.with_row(gdash.Row(row.title).id(panel_id))
        panel_id += 1
        for spec in row.panels:
            builder = builder.with_panel(_panel(spec, panel_id))
            panel_id += 1
    return json.loads(json.dumps(builder.build(), cls=JSONEncoder))


def dashboard_json(rows: Sequence[RowSpec] = ROWS) -> str:
    return json.dumps(build_dashboard(rows), indent=2, sort_keys=True) + "\n"


def main(argv: Sequence[str] = ()) -> None:
    """Write the dashboard JSON (default: grafana/dashboards/stackctl.json of this checkout)."""
    target = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / DASHBOARD_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dashboard_json())


if __name__ == "__main__":
    main(sys.argv[1:])
