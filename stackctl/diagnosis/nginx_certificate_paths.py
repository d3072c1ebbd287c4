"""A certificate path nginx cannot find because it is a path on the host, not inside nginx's container.

certbot keeps its certificates under live/NAME/ in its configuration directory, /etc/letsencrypt. A
configuration naming live/NAME/ under another root (mailserver#112: /etc/nginx/conf/certs/live/DOMAIN/key.pem)
names a letsencrypt directory that was mounted or copied somewhere else: inside a container nginx reads only
what its volumes mount, at their mount points, so the path must be the one inside the container (the right-hand
side of `-v HOST:CONTAINER`), not the host's. Under /etc/letsencrypt itself, where stackctl mounts
letsencrypt_dir, a missing file is a certificate not issued (yet): that keeps its reading.
"""

from __future__ import annotations

import re

# live/NAME/FILE under some root: certbot's layout, wherever the directory went.
_LIVE = re.compile(r"^(?P<root>/[\w./-]*?)/live/[^/\s]+/[^/\s]+$")
_CERTBOT_HOME = "/etc/letsencrypt"


def mounted_elsewhere(path: str) -> str | None:
    """The root a certbot live/ path sits under where that root is not certbot's own; None otherwise."""
    match = _LIVE.match(path)
    if match is None or match["root"] == _CERTBOT_HOME:
        return None
    return match["root"]


def container_path_fix(path: str, root: str) -> str:
    return (f"nginx looked for {path}, certbot's live/ directory under {root}: a path that exists on the host but not "
            "where nginx looks for it. nginx in a container sees only what its volumes mount, at their mount points: "
            "name the file by its path inside the container (the volume's mount point, the right-hand side of `-v "
            "HOST:CONTAINER` or of a Compose `volumes:` entry, followed by live/NAME/...), or mount the host directory "
            f"at {root}; mount the whole letsencrypt directory, not live/ alone (live/ links into archive/). `docker "
            f"exec CONTAINER ls -l {path}` shows what nginx sees. stackctl's own nginx mounts letsencrypt_dir at "
            "/etc/letsencrypt and names its files there")
