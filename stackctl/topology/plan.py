"""One host's share of a stack: which services it runs, what they bind, whom they wait for.

The one place that decides, per host: services (by role), the filter-proxy's and Prometheus'
listen addresses, nginx's upstreams, Prometheus' federation targets, the peers `up` waits for,
and the Ray cluster a node belongs to. Without `hosts:` the plan is the one-box stack.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stackctl.config_hosts import HostRole, HostSpec, RayOptions, workers_of
from stackctl.errors import ConfigError

if TYPE_CHECKING:
    from stackctl.config import StackConfig

LOOPBACK = "127.0.0.1"
MONITORING = frozenset({"prometheus", "node-exporter", "gpu-exporter"})
# What only the host clients talk to runs: the web server, its certificates, the dashboards.
ENDPOINT_SERVICES = frozenset({"nginx", "certbot", "grafana"})


@dataclass(frozen=True)
class PeerGate:
    """Another host this one waits for before starting: its service answers at `url`
    (http: a health URL; tcp: a port that accepts connections)."""

    host: str
    service: str
    url: str


@dataclass(frozen=True)
class RayPlan:
    """This node's place in a Ray cluster (one per gpu host with ray-workers)."""

    head: str  # the gpu host's name
    head_address: str  # its link address
    port: int
    node_address: str  # this node's link address
    interface: str
    nodes: int
    gpus_per_node: int
    tensor_parallel_size: int
    pipeline_parallel_size: int
    extra_environment: tuple[tuple[str, str], ...] = ()

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def cluster_address(self) -> str:
        return f"{self.head_address}:{self.port}"

    def environment(self) -> list[str]:
        """KEY=VALUE for Ray and vLLM on this node: the link for NCCL and Gloo, this node's own
        address for vLLM's internal sockets, and the cluster to join."""
        values = {
            "NCCL_SOCKET_IFNAME": self.interface,
            "GLOO_SOCKET_IFNAME": self.interface,
            "VLLM_HOST_IP": self.node_address,
            "RAY_ADDRESS": self.cluster_address,
            **dict(self.extra_environment),
        }
        return [f"{key}={value}" for key, value in values.items()]


@dataclass(frozen=True)
class HostPlan:
    name: str | None  # None: a one-box stack (no `hosts:`)
    role: HostRole | None
    address: str  # the intranet address (loopback on one box)
    services: frozenset[str]
    proxy_bind: str
    prometheus_bind: str
    # The filter-proxies nginx balances, as IP:PORT (one: no balancing).
    upstreams: tuple[str, ...]
    # Where clients reach the stack: the edge host (else the gpu host) on its intranet address.
    endpoint_address: str = LOOPBACK
    # (host, IP:PORT) of the other hosts' Prometheus, federated by this host's.
    federate: tuple[tuple[str, str], ...] = ()
    peers: tuple[PeerGate, ...] = ()
    ray: RayPlan | None = None
    # Every host of the stack (for doctor's peer checks and the dashboard's labels).
    hosts: dict[str, HostSpec] = field(default_factory=dict)

    @property
    def multi_host(self) -> bool:
        return self.name is not None

    @property
    def host_label(self) -> str | None:
        """The `host` label on this host's Prometheus targets (None on one box)."""
        return self.name

    @property
    def replicas(self) -> bool:
        return len(self.upstreams) > 1

    @property
    def proxy_is_public(self) -> bool:
        """The filter-proxy would listen on an address reachable from the internet."""
        return ipaddress.ip_address(self.proxy_bind).is_global


def one_box_plan(config: StackConfig) -> HostPlan:
    return HostPlan(None, None, LOOPBACK, frozenset(config.enabled_services()), LOOPBACK, LOOPBACK,
                    (f"{LOOPBACK}:{config.ports.proxy}",))


def plan_host(config: StackConfig, host: str | None) -> HostPlan:
    """The plan of `host` (a name under `hosts:`); None on a stack without `hosts:`."""
    hosts = config.hosts
    if not hosts:
        if host is not None:
            raise ConfigError(f"--host {host}: stack.yaml has no hosts: section (this stack is one box)")
        return one_box_plan(config)
    if host is None:
        raise ConfigError(f"stack.yaml lists hosts ({', '.join(hosts)}); pass --host NAME for the one this is")
    if host not in hosts:
        raise ConfigError(f"--host {host}: not in stack.yaml's hosts ({', '.join(hosts)})")
    spec = hosts[host]
    gpus = [name for name, other in hosts.items() if other.role == "gpu"]
    edge = next((name for name, other in hosts.items() if other.role == "edge"), None)
    endpoint = edge or gpus[0]  # the host clients talk to
    enabled = config.enabled_services()
    services = set(enabled & MONITORING) - ({"gpu-exporter"} if spec.role == "edge" else set())
    if spec.role == "gpu":
        services |= {"vllm", "filter-proxy"}
    ray = _ray_plan(config, host)
    if ray is not None:
        services.add("ray-head" if spec.role == "gpu" else "ray-worker")
    if host == endpoint:
        services |= enabled & ENDPOINT_SERVICES
    behind_edge = edge is not None and spec.role == "gpu"
    prometheus_port = config.ports.prometheus
    federate: tuple[tuple[str, str], ...] = ()
    if host == endpoint and "prometheus" in enabled:
        federate = tuple((name, f"{other.address}:{prometheus_port}") for name, other in hosts.items()
                         if name != host)
    if edge is not None:
        upstreams = tuple(f"{hosts[name].address}:{config.ports.proxy}" for name in gpus)
    else:
        upstreams = (f"{LOOPBACK}:{config.ports.proxy}",)
    return HostPlan(
        name=host,
        role=spec.role,
        address=spec.address,
        services=frozenset(services),
        # Behind an edge, the filter-proxy serves the LAN on the intranet address only (it
        # requires keys); vLLM stays on loopback everywhere.
        proxy_bind=spec.address if behind_edge else LOOPBACK,
        # The endpoint's Prometheus federates the others, which listen on their intranet address.
        prometheus_bind=LOOPBACK if host == endpoint else spec.address,
        upstreams=upstreams if host == endpoint else (),
        endpoint_address=hosts[endpoint].address,
        federate=federate,
        peers=_peers(config, host, edge),
        ray=ray,
        hosts=dict(hosts),
    )


def _peers(config: StackConfig, host: str, edge: str | None) -> tuple[PeerGate, ...]:
    hosts = config.hosts
    spec = hosts[host]
    if host == edge:
        return tuple(PeerGate(name, "filter-proxy", f"http://{other.address}:{config.ports.proxy}/health")
                     for name, other in hosts.items() if other.role == "gpu")
    if spec.role == "ray-worker":
        head = _head_of(config, host)
        options = config.ray or RayOptions()
        return (PeerGate(head, "ray-head", f"tcp://{hosts[head].ray_address}:{options.port}"),)
    return ()


def _head_of(config: StackConfig, worker: str) -> str:
    return next(name for name, spec in config.hosts.items()
                if spec.role == "gpu" and worker in workers_of(config.hosts, name))


def _ray_plan(config: StackConfig, host: str) -> RayPlan | None:
    hosts = config.hosts
    spec = hosts[host]
    if spec.role == "ray-worker":
        head = _head_of(config, host)
    elif spec.role == "gpu" and workers_of(hosts, host):
        head = host
    else:
        return None
    options = config.ray or RayOptions()
    nodes = 1 + len(workers_of(hosts, head))
    tensor, pipeline = options.parallel_sizes(nodes)
    interface = spec.interface or options.interface
    assert interface is not None  # check_hosts refuses a Ray node without one
    return RayPlan(
        head=head, head_address=hosts[head].ray_address, port=options.port, node_address=spec.ray_address,
        interface=interface, nodes=nodes, gpus_per_node=options.gpus_per_node, tensor_parallel_size=tensor,
        pipeline_parallel_size=pipeline, extra_environment=tuple(sorted(options.environment.items())),
    )

