"""stack.yaml's `hosts:` and `ray:` sections as pydantic models, and the rules across hosts: part of
the config schema (config.py embeds them in StackConfig); topology/ plans each host from them."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

# edge: nginx (+ certbot) facing clients, forwarding over the LAN; gpu: vLLM + the filter-proxy
# (several gpu hosts are replicas of one model); ray-worker: a node that lends its GPUs to a gpu
# host's vLLM through Ray (two DGX Sparks serving one model).
HostRole = Literal["edge", "gpu", "ray-worker"]
DEFAULT_RAY_PORT = 6379
_HOST_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_INTERFACE = re.compile(r"^[A-Za-z0-9_.:@-]{1,15}$")
# Variables the Ray fragments pass through to NCCL, Gloo, UCX and Ray (e.g. NCCL_IB_HCA).
_PASSED_ENVIRONMENT = re.compile(r"^(NCCL|GLOO|UCX|RAY|TP)_[A-Z0-9_]+$")


def _interface_name(value: str) -> str:
    if not _INTERFACE.match(value):
        raise ValueError(f"'{value}' is not a network interface name (e.g. enp1s0f0np0; `ip -br link` lists them)")
    return value


InterfaceName = Annotated[str, AfterValidator(_interface_name)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


def ip_address_text(value: object) -> str:
    """An IP address, never a name: nginx resolves a name once at start, and a `.local` name
    fails outright when mDNS answers slowly (the seed topology's lesson)."""
    try:
        return str(ipaddress.ip_address(str(value)))
    except ValueError:
        raise ValueError(
            f"'{value}' is not an IP address; give the host's intranet IP (nginx resolves a name once at "
            "start, and a .local name fails when mDNS is slow)"
        ) from None


class HostSpec(_Strict):
    """One host of a multi-host stack."""

    address: str  # its intranet IP: what the other hosts reach it on
    role: HostRole
    # ray-worker: the gpu host whose vLLM it serves (default: the only gpu host).
    head: str | None = None
    # Ray nodes: the direct link between them (ConnectX on DGX Spark) when it is not the intranet.
    link_address: str | None = None
    interface: InterfaceName | None = None  # that link's interface (default: ray.interface)

    @field_validator("address", "link_address")
    @classmethod
    def _ip_only(cls, value: str | None) -> str | None:
        return None if value is None else ip_address_text(value)

    @property
    def ray_address(self) -> str:
        """Where Ray, NCCL and Gloo reach this node: the link, else the intranet."""
        return self.link_address or self.address


class RayOptions(_Strict):
    """One model across several nodes: a Ray cluster per gpu host and its ray-workers."""

    # The link between the nodes (NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME); hosts.NAME.interface
    # overrides it per host.
    interface: InterfaceName | None = None
    port: int = Field(DEFAULT_RAY_PORT, ge=1, le=65535)
    gpus_per_node: int = Field(1, ge=1, le=16)
    # Unset: tensor parallel inside a node (gpus_per_node), pipeline parallel across the nodes:
    # only activations cross the link between pipeline stages.
    tensor_parallel_size: int | None = Field(None, ge=1)
    pipeline_parallel_size: int | None = Field(None, ge=1)
    # Extra NCCL_*/GLOO_*/UCX_*/RAY_* variables for every node (e.g. NCCL_IB_HCA: mlx5_0).
    environment: dict[str, str] = Field(default_factory=dict)

    @field_validator("environment")
    @classmethod
    def _passed_names(cls, environment: dict[str, str]) -> dict[str, str]:
        for name in environment:
            if not _PASSED_ENVIRONMENT.match(name):
                raise ValueError(f"'{name}' is not an NCCL_*, GLOO_*, UCX_* or RAY_* variable")
        return environment

    def parallel_sizes(self, nodes: int) -> tuple[int, int]:
        """(tensor, pipeline) parallel sizes for a cluster of `nodes` nodes."""
        tensor = self.tensor_parallel_size or self.gpus_per_node
        pipeline = self.pipeline_parallel_size or max(1, nodes * self.gpus_per_node // tensor)
        return tensor, pipeline


def check_hosts(hosts: dict[str, HostSpec], ray: RayOptions | None) -> str:
    """What is wrong across the hosts (empty when nothing): one line naming the key and the fix."""
    if not hosts:
        return ""
    for name in hosts:
        if not _HOST_NAME.match(name):
            return f"hosts.{name}: lowercase letters, digits and '-' only (it names the host's Compose project)"
    by_role: dict[str, list[str]] = {}
    for name, host in hosts.items():
        by_role.setdefault(host.role, []).append(name)
    edges, gpus, workers = by_role.get("edge", []), by_role.get("gpu", []), by_role.get("ray-worker", [])
    if len(edges) > 1:
        return f"hosts: one edge host per stack (got {', '.join(edges)}); the others can be gpu hosts behind it"
    if not gpus:
        return "hosts: at least one host needs role: gpu (it runs vLLM)"
    seen: dict[str, str] = {}
    for name, host in hosts.items():
        if host.address in seen:
            return f"hosts.{name}.address {host.address} is also hosts.{seen[host.address]}'s; each host has its own"
        seen[host.address] = name
    if len(gpus) > 1 and not edges:
        return (f"hosts: {len(gpus)} gpu hosts ({', '.join(gpus)}) are replicas and need an edge host in front "
                "that balances them (add one with role: edge)")
    for name in workers:
        head = hosts[name].head
        if head is None and len(gpus) > 1:
            return f"hosts.{name}.head: name the gpu host this ray-worker serves ({' or '.join(gpus)})"
        if head is not None and (head not in hosts or hosts[head].role != "gpu"):
            return f"hosts.{name}.head: '{head}' is not a gpu host of hosts: ({', '.join(gpus)})"
    for name, host in hosts.items():
        if host.head is not None and host.role != "ray-worker":
            return f"hosts.{name}.head: only a ray-worker has a head"
    if workers:
        counts = {gpu: len(workers_of(hosts, gpu)) for gpu in gpus}
        if len(set(counts.values())) > 1:
            listing = ", ".join(f"{gpu}: {count}" for gpu, count in counts.items())
            return (f"hosts: every gpu host serves the same model, so each needs as many ray-workers ({listing}); "
                    "give them the same number")
        options = ray or RayOptions()
        missing = [name for name in [*gpus, *workers] if not (hosts[name].interface or options.interface)]
        if missing:
            return (f"ray.interface: the link interface between the Ray nodes is not set (for {', '.join(missing)}); "
                    "NCCL and Gloo otherwise pick the first interface, often the wrong one (`ip -br addr` lists them)")
        nodes = 1 + next(iter(counts.values()))
        tensor, pipeline = options.parallel_sizes(nodes)
        if tensor * pipeline != nodes * options.gpus_per_node:
            return (f"ray: tensor_parallel_size {tensor} x pipeline_parallel_size {pipeline} = {tensor * pipeline} GPUs, "
                    f"but each cluster has {nodes} nodes x {options.gpus_per_node} GPU(s) = "
                    f"{nodes * options.gpus_per_node}; make the product match")
    elif ray is not None and (ray.tensor_parallel_size or ray.pipeline_parallel_size):
        return "ray: parallel sizes without any ray-worker host; add a host with role: ray-worker, or remove ray:"
    return ""


def workers_of(hosts: dict[str, HostSpec], gpu: str) -> list[str]:
    """The ray-workers of one gpu host (a lone gpu host owns every worker that names no head)."""
    gpus = [name for name, host in hosts.items() if host.role == "gpu"]
    return [name for name, host in hosts.items()
            if host.role == "ray-worker" and (host.head == gpu or (host.head is None and gpus == [gpu]))]


def cluster_shape(hosts: dict[str, HostSpec], ray: RayOptions | None) -> tuple[int, int, int] | None:
    """(nodes, tensor, pipeline) of each gpu host's Ray cluster (None: no ray-workers, no Ray)."""
    gpus = [name for name, host in hosts.items() if host.role == "gpu"]
    if not gpus or not workers_of(hosts, gpus[0]):
        return None
    nodes = 1 + len(workers_of(hosts, gpus[0]))
    tensor, pipeline = (ray or RayOptions()).parallel_sizes(nodes)
    return nodes, tensor, pipeline
