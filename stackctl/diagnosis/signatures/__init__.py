"""Every known failure signature, grouped by what failed."""

from stackctl.diagnosis.signature import Signature
from stackctl.diagnosis.signatures import (
    acme_challenges,
    arguments,
    certbot_refusals,
    chat_requests,
    client_certificates,
    clients,
    connectivity,
    container,
    cuda_faults,
    docker_client,
    docker_network,
    docker_nftables,
    driver_handoff,
    engine,
    engine_builds,
    gpu,
    gpu_runtime,
    grafana_datasources,
    grafana_plugins,
    grafana_provisioning,
    kernel_modules,
    listen_address,
    memory,
    model_source,
    monitoring,
    mounts,
    newer_services,
    nginx_directives,
    nginx_locations,
    nginx_resolvers,
    nginx_servers,
    nginx_upstream_access,
    nginx_user,
    node_filesystems,
    node_privileges,
    open_files,
    prometheus_config,
    prometheus_queries,
    quantization,
    registry_certificates,
    requests,
    scrape,
    service_configs,
    setup_files,
    supervisor,
    supervisor_config,
    supervisor_privileges,
    tls_files,
    upstream_tls,
    web,
    web_configs,
    weight_files,
)

# Among signatures of equal weight matching one line, the earlier group wins: Docker's "no space
# left on device" unpacking an image is the container group's, not the model download's.
SIGNATURES: tuple[Signature, ...] = (
    *mounts.SIGNATURES,
    *container.SIGNATURES,
    *registry_certificates.SIGNATURES,
    *docker_client.SIGNATURES,
    *docker_network.SIGNATURES,
    *docker_nftables.SIGNATURES,
    *gpu_runtime.SIGNATURES,
    *driver_handoff.SIGNATURES,
    *kernel_modules.SIGNATURES,
    *memory.SIGNATURES,
    *arguments.SIGNATURES,
    *requests.SIGNATURES,
    *chat_requests.SIGNATURES,
    *model_source.SIGNATURES,
    *weight_files.SIGNATURES,
    *quantization.SIGNATURES,
    *gpu.SIGNATURES,
    *engine.SIGNATURES,
    *engine_builds.SIGNATURES,
    *cuda_faults.SIGNATURES,
    *connectivity.SIGNATURES,
    *listen_address.SIGNATURES,
    *tls_files.SIGNATURES,
    *upstream_tls.SIGNATURES,
    *web.SIGNATURES,
    *acme_challenges.SIGNATURES,
    *certbot_refusals.SIGNATURES,
    *nginx_servers.SIGNATURES,
    *nginx_locations.SIGNATURES,
    *nginx_directives.SIGNATURES,
    *nginx_resolvers.SIGNATURES,
    *nginx_user.SIGNATURES,
    *nginx_upstream_access.SIGNATURES,
    *setup_files.SIGNATURES,
    *newer_services.SIGNATURES,
    *service_configs.SIGNATURES,
    *monitoring.SIGNATURES,
    *grafana_plugins.SIGNATURES,
    *grafana_provisioning.SIGNATURES,
    *grafana_datasources.SIGNATURES,
    *node_filesystems.SIGNATURES,
    *node_privileges.SIGNATURES,
    *web_configs.SIGNATURES,
    *prometheus_config.SIGNATURES,
    *prometheus_queries.SIGNATURES,
    *scrape.SIGNATURES,
    *supervisor.SIGNATURES,
    *supervisor_config.SIGNATURES,
    *supervisor_privileges.SIGNATURES,
    *open_files.SIGNATURES,
    *clients.SIGNATURES,
    *client_certificates.SIGNATURES,
)

# Round 38's misses, built by cause, in one block: within a weight, a line's earlier group wins, and none of these
# shares a line of the logs it is built from with an earlier group's signature of its weight (bound_ports outweighs
# connectivity's port-in-use).
from stackctl.diagnosis.signatures import (
    bound_ports,
    host_networking,
    name_hash,
    plugin_catalogue,
    provisioning_rows,
    upstream_closed,
)

SIGNATURES = (
    *SIGNATURES,
    *host_networking.SIGNATURES,
    *bound_ports.SIGNATURES,
    *upstream_closed.SIGNATURES,
    *name_hash.SIGNATURES,
    *provisioning_rows.SIGNATURES,
    *plugin_catalogue.SIGNATURES,
)

__all__ = ["SIGNATURES"]

# Round 40's misses, built by cause (one block at the end, for merges): a container name another container holds, a
# healthcheck running a command its image lacks, a certificate file whose PEM blocks do not decode, samples Prometheus
# drops for their timestamps and a scrape_config_files file without its key. None shares a line of the logs it is
# built from with an earlier signature (the nvidia-smi exec keeps gpu_runtime's reading: the trigger leaves it out).
from stackctl.diagnosis.signatures import (
    certificate_encoding,
    healthchecks,
    name_conflicts,
    sample_bounds,
    scrape_files,
)

SIGNATURES = (*SIGNATURES, *name_conflicts.SIGNATURES, *healthchecks.SIGNATURES, *certificate_encoding.SIGNATURES,
              *sample_bounds.SIGNATURES, *scrape_files.SIGNATURES)
