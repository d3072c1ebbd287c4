"""A process's open-file limit (RLIMIT_NOFILE) by its three ways to fail: read by the open-files signatures
and by the fallback alike.

- the limit reached while running: "too many open files" (Go's "socket: too many open files", "accept4: too
  many open files", Python's "[Errno 24]", EMFILE): every socket and file counts, and a Prometheus with many
  targets or TSDB blocks passes the common soft limit of 1024 (prometheus#1873, prometheus-k8s-operator#498,
  ansible-blackbox-exporter#63): raise the service's limit where it starts (systemd's LimitNOFILE=, Docker's
  `--ulimit nofile=`/Compose's `ulimits: nofile:`);
- supervisord's minfds above what its environment allows ("The minimum number of file descriptors required to
  run this process is N as per the "minfds" ... will only allow you to open M"): raise the environment's limit
  (in a container `--ulimit nofile=N:N`, under systemd LimitNOFILE=N, in a shell `ulimit -n`) or lower minfds
  (CodeAnalysis#1149, Oefenweb/ansible-supervisor#49, a fabric deploy);
- systemd refusing a unit's limit ("Failed to adjust resource limit LimitNOFILE: Operation not permitted", then
  "Failed at step LIMITS spawning X"): LimitNOFILE=infinity (or a number) above the kernel's fs.nr_open, or a
  user manager raising past its own hard limit: set a number the host allows, e.g. LimitNOFILE=65535
  (cloudalchemy/ansible-prometheus#190, containerd#4423).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOO_MANY_OPEN = re.compile(r"\btoo many open files\b|\[Errno 24\]|\bEMFILE\b", re.IGNORECASE)
# A warning that the limit could cause the error is no failure: vLLM says at every start on a host whose
# hard limit it cannot raise to its wish "This can cause fd limit errors like `OSError: [Errno 24] Too many
# open files`" (the words before the mention, in its sentence).
_FORESEEN = re.compile(r"\b(?:can|could|may|might) cause\b[^.]*$", re.IGNORECASE)
MINFDS = re.compile(r"minimum number of file descriptors required to run this process is (?P<minimum>\d+) as per the "
                    r"\W?minfds\W? (?:command-line argument|.*?setting)(?:.*?will only allow you to open "
                    r"(?P<allowed>\d+))?", re.IGNORECASE)
LIMIT_REFUSED = re.compile(r"(?:(?P<unit>[\w@.-]+\.service): )?(?:Failed to adjust resource limit (?P<limit>Limit\w+): "
                           r"Operation not permitted|Failed at step LIMITS spawning (?P<program>\S+): Operation not "
                           r"permitted)")
# What a "too many open files" line was doing: dialling, accepting, opening a path.
_DOING = re.compile(r"(?P<action>dial|accept4?|open|socket)\b[^:]*?(?P<target>[\w./-]+:\d+|/[\w./-]+)?:"
                    r"(?: socket:)? too many open files", re.IGNORECASE)

# Where stackctl's services get their limit from, for each runtime.
_WHERE_STACKCTL = (
    "stackctl's Compose runtime starts each container with Docker's default limit (containerd's, often 1024 soft "
    "on Docker 25 and later): raise it per service with `ulimits: nofile: {soft: 65535, hard: 65535}` in an "
    "override file passed to `docker compose -f` (stackctl has no stack.yaml key for it), or for every "
    "container with `\"default-ulimits\": {\"nofile\": {\"Name\": \"nofile\", \"Soft\": 65535, \"Hard\": 65535}}` "
    "in /etc/docker/daemon.json and `sudo systemctl restart docker`; the native runtime's programs inherit the "
    "limit of the shell that ran `stackctl up` through supervisord (`ulimit -n 65535` first, or "
    "LimitNOFILE=65535 in a drop-in for the unit `stackctl systemd install` writes)")


@dataclass(frozen=True)
class OpenFilesLimit:
    kind: str  # "exhausted", "minfds", "refused"
    detail: str  # what the line names: a target, the minfds and allowed counts, the limit systemd refused
    minimum: int | None = None
    allowed: int | None = None


def open_files_limit(text: str) -> OpenFilesLimit | None:
    """How `text` says a process's open-file limit failed it, or None."""
    if (match := MINFDS.search(text)) is not None:
        allowed = int(match["allowed"]) if match["allowed"] else None
        return OpenFilesLimit("minfds", "minfds", int(match["minimum"]), allowed)
    if (match := LIMIT_REFUSED.search(text)) is not None:
        return OpenFilesLimit("refused", match["limit"] or match["program"] or "")
    if (match := TOO_MANY_OPEN.search(text)) is not None and not _FORESEEN.search(text, 0, match.start()):
        doing = _DOING.search(text)
        detail = f"{doing['action']} {doing['target']}" if doing and doing["target"] else ""
        return OpenFilesLimit("exhausted", detail)
    return None


def open_files_fix(limit: OpenFilesLimit, service: str = "") -> str:
    who = service or "the service"
    if limit.kind == "minfds":
        wanted = limit.minimum or 65535
        allowed = f" (it allows {limit.allowed})" if limit.allowed else ""
        return (f"supervisord's minfds ({wanted}) asks for more open files than its environment allows{allowed}: it "
                "may raise only the soft limit up to the hard one, not the hard limit itself unless it runs as root. "
                f"Raise the limit where supervisord starts: in a container `docker run --ulimit nofile={wanted}:{wanted}` "
                f"(Compose: `ulimits: nofile: {{soft: {wanted}, hard: {wanted}}}`; the host's `ulimit -n` does not reach "
                f"a container), under systemd LimitNOFILE={wanted} in its unit (then `systemctl daemon-reload`), in a "
                f"shell `ulimit -n {wanted}` before it; or lower minfds= under [supervisord] to what the environment "
                "allows. stackctl's own supervisord.conf (native runtime) sets no minfds (supervisord's default, "
                "1024), so this is a supervisord configuration of the host's own or an image's")
    if limit.kind == "refused":
        named = limit.detail if limit.detail.startswith("Limit") else "a Limit*= setting (LimitNOFILE= the usual one)"
        return (f"systemd could not apply {named} of the unit before starting it (status=205/LIMITS): "
                "LimitNOFILE=infinity asks for more than the kernel allows a process (`sysctl fs.nr_open`, often "
                "1048576), or a user manager (`systemctl --user`) raises past its own hard limit. Set a number the "
                "host allows instead of infinity, e.g. LimitNOFILE=65535, in a drop-in (`sudo systemctl edit "
                "UNIT`, under [Service]), then `sudo systemctl daemon-reload` and start it again; limits.conf "
                "(pam_limits) does not apply to services systemd starts")
    doing = f" ({limit.detail})" if limit.detail else ""
    return (f"{who} ran out of file descriptors{doing}: every socket and file it holds counts against its open files "
            "limit (RLIMIT_NOFILE, `cat /proc/PID/limits` shows it; 1024 is a common soft limit, too few for a "
            "Prometheus scraping many targets or holding many TSDB blocks). Raise the limit where the service "
            "starts: under systemd LimitNOFILE=65535 in its unit (a drop-in, `systemctl daemon-reload`, restart; "
            "limits.conf does not apply to services), in Docker `--ulimit nofile=65535:65535`. " + _WHERE_STACKCTL
            + "; where the count keeps growing at any limit, the service leaks connections: look for a target or "
            "client that never closes them")
