"""Prometheus settings that are command-line flags, not fields of prometheus.yml: written into the file
(`storage: tsdb: path:`, `storage: tsdb: retention: time:`), Prometheus refuses the field ("field path
not found in type config.plain"); the web server's TLS and basic auth live in the file --web.config.file
names, not in prometheus.yml."""

from __future__ import annotations

import re

# The field Prometheus names, and the flag that sets it.
FLAG_FIELDS = {
    "path": "--storage.tsdb.path",
    "retention": "--storage.tsdb.retention.time (or --storage.tsdb.retention.size)",
    "retention_time": "--storage.tsdb.retention.time",
    "retention_size": "--storage.tsdb.retention.size",
    "listen_address": "--web.listen-address",
    "external_url": "--web.external-url",
    "enable_lifecycle": "--web.enable-lifecycle",
    "enable_admin_api": "--web.enable-admin-api",
}
# Fields of the web configuration file (--web.config.file), not of prometheus.yml.
WEB_CONFIG_FIELDS = ("tls_server_config", "basic_auth_users", "http_server_config")
FLAG_FIELD = re.compile(rf"field (?P<field>{'|'.join((*FLAG_FIELDS, *WEB_CONFIG_FIELDS))}) not found in type "
                        r"config\.plain")
# What stackctl's Prometheus is started with (compose/prometheus.yml): stack.yaml has no key for these.
_STACKCTL_FLAGS = ("stackctl starts Prometheus with --config.file, --storage.tsdb.path (/prometheus under Compose, "
                   "data/prometheus natively), --storage.tsdb.retention.time=30d (Compose) and --web.listen-address "
                   "(ports.prometheus); stack.yaml has no key for the others: add one to the prometheus service's "
                   "command in an override file passed to `docker compose -f`")


def flag_fields_fix(fields: list[str]) -> str:
    """What to do with these fields of prometheus.yml that belong elsewhere ("" where none does)."""
    flags = [f"`{name}` is the flag {FLAG_FIELDS[name]}" for name in dict.fromkeys(fields) if name in FLAG_FIELDS]
    web = [name for name in dict.fromkeys(fields) if name in WEB_CONFIG_FIELDS]
    said = []
    if flags:
        said.append(f"{', '.join(flags)}, a command-line flag of Prometheus, not a field of prometheus.yml: remove it "
                    f"from the file (and the `tsdb:`, `storage:` or `web:` key above it where nothing else is under it) and pass the flag on Prometheus's "
                    f"command line; {_STACKCTL_FLAGS}")
    if web:
        said.append(f"{', '.join(f'`{name}`' for name in web)} belong{'s' if len(web) == 1 else ''} in the web "
                    "configuration file that --web.config.file names (`promtool check web-config FILE` checks it), "
                    "not in prometheus.yml")
    return "; ".join(said)
