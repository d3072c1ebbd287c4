"""The PromQL behind every dashboard panel: the contract between the dashboard and the exporters.

Metric names come from what each target exposes today:
- vLLM (`vllm:*`, v1 engine metrics, labels `model_name`, `engine`);
- the filter-proxy (`stackctl_proxy_*`, see stackctl/proxy/metrics.py);
- the GPU exporter: the Compose image (utkuozdemir/nvidia_gpu_exporter) and `stackctl gpu-exporter`
  both expose the `nvidia_smi_*` names below, so one dashboard serves both runtimes; the latter
  adds `stackctl_gpu_present{reason}` so a host without a GPU says so instead of showing nothing.

`$__rate_interval` is Grafana's; tests substitute a fixed window before running the queries.
"""

from __future__ import annotations

RATE = "$__rate_interval"

# Sentinel value of the "no GPU" fallback series; GPU panels map it to the text "no GPU".
# GPU figures (bytes, ratios, watts, degrees) are never negative, so it cannot be mistaken.
NO_GPU_VALUE = -1
NO_GPU_TEXT = "no GPU"

# Returns one series valued -1 (labelled `name="no GPU (<reason>)"`) when the exporter runs and
# finds no GPU, or when no GPU exporter is scraped at all (CPU hosts under Compose); nothing when
# a GPU is present, and nothing when an exporter that should be there is down (an empty panel is
# then the honest answer).
NO_GPU = (
    '(label_replace(stackctl_gpu_present == 0, "name", "no GPU ($1)", "reason", "(.+)") - 1)'
    ' or on() '
    '(label_replace(absent(up{job="gpu"}), "name", "no GPU (no exporter scraped)", "", "") * -1)'
)


def gpu(expr: str) -> str:
    """A GPU query that falls back to the "no GPU" series when there is no GPU to measure."""
    return f"({expr}) or on() ({NO_GPU})"


def per_gpu(metric: str) -> str:
    """`metric` per GPU, labelled with the GPU's `name` (from nvidia_smi_gpu_info) for legends."""
    return f"{metric} * on(uuid) group_left(name) nvidia_smi_gpu_info"


def quantile(q: float, histogram: str, by: str = "") -> str:
    grouping = f"le, {by}" if by else "le"
    return f"histogram_quantile({q}, sum by ({grouping}) (rate({histogram}_bucket[{RATE}])))"


# vLLM
MODEL_UP = 'max(up{job="vllm"})'
RUNNING = "sum(vllm:num_requests_running)"
WAITING = "sum(vllm:num_requests_waiting)"
TTFT = "vllm:time_to_first_token_seconds"
E2E = "vllm:e2e_request_latency_seconds"
OUTPUT_TOKENS_PER_S = f"sum(rate(vllm:generation_tokens_total[{RATE}]))"
KV_CACHE_USAGE = "max(vllm:kv_cache_usage_perc)"
PREFIX_CACHE_HIT_RATE = (
    f"sum(rate(vllm:prefix_cache_hits_total[{RATE}]))"
    f" / sum(rate(vllm:prefix_cache_queries_total[{RATE}]))"
)

# GPU exporter
GPU_MEMORY_USED = "nvidia_smi_memory_used_bytes"
GPU_MEMORY_FREE = "nvidia_smi_memory_free_bytes"
GPU_UTILIZATION = "nvidia_smi_utilization_gpu_ratio"
GPU_TEMPERATURE = "nvidia_smi_temperature_gpu"
GPU_POWER = "nvidia_smi_power_draw_watts"

# filter-proxy
PROXY_REQUESTS = "stackctl_proxy_requests_total"
PROXY_IN_FLIGHT = "sum(stackctl_proxy_in_flight)"
PROXY_TTFT = "stackctl_proxy_ttft_seconds"
PROXY_TOKENS = "stackctl_proxy_tokens_total"
PROXY_SEARCHES = "stackctl_proxy_web_searches_total"
PROXY_REJECTIONS = "stackctl_proxy_rejections_total"

# Prefix cache per client key (the proxy's session tracking, stackctl/proxy/sessions/). Keys that
# sent no prompt in the window have no hit rate (no series), not 0%.
PROXY_CACHED_TOKENS = "stackctl_proxy_cached_tokens_total"
PROXY_PREFIX_REQUESTS = "stackctl_proxy_prefix_requests_total"
PROXY_BROKEN_SESSIONS = "stackctl_proxy_prefix_broken_sessions_total"
CACHE_HIT_RATE_BY_KEY = (
    f"sum by (key) (rate({PROXY_CACHED_TOKENS}[{RATE}]))"
    f' / (sum by (key) (rate({PROXY_TOKENS}{{direction="in"}}[{RATE}])) > 0)'
)
# Of a session's follow-up requests, those that extend the previous one whole.
PREFIX_KEPT_BY_KEY = (
    f'sum by (key) (rate({PROXY_PREFIX_REQUESTS}{{outcome="kept"}}[{RATE}]))'
    f' / (sum by (key) (rate({PROXY_PREFIX_REQUESTS}{{outcome=~"kept|broken"}}[{RATE}])) > 0)'
)
BROKEN_SESSIONS_BY_KEY = f"sum by (key) (increase({PROXY_BROKEN_SESSIONS}[1h]))"

# Replicas: several gpu hosts behind one edge (stack.yaml's hosts:). The edge's Prometheus
# federates each host's, whose series carry `host`; a replica whose Prometheus stops answering
# has no vLLM series left, so its federation target's `up` (labelled role="gpu") says 0.
REPLICA_UP = ('max by (host) (up{job="vllm"})'
              ' or on (host) (0 * max by (host) (up{job="federate", role="gpu"}))')
REPLICA_REQUESTS = f"sum by (host) (rate(vllm:request_success_total[{RATE}]))"
REPLICA_RUNNING = "sum by (host) (vllm:num_requests_running)"
REPLICA_KV_CACHE = "max by (host) (vllm:kv_cache_usage_perc)"
