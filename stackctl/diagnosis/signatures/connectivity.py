"""Ports, shared memory and the links between processes and nodes: a port already taken (vLLM's own
reservation of its API port right after a crash: vllm_port_reservation), /dev/shm
too small for NCCL, an NCCL system error of another cause (buffers the network cannot register, an
NCCL_* variable set away from its default) or of none the log names, Gloo/NCCL on the wrong
interface, a Ray node without a GPU."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, CONSEQUENCE, Signature, found, signature
from stackctl.diagnosis.stack_keys import port_key
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity
from stackctl.diagnosis.vllm_port_reservation import reservation_fix, reserved_by_vllm

# uvicorn (vLLM, the filter-proxy), nginx, Go servers (Prometheus, Grafana, the exporters) and
# Docker's port publishing.
_BOUND_PORT = re.compile(
    r"bind on address \('?[^',]*'?, (?P<uvicorn>\d+)|bind\(\) to \S*:(?P<nginx>\d+) failed"
    r"|listen tcp[46]? \S*:(?P<go>\d+): bind|Bind for \S*:(?P<docker>\d+)(?:: unexpected error| failed)")
# vLLM picks free ports for its own workers and torch.distributed; those are not stack.yaml's.
# Docker Compose names the service whose port it could not publish.
COMPOSE_SERVICE = re.compile(r"Cannot start service (?P<started>[\w-]+)|ERROR: for (?P<named>[\w-]+) ")
_INTERNAL_PORT = re.compile(r"get_open_port|TCPStore|c10d|rendezvous")
_API_SOCKET = re.compile(r"create_server_socket|setup_server|serve_http|uvicorn")


def _port_in_use(evidence: Evidence) -> Diagnosis:
    numbers = evidence.read(_BOUND_PORT)
    port = int(next(iter(numbers.values()), 0)) or None
    service = evidence.context.service
    internal = any(_INTERNAL_PORT.search(line) for line in evidence.lines[max(0, evidence.index - 6):evidence.index + 1])
    if port is None and not internal and evidence.nearest_before({"api": _API_SOCKET}):
        port = evidence.settings.port
    if port is None and reserved_by_vllm(evidence.lines, evidence.index):
        port = evidence.settings.port
        return found(evidence, Cause.port_in_use,
                     "vLLM could not reserve its API port: right after a crash or restart, the port is held for about "
                     "a minute by the connections of the vLLM before it (vLLM 0.6.2 and 0.6.3), or by another process",
                     Fix(reservation_fix(port), key="ports.vllm"), **({"port": port} if port else {}))
    if port is None and (internal or service == "vllm"):
        return found(evidence, Cause.port_in_use,
                     "a port vLLM opens for its own workers is taken: another vLLM is most likely still running",
                     Fix("stop the other vLLM (`stackctl down`; `ss -ltnp` shows who listens), then `stackctl up`"))
    if service in ("docker", "compose"):
        named = evidence.read(COMPOSE_SERVICE) or next(
            (values for line in evidence.lines if (values := _groups(COMPOSE_SERVICE, line))), {})
        service = next(iter(named.values()), service)
    key = port_key(port, service, evidence.context.port_keys)
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
    return found(evidence, Cause.shm_too_small,
                 "a process died with a bus error: in a container that is almost always /dev/shm running out",
                 _SHM_FIX)


# NCCL states the variables it was given once NCCL_DEBUG=INFO is on: "NCCL_BUFFSIZE set by environment to N."
_NCCL_SET = re.compile(r"\b(?P<name>NCCL_[A-Z0-9_]+) set by environment to (?P<value>[^\s.]+)")
# NCCL's own words when the network (InfiniBand, RoCE, EFA) may not pin its buffers.
_REGISTRATION = re.compile(r"NCCL WARN Call to ibv_reg_\w*mr\w* failed|NCCL WARN NET/\w+ Unable to register memory")
_LOCKED = ("the locked-memory limit (`ulimit -l` must say unlimited where vLLM runs: under Compose add `ulimits: "
           "{memlock: -1}` to the vllm service, natively raise memlock in /etc/security/limits.conf)")


def _nccl_system_error(evidence: Evidence) -> Diagnosis:
    """NCCL's "unhandled system error" names no call: a shared-memory segment, the network's pinned
    buffers and a variable set away from its default all end in it. What the log shows decides."""
    set_vars = {match["name"]: match["value"] for line in evidence.lines for match in _NCCL_SET.finditer(line)}
    registration = _REGISTRATION.search(evidence.line) or any(_REGISTRATION.search(line) for line in evidence.lines)
    if registration:
        if "NCCL_BUFFSIZE" in set_vars:
            size = set_vars["NCCL_BUFFSIZE"]
            return found(evidence, Cause.nccl_system_error,
                         f"the network could not register NCCL's buffers: NCCL_BUFFSIZE is set to {size}, above "
                         "NCCL's default (4 MiB), and the pinned memory it needs is refused",
                         Fix(f"remove NCCL_BUFFSIZE (set to {size}) from vllm.environment in stack.yaml and from the "
                             "environment stackctl runs in, so NCCL uses its default value; if it still fails, raise "
                             f"{_LOCKED}", key="vllm.environment", env="NCCL_BUFFSIZE"), buffsize=size)
        return found(evidence, Cause.nccl_system_error,
                     "the network (InfiniBand/RoCE) could not register NCCL's buffers: Cannot allocate memory is "
                     "the locked-memory limit, or buffers larger than the default",
                     Fix(f"raise {_LOCKED}; and leave NCCL_BUFFSIZE unset (its default value, 4 MiB) in "
                         "vllm.environment, since a larger buffer needs more pinned memory",
                         key="vllm.environment", env="NCCL_BUFFSIZE"))
    named = [name for name in set_vars if name not in ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS")]
    suspects = (f" This log shows {', '.join(f'{name}={set_vars[name]}' for name in named)} set: remove "
                f"{'them' if len(named) > 1 else 'it'} to use the default value first." if named else "")
    return found(evidence, Cause.nccl_system_error,
                 "NCCL failed a system call (unhandled system error), and the log does not say which",
                 Fix("set NCCL_DEBUG=INFO under vllm.environment in stack.yaml and start again: NCCL's `NCCL WARN` line "
                     "then names the call. The usual ones: /dev/shm too small for its segments (\"Error while creating "
                     "shared memory segment\": under Compose keep `ipc: host` or `shm_size: 16gb` on the vllm service); "
                     "an NCCL_* variable set away from its default, such as NCCL_BUFFSIZE above 4 MiB (\"ibv_reg_mr "
                     f"... Cannot allocate memory\": unset it to use the default value); {_LOCKED} for "
                     f"InfiniBand.{suspects}", key="vllm.environment", env=named[0] if named else "NCCL_DEBUG"),
                 **({"set": ", ".join(named)} if named else {}))


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
              # uvicorn says this for any bind error: "[Errno 99] ... cannot assign requested address" is an
              # address this host lacks (listen_address), not a port in use.
              r"error while attempting to bind on address(?!.*cannot assign requested address)"
              r"|bind\(\) to \S+ failed \(98|\[Errno 98\]"
              r"|Address already in use|EADDRINUSE|port is already allocated"
              # Go's listen on Windows (WSL's Docker Desktop, an exporter run on the Windows side).
              r"|bind: Only one usage of each socket address", _port_in_use),
    signature(Cause.shm_too_small,
              r"creating shared memory segment|ncclShmOpen|\bBus error\b", _shm_too_small),
    # The network refusing to pin NCCL's buffers names its own cause; the bare system error does not.
    signature(Cause.nccl_system_error, _REGISTRATION.pattern, _nccl_system_error),
    signature(Cause.nccl_system_error, r"NCCL ?error.*unhandled system error|unhandled system error \(run ?with ?NCCL"
              r"|NCCL_ERROR_SYSTEM_ERROR", _nccl_system_error, CONSEQUENCE),
    signature(Cause.shm_too_small, r"/dev/shm has only \d+ bytes available", _shm_too_small, ADVISORY),
    signature(Cause.socket_interface,
              r"Gloo connectFullMesh failed|NCCL WARN Bootstrap : no socket interface found", _socket_interface),
    signature(Cause.socket_interface, r"Unable to resolve hostname to a \(local\) address", _socket_interface,
              ADVISORY),
    signature(Cause.ray_node_without_gpu, r"Current node has no GPU available", _ray_node_without_gpu),
)
