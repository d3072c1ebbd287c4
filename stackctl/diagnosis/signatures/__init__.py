"""Every known failure signature, grouped by what failed."""

from stackctl.diagnosis.signature import Signature
from stackctl.diagnosis.signatures import (
    acme_challenges,
    arguments,
    chat_requests,
    clients,
    connectivity,
    container,
    docker_client,
    engine,
    engine_builds,
    gpu,
    gpu_runtime,
    memory,
    model_source,
    monitoring,
    mounts,
    newer_services,
    nginx_servers,
    node_filesystems,
    prometheus_config,
    quantization,
    requests,
    scrape,
    service_configs,
    setup_files,
    supervisor,
    web,
)

# Among signatures of equal weight matching one line, the earlier group wins: Docker's "no space
# left on device" unpacking an image is the container group's, not the model download's.
SIGNATURES: tuple[Signature, ...] = (
    *mounts.SIGNATURES,
    *container.SIGNATURES,
    *docker_client.SIGNATURES,
    *gpu_runtime.SIGNATURES,
    *memory.SIGNATURES,
    *arguments.SIGNATURES,
    *requests.SIGNATURES,
    *chat_requests.SIGNATURES,
    *model_source.SIGNATURES,
    *quantization.SIGNATURES,
    *gpu.SIGNATURES,
    *engine.SIGNATURES,
    *engine_builds.SIGNATURES,
    *connectivity.SIGNATURES,
    *web.SIGNATURES,
    *acme_challenges.SIGNATURES,
    *nginx_servers.SIGNATURES,
    *setup_files.SIGNATURES,
    *newer_services.SIGNATURES,
    *service_configs.SIGNATURES,
    *monitoring.SIGNATURES,
    *node_filesystems.SIGNATURES,
    *prometheus_config.SIGNATURES,
    *scrape.SIGNATURES,
    *supervisor.SIGNATURES,
    *clients.SIGNATURES,
)

__all__ = ["SIGNATURES"]
