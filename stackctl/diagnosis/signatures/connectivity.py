"""Ports, shared memory and the links between processes and nodes: a port already taken, /dev/shm
too small for NCCL, Gloo/NCCL on the wrong interface, a Ray node without a GPU."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, CONSEQUENCE, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

# The stack.yaml key that sets each service's (first) port, when the log names no number.
_SERVICE_PORT_KEYS = {
    "vllm": "ports.vllm", "filter-proxy": "ports.proxy", "prometheus": "ports.prometheus",
    "grafana": "ports.grafana", "node-exporter": "ports.node_exporter", "gpu-exporter": "ports.gpu_exporter",
    "nginx": "ports.http",
}
# uvicorn (vLLM, the filter-proxy), nginx, Go servers (Prometheus, Grafana, the exporters) and
# Docker's port publishing.
_BOUND_PORT = re.compile(
    r"bind on address \('?[^',]*'?, (?P<uvicorn>\d+)|bind\(\) to \S*:(?P<nginx>\d+) failed"
    r"|listen tcp[46]? \S*:(?P<go>\d+): bind|Bind for \S*:(?P<docker>\d+)(?:: unexpected error| failed)")
# vLLM picks free ports for its own workers and torch.distributed; those are not stack.yaml's.
# Docker Compose names the service whose port it could not publish.
_COMPOSE_SERVICE = re.compile(r"Cannot start service (?P<started>[\w-]+)|ERROR: for (?P<named>[\w-]+) ")
_INTERNAL_PORT = re.compile(r"get_open_port|TCPStore|c10d|rendezvous")
_API_SOCKET = re.compile(r"create_server_socket|setup_server|serve_http|uvicorn")


def _port_in_use(evidence: Evidence) -> Diagnosis:
    numbers = evidence.read(_BOUND_PORT)
    port = int(next(iter(numbers.values()), 0)) or None
    service = evidence.context.service
    internal = any(_INTERNAL_PORT.search(line) for line in evidence.lines[max(0, evidence.index - 6):evidence.index + 1])
    if port is None and not internal and evidence.nearest_before({"api": _API_SOCKET}):
        port = evidence.settings.port
    if port is None and (internal or service == "vllm"):
        return found(evidence, Cause.port_in_use,
                     "a port vLLM opens for its own workers is taken: another vLLM is most likely still running",
                     Fix("stop the other vLLM (`stackctl down`; `ss -ltnp` shows who listens), then `stackctl up`"))
    if service in ("docker", "compose"):
        named = evidence.read(_COMPOSE_SERVICE) or next(
            (values for line in evidence.lines if (values := _groups(_COMPOSE_SERVICE, line))), {})
        service = next(iter(named.values()), service)
    key = (evidence.context.port_keys.get(port) if port else None) or _SERVICE_PORT_KEYS.get(service)
    if port is None:
        move = (f" or move {key} in stack.yaml to a free port" if key else
                " or move the service's port (ports.* in stack.yaml) to a free one")
        return found(evidence, Cause.port_in_use, f"a port {service} listens on is already in use",
                     Fix(f"stop what holds it (`ss -ltnp` shows who listens){move}", key=key))
    flag = "--port" if key == "ports.vllm" else None
    move = f" or move {key}{f' ({flag})' if flag else ''} in stack.yaml to a free port" if key else ""
    return found(evidence, Cause.port_in_use, f"port {port} is already in use by another process",
                 Fix(f"stop what holds port {port} (`ss -ltnp 'sport = :{port}'`){move}", key=key, flag=flag),
                 port=port)


def _groups(pattern: re.Pattern[str], line: str) -> dict[str, str]:
    match = pattern.search(line)
    return {name: value for name, value in match.groupdict().items() if value} if match else {}


_SEGMENT = re.compile(r"creating shared memory segment (?P<segment>\S+?)\]?(?:\(\S*\))? \(size (?P<size>\d+)\)")
_SHM_FIX = Fix("give vLLM more /dev/shm: under Compose keep `ipc: host` (or `shm_size: 16gb`) on the vllm service as "
               "stackctl's fragment renders it; natively, free or enlarge /dev/shm (`df -h /dev/shm`)")


def _shm_too_small(evidence: Evidence) -> Diagnosis:
    line = evidence.line
    if "creating shared memory segment" in line or "ncclShmOpen" in line:
        size = evidence.read(_SEGMENT).get("size")
        detail = f" ({int(size) // (1024 * 1024)} MiB)" if size else ""
        return found(evidence, Cause.shm_too_small,
                     f"NCCL could not create its shared-memory segment in /dev/shm{detail}: /dev/shm is too small",
                     _SHM_FIX, **({"segment_bytes": int(size)} if size else {}))
    if "/dev/shm has only" in line:
        available = evidence.read(re.compile(r"/dev/shm has only (?P<bytes>\d+) bytes")).get("bytes", "0")
        return found(evidence, Cause.shm_too_small,
                     f"/dev/shm has only {int(available) // (1024 * 1024)} MiB: Ray and NCCL need far more",
                     _SHM_FIX, severity=Severity.advisory, shm_bytes=int(available))
    if "Bus error" in line:
        return found(evidence, Cause.shm_too_small,
                     "a process died with a bus error: in a container that is almost always /dev/shm running out",
                     _SHM_FIX)
    return found(evidence, Cause.shm_too_small,
                 "NCCL failed a system call (unhandled system error): in a container that is almost always "
                 "/dev/shm too small for its buffers", _SHM_FIX)


def _socket_interface(evidence: Evidence) -> Diagnosis:
    loopback = "loopback" in evidence.text or "127.0.0.1" in evidence.text
    summary = ("Gloo/NCCL could not connect the ranks across nodes" +
               (": it fell back to the loopback address" if loopback else ": it picked an interface the other node "
                "cannot reach"))
    severity = Severity.advisory if "Unable to resolve hostname" in evidence.line else Severity.fatal
    return found(evidence, Cause.socket_interface, summary,
                 Fix("set GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME to the interface that carries the nodes' own "
                     "addresses (`ip -br addr`; e.g. the 200 GbE link between two DGX Sparks), and VLLM_HOST_IP to "
                     "this node's address on it, in vLLM's environment on every node", env="NCCL_SOCKET_IFNAME"),
                 severity=severity)


def _ray_node_without_gpu(evidence: Evidence) -> Diagnosis:
    address = evidence.read(re.compile(r"current_ip='(?P<ip>[^']+)'")).get("ip")
    where = f" at {address}" if address else ""
    return found(evidence, Cause.ray_node_without_gpu,
                 f"the Ray node{where} that vLLM runs on offers it no GPU",
                 Fix("start Ray on every node from a container that sees its GPU (`ray start --num-gpus=1 ...`) and "
                     "set VLLM_HOST_IP to the address of the node that runs vLLM, so it is placed on a GPU node",
                     env="VLLM_HOST_IP"), **({"node_ip": address} if address else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.port_in_use,
              r"error while attempting to bind on address|bind\(\) to \S+ failed \(98|\[Errno 98\]"
              r"|Address already in use|EADDRINUSE|port is already allocated"
              # Go's listen on Windows (WSL's Docker Desktop, an exporter run on the Windows side).
              r"|bind: Only one usage of each socket address", _port_in_use),
    signature(Cause.shm_too_small,
              r"creating shared memory segment|ncclShmOpen|\bBus error\b", _shm_too_small),
    signature(Cause.shm_too_small, r"NCCL ?error.*unhandled system error|unhandled system error \(run ?with ?NCCL",
              _shm_too_small, CONSEQUENCE),
    signature(Cause.shm_too_small, r"/dev/shm has only \d+ bytes available", _shm_too_small, ADVISORY),
    signature(Cause.socket_interface,
              r"Gloo connectFullMesh failed|NCCL WARN Bootstrap : no socket interface found", _socket_interface),
    signature(Cause.socket_interface, r"Unable to resolve hostname to a \(local\) address", _socket_interface,
              ADVISORY),
    signature(Cause.ray_node_without_gpu, r"Current node has no GPU available", _ray_node_without_gpu),
)
