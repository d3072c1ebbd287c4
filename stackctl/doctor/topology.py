"""Multi-host stacks (stack.yaml's hosts:): this machine is the host it claims to be, its peers
answer, the filter-proxy stays off public addresses, a Ray node's link interface exists."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn
from stackctl.topology.local import is_local_address

CONNECT_TIMEOUT_S = 2.0


def check_this_host(ctx: DoctorContext) -> list[CheckResult]:
    name = "host"
    plan = ctx.stack.plan
    if not plan.multi_host:
        return []  # one box: nothing to say
    if not is_local_address(plan.address):
        return [fail(name, f"hosts.{plan.name}.address {plan.address} is not an address of this machine",
                    f"run this on {plan.name} itself, pass --host with this machine's name from hosts:, or correct "
                    f"hosts.{plan.name}.address (`ip -br addr` lists this machine's)")]
    return [ok(name, f"{plan.name} ({plan.role}) on {plan.address}: {', '.join(sorted(plan.services))}")]


def check_peers(ctx: DoctorContext) -> list[CheckResult]:
    """Every host this one talks to accepts a connection on the port it will use."""
    plan = ctx.stack.plan
    targets = [(gate.host, gate.service, gate.url) for gate in plan.peers]
    targets += [(host, "prometheus", f"tcp://{address}") for host, address in plan.federate]
    results = []
    for host, service, url in targets:
        parts = urlsplit(url)
        where = f"{parts.hostname}:{parts.port}"
        try:
            with socket.create_connection((parts.hostname or "", parts.port or 0), timeout=CONNECT_TIMEOUT_S):
                results.append(ok(f"peer-{host}-{service}", f"{service} on {host} answers at {where}"))
        except OSError as error:
            results.append(warn(
                f"peer-{host}-{service}", f"{service} on {host} does not answer at {where} ({error.strerror or error})",
                f"start it (`stackctl up --host {host}` on {host}); if it runs, let TCP {parts.port} from "
                f"{plan.address} through {host}'s firewall, or correct hosts.{host}.address in stack.yaml",
            ))
    return results


def check_proxy_exposure(ctx: DoctorContext) -> list[CheckResult]:
    name = "proxy-exposure"
    plan = ctx.stack.plan
    if not plan.multi_host or "filter-proxy" not in plan.services:
        return []
    where = f"{plan.proxy_bind}:{ctx.config.ports.proxy}"
    if plan.proxy_is_public:
        return [warn(name, f"the filter-proxy would listen on {where}, a public address: anyone on the internet "
                          "could try keys against it, bypassing the edge's nginx",
                    f"give hosts.{plan.name}.address the GPU host's intranet IP (LAN, VLAN or VPN), or firewall port "
                    f"{ctx.config.ports.proxy} to the edge's IP only")]
    scope = "loopback only" if plan.proxy_bind.startswith("127.") else "the intranet address only"
    return [ok(name, f"the filter-proxy listens on {where} ({scope}; clients need a key); vLLM on loopback")]


def check_ray_link(ctx: DoctorContext) -> list[CheckResult]:
    name = "ray-link"
    ray = ctx.stack.plan.ray
    if ray is None:
        return []
    if not ctx.facts.file(f"/sys/class/net/{ray.interface}").exists():
        return [fail(name, f"interface {ray.interface} (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME) is not on this machine",
                    "set ray.interface (or hosts.NAME.interface) to the link between the nodes; `ip -br link` lists "
                    "them (on DGX Spark the ConnectX ports are enp1s0f0np0 / enP2p1s0f0np0)")]
    if not is_local_address(ray.node_address):
        return [fail(name, f"{ray.node_address} (this node's Ray address) is not an address of this machine",
                    "set hosts.NAME.link_address to this node's IP on the link (`ip -br addr show "
                    f"{ray.interface}`)")]
    return [ok(name, f"Ray node {ray.node_address} on {ray.interface}; cluster {ray.cluster_address}: {ray.nodes} "
                    f"nodes x {ray.gpus_per_node} GPU, TP {ray.tensor_parallel_size} x PP {ray.pipeline_parallel_size}")]
