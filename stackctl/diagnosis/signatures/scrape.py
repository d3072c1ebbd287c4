"""Prometheus 3 refusing a scrape whose Content-Type it cannot trust: a target that sends none or a
wrong one (an exporter written for Prometheus 2, which guessed the text format), or a port that
answers with another server's web page; and a scrape body Prometheus cannot parse (a value that is
no number: a driver version, an empty field a newer driver deprecates, a string under MIG)."""

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


# The metric line Prometheus quotes, and the value it could not read as a number.
_BAD_LINE = re.compile(r"while parsing:? \\?\"(?P<metric>[A-Za-z_:][\w:]*)|ParseFloat: parsing \\?\"(?P<value>[^\"\\]*)")
_GPU_WORDS = re.compile(r"nvidia|dcgm|\bgpu", re.IGNORECASE)


def _exporter_invalid_metric_output(evidence: Evidence) -> Diagnosis:
    """An exporter wrote a sample whose value is no number (nvidia-smi's "455.32.00", an empty value
    for a field the driver deprecated, a MIG string): Prometheus drops the whole scrape. Exporters fix
    it in newer releases; the image key is the GPU exporter's when the metrics are a GPU's."""
    bad = evidence.read(_BAD_LINE)
    target, job = evidence.read(_TARGET), evidence.read(_JOB).get("job", "")
    gpu = job == "gpu" or bool(_GPU_WORDS.search(evidence.text))
    image_key = _JOB_IMAGES.get(job) or ("images.gpu-exporter" if gpu else None)
    what = f"the sample {bad['metric']}" if bad.get("metric") else (
        f"the value \"{bad['value']}\"" if "value" in bad else "a sample")
    where = f" from {target['target']}" if target else ""
    return found(evidence, Cause.exporter_invalid_metric_output,
                 f"Prometheus cannot parse {what}{where}: the exporter wrote a value that is no number, and "
                 "Prometheus drops that target's whole scrape",
                 Fix("use a newer exporter release, which writes such fields as labels or skips them (re-pull the "
                     f"image: {'set ' + image_key + ' in stack.yaml to its current tag' if image_key else 'update that exporter'}"
                     "; a field a newer driver deprecated, an nvidia-smi driver version with two dots or MIG's string "
                     "fields are the usual ones); `curl -s TARGET/metrics` shows the line. stackctl's default GPU "
                     "exporter (nvidia_gpu_exporter) writes the driver version as a label", key=image_key),
                 severity=Severity.advisory, **({"metric": bad["metric"]} if bad.get("metric") else {}),
                 **({"value": bad["value"]} if "value" in bad else {}))


SIGNATURES: tuple[Signature, ...] = (
    # Prometheus 3.0's two wordings: a Content-Type it does not know, and none at all.
    signature(Cause.prometheus_scrape_content_type,
              # (a paste cut after the type still names it)
              r"received unsupported Content-Type \\?\"[^\"\\]*(?:\\?\"? and no fallback_scrape_protocol|$)"
              r"|non-compliant scrape target sending blank Content-Type and no fallback_scrape_protocol",
              _scrape_content_type, ADVISORY + 1),
    # Prometheus's text parser (2.x and 3.x) and its older append error, on a value that is no number.
    signature(Cause.exporter_invalid_metric_output,
              r"expected value after metric, got|unsupported character in float while parsing"
              r"|strconv\.ParseFloat: parsing \\?\"[^\"\\]*\\?\": invalid syntax", _exporter_invalid_metric_output, ADVISORY + 1),
)
