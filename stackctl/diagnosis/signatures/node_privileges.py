"""node-exporter's collectors that need more than the exporter's user or its security profile allow: AppArmor
denying the ptrace read that process metrics take, and systemd's private socket, which only root may use. The
exporter keeps serving; those collectors' metrics are missing."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
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


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.apparmor_ptrace_denied, r"apparmor=\"DENIED\" operation=\"ptrace\"", _ptrace_denied, ADVISORY),
    signature(Cause.systemd_private_socket_refused, _PRIVATE_SOCKET, _private_socket_refused, ADVISORY),
)
