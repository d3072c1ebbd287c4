"""Every known failure signature, grouped by what failed."""

from stackctl.diagnosis.signature import Signature
from stackctl.diagnosis.signatures import arguments, connectivity, gpu, memory, model_source

SIGNATURES: tuple[Signature, ...] = (
    *memory.SIGNATURES,
    *arguments.SIGNATURES,
    *model_source.SIGNATURES,
    *gpu.SIGNATURES,
    *connectivity.SIGNATURES,
)

__all__ = ["SIGNATURES"]
