"""certbot's DNS-01 challenge answered by another TXT record than the one the order needs."""

from __future__ import annotations

from stackctl.diagnosis.acme_dns_records import WRONG_TXT, wrong_record, wrong_record_fix
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _wrong_txt(evidence: Evidence) -> Diagnosis:
    record = wrong_record(evidence.text, "\n".join(evidence.lines))
    if record is None:
        raise ValueError("the refusal is not on this line")
    name = record.name or "_acme-challenge"
    return found(evidence, Cause.certbot_dns_txt_mismatch,
                 f"Let's Encrypt found another TXT record at {name} than the DNS-01 challenge's token: another record "
                 "answers for that name (a CNAME, a stale TXT record, or the order's other token)",
                 Fix(f"{wrong_record_fix(record)}; then run certbot again"),
                 **({"name": record.name} if record.name else {}), **({"value": record.value} if record.value else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.certbot_dns_txt_mismatch, unnamed(WRONG_TXT), _wrong_txt),
)
