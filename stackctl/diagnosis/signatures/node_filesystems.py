"""node-exporter's filesystem collector: a mount point it may not stat, one that is gone or is no path
(a namespace's entry such as net:[4026532221], a container's or an unmounted share's mount), and a
/proc/1/mounts it may not read. All are harmless for the host's own disks: the collector skips that
mount and the others keep working. And the diskstats collector without udev's database (its device
labels)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

# 0.15's "for \"PATH\"" and 1.x's logfmt "rootfs=PATH" wordings.
_STATFS_PATH = re.compile(r"statfs\(\) system call(?: for \\?\"(?P<path>[^\"\\]+)|\"? rootfs=(?P<rootfs>\S+))")
# Mounts node-exporter has no business stat-ing on a Docker host (other containers' and namespaces'
# own mounts, the kernel's pseudo filesystems): node-exporter 1.x strips --path.rootfs from the paths.
_MOUNTS_EXCLUDE = r"^/(dev|proc|run|sys|var/lib/docker/.+|var/lib/kubelet/.+|var/lib/containers/.+)($|/)"
# node-exporter 1.x's default filesystem types to skip, which a given flag replaces (so it repeats them):
# proc and nsfs are the ones a namespace's mount entry (net:[N]) has; 0.15 skipped neither.
_FS_TYPES_EXCLUDE = (r"^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|iso9660"
                     r"|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|sysfs|tracefs)$")
# A namespace's mount entry: a proc or nsfs mount whose mount point /proc/mounts lists as TYPE:[INODE].
_NAMESPACE_ENTRY = re.compile(r"^\w+:\[\d+\]$")
_WHERE_FLAGS_GO = ("to node-exporter's command in compose/node-exporter.yml (stackctl mounts the host's / read-only "
                   "at /host with --path.rootfs=/host, so the paths are the host's), then `stackctl up`")


def _statfs_path(evidence: Evidence) -> str:
    values = evidence.read(_STATFS_PATH)
    return values.get("path") or values.get("rootfs") or ""


def _node_exporter_statfs_denied(evidence: Evidence) -> Diagnosis:
    path = _statfs_path(evidence)
    return found(evidence, Cause.node_exporter_statfs_denied,
                 f"node-exporter's filesystem collector may not stat {path or 'a mount point'} (permission denied): "
                 "a mount of another container, a network namespace or the kernel, not a disk of the host",
                 Fix("harmless for the host's own disks; to stop it, exclude those mount points from the filesystem "
                     f"collector: add `--collector.filesystem.mount-points-exclude={_MOUNTS_EXCLUDE}` (node-exporter "
                     f"before 1.0: --collector.filesystem.ignored-mount-points) {_WHERE_FLAGS_GO}",
                     flag="--collector.filesystem.mount-points-exclude"),
                 severity=Severity.advisory, **({"path": path} if path else {}))


def _node_exporter_statfs_missing(evidence: Evidence) -> Diagnosis:
    """The collector reads the mount table, then stats each mount point: a namespace's entry (a proc or
    nsfs mount listed as net:[N]) is no path at all, and a container's or an unmounted share's mount
    can be gone between the two."""
    path = _statfs_path(evidence)
    if _NAMESPACE_ENTRY.match(path):
        return found(evidence, Cause.node_exporter_statfs_missing,
                     f"node-exporter's filesystem collector tried to stat {path}, a network namespace's mount entry "
                     "(a proc or nsfs mount, listed by the mount table without a path), not a disk of the host",
                     Fix("harmless for the host's own disks; node-exporter before 0.16 did not skip proc and nsfs "
                         "mounts: use a newer node-exporter (images.node-exporter; stackctl's is 1.x, which skips them "
                         "by default), or exclude those filesystem types with the updated filter flags: add "
                         f"`--collector.filesystem.fs-types-exclude={_FS_TYPES_EXCLUDE}` (before 1.0: "
                         f"--collector.filesystem.ignored-fs-types) {_WHERE_FLAGS_GO}",
                         key="images.node-exporter", flag="--collector.filesystem.fs-types-exclude"),
                     severity=Severity.advisory, path=path)
    return found(evidence, Cause.node_exporter_statfs_missing,
                 f"node-exporter's filesystem collector found {path or 'a mount point'} in the mount table but not on "
                 "disk: a container's, a pod's or an unmounted share's mount that was gone by the time it was "
                 "stat'ed, not a disk of the host",
                 Fix("harmless for the host's own disks (the mount is skipped); to stop it, exclude those mount points "
                     f"from the filesystem collector: add `--collector.filesystem.mount-points-exclude={_MOUNTS_EXCLUDE}` "
                     "(extend it with the directory the log names; before 1.0: "
                     "--collector.filesystem.ignored-mount-points), or their filesystem types with "
                     f"--collector.filesystem.fs-types-exclude, {_WHERE_FLAGS_GO}",
                     flag="--collector.filesystem.mount-points-exclude"),
                 severity=Severity.advisory, **({"path": path} if path else {}))


_PROC_MOUNTS = re.compile(r"open (?P<path>\S*/proc/1/mounts): (?P<error>permission denied|no such file or directory)")


def _node_exporter_proc_permission(evidence: Evidence) -> Diagnosis:
    """node-exporter (0.17 and later) lists mounts from PID 1's /proc/1/mounts; its user (nobody in
    the image) or its SELinux label (container_t reading init_t) may not read it, and the filesystem
    collector fails while the others keep working."""
    said = evidence.read(_PROC_MOUNTS)
    path = said.get("path", "/proc/1/mounts")
    selinux = any("avc:" in line and "denied" in line for line in evidence.lines)
    return found(evidence, Cause.node_exporter_proc_permission,
                 f"node-exporter may not read {path} ({said.get('error', 'permission denied')}), so its filesystem "
                 f"collector reports no disks{' (SELinux denied it)' if selinux else ''}; the other collectors keep "
                 "working",
                 Fix("let node-exporter read PID 1's mounts: it needs the host's PID namespace (stackctl's service "
                     "has `pid: host`) and, on an SELinux host (Fedora, RHEL, CoreOS), a label that may read init's "
                     "/proc (`security_opt: [\"label=type:spc_t\"]` on the service); under Kubernetes or OpenShift a "
                     "privileged security context (OpenShift: an SCC that allows it); node-exporter run natively as "
                     "another user than root may not read it either (the native runtime runs it as you: harmless, "
                     "the disks are missing from the dashboard only)"),
                 severity=Severity.advisory, path=path)


_UDEV_PATH = re.compile(r"path=\"?(?P<path>/[\w./-]+)")


def _node_exporter_udev_data_missing(evidence: Evidence) -> Diagnosis:
    """node-exporter's diskstats collector reads udev's database for the disks' model, serial and WWN
    labels; it looks at --path.udev.data (default /run/udev/data), which --path.rootfs does not move, so
    in a container with the host's / under /host it finds nothing and carries on without those labels."""
    path = evidence.read(_UDEV_PATH).get("path", "/run/udev/data")
    return found(evidence, Cause.node_exporter_udev_data_missing,
                 f"node-exporter cannot open udev's database ({path}), so its disk metrics come without the "
                 "device labels (model, serial, WWN); a warning: the exporter keeps running",
                 Fix("in a container, point the diskstats collector at the host's udev data: mount /run/udev "
                     "read-only (`/run/udev:/run/udev:ro`), or, with the host's / at /host and --path.rootfs=/host "
                     "as stackctl mounts it, add --path.udev.data=/host/run/udev/data (--path.rootfs does not move it); "
                     "stackctl's compose/node-exporter.yml passes it, so a stack rendered before it did gets it with "
                     "`stackctl up`. On a host without udev (a container or WSL host, a minimal VM) there is nothing "
                     "to read and the warning is harmless", flag="--path.udev.data"),
                 severity=Severity.advisory, path=path)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.node_exporter_udev_data_missing, r"Failed to open directory, disabling udev device properties",
              _node_exporter_udev_data_missing, ADVISORY),
    # node-exporter's filesystem collector (0.15's "for PATH" and 1.x's rootfs= ... err= wordings).
    signature(Cause.node_exporter_statfs_denied,
              r"Error on statfs\(\) system call.*permission denied", _node_exporter_statfs_denied, ADVISORY),
    signature(Cause.node_exporter_statfs_missing,
              r"Error on statfs\(\) system call.*no such file or directory", _node_exporter_statfs_missing, ADVISORY),
    signature(Cause.node_exporter_proc_permission,
              r"(?:filesystem collector failed|collector failed.*name=filesystem).*open \S*/proc/1/mounts: "
              r"(?:permission denied|no such file)", _node_exporter_proc_permission, ADVISORY),
)
