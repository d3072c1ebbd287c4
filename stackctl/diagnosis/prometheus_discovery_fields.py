"""A file_sd_configs field written outside a file_sd_configs entry: `files:` (and its refresh_interval) under
static_configs, at a scrape job's level or at the top of prometheus.yml. Read by the misplaced-field signature and by
the fallback alike.

Prometheus names the section it found the field in, not the one the field belongs to: "unknown fields in
target_group: files" for a static_configs entry (prometheus#1801, promtool's words; file_sd_configs was meant),
"unknown fields in config: files" outside any job (prometheus#2246: the docs' snippet pasted without its job);
Prometheus 2 and later say "field files not found in type ...".
"""

from __future__ import annotations

import re

DISCOVERY_FIELD = re.compile(r"unknown fields in (?P<section>\w+)(?: config)?: (?P<old>files|refresh_interval)\b"
                             r"|field (?P<field>files|refresh_interval) not found in type (?P<type>[\w.]+)")
# Where Prometheus says it found the field.
_SECTIONS = {"target_group": "in a static_configs entry (a target group), which takes only targets and labels",
             "struct": "in a static_configs entry (a target group), which takes only targets and labels",
             "scrape_config": "at the scrape job's own level", "config.ScrapeConfig": "at the scrape job's own level"}


def discovery_field(text: str) -> tuple[str, str] | None:
    """(field, section Prometheus found it in) for a file_sd_configs field outside one, or None."""
    match = DISCOVERY_FIELD.search(text)
    if match is None:
        return None
    return match["old"] or match["field"], match["section"] or match["type"]


def discovery_field_fix(field: str, section: str) -> str:
    where = _SECTIONS.get(section, "outside any file_sd_configs entry (at the top of the file or under global:)")
    return (f"`{field}` is a field of a file_sd_configs entry (file-based service discovery), written {where}, so "
            "Prometheus refuses it as an unknown field there. Put it under file_sd_configs in the scrape job: "
            "`- job_name: NAME`, then `  file_sd_configs:` and `    - files: ['/etc/prometheus/targets/*.json']` "
            "(refresh_interval beside files), not under static_configs; `promtool check config prometheus.yml` checks "
            "the file. stackctl renders its prometheus.yml from stack.yaml (rendered/prometheus/prometheus.yml): a job "
            "added there by hand is lost at the next `stackctl up`")
