"""A Grafana provisioning file that is not one of its kind, read by its signature and by the fallback alike.

Grafana reads every .yaml/.yml file in provisioning/dashboards/ (and datasources/, notifiers/, alerting/) as a
provisioning file of that kind: `apiVersion: 1` and a list under `providers:` (`datasources:`, ...). A file
without a numeric apiVersion is read in the old format, a bare list, so a map there fails with "could not parse
provisioning config file: X error: yaml: unmarshal errors: line 1: cannot unmarshal !!map into
[]*dashboards.DashboardsAsConfigV0" (caliper-benchmarks#26, a dashboard's JSON saved under a .yaml name there),
and Grafana stops. Grafana's own config reader (pkg/services/provisioning/dashboards/config_reader.go) tells the
two formats apart by apiVersion alone.
"""

from __future__ import annotations

import re

NOT_PROVISIONING = re.compile(
    r"(?:could not parse provisioning config file: (?P<file>\S+?) error: |[Pp]rovisioning error: )"
    r"yaml: unmarshal errors:.*?cannot unmarshal !!(?P<got>\w+)(?: `[^`]*`)? into \[?\]?\*?"
    r"(?P<kind>dashboards|datasources|notifiers|alerting)\.(?P<type>\w+)")

_DIRECTORIES = {"dashboards": "providers", "datasources": "datasources", "notifiers": "notifiers",
                "alerting": "groups"}


def not_provisioning(text: str) -> re.Match[str] | None:
    """Grafana's refusal of a provisioning file of the wrong shape, with the file, the YAML it found and the
    kind of provisioning, or None."""
    return NOT_PROVISIONING.search(text)


def not_provisioning_fix(match: re.Match[str]) -> str:
    kind, file = match["kind"], match["file"] or "the file"
    listed = _DIRECTORIES[kind]
    where = f"provisioning/{kind}/{match['file'] or ''}"
    text = (f"{where} is not a {kind} provisioning file Grafana can read: Grafana reads every .yaml/.yml file in "
            f"provisioning/{kind}/ as one, `apiVersion: 1` then a list under `{listed}:`; without a numeric "
            f"apiVersion it expects the old format, a bare list, and a YAML {match['got']} fails there. ")
    if kind == "dashboards":
        text += (f"Most often {file} is a dashboard JSON in the provisioning directory under a .yaml/.yml file "
                 "extension (an exported dashboard is a JSON object, which YAML reads as a map), where a provider "
                 "file belongs: dashboards go as .json files in the directory a provider's options.path names; move "
                 "it there and rename the file to .json. Otherwise it is a provider file without `apiVersion: 1` at its top: add it, with "
                 "the providers under `providers:` (name, type: file, options: path: DIR). ")
    else:
        text += f"Add `apiVersion: 1` at its top with the entries under `{listed}:`, or move the file out. "
    return text + ("stackctl's own provisioning (grafana/provisioning/dashboards/stackctl.yml) reads the dashboards "
                   "in grafana/dashboards/; `stackctl up` renders both again")
