"""A CUDA kernel's illegal memory access (illegal_access): a consequence weight, since a cause the log
names beats it; told whether CUDA graphs were at work when it failed."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.illegal_access import ILLEGAL_ADDRESS, illegal_access_fix
from stackctl.diagnosis.signature import CONSEQUENCE, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

# Where the log shows CUDA graphs being captured or replayed when it failed.
_UNDER_GRAPHS = re.compile(r"Capturing (?:the model for )?(?:CUDA graphs?|cudagraphs)|_capture_cudagraphs|cuda_graph\.py|cudagraph",
                           re.IGNORECASE)


def _cuda_illegal_memory_access(evidence: Evidence) -> Diagnosis:
    under_graphs = any(_UNDER_GRAPHS.search(line) for line in evidence.lines)
    return found(evidence, Cause.cuda_illegal_memory_access,
                 "a CUDA kernel read or wrote outside its memory (an illegal memory access) and the engine stopped"
                 + (", with CUDA graphs in use" if under_graphs else ""),
                 Fix(illegal_access_fix(under_graphs), key="vllm.extra_args", flag="--compilation-config"))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.cuda_illegal_memory_access, ILLEGAL_ADDRESS.pattern, _cuda_illegal_memory_access, CONSEQUENCE),
)
