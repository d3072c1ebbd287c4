"""Prometheus 3 refusing a scrape whose Content-Type it cannot trust: a target that sends none or a
wrong one (an exporter written for Prometheus 2, which guessed the text format), or a port that
answers with another server's web page."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

# The exporter behind each of stackctl's scrape jobs (prometheus/prometheus.yml.j2).
_JOB_IMAGES = {"gpu": "images.gpu-exporter", "node": "images.node-exporter"}
_TARGET = re.compile(r"target=\"?(?P<target>https?://[^\s\"]+?:(?P<port>\d+)\S*?)\"?(?:\s|$)")
_JOB = re.compile(r"scrape_pool=\"?(?P<job>[\w./-]+)")
_TYPE = re.compile(r"received unsupported Content-Type \\?\"(?P<type>[^\"\\]*)")


def _scrape_content_type(evidence: Evidence) -> Diagnosis:
    target, job, content = evidence.read(_TARGET), evidence.read(_JOB).get("job", ""), evidence.read(_TYPE).get("type")
    port = int(target["port"]) if "port" in target else None
    port_key = evidence.context.port_keys.get(port) if port else None
    where = f" {target['target']}" if target else " a target"
    image_key = _JOB_IMAGES.get(job)
    sent = f"labels its reply {content}" if content else "sends no Content-Type"
    upgrade = (f"set {image_key} in stack.yaml to a release that sends text/plain" if image_key else
               "use a release of that exporter that sends text/plain")
    return found(evidence, Cause.prometheus_scrape_content_type,
                 f"Prometheus 3 refuses the scrape of{where}: it {sent}, which Prometheus 2 accepted by guessing the "
                 "text format",
                 Fix("`curl -si` the target: if it shows metrics, the exporter mislabels them (a bug newer releases "
                     f"fix): {upgrade}, or pin images.prometheus to a Prometheus 2 image (prom/prometheus:v2.55.1), "
                     "which still guesses; if it shows a web page, the port is another server's: point "
                     f"{port_key or 'the ports.* key of that exporter'} in stack.yaml at the exporter. Prometheus's own "
                     "remedy, `fallback_scrape_protocol: PrometheusText0.0.4` on the scrape job, would be lost from "
                     "the prometheus.yml stackctl renders at the next `stackctl up`",
                     key=image_key or "images.prometheus"), severity=Severity.advisory,
                 **({"target": target["target"]} if target else {}), **({"content_type": content} if content else {}))


SIGNATURES: tuple[Signature, ...] = (
    # Prometheus 3.0's two wordings: a Content-Type it does not know, and none at all.
    signature(Cause.prometheus_scrape_content_type,
              r"received unsupported Content-Type .* and no fallback_scrape_protocol specified"
              r"|non-compliant scrape target sending blank Content-Type and no fallback_scrape_protocol",
              _scrape_content_type, ADVISORY + 1),
)
