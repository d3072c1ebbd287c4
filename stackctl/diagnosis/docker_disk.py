"""Docker's own disk running out while it writes an image's layers or a build's files: the disk of its data root
(/var/lib/docker), or on Docker Desktop (macOS, Windows) and docker-machine / Docker Toolbox the VM's virtual disk,
which fills up while the host has room (docker-db-apex-dev#23 and docker/for-win#1042, fixed by a larger VM disk;
data61/gnaf#5, a host out of disk; docker/for-mac#1587). Not hf_cache: that is where the weights go.
"""

from __future__ import annotations

import re

# A build's context or an ADD written into a layer ("Error processing tar file(exit status 1): write X: no space left
# on device"), with or without "failed to register layer" before it.
TAR_FILE_FULL = re.compile(r"Error processing tar file\(exit status \d+\):.*no space left on device", re.IGNORECASE)
# The same error when Docker unpacks a pulled image: "failed to register layer: ...".
_REGISTERING = re.compile(r"failed to register layer", re.IGNORECASE)


def tar_file_full(text: str) -> bool:
    return TAR_FILE_FULL.search(text) is not None


def writing_what(line: str) -> str:
    """What Docker was writing when its disk ran out, in words."""
    return ("writing a build's files into a layer" if tar_file_full(line) and not _REGISTERING.search(line) else
            "unpacking an image")


def docker_disk_fix() -> str:
    return ("free space where Docker keeps images (`docker system df`; `docker image prune` removes unused ones) or "
            "move Docker's data-root to a larger disk (/etc/docker/daemon.json); on Docker Desktop (macOS, Windows) or "
            "docker-machine / Docker Toolbox, Docker's disk is the VM's virtual disk, not the host's free space: prune "
            "inside it or enlarge it (Docker Desktop: Settings, Resources, Disk image size; docker-machine: a new "
            "machine with a larger --virtualbox-disk-size); then `stackctl up`; the NGC vLLM image needs about 20 GB")
