"""A healthcheck (or `docker exec`) running a command its image lacks, read by its signature and by the fallback.

Docker runs a healthcheck inside the container: a HEALTHCHECK of the image, or Compose's `healthcheck: test:`. A
command the image does not have fails every check and the container stays "starting", then "unhealthy". In the exec
form (`test: ["CMD", "curl", ...]`) runc refuses it: 'OCI runtime exec failed: exec failed: ... exec: "curl":
executable file not found in $PATH: unknown' (DanielWinks/pwrstat_docker#9, dunglas/mercure#1004: `RUN apk add
--no-cache curl`, or a wget check; BerriAI/litellm#9479: a wget check); in the shell form (`CMD-SHELL`, a Dockerfile's
`HEALTHCHECK CMD curl ...`) the shell says so in the check's output: '"Output": "/bin/sh: 1: curl: not found\\n"'
(fescobar/allure-docker-service-ui#12: curl added to the image). Slim and Alpine images often ship neither curl nor
wget. The same refusal follows `docker exec CONTAINER bash` on an image without bash.

The fix is the image or the check: install the command in the Dockerfile (`apt-get install -y curl`, `apk add
--no-cache curl`), or check with one the image has (wget, the application's own language, a /dev/tcp probe in bash).
stackctl renders no Docker healthcheck: its health gates probe each service from the host.
"""

from __future__ import annotations

import re

# nvidia-smi and the runtime's hook missing are the NVIDIA runtime's failures (gpu_runtime), not the image's.
_RUNTIME_COMMANDS = r"(?!nvidia-smi\\?\"|nvidia-container-runtime-hook\\?\")"
# runc's refusal of an exec into a running container (a healthcheck or `docker exec`), before the reason, which a
# paste may wrap onto the next line.
EXEC_REFUSED = re.compile(r"OCI runtime exec failed: exec failed: .*?exec: \\?\"" + _RUNTIME_COMMANDS +
                          r"(?P<command>[\w./-]+)\\?\":")
_NOT_FOUND = re.compile(r"executable file not found in \$PATH|no such file or directory")
# A shell-form check's output as `docker inspect` shows it (its JSON, or json_pp's spacing).
SHELL_NOT_FOUND = re.compile(r"\"Output\"\s*:\s*\"(?:/bin/|/usr/bin/)?(?:ba|da)?sh: (?:\d+: |line \d+: )?"
                             r"(?P<command>[\w./-]+): (?:command )?not found")
_HEALTH = re.compile(r"\"(?:Health|FailingStreak)\"|\bunhealthy\b|healthcheck|HEALTHCHECK", re.IGNORECASE)
# Commands a healthcheck calls to ask a service over HTTP.
_HTTP_CLIENTS = ("curl", "wget")


def command_missing(text: str) -> str | None:
    """The command a healthcheck or `docker exec` could not find in the container, or None."""
    shell = SHELL_NOT_FOUND.search(text)
    if shell:
        return shell["command"]
    refused = EXEC_REFUSED.search(text)
    if refused and _NOT_FOUND.search(text, refused.end()):
        return refused["command"]
    return None


def is_healthcheck(text: str, command: str) -> bool:
    """Whether the missing command ran as a healthcheck: the log shows Docker's health record, or it is an HTTP
    client (what healthchecks call; `docker exec` is for a shell)."""
    return bool(_HEALTH.search(text)) or command.rsplit("/", 1)[-1] in _HTTP_CLIENTS


def command_missing_fix(command: str, healthcheck: bool) -> str:
    name = command.rsplit("/", 1)[-1]
    alternatives = ("`wget -q --spider http://localhost:PORT/health` where the image has wget, the application's own "
                    "language (`python -c \"import urllib.request; urllib.request.urlopen('http://localhost:PORT/"
                    "health')\"`), or bash's `exec 3<>/dev/tcp/localhost/PORT`"
                    if name in _HTTP_CLIENTS else "a command the image has (`sh` where there is no bash)")
    install = (f"install {name} in the image: in its Dockerfile `RUN apt-get update && apt-get install -y "
               f"--no-install-recommends {name}` (Debian, Ubuntu) or `RUN apk add --no-cache {name}` (Alpine), then "
               "rebuild it")
    if healthcheck:
        return (f"the container's healthcheck runs `{name}` inside the container, and its image does not have it, so "
                "every check fails and the container never becomes healthy (the service itself may be fine): "
                f"{install}; or change the check (the image's HEALTHCHECK, or `healthcheck: test:` in the compose "
                f"file) to {alternatives}. stackctl renders no Docker healthcheck (its health gates probe each service "
                "from the host): this one comes from the image or an override file")
    return (f"`{name}` is not in the container's image, so Docker cannot run it there (`docker exec`, or a "
            f"healthcheck): use {alternatives}, or {install}")
