"""Prometheus, Grafana, node-exporter and the GPU exporter: a data directory the process may not
write (Grafana's plugins included), a TSDB another Prometheus holds or a block left half-written,
scrapes that run past their timeout, a configuration file Prometheus cannot parse or may not read
(Prometheus 3's refusals told apart: an Alertmanager v1 section, a duplicate job_name, a field newer
than the image),
a provisioning file Grafana refuses, a provisioned dashboard file that is not valid JSON, plugins Grafana cannot download, a Prometheus datasource
Grafana cannot reach, an admin password Grafana ignores once its database exists, mounts
node-exporter may not stat, profiling fields DCGM cannot watch on this GPU, a grafana.ini missing from
the image, and a flag a Go exporter's version does not have (node-exporter's renamed or newer flags)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, Signature, found, images_key, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

# Compose keeps each service's data in a named volume of the project (`down` keeps it).
_VOLUME_NOTE = ("under Compose it is the project's named volume (`docker volume ls`; `docker volume rm` it to start "
                "afresh, losing the history), natively the stack's data/ directory")


def _prometheus_storage_permission(evidence: Evidence) -> Diagnosis:
    path = evidence.read(re.compile(r"(?:open|file=|DB in) ?(?P<path>/[\w./-]+)")).get("path", "")
    return found(evidence, Cause.prometheus_storage_permission,
                 f"Prometheus may not write its data directory{' (' + path + ')' if path else ''}",
                 Fix("the prom/prometheus image runs as nobody (uid 65534): the data directory must be writable by it "
                     f"(`sudo chown -R 65534:65534 DIR`); {_VOLUME_NOTE}. An images.prometheus that runs as another "
                     "user needs the same", key="images.prometheus"), **({"path": path} if path else {}))


def _prometheus_storage_locked(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.prometheus_storage_locked,
                 "Prometheus cannot lock its data directory: another Prometheus uses it, or the filesystem has no "
                 "locks",
                 Fix("stop the other Prometheus using the same data directory (`stackctl status`; an older stack or a "
                     "system prometheus.service: `sudo systemctl stop prometheus`), and keep the data on a local "
                     "disk, not NFS; then `stackctl up`"))


# Prometheus's words for a configuration file it cannot read: the line and the fields it names.
_CONFIG_LINE = re.compile(r"\bline (?P<line>\d+): (?P<problem>[^\\\"]+)")
# Prometheus 2+ ("field X not found in type config.plain") and 1.x ("unknown fields in scrape_config: X").
_UNKNOWN_FIELD = re.compile(r"field (?P<field>\w+) not found in type|unknown fields in \w+: (?P<old>\w+)")
# Fields older Prometheus releases took, with where they live now.
_MOVED_FIELDS = {"labels": "global.external_labels (or labels under a static_configs entry)",
                 "target_groups": "static_configs", "bearer_token": "authorization.credentials"}
# Fields newer than some Prometheus still in use, with the release that added them: a file written
# for that release fails on an older images.prometheus.
_NEWER_FIELDS = {"fallback_scrape_protocol": "3.0", "scrape_protocols": "2.49", "static_configs": "0.14"}
# Prometheus 3 removed the Alertmanager v1 API (Alertmanager 0.27 no longer serves it).
_ALERTMANAGER_VERSION = re.compile(r"expected Alertmanager api version to be one of \[(?P<accepted>[\w, ]+)\] "
                                   r"but got (?P<got>\w+)", re.IGNORECASE)
# Every job_name must be unique across scrape_configs (older wording: "configured with the same job name").
_DUPLICATE_JOB = re.compile(r"found multiple scrape configs (?:configured with the same job name|with job name)"
                            r":? \\?\"(?P<job>[^\"\\]+)")
_CONFIG_RENDERED = ("stackctl renders it from stack.yaml (rendered/prometheus/prometheus.yml; `stackctl up` renders it "
                    "afresh), so an edit or a file added there must pass `promtool check config FILE` first")


def _unknown_fields(evidence: Evidence) -> list[str]:
    return evidence.all_found(_UNKNOWN_FIELD, "field") or evidence.all_found(_UNKNOWN_FIELD, "old")


def _prometheus_alertmanager_api_v1_removed(evidence: Evidence) -> Diagnosis:
    """Prometheus 3 speaks only the Alertmanager API v2: a prometheus.yml written for 2.x with
    `api_version: v1` stops it at start (the docker awesome-compose example shipped one)."""
    said = evidence.read(_ALERTMANAGER_VERSION)
    accepted = said.get("accepted", "v2").split(",")[0].strip()
    return found(evidence, Cause.prometheus_alertmanager_api_v1_removed,
                 f"Prometheus refuses prometheus.yml: its alerting section asks for the Alertmanager API "
                 f"{said.get('got', 'v1')}, which this Prometheus no longer speaks (only {accepted}), so it does not "
                 "start",
                 Fix(f"set `api_version: {accepted}` under alerting.alertmanagers in prometheus.yml (Alertmanager API "
                     f"version {accepted}: Alertmanager 0.16 and later serve it, 0.27 dropped v1); {_CONFIG_RENDERED}. "
                     "Pinning images.prometheus to a Prometheus 2 image (prom/prometheus:v2.55.1) also starts, "
                     "but only until the Alertmanager is upgraded"), accepted=accepted)


def _prometheus_duplicate_job_name(evidence: Evidence) -> Diagnosis:
    job = evidence.read(_DUPLICATE_JOB).get("job", "")
    named = f" '{job}'" if job else ""
    return found(evidence, Cause.prometheus_duplicate_job_name,
                 f"Prometheus refuses prometheus.yml: two scrape configs share the job name{named}, so it does not "
                 "start",
                 Fix(f"make every job_name unique: prometheus.yml has multiple scrape configs with job name{named} "
                     "(a duplicate job_name: often a job added by hand beside one stackctl already renders, or a "
                     "file merged in twice); remove or rename one, or regenerate prometheus.yml from stack.yaml with "
                     "`stackctl up` (rendered/prometheus/prometheus.yml), which drops hand edits; a file kept edited "
                     "must pass `promtool check config FILE` first"), **({"job": job} if job else {}))


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _prometheus_config_field_newer(evidence: Evidence) -> Diagnosis:
    """A field the running Prometheus does not know but a later release added: the file was written
    for a newer Prometheus than images.prometheus (a `:latest` that resolved to an old tag, a pin)."""
    newer = [name for name in _unknown_fields(evidence) if name in _NEWER_FIELDS]
    since = max((_NEWER_FIELDS[name] for name in newer), key=_release, default="3.0")
    names = ", ".join(f"`{name}`" for name in newer)
    line = evidence.read(_CONFIG_LINE).get("line")
    return found(evidence, Cause.prometheus_config_field_newer,
                 f"Prometheus does not know {names} in prometheus.yml, which Prometheus {since} added: the image is "
                 "older than the file, so it does not start",
                 Fix(f"run Prometheus {since} or later: set images.prometheus to one (stackctl's default is "
                     f"prom/prometheus:v3.5.0; a `:latest` tag may resolve to an older release), or drop {names} from "
                     f"prometheus.yml; {_CONFIG_RENDERED}", key="images.prometheus"),
                 fields=", ".join(newer), **({"line": int(line)} if line else {}))


def _prometheus_config_invalid(evidence: Evidence) -> Diagnosis:
    where = evidence.read(_CONFIG_LINE)
    fields = _unknown_fields(evidence)
    line = where.get("line")
    at = f" (line {line}: {where['problem'].strip()})" if line else ""
    moved = "; ".join(f"`{name}` is now {_MOVED_FIELDS[name]}: rename {name}" for name in fields
                      if name in _MOVED_FIELDS)
    return found(evidence, Cause.prometheus_config_invalid,
                 f"Prometheus cannot parse its configuration file prometheus.yml{at}, so it does not start",
                 Fix(f"correct prometheus.yml{f' at line {line}' if line else ''}"
                     f"{' (' + moved + ')' if moved else ''}: {_CONFIG_RENDERED} (indentation: spaces, not tabs; "
                     "a field name this Prometheus knows)"),
                 **({"line": int(line)} if line else {}), **({"fields": ", ".join(fields)} if fields else {}))


_CONFIG_FILE = re.compile(r"open (?P<path>/[\w./-]+): (?:permission denied|operation not permitted)")


def _prometheus_config_permission(evidence: Evidence) -> Diagnosis:
    """The file is there but Prometheus may not open it: its ownership or mode, or an SELinux label
    on the bind mount; told apart from a file it cannot parse by the open() error it names."""
    path = evidence.read(_CONFIG_FILE).get("path", "")
    return found(evidence, Cause.prometheus_config_permission,
                 f"Prometheus may not read its configuration file {path or 'prometheus.yml'} (permission denied), so it "
                 "does not start; the file itself may be fine",
                 Fix("make the file readable by the user Prometheus runs as: the prom/prometheus image runs as nobody "
                     "(uid 65534), and stackctl bind-mounts rendered/prometheus/prometheus.yml read-only, so the file "
                     "and its directories must be readable by others (`chmod a+r` the file, `chmod a+rx` the "
                     "directories; a umask of 077 when stackctl rendered it makes them owner-only), or owned by 65534; "
                     "on an SELinux host (Fedora, RHEL) label the mount for containers (`chcon -Rt container_file_t "
                     "DIR`). Running the container with `user: root` also works but is not needed; then `stackctl up`"),
                 **({"path": path} if path else {}))


def _grafana_admin_password_ignored(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.grafana_admin_password_ignored,
                 "a Grafana login was refused: the admin password Grafana checks is the one stored in its database, "
                 "which GF_SECURITY_ADMIN_PASSWORD sets only on first start",
                 Fix("Grafana takes GF_SECURITY_ADMIN_PASSWORD (stackctl's GRAFANA_ADMIN_PASSWORD in .env) only on "
                     "first start, when it creates its database (grafana.db in the grafana-data volume; natively "
                     "data/grafana); an existing database keeps the password it was created with, so a changed .env "
                     "is ignored. Log in with the first one, or set the database to .env's: `grafana-cli admin "
                     "reset-admin-password NEW_PASSWORD` inside the grafana container (`docker exec -it CONTAINER "
                     "grafana-cli admin reset-admin-password ...`; natively with --homepath /usr/share/grafana and "
                     "cfg:paths.data=data/grafana), or remove the grafana-data volume to start afresh (losing "
                     "dashboards and users made in Grafana). Check too that the value has no stray newline or quote",
                     env="GF_SECURITY_ADMIN_PASSWORD"), severity=Severity.advisory)


_STATFS_PATH = re.compile(r"statfs\(\) system call(?: for \\?\"(?P<path>[^\"\\]+)|\"? rootfs=(?P<rootfs>\S+))")
# Mounts node-exporter has no business stat-ing on a Docker host (other containers' and namespaces'
# own mounts, the kernel's pseudo filesystems): node-exporter 1.x strips --path.rootfs from the paths.
_MOUNTS_EXCLUDE = r"^/(dev|proc|run|sys|var/lib/docker/.+|var/lib/kubelet/.+|var/lib/containers/.+)($|/)"


def _node_exporter_statfs_denied(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_STATFS_PATH)
    path = values.get("path") or values.get("rootfs") or ""
    return found(evidence, Cause.node_exporter_statfs_denied,
                 f"node-exporter's filesystem collector may not stat {path or 'a mount point'} (permission denied): "
                 "a mount of another container, a network namespace or the kernel, not a disk of the host",
                 Fix("harmless for the host's own disks; to stop it, exclude those mount points from the filesystem "
                     f"collector: add `--collector.filesystem.mount-points-exclude={_MOUNTS_EXCLUDE}` (node-exporter "
                     "before 1.0: --collector.filesystem.ignored-mount-points) to node-exporter's command in "
                     "compose/node-exporter.yml (stackctl mounts the host's / read-only at /host with "
                     "--path.rootfs=/host, so the paths are the host's), then `stackctl up`",
                     flag="--collector.filesystem.mount-points-exclude"),
                 severity=Severity.advisory, **({"path": path} if path else {}))


_GRAFANA_PATH = re.compile(r"GF_PATHS_DATA='(?P<path>[^']+)'|(?:mkdir|open) (?P<denied>/[\w./-]+): permission denied"
                           r"|Could not create (?P<plugin>/[\w./-]+?)(?:/[\w.-]+)?\. Permission denied")


def _grafana_data_permission(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_GRAFANA_PATH)
    path = values.get("path") or values.get("denied") or values.get("plugin") or "/var/lib/grafana"
    return found(evidence, Cause.grafana_data_permission,
                 f"Grafana may not write its data directory ({path})",
                 Fix("the grafana image runs as uid 472: the data directory must be writable by it (`sudo chown -R "
                     f"472:472 DIR`); {_VOLUME_NOTE}. An images.grafana that runs as another user needs the same",
                     key="images.grafana"), path=path)


def _grafana_datasource_provisioning(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.grafana_datasource_provisioning,
                 "Grafana refuses its datasource provisioning (two default datasources, or an entry without "
                 "the fields it needs), so it does not start",
                 Fix("stackctl provisions one default Prometheus datasource (rendered/grafana/provisioning/"
                     "datasources): remove any other file added there that also sets isDefault, then `stackctl up` "
                     "(it renders the directory again)"))


# Grafana's dashboard file provider names the file and Go's JSON decoder's complaint; what the
# complaint means in a file someone edited, templated or downloaded by hand.
_DASHBOARD_FILE = re.compile(r"file=\"?(?P<file>[^\" ]+\.json)\"?.*error=\"?(?P<error>.*?)\"?\s*$")
_JSON_CAUSES = (
    ("in string literal", ("a line break or tab written raw inside a string (write it as \\n), as a template or "
                          "an editor leaves it")),
    ("after object key:value pair", "a missing comma or a stray quote after a value"),
    ("after array element", "a missing comma between two elements of a list"),
    ("looking for beginning of value", ("something that is not JSON where a value should be (an HTML page saved "
                                       "in place of the raw file starts with '<'; a trailing comma before } or ])")),
    ("EOF", "an empty or cut-off file (unexpected end of JSON input)"),
    ("end of JSON input", "an empty or cut-off file"),
    ("cannot unmarshal", ("a field of the wrong type (an export wrapped in another object, or a list where "
                         "Grafana wants one dashboard)")),
)


def _grafana_dashboard_json_invalid(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_DASHBOARD_FILE)
    path, error = values.get("file", ""), values.get("error", "").replace("\\\\", "\\")
    cause = next((meaning for words, meaning in _JSON_CAUSES if words in error), "a JSON syntax error")
    named = path or "the dashboard file the line names"
    return found(evidence, Cause.grafana_dashboard_json_invalid,
                 f"Grafana skips the provisioned dashboard {named}: its JSON is invalid ({error or 'a syntax error'})",
                 Fix(f"the dashboard file {named} is not valid JSON: {cause}. Validate the JSON with `python3 -m "
                     "json.tool FILE` (or `jq . FILE`), which prints the line and column of the syntax error; fix that "
                     "line, or export the dashboard again from Grafana (Export > Export as JSON) and save it raw. "
                     "stackctl's own dashboards are rendered again by `stackctl up`; Grafana reloads the others "
                     "from the provisioned directory without a restart"),
                 **({"file": path} if path else {}))


# The apps Grafana 11.3 and later install by themselves from grafana.com at every start (its
# `preinstall` default), unasked: stackctl's dashboard uses none of them.
_DEFAULT_PREINSTALLED = ("grafana-lokiexplore-app", "grafana-pyroscope-app", "grafana-exploretraces-app",
                         "grafana-metricsdrilldown-app")


def _grafana_plugin_offline(evidence: Evidence) -> Diagnosis:
    plugin = (evidence.read(re.compile(r"api/plugins/(?:repo/)?(?P<plugin>[\w.-]+)")).get("plugin")
              or evidence.read(re.compile(r"pluginId=(?P<plugin>[\w.-]+)")).get("plugin", ""))
    if "backgroundinstaller" in evidence.line and plugin in _DEFAULT_PREINSTALLED:
        return found(evidence, Cause.grafana_preinstall_offline,
                     f"Grafana could not download {plugin}, one of the apps Grafana 11.3 and later preinstall from "
                     "grafana.com at every start: this host cannot reach grafana.com. Grafana keeps running; only its "
                     "Drilldown pages stay empty",
                     Fix("stackctl's dashboard needs none of these apps: set GF_PLUGINS_PREINSTALL_DISABLED=true in the "
                         "grafana service's environment to stop the download attempts (with a proxy, give Grafana "
                         "HTTPS_PROXY instead)", env="GF_PLUGINS_PREINSTALL_DISABLED"),
                     severity=Severity.advisory, plugin=plugin)
    return found(evidence, Cause.grafana_plugin_offline,
                 f"Grafana could not download the plugin {plugin or '(name not in the log)'} from grafana.com: this "
                 "host has no route to it (or a proxy in between), and a plugin install that fails stops the container",
                 Fix("stackctl's dashboard needs no plugin: remove GF_INSTALL_PLUGINS from Grafana's environment (an "
                     "images.grafana built with the plugins, or the plugin unpacked into the plugins directory of the "
                     "data volume, works offline); with a proxy, give Grafana HTTPS_PROXY; then `stackctl up`",
                     env="GF_INSTALL_PLUGINS"), **({"plugin": plugin} if plugin else {}))


def _grafana_config_missing(evidence: Evidence) -> Diagnosis:
    path = evidence.read(re.compile(r"open (?P<path>/[\w./-]+?)\.?: no such file")).get("path", "/etc/grafana/grafana.ini")
    return found(evidence, Cause.grafana_config_missing,
                 f"Grafana cannot find its configuration file {path}, so it does not start: the image does not have it "
                 "where it looks, or a mount hides it",
                 Fix("the official grafana/grafana image ships /etc/grafana/grafana.ini: set images.grafana in "
                     "stack.yaml to a current official image (pull a newer image: a broken or third-party build that "
                     "lacks the file, or one that looks for a mistyped path, is fixed by the latest docker build), and "
                     "never mount a directory or an empty volume over /etc/grafana (stackctl mounts only "
                     "/etc/grafana/provisioning); configure Grafana with GF_* variables instead; then `stackctl up`",
                     key="images.grafana"), path=path)


# The flag parsers of Go services: kingpin's (Prometheus's exporters) and the standard library's.
_UNKNOWN_FLAG = re.compile(r"(?P<program>[\w-]+): error: unknown (?P<kind>long|short) flag '(?P<flag>-{1,2}[^' ]+)"
                           r"|flag provided but not defined: (?P<bare>-{1,2}[\w.-]+)")
# Flags renamed in node-exporter's releases, with what replaced them.
_RENAMED_FLAGS = {"--collector.filesystem.ignored-mount-points": "--collector.filesystem.mount-points-exclude",
                  "--collector.netdev.ignored-devices": "--collector.netdev.device-exclude",
                  "--web.config": "--web.config.file"}


def _service_flag_unknown(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_UNKNOWN_FLAG)
    flag = values.get("flag") or values.get("bare") or ""
    service = evidence.context.service
    key = images_key(evidence)
    renamed = _RENAMED_FLAGS.get(flag)
    if renamed:
        text = (f"{flag} was renamed to {renamed} in newer releases: use the name the image's version knows "
                f"(`docker run --rm IMAGE --help`), or pin {key} to the version the flag was written for")
    elif values.get("kind") == "short":
        text = (f"the command uses the old single-dash flag syntax (-collector.x, node_exporter before 0.15), which "
                f"the version in {key} reads as short flags ({flag}): write every flag with two dashes "
                "(--collector.x) and the names this version has (`docker run --rm IMAGE --help`)")
    else:
        # Go's own flag parser ("flag provided but not defined") is what releases before 0.15 used.
        why = ("an old version: its flag parser (Go's own, which writes every flag with one dash) predates "
               "node_exporter 0.15" if values.get("bare") else
               "an old version (the flag, or the collector it enables, is new), or the flag belongs to another program")
        text = (f"the version of {service} in {key} has no flag {flag or '(the one named)'}: it is {why}. Upgrade "
                f"{key} in stack.yaml to a newer {service.replace('-', '_')} image that has it (check with "
                "`docker run --rm IMAGE --version` and `--help`), or remove the flag from the service's command")
    return found(evidence, Cause.service_flag_unknown,
                 f"{service} refuses the flag {flag or '(not named)'} and exits: its version does not have it",
                 Fix(text + "; then `stackctl up`", key=key, flag=flag or None),
                 **({"flag": flag} if flag else {}), **({"renamed_to": renamed} if renamed else {}))


_DIALED = re.compile(r"dial tcp (?P<address>\S+?):(?P<port>\d+): connect: connection refused")


def _grafana_datasource_unreachable(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_DIALED)
    port = values.get("port")
    key = evidence.context.port_keys.get(int(port)) if port else None
    key = key or "ports.prometheus"
    return found(evidence, Cause.grafana_datasource_unreachable,
                 f"Grafana's Prometheus datasource refused the connection{' on port ' + port if port else ''}: "
                 "Prometheus is not running there, so the dashboards and alerts have no data",
                 Fix(f"check Prometheus (`stackctl status`, `stackctl logs prometheus --explain`): stackctl provisions "
                     f"the datasource at http://127.0.0.1:PORT with PORT = {key} in stack.yaml (host networking, so "
                     "`localhost` is the host itself); a datasource added by hand must use the same address and "
                     "port, not a container name", key=key),
                 severity=Severity.advisory, **({"port": int(port)} if port else {}))


_BLOCK = re.compile(r"block dir: \\?\"?(?P<block>/[\w./-]+?)\\?\"?:|open (?P<meta>/[\w./-]+)/meta\.json")


def _prometheus_tsdb_corrupt(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_BLOCK)
    block = values.get("block") or values.get("meta") or ""
    what = f"the block {block}" if block else "a block directory (the one whose meta.json is empty or missing)"
    return found(evidence, Cause.prometheus_tsdb_corrupt,
                 f"Prometheus cannot open its TSDB: {what} has a missing or truncated meta.json, left by an unclean "
                 "stop, a full disk or a network filesystem",
                 Fix(f"stop Prometheus and move {what} out of the data directory (`ls -l DATA/*/meta.json` finds the "
                     "empty one; moving it loses that block's two hours of history), then `stackctl up`; keep the data "
                     f"on a local disk: NFS and other networked filesystems are not supported by Prometheus's TSDB "
                     f"({_VOLUME_NOTE})"), **({"block": block} if block else {}))


def _prometheus_scrape_timeout(evidence: Evidence) -> Diagnosis:
    pool = evidence.read(re.compile(r"scrape_pool=(?P<pool>[\w/.-]+)")).get("pool", "")
    target = evidence.read(re.compile(r"target=(?P<target>\S+)")).get("target", "")
    return found(evidence, Cause.prometheus_scrape_timeout,
                 f"scrapes of {target or pool or 'a target'} take longer than the scrape timeout (context deadline "
                 "exceeded), so the target shows as down",
                 Fix("the target answers too slowly (check it with `curl -w '%{time_total}' URL`); the scrape_timeout "
                     "in prometheus.yml must be below scrape_interval (stackctl renders 10s for both global settings): "
                     "raise scrape_interval and scrape_timeout for that job together in the rendered prometheus.yml, "
                     "or make the exporter answer faster"), severity=Severity.advisory,
                 **({"scrape_pool": pool} if pool else {}))


def _gpu_exporter_profiling_unsupported(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.gpu_exporter_profiling_unsupported,
                 "dcgm-exporter asked DCGM for profiling (DCP) fields, which this GPU or DCGM's profiling module does "
                 "not serve (DCP needs a datacenter GPU of Volta or newer), and older exporters stop on that",
                 Fix("drop the profiling fields: run dcgm-exporter with its default counters (`-f "
                     "/etc/dcgm-exporter/default-counters.csv`, not dcp-metrics-included.csv), or use dcgm-exporter "
                     "2.1.2 or newer, which skips fields the GPU lacks (images.gpu-exporter in stack.yaml); stackctl's "
                     "default GPU exporter (nvidia_gpu_exporter) does not use DCGM: remove images.gpu-exporter to get "
                     "it back", key="images.gpu-exporter"))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.prometheus_storage_permission,
              r"Error opening query log file|queries\.active: permission denied|Opening storage failed.*permission denied|lock DB directory: "
              r"open \S+: permission denied|open DB in \S+: open \S+: permission denied",
              _prometheus_storage_permission),
    signature(Cause.prometheus_storage_locked,
              r"lock DB directory|Locked by other process|Error opening memory "
              r"series storage: resource temporarily unavailable", _prometheus_storage_locked),
    signature(Cause.grafana_data_permission,
              r"GF_PATHS_DATA='[^']+' is not writable|Migration failed err: unable to open database file"
              r"|SQLite database file \S+: open \S+: permission denied|mkdir /var/lib/grafana\S*: permission denied"
              # grafana-cli installing a plugin (GF_INSTALL_PLUGINS) into the same data directory.
              r"|Permission denied\. Make sure you have write access to plugindir|Failed to create plugin dir: \S+, "
              r"error: mkdir \S+: permission denied",
              _grafana_data_permission),
    # Before the parse error below, which matches the same line: an open() refused is no bad YAML.
    signature(Cause.prometheus_config_permission,
              r"(?:couldn't load configuration|Error loading config) \(-?-config\.file.*: (?:permission denied"
              r"|operation not permitted)", _prometheus_config_permission),
    # Before the generic parse error below, which matches the same lines: refusals told apart by cause.
    signature(Cause.prometheus_alertmanager_api_v1_removed, r"expected Alertmanager api version to be one of",
              _prometheus_alertmanager_api_v1_removed),
    signature(Cause.prometheus_duplicate_job_name, r"found multiple scrape configs (?:configured with the same job "
              r"name|with job name)", _prometheus_duplicate_job_name),
    signature(Cause.prometheus_config_field_newer,
              rf"field (?:{'|'.join(_NEWER_FIELDS)}) not found in type|unknown fields in \w+: (?:{'|'.join(_NEWER_FIELDS)})\b",
              _prometheus_config_field_newer),
    signature(Cause.prometheus_config_invalid,
              # Prometheus's own words, with its flag: a bare "Error loading config" is any program's
              # (Codex's config.toml says it too).
              r"parsing YAML file \S+: |(?:couldn't load configuration|Error loading config) \(-?-config\.file",
              _prometheus_config_invalid),
    signature(Cause.grafana_datasource_provisioning, r"Datasource provisioning error", _grafana_datasource_provisioning),
    # Every Grafana since 5 (logfmt and JSON logs alike): the file provider's loader and the decoder's error.
    signature(Cause.grafana_dashboard_json_invalid,
              r"failed to load dashboard from.*file=\S+\.json.*error=\"?(?:invalid character|unexpected end of JSON|EOF"
              r"|json: cannot unmarshal)", _grafana_dashboard_json_invalid),
    # grafana-cli's download of a plugin (GF_INSTALL_PLUGINS) from grafana.com.
    signature(Cause.grafana_plugin_offline,
              r"(?:Failed to send request|Error: \S* ?Get \"?https://grafana\.(?:com|net)/api/plugins).*"
              r"(?:Client\.Timeout|i/o timeout|no such host|connection refused|server misbehaving"
              r"|Temporary failure in name resolution)", _grafana_plugin_offline),
    # Grafana 11.3+'s background installer (GF_INSTALL_PLUGINS, and its own preinstalled apps).
    signature(Cause.grafana_plugin_offline,
              r"logger=plugin\.backgroundinstaller.*(?:msg=\"?Failed to install plugin|error=\"failed to install plugin)"
              r"(?!.*(?:404|not found|not compatible))", _grafana_plugin_offline),
    signature(Cause.grafana_config_missing, r"Failed to parse \S*(?:grafana|defaults)\.ini\S*,? open \S+: no such file",
              _grafana_config_missing),
    # Before a service's own (Go) flag parser exits: node-exporter, the GPU exporter, Prometheus.
    signature(Cause.service_flag_unknown, r"[\w-]+: error: unknown (?:long|short) flag '-|flag provided but not defined: -",
              _service_flag_unknown),
    # Grafana's Prometheus queries (its datasource proxy, alerting, the query API) refused.
    signature(Cause.grafana_datasource_unreachable,
              r"(?:tsdb\.HandleRequest\(\) error|Error reading Prometheus|Instant query failed|query failed|proxy error)"
              r".*dial tcp \S+: connect: connection refused", _grafana_datasource_unreachable),
    signature(Cause.prometheus_tsdb_corrupt,
              r"[Oo]pening storage failed.*(?:unexpected end of JSON input|meta\.json: no such file|read meta information)",
              _prometheus_tsdb_corrupt),
    signature(Cause.prometheus_scrape_timeout,
              r"component=\"?scrape manager\"?.*context deadline exceeded", _prometheus_scrape_timeout, ADVISORY + 1),
    signature(Cause.gpu_exporter_profiling_unsupported,
              r"(?:Error watching fields|Error setting watches)[^\n]*(?:Profiling|module of DCGM that is not currently "
              r"loaded)", _gpu_exporter_profiling_unsupported),
    # Grafana's refusal of a login (its context logger, every version's wording).
    signature(Cause.grafana_admin_password_ignored, r"msg=\"?Invalid username or password",
              _grafana_admin_password_ignored, ADVISORY),
    # node-exporter's filesystem collector (0.15's "for PATH" and 1.x's rootfs= wordings).
    signature(Cause.node_exporter_statfs_denied,
              r"Error on statfs\(\) system call.*permission denied", _node_exporter_statfs_denied, ADVISORY),
)
