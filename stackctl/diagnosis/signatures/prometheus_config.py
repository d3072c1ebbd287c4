"""Prometheus's configuration file: one that is not there (a bind mount's host path without it), one it
may not read (ownership, mode, SELinux), one it cannot parse,
and the refusals told apart by cause: an Alertmanager v1 section Prometheus 3 no longer speaks, a
duplicate job_name, a field newer than the running image, and a scrape job's field outside any job;
and a rule file it lists that does not load (prometheus_rules)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.prometheus_flags import FLAG_FIELD, flag_fields_fix
from stackctl.diagnosis.prometheus_rules import RULES_FAILED, YAML_ERROR, reads_rules, rules_fix
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.stack_keys import SERVICE_USERS
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

# Prometheus's words for a configuration file it cannot read: the line and the fields it names.
_USER, _UID = SERVICE_USERS["prometheus"]
_CONFIG_LINE = re.compile(r"\bline (?P<line>\d+): (?P<problem>[^\\\"]+)")
# Prometheus 2+ ("field X not found in type config.plain") and 1.x ("unknown fields in scrape_config: X").
_UNKNOWN_FIELD = re.compile(r"field (?P<field>\w+) not found in type|unknown fields in \w+(?: config)?: (?P<old>\w+)")
# Fields older Prometheus releases took, with where they live now.
_MOVED_FIELDS = {"labels": "global.external_labels (or labels under a static_configs entry)",
                 "target_groups": "static_configs", "bearer_token": "authorization.credentials",
                 # Typos of the plural the section wants.
                 "static_config": "static_configs", "scrape_config": "scrape_configs",
                 "relabel_config": "relabel_configs", "rule_file": "rule_files"}
# Fields newer than some Prometheus still in use, with the release that added them: a file written
# for that release fails on an older images.prometheus.
_NEWER_FIELDS = {"fallback_scrape_protocol": "3.0", "scrape_protocols": "2.49", "static_configs": "0.14"}
# Fields only a scrape job (a scrape_configs entry) takes; those marked also go in an
# alerting.alertmanagers entry. Prometheus names a job's section config.ScrapeConfig in "field X not
# found in type ..." (since 2.2x; prometheus#8156), so config.plain is another section (global:, the
# top level): a field a job takes found there is in the wrong section, not unknown to the release.
_JOB_FIELDS = {"fallback_scrape_protocol": False, "job_name": False, "metrics_path": False, "honor_labels": False,
               "honor_timestamps": False, "metric_relabel_configs": False, "static_configs": True,
               "relabel_configs": True, "file_sd_configs": True, "dns_sd_configs": True, "kubernetes_sd_configs": True,
               "consul_sd_configs": True}
_MISPLACED = re.compile(rf"field (?P<field>{'|'.join(_JOB_FIELDS)}) not found in type config\.plain")
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


# Prometheus before 0.17.0 had no default regex in a relabel config (0.17.0 made it `(.*)`): a file written for a
# later release, which a newer promtool passes, fails there (prometheus#1458).
_RELABEL_REGEX_REQUIRED = r"relabel configuration requires a regular expression"


def _prometheus_relabel_regex_required(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.prometheus_config_field_newer,
                 "this Prometheus requires a regex in every relabel config: it predates 0.17.0, which made the "
                 "default regex (.*), so a file written for a later release does not load",
                 Fix("upgrade Prometheus to 0.17.0 or later (images.prometheus; stackctl's default is "
                     "prom/prometheus:v3.5.0), or write `regex: (.*)` in each relabel config; check the file with "
                     "the promtool of the same release as the server (a newer promtool passes what an older server "
                     f"refuses: match promtool and Prometheus versions); {_CONFIG_RENDERED}", key="images.prometheus"))


def _prometheus_config_field_misplaced(evidence: Evidence) -> Diagnosis:
    """A field a scrape job takes, written outside one (under global:, at the top level): the section
    is wrong, not the release. fallback_scrape_protocol is per job only (Prometheus 3.0 and later; its
    global: has none, prometheus#15830 asks for one)."""
    fields = evidence.all_found(_MISPLACED, "field")
    line = evidence.read(_CONFIG_LINE).get("line")
    names = ", ".join(f"`{name}`" for name in fields)
    alertmanagers = [name for name in fields if _JOB_FIELDS[name]]
    also = (f" ({', '.join(alertmanagers)} also go{'es' if len(alertmanagers) == 1 else ''} in an "
            "alerting.alertmanagers entry)" if alertmanagers else "")
    newer = (" (Prometheus 3.0 and later take fallback_scrape_protocol there, per job: Prometheus's global: has "
             "none, prometheus#15830 asks for one, so set it in each job)" if "fallback_scrape_protocol" in fields
             else "")
    at = f" at line {line}" if line else ""
    return found(evidence, Cause.prometheus_config_field_misplaced,
                 f"Prometheus refuses prometheus.yml: {names}{at} sits outside a scrape job (config.plain: under "
                 "global: or at the top level), the only place it is taken, so it does not start",
                 Fix(f"move {names}{at} of prometheus.yml into each scrape job that needs it: under a scrape_configs "
                     f"entry, indented beside its job_name (`scrape_configs:` then `  - job_name: NAME` and the "
                     f"field under it){newer}{also}; the error's type config.plain is the section it sits in now, "
                     f"not a scrape job, which Prometheus calls config.ScrapeConfig; {_CONFIG_RENDERED}"),
                 fields=", ".join(fields), **({"line": int(line)} if line else {}))


# A value of the wrong YAML type: "line 15: cannot unmarshal !!map into []*config.RemoteWriteConfig".
_WRONG_TYPE = re.compile(r"cannot unmarshal !!(?P<got>\w+)(?: `[^`]*`)? into (?P<list>\[\])?\*?(?:[\w.]*\.)?(?P<type>\w+)")
_SECTIONS = {"RemoteWriteConfig": "remote_write", "RemoteReadConfig": "remote_read", "ScrapeConfig": "scrape_configs",
             "AlertmanagerConfig": "alertmanagers", "StaticConfig": "static_configs", "RelabelConfig": "relabel_configs",
             "GlobalConfig": "global"}
_FIRST_FIELD = {"remote_write": "url", "remote_read": "url", "scrape_configs": "job_name", "static_configs": "targets",
                "alertmanagers": "static_configs", "relabel_configs": "source_labels"}


def _wrong_type(evidence: Evidence) -> str:
    """What the first wrong-typed value should be, in YAML's terms, or ""."""
    match = _WRONG_TYPE.search(evidence.text)
    if match is None:
        return ""
    section = _SECTIONS.get(match.group("type"), match.group("type"))
    if match.group("list") and match.group("got") != "seq":
        return (f"`{section}` must be a list (a YAML sequence), not a {match.group('got')}: start each of its "
                f"entries with `- `, e.g. `{section}:` then `  - {_FIRST_FIELD.get(section, 'name')}: ...`")
    if match.group("got") == "seq":
        return f"`{section}` takes fields (a mapping), not a list: remove the `- ` before its fields"
    return f"`{section}` takes fields (a mapping), not a {match.group('got')}: indent its fields under it"


# The config file named by Prometheus's flag, and an open() of a file refused or missing: where a log
# puts `err="open ...: permission denied"` on the line after "Error loading config", the two are one record.
_CONFIG_FLAG = re.compile(r"-config\.file=\\?\"?(?P<path>/?[\w./-]+)")
_OPEN_FAILED = re.compile(r"\bopen (?P<path>/?[\w./-]+): (?P<why>permission denied|operation not permitted"
                          r"|no such file or directory)")


def _config_open_failed(evidence: Evidence) -> str:
    """How opening the config file failed where the record continues on the next lines ("" when it did
    not): the file the flag names (a .yml where it names none), not another file the next lines name."""
    named = evidence.read(_CONFIG_FLAG).get("path")
    opened = evidence.read(_OPEN_FAILED)
    path = opened.get("path", "")
    if not path or (path != named if named else not path.endswith((".yml", ".yaml"))):
        return ""
    return opened["why"]


def _prometheus_config_invalid(evidence: Evidence) -> Diagnosis:
    refused = _config_open_failed(evidence)
    if refused:
        # No parse error: the file could not be opened (read on the next line of the same record).
        return (_prometheus_config_missing if refused.startswith("no such") else _prometheus_config_permission)(evidence)
    where = evidence.read(_CONFIG_LINE)
    fields = _unknown_fields(evidence)
    line = where.get("line")
    at = f" (line {line}: {where['problem'].strip()})" if line else ""
    # A field Prometheus names under config.plain that is a command-line flag (storage.tsdb.path).
    flags = flag_fields_fix(evidence.all_found(FLAG_FIELD, "field"))
    moved = "; ".join([f"`{name}` is now {_MOVED_FIELDS[name]}: rename {name}" for name in fields
                       if name in _MOVED_FIELDS] + ([typed] if (typed := _wrong_type(evidence)) else [])
                      + ([flags] if flags else []))
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
                 Fix("make the file readable by the user Prometheus runs as: the prom/prometheus image runs as "
                     f"{_USER} (uid {_UID}), and stackctl bind-mounts rendered/prometheus/prometheus.yml read-only, so "
                     "the file and its directories must be readable by others (`chmod 644` the file, `chmod a+rx` the "
                     f"directories; a umask of 077 when stackctl rendered it makes them owner-only), or owned by {_UID}; "
                     "on an SELinux host (Fedora, RHEL) label the mount for containers (`chcon -Rt container_file_t "
                     "DIR`). Running the container with `user: root` also works but is not needed; then `stackctl up`"),
                 **({"path": path} if path else {}))


_MISSING_FILE = re.compile(r"open (?P<path>/?[\w./-]+): no such file or directory")


def _prometheus_config_missing(evidence: Evidence) -> Diagnosis:
    """No file at --config.file inside the container: a bind mount whose host path holds no
    prometheus.yml (a relative path resolved from another directory, a file never created or
    downloaded, a whole directory mounted over /etc/prometheus)."""
    path = evidence.read(_MISSING_FILE).get("path", "/etc/prometheus/prometheus.yml")
    return found(evidence, Cause.prometheus_config_missing,
                 f"Prometheus's configuration file {path} does not exist where it runs, so it does not start; the "
                 "file's content is not the problem",
                 Fix(f"create the prometheus.yml that {path} is mounted from: a bind mount's host path (the left side "
                     "of `HOST:CONTAINER` in docker-compose.yml; a relative one is relative to the Compose file's "
                     "directory) must hold the file before the container starts: download the config file the "
                     "project ships, or write one (`promtool check config FILE` checks it); a directory mounted over "
                     "/etc/prometheus must contain prometheus.yml. stackctl writes its own, rendered/prometheus/"
                     "prometheus.yml, on `stackctl up`: run that rather than `docker compose up` on the rendered "
                     "file alone"), path=path)


# The lines around a rule file's failure that say which file and why (the rule manager's error is
# logged just above main's "error loading rules"; promtool names the file a few lines above).
_RULES_BEFORE, _RULES_AFTER = 6, 3


def _prometheus_rules_invalid(evidence: Evidence) -> Diagnosis:
    around = list(evidence.lines[max(0, evidence.index - _RULES_BEFORE):evidence.index + 1 + _RULES_AFTER])
    if not RULES_FAILED.search(evidence.line) and not reads_rules(around):
        # A YAML error with no rule file in sight: another file's (prometheus.yml's own parse error).
        raise ValueError("no rule file")
    return found(evidence, Cause.prometheus_rules_invalid,
                 "a rule file Prometheus is told to load (rule_files in prometheus.yml) does not load",
                 Fix(rules_fix(around)))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.prometheus_rules_invalid, unnamed(RULES_FAILED, YAML_ERROR), _prometheus_rules_invalid),
    # Before the parse error below, which matches the same line: a file that is not there is no bad YAML.
    signature(Cause.prometheus_config_missing,
              r"(?:couldn't load configuration|Error loading config) \(-?-config\.file.*: no such file or directory",
              _prometheus_config_missing),
    # Before the parse error below, which matches the same line: an open() refused is no bad YAML.
    signature(Cause.prometheus_config_permission,
              r"(?:couldn't load configuration|Error loading config) \(-?-config\.file.*: (?:permission denied"
              r"|operation not permitted)", _prometheus_config_permission),
    # Before the generic parse error below, which matches the same lines: refusals told apart by cause.
    signature(Cause.prometheus_alertmanager_api_v1_removed, r"expected Alertmanager api version to be one of",
              _prometheus_alertmanager_api_v1_removed),
    signature(Cause.prometheus_duplicate_job_name, r"found multiple scrape configs (?:configured with the same job "
              r"name|with job name)", _prometheus_duplicate_job_name),
    # Before the newer field below, which matches the same line: a field a job takes, outside any job.
    signature(Cause.prometheus_config_field_misplaced, _MISPLACED.pattern, _prometheus_config_field_misplaced),
    signature(Cause.prometheus_config_field_newer,
              rf"field (?:{'|'.join(_NEWER_FIELDS)}) not found in type|unknown fields in \w+: (?:{'|'.join(_NEWER_FIELDS)})\b",
              _prometheus_config_field_newer),
    # Before the invalid config below, which matches its line too.
    signature(Cause.prometheus_config_field_newer, _RELABEL_REGEX_REQUIRED, _prometheus_relabel_regex_required),
    signature(Cause.prometheus_config_invalid,
              # Prometheus's own words, with its flag: a bare "Error loading config" is any program's
              # (Codex's config.toml says it too).
              # An open() that failed (a file missing or denied) is no parse error: its own causes above.
              r"parsing YAML file \S+: |(?:couldn't load configuration|Error loading config) \(-?-config\.file"
              r"(?!.*\bopen \S+: (?:no such file|permission denied|operation not permitted))"
              # promtool's check of the file (older releases: `check-config`).
              r"|^\s*FAILED: yaml: ",
              _prometheus_config_invalid),
)
