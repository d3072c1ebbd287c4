"""A key the Compose that ran does not have in its file format: "Additional property X is not allowed" (Compose 2's
schema check; Compose 1's "Additional properties are not allowed ('X' was unexpected)"). Read by the signatures and by
the fallback alike.

A key a later Compose added reads this way on an older one: the top-level `name:` (Compose 2.3.3;
TrueBlocks/trueblocks-docker#383, langchain-ai/langchain-extract#16 and ZeppelinBot/Zeppelin#409, where removing it
started the stack), `include:` (2.20.0) and a service's `develop:` (2.22.0; adrianhajdin/docker-course#2, fixed by
upgrading Compose): upgrade Compose, or remove the key. Any other key is one the format does not have where it stands:
a typo, a key indented under the wrong parent, or at the top level a service written outside `services:` (the old
version-1 file format). A GPU reservation's `devices` is compose-too-old's own reading (signatures/container.py).

stackctl's rendered docker-compose.yml names its project with a top-level `name:` (stack.yaml's `project`), so
stackctl itself needs Compose 2.3.3 or newer.
"""

from __future__ import annotations

import re

# Where Compose says the key stands: "(root)", "services.web", "volumes.data"; bare in the oldest Compose 2.
_WHERE = r"(?:(?P<{name}>\(root\)|(?:services|volumes|networks|configs|secrets)(?:\.[\w.-]+)?)\s+)?"
ADDITIONAL_PROPERTY = re.compile(
    _WHERE.format(name="where") + r"Additional property (?P<key>[\w-]+) is not allowed"
    r"|" + _WHERE.format(name="old_where") + r"Additional properties are not allowed \('(?P<old_key>[\w-]+)' was "
    r"unexpected\)")
# A GPU reservation's devices: compose-too-old's own signature reads it.
GPU_DEVICES = "devices"
# Keys a later Compose added, by where they stand: the first release that knows them.
_NEWER_KEYS = {("root", "name"): "2.3.3", ("root", "include"): "2.20.0", ("services", "develop"): "2.22.0"}
# The top level of a Compose file.
_TOP_LEVEL = "version, name, services, networks, volumes, configs, secrets, include and x- extensions"


def additional_property(text: str) -> tuple[str, str] | None:
    """(where, key) of Compose's refusal of a key: where is "root", "services.NAME", another section, or "" when
    the message does not say; None when the text has no such refusal."""
    match = ADDITIONAL_PROPERTY.search(text)
    if match is None:
        return None
    where = (match["where"] or match["old_where"] or "").replace("(root)", "root")
    return where, match["key"] or match["old_key"]


def newer_release(where: str, key: str) -> str | None:
    """The Compose release that added `key` where it stands (a bare refusal: the top level, or a service's key
    of that name), or None for a key no later Compose added there."""
    section = where.split(".", 1)[0]
    if section:
        return _NEWER_KEYS.get((section, key))
    return next((release for (_place, name), release in _NEWER_KEYS.items() if name == key), None)


def newer_key_fix(key: str, release: str) -> str:
    name_note = (" (the project name then comes from the directory, `docker compose -p NAME` or COMPOSE_PROJECT_NAME); "
                 "stackctl's own docker-compose.yml names its project with a top-level `name:` (stack.yaml's "
                 "`project`), so stackctl needs that Compose too" if key == "name" else "")
    return (f"this Compose does not know `{key}:`, which Compose {release} added: the docker compose that ran is older "
            f"than the file. Upgrade docker compose to v{release} or newer (`docker compose version` shows the compose "
            "version; Docker's own packages install a current one: `sudo apt install docker-compose-plugin` from "
            "download.docker.com, or Docker Desktop's update; a distribution's docker-compose and the Python "
            f"docker-compose 1.x lag behind), or remove `{key}:` from the file{name_note}; then `stackctl up`")


def unknown_key_fix(where: str, key: str) -> str:
    if where == "root":
        place = (f"`{key}` stands at the top level of the Compose file, where only {_TOP_LEVEL} belong: a service "
                 "written outside `services:` (the old version-1 file format), or a key indented one level too little. "
                 "Put services under `services:` and fix the indentation or the spelling")
    elif where.startswith("services."):
        place = (f"the service {where.removeprefix('services.')} has a key `{key}` that this Compose's file format does "
                 "not have there: a typo, or a key indented under the wrong parent (ports under deploy, say). Fix the "
                 "spelling or the indentation against the Compose file reference "
                 "(https://docs.docker.com/reference/compose-file/services/)")
    else:
        place = (f"the Compose file has a key `{key}`{f' under {where}' if where else ''} that this Compose's file format "
                 "does not have: a typo, or a key indented under the wrong parent; fix the spelling or the indentation")
    return (f"{place}; `docker compose config` checks the file. A key newer than this Compose is refused the same way: "
            "if the reference names it, upgrade docker compose (`docker compose version` shows the one that ran)")
