"""vLLM that found no platform because its NVML module failed, not the GPU: read only where the log shows it (pynvml
named, vLLM 0.7.1 or 0.7.2, vLLM inside another program's log); otherwise the no-GPU reading stands."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import CONSEQUENCE, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix
from stackctl.diagnosis.vllm_platform_detection import (
    PLATFORM_UNDETECTED,
    module_evidence,
    module_fix,
)


def _module_failed(evidence: Evidence) -> Diagnosis:
    said = module_evidence(evidence.lines)
    if said is None:
        raise ValueError("nothing in the log tells the NVML module from a missing GPU")
    return found(evidence, Cause.nvml_module_unusable,
                 f"vLLM found no platform (UnspecifiedPlatform): it could not use NVML through its pynvml module ({said})",
                 Fix(f"{module_fix(said)}; then start it again"), shown=said)


SIGNATURES: tuple[Signature, ...] = (
    # Above the no-GPU reading of the same lines, which stands where the builder finds nothing to tell them apart.
    signature(Cause.nvml_module_unusable, PLATFORM_UNDETECTED.pattern, _module_failed, CONSEQUENCE + 1),
)
