"""`cache-report`: what the running filter-proxy knows of each conversation's prompt prefix
(the turns, the share vLLM served from its prefix cache, where a prefix broke), asked of its
admin API; with a capture, also the two prompts around each break.

The report travels as the proxy's own answer over HTTP, not as a file the proxy writes: the
proxy holds it in memory and answers live, under Compose (a container, whose files are its own)
and natively alike, on the host it runs on (behind an edge, each GPU host's proxy on its
intranet address), and captured prompts never leave its private directory except as the diff
the owner asked for. The admin API takes the backend key (.env's VLLM_API_KEY), which only the
stack's owner holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from stackctl.errors import ConfigError
from stackctl.proxy_admin import CacheReport, CaptureState, fetch_report, switch_capture
from stackctl.stack import Stack

PROXY_SERVICE = "filter-proxy"


@dataclass(frozen=True)
class ProxyReport:
    address: str  # host:port of the filter-proxy asked
    report: CacheReport
    capture: CaptureState | None = None  # the capture's state after switching it (None: untouched)


def proxy_addresses(stack: Stack) -> list[str]:
    """The filter-proxies this host reaches: its own, or (an edge) those of the GPU hosts."""
    plan = stack.plan
    if PROXY_SERVICE in plan.services:
        return [f"{plan.proxy_bind}:{stack.config.ports.proxy}"]
    if plan.upstreams:
        return list(plan.upstreams)
    raise ConfigError(f"host {plan.name} runs no filter-proxy and fronts none: run cache-report on a GPU host "
                      "or on the edge")


def cache_report(stack: Stack, *, sessions: int, key: str | None = None,
                 capture_minutes: float | None = None) -> list[ProxyReport]:
    """Each proxy's report; `capture_minutes` switches its capture first (0: off, and deleted)."""
    admin_key = stack.runtime.vllm_api_key()
    if not admin_key:
        raise ConfigError(f"{stack.layout.env_file} has no VLLM_API_KEY: the proxy's admin API takes it "
                          "(`stackctl init` writes one; the proxy must run with it)")
    reports = []
    for address in proxy_addresses(stack):
        capture = switch_capture(address, admin_key, capture_minutes) if capture_minutes is not None else None
        reports.append(ProxyReport(address, fetch_report(address, admin_key, sessions=sessions, key=key), capture))
    return reports
