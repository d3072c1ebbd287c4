"""node-exporter's collectors that need more than the exporter's user or its security profile allow: AppArmor
denying the ptrace read that process metrics take, systemd's private socket, which only root may use, and the
kernel's files of /proc and /sys that this kernel lets only root read (node_kernel_files). The exporter keeps serving;
those collectors' metrics are missing."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.node_kernel_files import DENIED, denied, denied_fix
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

# The kernel's audit record (atmosphere#3493: cri-containerd.apparmor.d denying node_exporter's ptrace read).
_PTRACE_DENIED = re.compile(r"apparmor=\"DENIED\" operation=\"ptrace\".*?profile=\"(?P<profile>[^\"]+)\""
                            r"(?:.*?comm=\"(?P<comm>[^\"]+)\")?")
# systemd refusing a non-root client on /run/systemd/private, and the collector's side of it (node_exporter#1246:
# the connection reset, or refused). Not the socket missing ("connect: no such file or directory"): no systemd runs
# there (a container, a CI machine), which no user changes.
_PRIVATE_SOCKET = (r"Incoming private connection from unprivileged client, refusing"
                   r"|couldn't get dbus connection: .*?/run/systemd/private: .*?"
                   r"(?:connection reset by peer|permission denied|operation not permitted)")


def _ptrace_denied(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_PTRACE_DENIED)
    profile, program = values.get("profile", "the container's AppArmor profile"), values.get("comm", "the exporter")
    return found(evidence, Cause.apparmor_ptrace_denied,
                 f"AppArmor ({profile}) denies {program} the ptrace read it takes to read other processes' details",
                 Fix(f"the AppArmor profile {profile} denies {program} reading other processes (ptrace read), which "
                     "process metrics take: run the exporter unconfined, `security_opt: [\"apparmor:unconfined\"]` on "
                     "the node-exporter service in an override file passed to `docker compose -f` (`docker run "
                     "--security-opt apparmor=unconfined`; Kubernetes: the container's appArmorProfile type "
                     "Unconfined), or load a profile that allows `ptrace (read)`, or turn off the collector that "
                     "needs it; the exporter itself keeps serving"),
                 severity=Severity.advisory, profile=profile)


def _private_socket_refused(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.systemd_private_socket_refused,
                 "node-exporter's systemd collector connects to systemd's private socket, which refuses a non-root "
                 "client",
                 Fix("the systemd collector talks to systemd through /run/systemd/private, which requires root: run "
                     "node_exporter as root (User=root in its unit), or drop the collector (--no-collector.systemd; "
                     "Debian's prometheus-node-exporter turns it on by default), or use a node_exporter release whose collector "
                     "uses the system bus instead (--collector.systemd.private off); the exporter itself keeps serving"),
                 severity=Severity.advisory)


def _kernel_file_denied(evidence: Evidence) -> Diagnosis:
    denials = [found_denial for line in evidence.lines if (found_denial := denied(line))]
    if not denials:
        raise ValueError("no denial on this line")
    collectors = ", ".join(dict.fromkeys(collector for collector, _path in denials))
    return found(evidence, Cause.node_exporter_kernel_file_denied,
                 f"node-exporter's {collectors} collector{'s' if ',' in collectors else ''} may not read the kernel's "
                 f"{', '.join(dict.fromkeys(path for _collector, path in denials))}: readable by root only here, and "
                 "node-exporter runs as another user; the other collectors keep working",
                 Fix(denied_fix(denials)), severity=Severity.advisory, collectors=collectors)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.apparmor_ptrace_denied, r"apparmor=\"DENIED\" operation=\"ptrace\"", _ptrace_denied, ADVISORY),
    signature(Cause.systemd_private_socket_refused, _PRIVATE_SOCKET, _private_socket_refused, ADVISORY),
    signature(Cause.node_exporter_kernel_file_denied, unnamed(DENIED), _kernel_file_denied, ADVISORY),
)
