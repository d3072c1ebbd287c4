"""A client refused at a model server's own route while the server is still loading the model."""

from __future__ import annotations

from stackctl.diagnosis.engine_readiness import (
    REFUSED_AT_MODEL_PATH,
    not_ready_fix,
    refused_at_model_path,
)
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _engine_not_ready(evidence: Evidence) -> Diagnosis:
    match = refused_at_model_path(evidence.text)
    if match is None:
        raise KeyError("path")  # a cut paste: the next signature reads the line
    port = int(match["port"])
    address = f"{match['host']}:{port}{match['path']}"
    key = evidence.context.port_keys.get(port)
    return found(evidence, Cause.engine_not_ready,
                 f"a client was refused at {address}, a model server's route: the server was not listening (yet)",
                 Fix(not_ready_fix(address, key), key=key), host=match["host"], port=port, path=match["path"])


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.engine_not_ready, unnamed(REFUSED_AT_MODEL_PATH), _engine_not_ready),
)
