"""A file of scrape_config_files holding a bare list of jobs, without its `scrape_configs:` key."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.prometheus_scrape_files import BARE_LIST, bare_list_fix, scrape_file_named
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _bare_list(evidence: Evidence) -> Diagnosis:
    file = scrape_file_named(evidence.text)
    return found(evidence, Cause.prometheus_config_invalid,
                 f"Prometheus cannot load {file or 'a file of scrape_config_files'}: it holds a bare list of scrape jobs "
                 "where a `scrape_configs:` key belongs, so those jobs are not scraped",
                 Fix(bare_list_fix(file)), **({"file": file} if file else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.prometheus_config_invalid, BARE_LIST.pattern, _bare_list),
)
