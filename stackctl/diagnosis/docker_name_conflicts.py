"""A container name another container already holds, read by its signature and by the fallback alike.

Docker gives each name to one container: `docker run --name X` (or Compose, creating a service's container) refuses
while a container of that name exists, stopped or running: 'Conflict. The container name "/X" is already in use by
container "ID". You have to remove (or rename) that container to be able to reuse that name.' (docker.kitematic#3737,
docker/docs#17816: remove the old container; Compose: "Cannot create container for service database: Conflict. ...",
vanilla/vanilla-docker#29, fixed by `docker container prune`). Before Docker 1.13 the words were 'Conflict. The name
"/X" is already in use by container ID', and before 1.5 'Conflict, The name X is already assigned to ID'.

The old container is removed (`docker rm X`, `docker rm -f X` while it runs), renamed (`docker rename`), or pruned
with every other stopped container; a Compose project's own containers go with `docker compose down`. stackctl's
containers are PROJECT-SERVICE-1, PROJECT being stack.yaml's `project` (stackctl by default): one of those names
held by another container is another stack, or a container left from a run of another Compose project directory,
with the same project.
"""

from __future__ import annotations

import re

from stackctl.config import SERVICE_NAMES

NAME_TAKEN = re.compile(r"Conflict[.,] The (?:container )?name \\?\"?/?(?P<name>[\w.-]+)\\?\"? is already "
                        r"(?:in use by container|assigned to) \\?\"?(?P<container>[0-9a-f]+)?")
# Compose's container name for a service: PROJECT-SERVICE-N (Compose 2), PROJECT_SERVICE_N (Compose 1).
_COMPOSE_NAME = re.compile(r"^(?P<project>[a-z0-9][a-z0-9_-]*?)[-_](?P<service>" +
                           "|".join(re.escape(name) for name in SERVICE_NAMES) + r")[-_]\d+$")


def name_taken(text: str) -> re.Match[str] | None:
    """Docker's refusal of a name another container holds, or None."""
    return NAME_TAKEN.search(text)


def stackctl_service(name: str) -> str | None:
    """The stackctl service whose Compose container `name` is (stackctl-vllm-1 -> vllm), or None."""
    match = _COMPOSE_NAME.match(name)
    return match["service"] if match else None


def name_taken_fix(name: str, container: str | None) -> str:
    held = f"container {container[:12]}" if container else "another container"
    own = stackctl_service(name)
    stackctl = (f"{name} is the name stackctl gives its {own} service (PROJECT-SERVICE-1, PROJECT from stack.yaml's "
                "`project`): another stack with the same project holds it, or a container left from a run of "
                "another directory: `stackctl down` in that stack, or give this stack its own `project` in stack.yaml"
                if own else
                "stackctl names its containers PROJECT-SERVICE-1 (stack.yaml's `project`), so a name of another form "
                "is another program's container")
    return (f"the container name {name} is already taken by {held}, left from an earlier run (stopped or still "
            f"running): Docker gives each name to one container. `docker ps -a --filter name={name}` shows it; remove "
            f"it with `docker rm {name}` (`docker rm -f {name}` if it still runs), or rename it (`docker rename {name} "
            f"{name}-old`) to keep it; `docker container prune` removes every stopped container. Containers of a "
            "Compose project go with `docker compose down` in the directory that started them (a fixed "
            f"container_name is reused by every run). {stackctl}; then start it again (`stackctl up`)")
