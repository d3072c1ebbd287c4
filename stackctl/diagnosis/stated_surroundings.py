"""Causes an error line states about what surrounds a service (the DNS records it is checked by, a file downloaded
for it, the browser that opens it, its connection limit, a file another program writes for it, the Python packages
beside it), as the readers of their classes know them, for the fallback (stated_classes) to name the fix of where a
signature misses the line:

- the DNS-01 challenge answered by another TXT record than the order's ("Incorrect TXT record "V" found at
  _acme-challenge.NAME"): acme_dns_records;
- a Compose file that does not parse as YAML (PyYAML's error, or its place line naming the file): compose_files;
- Grafana Live refusing a browser's origin ("Request Origin is not authorized"): grafana_live_origins;
- nginx's workers out of connections ("N worker_connections are not enough"): nginx_worker_connections;
- node-exporter's textfile collector denied a .prom file: node_textfiles;
- vLLM's platform not detected where the line itself shows vLLM inside another program's log, or names pynvml:
  vllm_platform_detection.

An image without the `latest` tag a pull asks for (image_tags) is read where the fallback reads every refused image
(stated_causes), so that its words lead there.
"""

from __future__ import annotations

from collections.abc import Sequence

from stackctl.diagnosis.acme_dns_records import wrong_record, wrong_record_fix
from stackctl.diagnosis.compose_files import (
    compose_yaml_error,
    compose_yaml_fix,
    compose_yaml_place,
)
from stackctl.diagnosis.grafana_live_origins import refused_origin, refused_origin_fix
from stackctl.diagnosis.nginx_worker_connections import connections_exhausted, connections_fix
from stackctl.diagnosis.node_textfiles import textfile_denied, textfile_fix
from stackctl.diagnosis.stated_cause import StatedCause
from stackctl.diagnosis.vllm_platform_detection import (
    PLATFORM_UNDETECTED,
    module_evidence,
    module_fix,
)


def surroundings_stated(line: str, traceback: Sequence[str] = ()) -> list[StatedCause]:
    """The causes `line` states that these readers know; `traceback`: the error's own frames (a module vLLM imported
    may be named there)."""
    return [*_dns_record(line), *_compose_file(line), *_live_origin(line), *_worker_connections(line),
            *_textfile(line), *_nvml_module(line, traceback)]


def _dns_record(line: str) -> list[StatedCause]:
    record = wrong_record(line)
    return [] if record is None else [StatedCause(f"DNS-01 TXT record: {record.name or 'another record'}",
                                                  wrong_record_fix(record))]


def _compose_file(line: str) -> list[StatedCause]:
    error = compose_yaml_error(line) or compose_yaml_place(line)
    return [] if error is None else [StatedCause(f"Compose file YAML: {error.file}", compose_yaml_fix(error))]


def _live_origin(line: str) -> list[StatedCause]:
    refused = refused_origin(line)
    if refused is None:
        return []
    return [StatedCause(f"Grafana Live origin: {refused.origin or 'refused'}", refused_origin_fix(refused),
                        env="GF_LIVE_ALLOWED_ORIGINS")]


def _worker_connections(line: str) -> list[StatedCause]:
    exhausted = connections_exhausted(line)
    return [] if exhausted is None else [StatedCause(f"worker_connections {exhausted.count}",
                                                     connections_fix(exhausted))]


def _textfile(line: str) -> list[StatedCause]:
    path = textfile_denied(line)
    return [] if path is None else [StatedCause(f"textfile collector: {path}", textfile_fix(path))]


def _nvml_module(line: str, traceback: Sequence[str]) -> list[StatedCause]:
    if not PLATFORM_UNDETECTED.search(line):
        return []
    said = module_evidence([line, *traceback])
    return [] if said is None else [StatedCause("vLLM's NVML module", module_fix(said))]
