"""Network and secrets: ports free (or held by this stack), nginx upstream traps, HF_TOKEN, .env mode."""

from __future__ import annotations

import json
import re
from pathlib import Path

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn
from stackctl.envfile import ENV_MODE, read_env
from stackctl.host import PortHolder

# Where a host nginx reads enabled sites from (relative to the facts root).
NGINX_SITE_DIRS = ("/etc/nginx/sites-enabled", "/etc/nginx/conf.d")
_UPSTREAM = re.compile(r"^\s*upstream\s+([\w.-]+)\s*\{", re.MULTILINE)
_SERVER_LINE = re.compile(r"^\s*server\s+([^\s;:]+)(?::\d+)?[^;]*;", re.MULTILINE)


def check_ports(ctx: DoctorContext) -> CheckResult:
    name = "ports"
    ports = ctx.config.ports.model_dump()
    busy, denied, ours = [], [], []
    containers: set[str] | None = None
    native_groups = _native_process_groups(ctx)
    port_names = ctx.config.enabled_port_names(ctx.stack.plan.services)  # this host's services
    for key in sorted(port_names):
        probe = ctx.facts.probe_port(ports[key])
        if probe.state == "denied":
            denied.append(f"{key} {probe.port}")
        elif probe.state == "in_use":
            if containers is None and any(holder.container_id for holder in probe.holders):
                containers = ctx.facts.compose_container_ids(ctx.config.project)
            if probe.holders and all(_held_by_stack(ctx, holder, containers or set(), native_groups)
                                     for holder in probe.holders):
                ours.append(f"{key} {probe.port}")
            else:
                holder = next((f"pid {h.pid}: {h.command[:80]}" for h in probe.holders), "another process")
                busy.append(f"{key} {probe.port} ({holder})")
    if busy:
        first = busy[0].split()[1]
        return fail(name, "in use: " + "; ".join(busy),
                    f"stop what holds them (`sudo ss -ltnp 'sport = :{first}'` names it), or move the stack: "
                    "ports.<name> in stack.yaml")
    found = f"{len(port_names) - len(denied)} ports free"
    if ours:
        found += f"; held by this stack: {', '.join(ours)}"
    if denied and ctx.runtime.privileged_ports_need_root:
        return warn(name, found + f"; binding {', '.join(denied)} needs root",
                    "run the native runtime as root, grant nginx CAP_NET_BIND_SERVICE, or set ports.http / ports.https above 1024")
    return ok(name, found)


def _held_by_stack(ctx: DoctorContext, holder: PortHolder, stack_containers: set[str],
                   native_groups: set[int]) -> bool:
    """A native service runs in the process group `up` recorded for it (workers such as nginx's
    included), or names the stack directory in its command line; a Compose service runs in a
    container of the stack's project (host networking, so its sockets are the host's)."""
    if holder.container_id:
        return holder.container_id in stack_containers
    if _process_group(ctx, holder.pid) in native_groups:
        return True
    markers = {str(ctx.layout.root), str(ctx.layout.rendered)}
    return any(marker in holder.command for marker in markers)


def _native_process_groups(ctx: DoctorContext) -> set[int]:
    """The process groups the native runtime started (each service leads its own group)."""
    groups = set()
    records = ctx.layout.state / "pids"
    for record in sorted(records.glob("*.json")) if records.is_dir() else ():
        try:
            groups.add(int(json.loads(record.read_text())["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return groups


def _process_group(ctx: DoctorContext, pid: int) -> int | None:
    stat = ctx.facts.read_text(f"/proc/{pid}/stat")
    if not stat or ")" not in stat:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # state, ppid, pgrp, ...
    return int(fields[2]) if len(fields) > 2 and fields[2].isdigit() else None


def nginx_site_files(root_dirs: list[Path]) -> list[Path]:
    files = []
    for directory in root_dirs:
        try:
            entries = sorted(directory.iterdir())
        except OSError:
            continue
        for entry in entries:
            # conf.d only includes *.conf; sites-enabled includes everything (symlinks to sites-available).
            if entry.is_file() and (directory.name != "conf.d" or entry.suffix == ".conf"):
                files.append(entry)
    return files


def check_nginx_upstreams(ctx: DoctorContext) -> list[CheckResult]:
    """The duplicate-upstream trap (nginx refuses to start) and `.local` names (resolved once)."""
    directories = [ctx.facts.file(path) for path in NGINX_SITE_DIRS]
    rendered = ctx.layout.rendered / "nginx" / "stackctl-site.conf"
    files = nginx_site_files(directories) + ([rendered] if rendered.is_file() else [])
    defined: dict[str, list[Path]] = {}
    local_names: list[str] = []
    for path in files:
        try:
            text = _strip_comments(path.read_text(errors="replace"))
        except OSError:
            continue
        # stackctl's own site is loaded by its own nginx (container or -c rendered/nginx.conf),
        # never next to the host's sites: only the host's enabled files can collide.
        if path != rendered:
            for match in _UPSTREAM.finditer(text):
                defined.setdefault(match.group(1), []).append(path)
        for block in _upstream_blocks(text):
            for server in _SERVER_LINE.finditer(block):
                if server.group(1).lower().endswith(".local"):
                    local_names.append(f"{server.group(1)} in {path}")
    results = []
    duplicates = {name: paths for name, paths in defined.items() if len({p.resolve() for p in paths}) > 1}
    if duplicates:
        upstream, paths = next(iter(sorted(duplicates.items())))
        listing = " and ".join(str(path) for path in paths)
        results.append(fail("nginx-upstream", f"upstream '{upstream}' is defined in {listing}: nginx refuses to start "
                            "(duplicate upstream)", f"remove or rename one of them (e.g. `sudo rm {paths[0]}`), then `sudo nginx -t`"))
    else:
        results.append(ok("nginx-upstream", f"{len(defined)} upstream(s) in {len(files) - rendered.is_file()} enabled site file(s), no duplicate names"))
    if local_names:
        results.append(warn("nginx-local-names", "mDNS names in upstream: " + "; ".join(local_names),
                            "use an IP address: nginx resolves a `.local` name once at start, and fails to start "
                            "when mDNS answers slowly"))
    else:
        results.append(ok("nginx-local-names", "no .local names in upstreams"))
    return results


def _strip_comments(text: str) -> str:
    return re.sub(r"#[^\n]*", "", text)


def _upstream_blocks(text: str) -> list[str]:
    blocks = []
    for match in _UPSTREAM.finditer(text):
        depth, start = 1, match.end()
        for index in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                blocks.append(text[start:index])
                break
    return blocks


def check_hf_token(ctx: DoctorContext) -> CheckResult:
    name = "hf-token"
    profile = ctx.config.model_profile
    token = read_env(ctx.layout.env_file).get("HF_TOKEN") or ctx.facts.environ.get("HF_TOKEN", "")
    if not profile.gated:
        return ok(name, f"{profile.hf_id or profile.name} is not gated" + ("; HF_TOKEN set" if token else ""))
    if token:
        return ok(name, f"{profile.hf_id} is gated; HF_TOKEN set in {ctx.layout.env_file.name}")
    return fail(name, f"{profile.hf_id} is gated and HF_TOKEN is empty",
                f"accept the license on https://huggingface.co/{profile.hf_id}, create a read token "
                f"(https://huggingface.co/settings/tokens) and set HF_TOKEN= in {ctx.layout.env_file}")


def check_env_file(ctx: DoctorContext) -> CheckResult:
    name = "env-file"
    path = ctx.layout.env_file
    mode = ctx.facts.file_mode(path)
    if mode is None:
        return fail(name, f"{path} missing", "run `stackctl init` (writes generated secrets, mode 0600)")
    if mode != ENV_MODE:
        return fail(name, f"{path} mode {mode:04o}: other users can read the secrets", f"chmod 600 {path}")
    missing = [key for key in ("VLLM_API_KEY", "STACKCTL_PROXY_KEYS") if not read_env(path).get(key)]
    if missing:
        return fail(name, f"{path} lacks {', '.join(missing)}", "run `stackctl init` (keeps existing secrets, adds missing ones)")
    return ok(name, f"{path} mode 0600")
