"""Every known failure signature, grouped by what failed."""

from stackctl.diagnosis.signature import Signature
from stackctl.diagnosis.signatures import (
    arguments,
    clients,
    connectivity,
    container,
    engine,
    gpu,
    gpu_runtime,
    memory,
    model_source,
    monitoring,
    prometheus_config,
    quantization,
    requests,
    scrape,
    supervisor,
    web,
)

# Among signatures of equal weight matching one line, the earlier group wins: Docker's "no space
# left on device" unpacking an image is the container group's, not the model download's.
SIGNATURES: tuple[Signature, ...] = (
    *container.SIGNATURES,
    *gpu_runtime.SIGNATURES,
    *memory.SIGNATURES,
    *arguments.SIGNATURES,
    *requests.SIGNATURES,
    *model_source.SIGNATURES,
    *quantization.SIGNATURES,
    *gpu.SIGNATURES,
    *engine.SIGNATURES,
    *connectivity.SIGNATURES,
    *web.SIGNATURES,
    *monitoring.SIGNATURES,
    *prometheus_config.SIGNATURES,
    *scrape.SIGNATURES,
    *supervisor.SIGNATURES,
    *clients.SIGNATURES,
)

__all__ = ["SIGNATURES"]
