"""Prometheus, Grafana, node-exporter and the GPU exporter: a data directory the process may not
write (Grafana's plugins included), a TSDB another Prometheus holds, a block left half-written or a WAL
segment or head chunk file left empty or out of sequence,
scrapes that run past their timeout (Prometheus's configuration file: prometheus_config.py),
a provisioning file Grafana refuses, a provisioned dashboard file that is not valid JSON, plugins Grafana cannot download, a Prometheus datasource
Grafana cannot reach, an admin password Grafana ignores once its database exists (the mounts
node-exporter cannot stat: node_filesystems.py), profiling fields DCGM cannot watch on this GPU, a grafana.ini missing from
the image, and a flag a Go exporter's version does not have (node-exporter's renamed or newer flags)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import (
    ADVISORY,
    Signature,
    found,
    images_entry,
    images_key,
    signature,
)
from stackctl.diagnosis.stack_keys import SERVICE_USERS
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_PROMETHEUS_USER, _PROMETHEUS_UID = SERVICE_USERS["prometheus"]
_GRAFANA_UID = SERVICE_USERS["grafana"][1]
# Compose keeps each service's data in a named volume of the project (`down` keeps it).
_VOLUME_NOTE = ("under Compose it is the project's named volume (`docker volume ls`; `docker volume rm` it to start "
                "afresh, losing the history), natively the stack's data/ directory")


def _prometheus_storage_permission(evidence: Evidence) -> Diagnosis:
    path = evidence.read(re.compile(r"(?:open|file=|DB in) ?(?P<path>/[\w./-]+)")).get("path", "")
    return found(evidence, Cause.prometheus_storage_permission,
                 f"Prometheus may not write its data directory{' (' + path + ')' if path else ''}",
                 Fix(f"the prom/prometheus image runs as {_PROMETHEUS_USER} (uid {_PROMETHEUS_UID}): the data directory "
                     f"must be writable by it (`sudo chown -R {_PROMETHEUS_UID}:{_PROMETHEUS_UID} DIR`); {_VOLUME_NOTE}. "
                     "An images.prometheus that runs as another "
                     "user needs the same", key="images.prometheus"), **({"path": path} if path else {}))


def _prometheus_storage_locked(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.prometheus_storage_locked,
                 "Prometheus cannot lock its data directory: another Prometheus uses it, or the filesystem has no "
                 "locks",
                 Fix("stop the other Prometheus using the same data directory (`stackctl status`; an older stack or a "
                     "system prometheus.service: `sudo systemctl stop prometheus`), and keep the data on a local "
                     "disk, not NFS; then `stackctl up`"))


def _grafana_admin_password_ignored(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.grafana_admin_password_ignored,
                 "a Grafana login was refused: the admin password Grafana checks is the one stored in its database, "
                 "which GF_SECURITY_ADMIN_PASSWORD sets only on the first run (first start)",
                 Fix("GF_SECURITY_ADMIN_PASSWORD (stackctl's GRAFANA_ADMIN_PASSWORD in .env) sets the initial admin "
                     "password only on Grafana's first run (first start), when it creates its database (grafana.db in "
                     "the grafana-data volume; natively data/grafana): the password is set once, and later changes to "
                     "the variable or .env are ignored, since the existing database keeps the password it was created "
                     "with. Log in with the first one, or set the database to .env's: `grafana-cli admin "
                     "reset-admin-password NEW_PASSWORD` inside the grafana container (`docker exec -it CONTAINER "
                     "grafana-cli admin reset-admin-password ...`; natively with --homepath /usr/share/grafana and "
                     "cfg:paths.data=data/grafana), or remove the grafana-data volume to start afresh (losing "
                     "dashboards and users made in Grafana). Check too that the value has no stray newline or quote",
                     env="GF_SECURITY_ADMIN_PASSWORD"), severity=Severity.advisory)


_GRAFANA_PATH = re.compile(r"GF_PATHS_DATA='(?P<path>[^']+)'|(?:mkdir|open) (?P<denied>/[\w./-]+): permission denied"
                           r"|Could not create (?P<plugin>/[\w./-]+?)(?:/[\w.-]+)?\. Permission denied")


_READONLY_DATABASE = "attempt to write a readonly database"


def _grafana_data_permission(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_GRAFANA_PATH)
    path = values.get("path") or values.get("denied") or values.get("plugin") or "/var/lib/grafana"
    fix = (f"the grafana image runs as uid {_GRAFANA_UID}: the data directory must be writable by it (`sudo "
           f"chown -R {_GRAFANA_UID}:{_GRAFANA_UID} DIR`); {_VOLUME_NOTE}. An images.grafana that runs as "
           "another user needs the same")
    if _READONLY_DATABASE in evidence.line:
        # SQLite opens grafana.db read-only when the file, or the directory that holds its journal, is not
        # writable by Grafana's user: a data directory made by root, a grafana-cli run as root, a :ro mount.
        return found(evidence, Cause.grafana_data_permission,
                     "Grafana may not write its SQLite database (attempt to write a readonly database): grafana.db "
                     "or the data directory that holds it is not writable by Grafana's user",
                     Fix(f"{fix}. Both the file grafana.db and its directory need write access (SQLite writes its "
                         "journal beside the file): a grafana.db left owned by root (a `grafana-cli` run with sudo, "
                         "a copied or restored directory) needs the same chown (natively the stack's data/grafana must be "
                         "yours; Debian's package: `sudo chown -R grafana:grafana /var/lib/grafana`), and "
                         "the data directory must not be mounted read-only; then `stackctl up`",
                         key="images.grafana"), path=path)
    # A directory Grafana's user may not write: chown first; chmod where the share ignores ownership.
    return found(evidence, Cause.grafana_data_permission,
                 f"Grafana may not write its data directory ({path})",
                 Fix(f"{fix}. Where chown does not take (a share or NAS mount that ignores ownership: Unraid's shares, "
                     "SMB/CIFS, NFS with root_squash), make the directory writable for every user instead: `sudo chmod "
                     "-R 777 DIR` (or a+rwX); chown is the narrower fix and comes first",
                     key="images.grafana"), path=path)


def _grafana_datasource_provisioning(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.grafana_datasource_provisioning,
                 "Grafana refuses its datasource provisioning (a file it cannot read or parse, or an entry without "
                 "the fields it needs), so it does not start",
                 Fix("stackctl provisions one default Prometheus datasource (rendered/grafana/provisioning/"
                     "datasources): correct or remove any other file added there (valid YAML, `apiVersion: 1`, each "
                     "entry with a name, or a uid and orgId under deleteDatasources; a file, not a directory), then "
                     "`stackctl up` (it renders the directory again)"))


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
    where = images_entry(key)
    renamed = _RENAMED_FLAGS.get(flag)
    if renamed:
        text = (f"{flag} was renamed to {renamed} in newer releases: use the name the image's version knows "
                f"(`docker run --rm IMAGE --help`), or pin {where} to the version the flag was written for")
    elif values.get("kind") == "short" and service == "prometheus":
        text = (f"the command uses Prometheus 1.x's single-dash flags (-config.file, -storage.local.path), which the "
                f"Prometheus 2+ in {where} reads as short flags ({flag}): use double-dash flags with the 2.x names: "
                "--config.file, --storage.tsdb.path (the storage.local.* flags are gone; `docker run --rm IMAGE "
                "--help` lists them)")
    elif values.get("kind") == "short":
        text = (f"the command uses the old single-dash flag syntax (-collector.procfs, node_exporter before 0.15), "
                f"which the version in {where} reads as short flags ({flag}): use double-dash flags with the names "
                "renamed since (-collector.procfs is now --path.procfs, -collector.sysfs --path.sysfs; `docker run "
                "--rm IMAGE --help` lists them)")
    else:
        # Go's own flag parser ("flag provided but not defined") is what releases before 0.15 used.
        why = ("an old version: its flag parser (Go's own, which writes every flag with one dash) predates "
               "node_exporter 0.15" if values.get("bare") else
               "an old version (the flag, or the collector it enables, is new), or the flag belongs to another program")
        text = (f"the version of {service} in {where} has no flag {flag or '(the one named)'}: it is {why}. Upgrade "
                f"{where} in stack.yaml to a newer {service.replace('-', '_')} image that has it (check with "
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


_WAL_FILE = re.compile(r"(?P<file>/[\w./-]*/(?:wal|chunks_head)/(?:checkpoint\.\d+/)?\d+)")


def _prometheus_wal_corrupt(evidence: Evidence) -> Diagnosis:
    """A WAL segment or head chunk file left empty, zeroed or out of sequence, most often by a disk that
    filled up or a crash mid-write: Prometheus will not open the TSDB until it is gone."""
    file = evidence.read(_WAL_FILE).get("file", "")
    what = f"the file {file}" if file else "a file in its wal/ or chunks_head/ directory"
    return found(evidence, Cause.prometheus_wal_corrupt,
                 f"Prometheus cannot open its TSDB: {what} is empty, cut short or out of sequence, left by a full disk "
                 "or a crash while it was written",
                 Fix(f"free disk space first (`df -h` on the data directory; a full disk is what leaves a zero-byte file), "
                     f"then stop Prometheus and remove the empty file: {what} (`find DATA/wal DATA/chunks_head -size "
                     "0` lists zero-byte ones; for a gap in the numbering, move the segments after the gap, or the "
                     "whole chunks_head/ directory, out of the data directory); that loses only the samples not yet "
                     f"compacted into a block (at most the last few hours), then `stackctl up` ({_VOLUME_NOTE})"),
                 **({"file": file} if file else {}))


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


_SYS_ADMIN_FIX = Fix("give the gpu-exporter container the SYS_ADMIN capability (Compose: `cap_add: [SYS_ADMIN]` on the "
                     "service; `docker run --cap-add=SYS_ADMIN`), or run dcgm-exporter without profiling fields (`-f "
                     "/etc/dcgm-exporter/default-counters.csv`); stackctl's default GPU exporter (nvidia_gpu_exporter) "
                     "needs neither: remove images.gpu-exporter to get it back", key="images.gpu-exporter")


def _gpu_exporter_needs_sys_admin(evidence: Evidence) -> Diagnosis:
    """dcgm-exporter 3.3.8-3.6.0 and later watch profiling fields through an embedded DCGM host
    engine, which must run with CAP_SYS_ADMIN; without it the exporter stops at start (or, where its
    entrypoint checks first, warns and runs without the profiling metrics)."""
    if "sufficient privileges to expose profiling metrics" in evidence.line:
        return found(evidence, Cause.gpu_exporter_needs_sys_admin,
                     "dcgm-exporter runs without CAP_SYS_ADMIN, so it exposes no profiling (DCP) metrics (SM "
                     "activity, tensor pipes, NVLink and PCIe bytes); the device metrics (utilisation, memory, power, "
                     "temperature) still come", _SYS_ADMIN_FIX, severity=Severity.advisory)
    return found(evidence, Cause.gpu_exporter_needs_sys_admin,
                 "dcgm-exporter's embedded DCGM host engine runs without CAP_SYS_ADMIN, which it needs to watch the "
                 "profiling fields, so the exporter stops", _SYS_ADMIN_FIX)


def _grafana_database_locked(evidence: Evidence) -> Diagnosis:
    """SQLite, Grafana's default database, takes one writer at a time: under load (many users, alert
    rules, an auth proxy) or on slow or network storage a query meets a write and fails."""
    return found(evidence, Cause.grafana_database_locked,
                 "Grafana's SQLite database (grafana.db in its data directory) was locked by another write, so "
                 "requests failed (users logged out, data sources or alert rules in error); Grafana keeps running",
                 Fix("turn on SQLite's write-ahead log, which lets reads run beside a write: GF_DATABASE_WAL=true in "
                     "the grafana service's environment ([database] wal = true in grafana.ini), but not where its data "
                     "directory is on network storage (NFS, EFS, SMB), where WAL does not work; under heavy use move "
                     "Grafana's database off SQLite to PostgreSQL or MySQL (database type: GF_DATABASE_TYPE=postgres "
                     "with GF_DATABASE_HOST, _NAME, _USER, _PASSWORD); a database left locked after a crash is "
                     "repaired, with Grafana stopped, by `sqlite3 grafana.db '.clone grafana-new.db'` and swapping "
                     "the files", env="GF_DATABASE_WAL"),
                 severity=Severity.advisory)


# Grafana 11's validator names the refusal; Grafana 12, with Angular removed, logs only the failed validation.
_ANGULAR_PLUGIN = re.compile(r"using Angular, which has been disabled.*pluginId=(?P<plugin>[\w.-]+)"
                             r"|pluginId=(?P<validated>[\w.-]+) error=\"?angular plugins are not supported")


def _grafana_angular_plugin_disabled(evidence: Evidence) -> Diagnosis:
    """Grafana 11 turns Angular support off by default and Grafana 12 removes it: an Angular plugin
    (or one its detector takes for Angular) is not loaded; Grafana itself keeps running."""
    plugins = list(dict.fromkeys(evidence.all_found(_ANGULAR_PLUGIN, "plugin")
                                 + evidence.all_found(_ANGULAR_PLUGIN, "validated")))
    named = ", ".join(plugins) or "a plugin"
    return found(evidence, Cause.grafana_angular_plugin_disabled,
                 f"Grafana refuses {named}: {'they use' if len(plugins) > 1 else 'it uses'} Angular, which Grafana 11 disables and Grafana 12 removes, so its "
                 "panels do not render. Grafana keeps running; stackctl's own dashboard needs no Angular plugin",
                 Fix(f"remove the Angular plugins ({named}) from what installs them (GF_INSTALL_PLUGINS, "
                     "GF_PLUGINS_PREINSTALL, the plugins directory, an images.grafana that bundles them), or update each "
                     "to a release without Angular, or replace it with a React plugin or a built-in panel (the plugin's "
                     "page on grafana.com names its successor; e.g. State timeline for the discrete panel); on Grafana 11 "
                     "only, GF_SECURITY_ANGULAR_SUPPORT_ENABLED=true in the grafana service's environment "
                     "(angular_support_enabled) loads them again: Grafana 12 has no such setting",
                     env="GF_SECURITY_ANGULAR_SUPPORT_ENABLED"),
                 severity=Severity.advisory, **({"plugins": ", ".join(plugins)} if plugins else {}))


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
              r"error: mkdir \S+: permission denied"
              # SQLite's refusal, in Grafana's migrator, its server's shutdown and any later query.
              r"|(?:logger=|grafana|[Mm]igration failed).*attempt to write a readonly database",
              _grafana_data_permission),
    # Two defaults are their own cause (setup_files.py).
    signature(Cause.grafana_datasource_provisioning, r"Datasource provisioning error(?!.*can be marked as default)",
              _grafana_datasource_provisioning),
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
    # Prometheus 2.0's empty WAL segment, and the head chunks and WAL segments of 2.19 and later.
    signature(Cause.prometheus_wal_corrupt,
              r"[Oo]pening storage failed.*(?:validate meta \\?\"\S*/wal/\d+\\?\": (?:unexpected )?EOF"
              r"|/chunks_head/\d+: invalid magic number|found unsequential head chunk files"
              r"|segments are not sequential)", _prometheus_wal_corrupt),
    signature(Cause.prometheus_scrape_timeout,
              r"component=\"?scrape manager\"?.*context deadline exceeded", _prometheus_scrape_timeout, ADVISORY + 1),
    signature(Cause.gpu_exporter_profiling_unsupported,
              r"(?:Error watching fields|Error setting watches)[^\n]*(?:Profiling|module of DCGM that is not currently "
              r"loaded)", _gpu_exporter_profiling_unsupported),
    # Grafana's refusal of a login (its context logger, every version's wording).
    signature(Cause.grafana_admin_password_ignored, r"msg=\"?Invalid username or password",
              _grafana_admin_password_ignored, ADVISORY),
    signature(Cause.gpu_exporter_needs_sys_admin, r"host engine is running as non-root", _gpu_exporter_needs_sys_admin),
    # dcgm-exporter's entrypoint, before it starts without the profiling metrics.
    signature(Cause.gpu_exporter_needs_sys_admin, r"doesn't have sufficient privileges to expose profiling metrics",
              _gpu_exporter_needs_sys_admin, ADVISORY),
    # Any Grafana query against its SQLite store (logfmt, and Docker's JSON log with escaped quotes).
    signature(Cause.grafana_database_locked, r"\berr(?:or)?=\\?\"database is locked", _grafana_database_locked,
              ADVISORY + 1),
    signature(Cause.grafana_angular_plugin_disabled, r"Refusing to initialize plugin because it's using Angular"
              r"|error=\"?angular plugins are not supported",
              _grafana_angular_plugin_disabled, ADVISORY),
)
