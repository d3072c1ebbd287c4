"""Prometheus refusing what it is asked at run time, read by their signatures and by the fallback alike.

- "query processing would load too many samples into memory in query execution": a query (a dashboard's panel
  over a long range, a recording or alerting rule over 30d) would hold more samples at once than
  --query.max-samples (50,000,000 by default; 16 bytes each, before overhead): prometheus#7281, lokomotive#801
  (a rule), scylla-monitoring#1367 (raise the flag). Narrow the query (fewer series, a shorter range or a larger
  step, a recording rule) or raise the flag where the memory is there.
- "Lifecycle API(s) is/are not enabled": POST /-/reload (or /-/quit) on a Prometheus started without
  --web.enable-lifecycle, off by default since 2.0 (dockprom#45, prometheus#9462, openshift-ansible#8080).
  SIGHUP reloads it without the flag, as a restart does.

stackctl starts Prometheus with neither flag (compose/prometheus.yml) and has no stack.yaml key for them.
"""

from __future__ import annotations

import re

TOO_MANY_SAMPLES = re.compile(r"query processing would load too many samples into memory in (?P<phase>\w+ \w+)")
LIFECYCLE_DISABLED = re.compile(r"Lifecycle APIs? (?:is|are) not enabled", re.IGNORECASE)
_OVERRIDE = ("stackctl starts Prometheus without it (compose/prometheus.yml) and stack.yaml has no key for it: add it "
             "to the prometheus service's command in an override file passed to `docker compose -f`")


def too_many_samples(text: str) -> bool:
    return TOO_MANY_SAMPLES.search(text) is not None


def too_many_samples_fix() -> str:
    return ("a query would hold more samples in memory at once than Prometheus allows, --query.max-samples "
            "(50000000 by default; each sample takes 16 bytes, and a query needs more than its samples), so Prometheus "
            "refused it: a dashboard panel or a rule over many series and a long range. Narrow the query first: fewer "
            "series (more label matchers, an aggregation by fewer labels), a shorter range or a larger step (Grafana's "
            "Min interval), or a recording rule that precomputes it. Where the host has the memory for it, raise the "
            f"limit, `--query.max-samples=100000000`: {_OVERRIDE}")


def lifecycle_disabled(text: str) -> bool:
    return LIFECYCLE_DISABLED.search(text) is not None


def lifecycle_fix() -> str:
    return ("Prometheus answers POST /-/reload (and /-/quit) only when started with --web.enable-lifecycle, off by "
            "default since Prometheus 2.0 because anyone who reaches its port may then reload or stop it. Without it, "
            "reload the configuration with SIGHUP (`docker compose kill -s SIGHUP prometheus`, natively `kill -HUP "
            "PID`) or restart it (`docker compose restart prometheus` in the rendered stack's directory); to "
            f"use the endpoint, add `--web.enable-lifecycle`: {_OVERRIDE}, and keep the port off the LAN")
