"""Prometheus and Grafana: a data directory the process may not write, a TSDB another Prometheus
holds, a configuration file Prometheus cannot parse, a provisioning file Grafana refuses."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

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
_UNKNOWN_FIELD = re.compile(r"field (?P<field>\w+) not found in type")
# Fields older Prometheus releases took, with where they live now.
_MOVED_FIELDS = {"labels": "global.external_labels (or labels under a static_configs entry)",
                 "target_groups": "static_configs", "bearer_token": "authorization.credentials"}


def _prometheus_config_invalid(evidence: Evidence) -> Diagnosis:
    where = evidence.read(_CONFIG_LINE)
    fields = evidence.all_found(_UNKNOWN_FIELD, "field")
    line = where.get("line")
    at = f" (line {line}: {where['problem'].strip()})" if line else ""
    moved = "; ".join(f"`{name}` is now {_MOVED_FIELDS[name]}" for name in fields if name in _MOVED_FIELDS)
    return found(evidence, Cause.prometheus_config_invalid,
                 f"Prometheus cannot parse its configuration file prometheus.yml{at}, so it does not start",
                 Fix(f"correct prometheus.yml{f' at line {line}' if line else ''}"
                     f"{' (' + moved + ')' if moved else ''}: stackctl renders it from stack.yaml "
                     "(rendered/prometheus/prometheus.yml; `stackctl up` renders it afresh), so an edit or a file "
                     "added there must pass `promtool check config FILE` first (indentation: spaces, not tabs; "
                     "a field name this Prometheus knows)"),
                 **({"line": int(line)} if line else {}), **({"fields": ", ".join(fields)} if fields else {}))


_GRAFANA_PATH = re.compile(r"GF_PATHS_DATA='(?P<path>[^']+)'|(?:mkdir|open) (?P<denied>/[\w./-]+): permission denied")


def _grafana_data_permission(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_GRAFANA_PATH)
    path = values.get("path") or values.get("denied") or "/var/lib/grafana"
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
              r"|SQLite database file \S+: open \S+: permission denied|mkdir /var/lib/grafana\S*: permission denied",
              _grafana_data_permission),
    signature(Cause.prometheus_config_invalid,
              # Prometheus's own words, with its flag: a bare "Error loading config" is any program's
              # (Codex's config.toml says it too).
              r"parsing YAML file \S+: |(?:couldn't load configuration|Error loading config) \(-?-config\.file",
              _prometheus_config_invalid),
    signature(Cause.grafana_datasource_provisioning, r"Datasource provisioning error", _grafana_datasource_provisioning),
)
