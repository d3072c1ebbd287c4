"""Samples Prometheus drops because their timestamps lie outside what its database accepts, read by the signature
and by the fallback alike.

Prometheus stamps a scraped sample with the scrape's time unless the target sends a timestamp of its own. Its head
block takes samples from about an hour before its newest one up to ten minutes ahead of its clock (and, with an
out-of-order window, older ones): a sample outside is dropped, and each scrape says so at warn: 'msg="Error on
ingesting samples that are too old or are too far into the future" num_dropped=N'. The scrape succeeds; the target's
series stay empty. The usual cause is an exporter that stamps its samples with the time a value was measured or last
changed (cloudwatch_exporter#100, fixed by a per-metric switch to drop CloudWatch's timestamps, #102;
ClusterLabs/ha_cluster_exporter#89, which stopped sending them; thegreenwebfoundation/grid-intensity-go#86: hourly
data, out_of_order_time_window); a clock out of step on the exporter's host or on Prometheus's own (prometheus#10028)
is the other.
"""

from __future__ import annotations

import re

OUT_OF_BOUNDS = re.compile(r"Error on ingesting samples that are too old or are too far into the future")
_SCRAPE = re.compile(r"scrape_pool=\"?(?P<pool>[^\"\s]+)\"?.*?target=\"?(?P<target>[^\"\s]+)\"?")
_DROPPED = re.compile(r"num_?[dD]ropped=(?P<dropped>\d+)")


def out_of_bounds(text: str) -> re.Match[str] | None:
    return OUT_OF_BOUNDS.search(text)


def scrape_named(text: str) -> dict[str, str]:
    """The scrape job (its pool), the target and how many samples were dropped, where the line says."""
    named: dict[str, str] = {}
    scrape = _SCRAPE.search(text)
    if scrape:
        named.update(job=scrape["pool"], target=scrape["target"])
    dropped = _DROPPED.search(text)
    if dropped:
        named["dropped"] = dropped["dropped"]
    return named


def out_of_bounds_fix(job: str | None) -> str:
    where = f"the scrape job {job}" if job else "its scrape job"
    return (f"a target of {'the scrape job ' + job if job else 'a scrape job'} sends samples with timestamps of its own that lie outside what Prometheus's "
            "database accepts (older than about an hour before its newest sample, or more than ten minutes ahead of "
            "its clock), so they are dropped and the series stay empty. Most often the exporter stamps each sample "
            "with when it was measured or last changed: let Prometheus stamp the scrape time instead, "
            f"`honor_timestamps: false` in {where} (or the exporter's own switch, cloudwatch_exporter's `set_timestamp: "
            "false`), or let Prometheus take older samples: `out_of_order_time_window` (e.g. 2h) under `storage: tsdb:` "
            "in prometheus.yml (Prometheus 2.39 and later; `outOfOrderTimeWindow` under spec.tsdb of the Prometheus "
            "Operator's Prometheus resource). Otherwise a clock is off: compare `date -u` on the exporter's host and on "
            "Prometheus's, and keep both synchronized (`timedatectl` shows NTP). stackctl's own exporters send no "
            "timestamps: this is a target added to the rendered prometheus.yml by hand")
