"""A bind mount whose host path is the wrong type: a config file mounted where the host has a directory
(Docker creates a missing host path as an empty directory, so a file mounted before it existed is one
from then on), or the reverse. Docker refuses to start the container ("not a directory ... Are you
trying to mount a directory onto a file"), or the service starts and finds a directory where it reads
its config ("is a directory": Prometheus, Grafana, nginx, any service)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_MOUNTING = re.compile(r"mounting \\?\"(?P<source>[^\"\\]+)\\?\" to rootfs(?: at)? \\?\"(?P<target>[^\"\\]+)")
# Go's, nginx's and Python's words for a directory opened as a file.
_DIRECTORY = re.compile(r"\bread (?P<go>/[^\s:\"]+): is a directory"
                        r"|(?:pread|open)\(\) \"(?P<nginx>[^\"]+)\" failed \(21: Is a directory\)"
                        r"|IsADirectoryError: \[Errno 21\] Is a directory: '(?P<python>[^']+)'")
_RENDERED = ("stackctl writes its own mounted files (under rendered/: prometheus.yml, the nginx site) on `stackctl "
             "up`: `stackctl down`, remove the directory, then `stackctl up` writes the file afresh")


def _mount_refused(evidence: Evidence) -> Diagnosis:
    said = evidence.read(_MOUNTING)
    source, target = said.get("source", ""), said.get("target", "")
    where = f" {source} onto {target}" if source and target else ""
    return found(evidence, Cause.bind_mount_type_mismatch,
                 f"Docker could not bind-mount{where}: one side is a file and the other a directory, so the "
                 "container does not start",
                 Fix(f"check that the host path exists and is the expected type (`ls -ld {source or 'HOST_PATH'}`): "
                     "mount a file onto a file and a directory onto a directory. Docker creates a host path that "
                     "does not exist as an empty directory, so a config file mounted before it was created is a "
                     "directory from then on: remove the directory Docker made (`sudo rmdir HOST_PATH`), create the "
                     "file before `up` (copy the config file there), then start again; where the target is a "
                     f"directory in the image, mount the directory that holds the file instead. {_RENDERED}"),
                 **({"source": source, "target": target} if source and target else {}))


def _config_is_directory(evidence: Evidence) -> Diagnosis:
    said = evidence.read(_DIRECTORY)
    path = said.get("go") or said.get("nginx") or said.get("python") or "its config path"
    service = evidence.context.service
    return found(evidence, Cause.bind_mount_type_mismatch,
                 f"{service} reads {path}, which is a directory, not a file: the container's bind mount brought a "
                 "directory where the file belongs",
                 Fix(f"{path} is a directory: Docker auto-creates a bind mount's host path that did not exist as an "
                     "empty directory. On the host, stop the service, remove the directory (the mount's source: "
                     "`docker inspect --format '{{json .Mounts}}' CONTAINER` shows it; `sudo rmdir` it) and copy the "
                     "config file there, a file instead of a directory (create the file before `up`), then start it "
                     f"again; {_RENDERED}"), path=path)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.bind_mount_type_mismatch,
              r"Are you trying to mount a directory onto a file|mounting \\?\"[^\"\\]+\\?\" to rootfs.*not a directory",
              _mount_refused),
    signature(Cause.bind_mount_type_mismatch, _DIRECTORY.pattern, _config_is_directory),
)
