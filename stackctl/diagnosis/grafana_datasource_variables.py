"""A provisioned Grafana dashboard whose datasource is a template variable provisioning does not resolve, read by its
signature and by the fallback alike.

A dashboard exported "for sharing externally" names its datasource as an import input, `${DS_PROMETHEUS}`, which the
import dialog fills in; file provisioning (and the sidecars that write its directory) does no import, so the
dashboard keeps the literal name: "Datasource named ${DS_PROMETHEUS} was not found" when it loads (grafana#11018,
grafana#10786, kubernetes/ingress-nginx#4190, dcgm-exporter#90, pi-cluster#18, lstn/misc-grafana-dashboards#10).
Legacy alert rules cannot use template variables at all, so provisioning refuses such a dashboard: "failed to save
dashboard ... Alert validation error: Data source used by alert rule not found, alertName=X, datasource=${datasource}"
(kube-prometheus#115; nucypher-monitoring#6 with DS_PROMETHEUS). Name the datasource itself (its uid), or declare
the variable as a `datasource` template variable in the dashboard's templating list.

stackctl provisions one Prometheus datasource, uid `stackctl-prometheus`, and its own dashboards name it by uid.
"""

from __future__ import annotations

import re

# A variable: `${X}`/`$X`, or an export's input name DS_X written without its `${}` (nucypher-monitoring#6); a
# datasource of another name that is not there ("Datasource named prometheus-k8s was not found") is no variable.
_VARIABLE = r"(?:\$\{?\w+\}?|DS_\w+)"
UNRESOLVED = re.compile(r"(?:[Dd]atasource named (?P<named>" + _VARIABLE + r") was not found"
                        r"|Data source used by alert rule not found, alertName=(?P<alert>[^,\"]+), "
                        r"datasource=(?P<variable>" + _VARIABLE + r")(?![\w-]))")


def unresolved(text: str) -> re.Match[str] | None:
    """The datasource variable `text` says Grafana could not resolve (and the alert rule that uses it), or None."""
    return UNRESOLVED.search(text)


def unresolved_fix(match: re.Match[str]) -> str:
    variable = match["named"] or match["variable"]
    name = variable.strip("${}")
    alert = match["alert"]
    where = (f"the alert rule {alert.strip()} of a provisioned dashboard uses the datasource {variable}" if alert else
             f"a provisioned dashboard names its datasource {variable}")
    alerting = (" An alert rule cannot use a template variable at all (Grafana's legacy dashboard alerts), so there "
                "only an explicit datasource works." if alert else "")
    return (f"{where}, a template variable that provisioning does not resolve: an exported dashboard's import input "
            f"(`${{{name}}}` from `__inputs`) is filled in by the import dialog only, never by file provisioning. Set "
            "an explicit datasource in the dashboard JSON: replace the variable with the datasource's uid, "
            "`\"datasource\": {\"type\": \"prometheus\", \"uid\": \"stackctl-prometheus\"}` for stackctl's Prometheus "
            "(or its name, \"Prometheus\", in older dashboards), and delete `__inputs`; or keep panels on "
            f"`${{{name}}}` and declare it in the dashboard as a template variable of type datasource "
            f"(`templating.list`: {{\"name\": \"{name}\", \"type\": \"datasource\", \"query\": \"prometheus\"}}).{alerting} "
            "stackctl provisions that one Prometheus datasource (uid stackctl-prometheus) and its own dashboards in "
            "grafana/dashboards/ name it by uid: the dashboard was added by hand; then restart Grafana")
