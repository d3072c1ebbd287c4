"""What a diagnosis says: the cause, the fix in stackctl's own terms, and the values the log gave."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum


class Cause(str, Enum):
    """One known way for a service to fail; the value is what `--json` style output shows."""

    # GPU memory
    cuda_graph_oom = "cuda-graph-oom"
    sampler_warmup_oom = "sampler-warmup-oom"
    weights_do_not_fit = "weights-do-not-fit"
    cuda_oom = "cuda-oom"
    no_cache_memory = "no-cache-memory"
    free_memory_below_target = "free-memory-below-target"
    kv_cache_too_small = "kv-cache-too-small"
    mamba_cache_overflow = "mamba-cache-overflow"
    # the command line and its configuration
    context_window_exceeded = "context-window-exceeded"
    refused_flag = "refused-flag"
    refused_choice = "refused-choice"
    tp_heads_not_divisible = "tp-heads-not-divisible"
    unknown_env_var = "unknown-env-var"
    auto_tool_choice_disabled = "auto-tool-choice-disabled"
    served_model_mismatch = "served-model-mismatch"
    # where the weights come from
    gated_model = "gated-model"
    model_not_found = "model-not-found"
    disk_full = "disk-full"
    trust_remote_code = "trust-remote-code"
    unknown_architecture = "unknown-architecture"
    # the GPU, its driver and the kernels built for it
    no_gpu = "no-gpu"
    driver_too_old = "driver-too-old"
    no_kernel_image = "no-kernel-image"
    bfloat16_unsupported = "bfloat16-unsupported"
    quantization_unsupported = "quantization-unsupported"
    attention_sinks_unsupported = "attention-sinks-unsupported"
    ptxas_unknown_arch = "ptxas-unknown-arch"
    cpu_attention_head_size = "cpu-attention-head-size"
    # the engine install and what it can load
    hf_cache_permission = "hf-cache-permission"
    engine_abi_mismatch = "engine-abi-mismatch"
    engine_dependency_mismatch = "engine-dependency-mismatch"
    engine_too_old_for_model = "engine-too-old-for-model"
    tokenizer_load_failed = "tokenizer-load-failed"
    tp_exceeds_gpus = "tp-exceeds-gpus"
    cuda_forked_subprocess = "cuda-forked-subprocess"
    # ports, shared memory and the links between processes and nodes
    port_in_use = "port-in-use"
    listen_address_not_on_host = "listen-address-not-on-host"
    shm_too_small = "shm-too-small"
    socket_interface = "socket-interface"
    ray_node_without_gpu = "ray-node-without-gpu"
    harmony_vocab_offline = "harmony-vocab-offline"
    hub_offline = "hub-offline"
    # the container cannot start: Docker and the NVIDIA container runtime
    container_cuda_requirement = "container-cuda-requirement"
    no_gpu_runtime = "no-gpu-runtime"
    nvml_not_injected_arm64 = "nvml-not-injected-arm64"
    gpu_driver_not_loaded = "gpu-driver-not-loaded"
    driver_library_mismatch = "driver-library-mismatch"
    wrong_architecture = "wrong-architecture"
    image_pull_denied = "image-pull-denied"
    docker_permission = "docker-permission"
    docker_not_running = "docker-not-running"
    docker_disk_full = "docker-disk-full"
    docker_kernel_module_missing = "docker-kernel-module-missing"
    mount_propagation = "mount-propagation"
    gpu_access_lost = "gpu-access-lost"
    image_pull_rate_limit = "image-pull-rate-limit"
    compose_too_old = "compose-too-old"
    cgroup_devices_missing = "cgroup-devices-missing"
    no_gpu_device = "no-gpu-device"
    # single requests to a running vLLM
    request_context_overflow = "request-context-overflow"
    system_message_position = "system-message-position"
    roles_must_alternate = "roles-must-alternate"
    system_role_unsupported = "system-role-unsupported"
    client_anthropic_beta_header_rejected = "client-anthropic-beta-header-rejected"
    tool_parser_failure = "tool-parser-failure"
    chat_template_missing = "chat-template-missing"
    tool_choice_without_tools = "tool-choice-without-tools"
    prompt_exceeds_batched_tokens = "prompt-exceeds-batched-tokens"
    request_refused_unlogged = "request-refused-unlogged"
    # an agent client pointed at the wrong place
    client_base_url = "client-base-url"
    codex_wire_api = "codex-wire-api"
    litellm_provider_prefix = "litellm-provider-prefix"
    thinking_budget = "thinking-budget"
    gateway_model_unknown = "gateway-model-unknown"
    # nginx and certbot
    nginx_certificate_missing = "nginx-certificate-missing"
    nginx_upstream_down = "nginx-upstream-down"
    nginx_upstream_timeout = "nginx-upstream-timeout"
    nginx_body_too_large = "nginx-body-too-large"
    nginx_upstream_host_unknown = "nginx-upstream-host-unknown"
    certbot_challenge_unreachable = "certbot-challenge-unreachable"
    certbot_dns_missing = "certbot-dns-missing"
    certbot_challenge_not_this_host = "certbot-challenge-not-this-host"
    certbot_rate_limited = "certbot-rate-limited"
    certbot_port_80_busy = "certbot-port-80-busy"
    certbot_nginx_plugin_missing = "certbot-nginx-plugin-missing"
    nginx_duplicate_listen = "nginx-duplicate-listen"
    nginx_header_too_big = "nginx-header-too-big"
    nginx_key_mismatch = "nginx-key-mismatch"
    # Prometheus and Grafana
    prometheus_storage_permission = "prometheus-storage-permission"
    prometheus_storage_locked = "prometheus-storage-locked"
    prometheus_config_invalid = "prometheus-config-invalid"
    prometheus_alertmanager_api_v1_removed = "prometheus-alertmanager-api-v1-removed"
    prometheus_duplicate_job_name = "prometheus-duplicate-job-name"
    prometheus_config_field_newer = "prometheus-config-field-newer"
    prometheus_config_field_misplaced = "prometheus-config-field-misplaced"
    grafana_data_permission = "grafana-data-permission"
    grafana_datasource_provisioning = "grafana-datasource-provisioning"
    grafana_plugin_offline = "grafana-plugin-offline"
    grafana_datasource_unreachable = "grafana-datasource-unreachable"
    prometheus_tsdb_corrupt = "prometheus-tsdb-corrupt"
    prometheus_scrape_timeout = "prometheus-scrape-timeout"
    gpu_exporter_profiling_unsupported = "gpu-exporter-profiling-unsupported"
    gpu_exporter_needs_sys_admin = "gpu-exporter-needs-sys-admin"
    grafana_angular_plugin_disabled = "grafana-angular-plugin-disabled"
    prometheus_config_permission = "prometheus-config-permission"
    grafana_admin_password_ignored = "grafana-admin-password-ignored"
    node_exporter_statfs_denied = "node-exporter-statfs-denied"
    node_exporter_proc_permission = "node-exporter-proc-permission"
    # supervisord (the native runtime)
    supervisor_gave_up = "supervisor-gave-up"
    supervisor_command_missing = "supervisor-command-missing"
    supervisor_spawn_failed = "supervisor-spawn-failed"
    supervisor_not_running = "supervisor-not-running"
    supervisor_port_taken = "supervisor-port-taken"
    # Round 7's misses, each built from other reports of the same cause
    client_context_window_too_small = "client-context-window-too-small"
    container_driver_libs_conflict = "container-driver-libs-conflict"
    container_runtime_missing = "container-runtime-missing"
    gpu_hook_direct = "gpu-hook-direct"
    wsl_no_gpu_adapter = "wsl-no-gpu-adapter"
    metrics_path_not_found = "metrics-path-not-found"
    grafana_config_missing = "grafana-config-missing"
    service_flag_unknown = "service-flag-unknown"
    mm_limit_per_prompt = "mm-limit-per-prompt"
    quantization_config_missing = "quantization-config-missing"
    quantization_method_unknown = "quantization-method-unknown"
    model_not_cached_offline = "model-not-cached-offline"
    # Round 8's misses, each built from other reports of the same cause
    lora_rank_too_large = "lora-rank-too-large"
    batched_tokens_below_max_model_len = "batched-tokens-below-max-model-len"
    grafana_dashboard_json_invalid = "grafana-dashboard-json-invalid"
    nccl_system_error = "nccl-system-error"
    # Wordings of newer releases
    prometheus_scrape_content_type = "prometheus-scrape-content-type"
    exporter_invalid_metric_output = "exporter-invalid-metric-output"
    grafana_preinstall_offline = "grafana-preinstall-offline"
    gpu_device_rules_denied = "gpu-device-rules-denied"
    nvidia_cdi_hook_missing = "nvidia-cdi-hook-missing"
    nvidia_toolkit_imex_channel = "nvidia-toolkit-imex-channel"
    torch_compile_failed = "torch-compile-failed"
    # Round 10's misses, each built from other reports of the same cause
    docker_client_too_old = "docker-client-too-old"
    image_entrypoint_doubled = "image-entrypoint-doubled"
    grafana_core_plugin_install = "grafana-core-plugin-install"
    grafana_install_plugins_deprecated = "grafana-install-plugins-deprecated"
    grafana_plugin_install_failed = "grafana-plugin-install-failed"
    service_flag_deprecated = "service-flag-deprecated"
    gpu_exporter_dcgm_mismatch = "gpu-exporter-dcgm-mismatch"
    vllm_unauthorized = "vllm-unauthorized"
    chat_template_content_format = "chat-template-content-format"
    cuda_graph_capture_failed = "cuda-graph-capture-failed"
    nginx_certbot_include_missing = "nginx-certbot-include-missing"
    # Round 11's misses, built by cause.
    attention_backend_forced_invalid = "attention-backend-forced-invalid"
    kernel_arch_guard = "kernel-arch-guard"
    cuda_toolkit_too_old_for_gpu = "cuda-toolkit-too-old-for-gpu"
    tokenizer_mode_unknown = "tokenizer-mode-unknown"
    spec_decode_token_budget = "spec-decode-token-budget"
    position_index_out_of_range = "position-index-out-of-range"
    supervisor_user_unknown = "supervisor-user-unknown"
    dcgm_profiling_module_missing = "dcgm-profiling-module-missing"
    dcgm_field_unsupported = "dcgm-field-unsupported"
    grafana_not_a_dashboard = "grafana-not-a-dashboard"
    nginx_directive_deprecated = "nginx-directive-deprecated"
    nginx_directive_misplaced = "nginx-directive-misplaced"
    certbot_nginx_server_root = "certbot-nginx-server-root"
    certbot_nginx_parse_failed = "certbot-nginx-parse-failed"
    grafana_provisioning_incomplete = "grafana-provisioning-incomplete"
    grafana_datasource_prune = "grafana-datasource-prune"
    grafana_plugin_list_syntax = "grafana-plugin-list-syntax"
    nvidia_toolkit_hook_failed = "nvidia-toolkit-hook-failed"
    flashinfer_kernel_failed = "flashinfer-kernel-failed"
    multiproc_executor_across_nodes = "multiproc-executor-across-nodes"
    engine_core_failed_unlogged = "engine-core-failed-unlogged"
    prometheus_feature_flag_removed = "prometheus-feature-flag-removed"
    anthropic_system_role_refused = "anthropic-system-role-refused"
    cuda_init_unknown = "cuda-init-unknown"
    bind_mount_type_mismatch = "bind-mount-type-mismatch"
    cuda_compiler_missing = "cuda-compiler-missing"
    # Round 14's misses, built by cause.
    supervisor_http_socket = "supervisor-http-socket"
    nginx_no_resolver = "nginx-no-resolver"
    model_tools_unsupported = "model-tools-unsupported"
    client_key_rejected = "client-key-rejected"
    quantization_mismatch = "quantization-mismatch"
    listen_address_refused = "listen-address-refused"
    # Round 15's misses, built by cause.
    endpoint_path_unknown = "endpoint-path-unknown"
    # Round 16's misses, built by cause.
    certbot_no_server_block = "certbot-no-server-block"
    grafana_database_locked = "grafana-database-locked"
    multimodal_not_recognised = "multimodal-not-recognised"
    # Causes split out of signatures that were too broad.
    nvidia_runtime_unregistered = "nvidia-runtime-unregistered"
    # Round 17's misses, built by cause (a missing config file and two defaults split out of broader classes).
    prometheus_config_missing = "prometheus-config-missing"
    supervisorctl_section_missing = "supervisorctl-section-missing"
    grafana_default_datasource_conflict = "grafana-default-datasource-conflict"
    certbot_placeholder_domain = "certbot-placeholder-domain"
    nginx_config_disabled_missing_certs = "nginx-config-disabled-missing-certs"
    # Round 18's misses, built by cause.
    node_exporter_statfs_missing = "node-exporter-statfs-missing"
    nginx_certificate_invalid = "nginx-certificate-invalid"
    # Left from round 17: nginx server blocks that claim one name or the default on one address.
    nginx_server_conflict = "nginx-server-conflict"
    # Round 21's misses, built by cause.
    nginx_certificate_unreadable = "nginx-certificate-unreadable"
    nvml_insufficient_permissions = "nvml-insufficient-permissions"
    prometheus_wal_corrupt = "prometheus-wal-corrupt"
    node_exporter_udev_data_missing = "node-exporter-udev-data-missing"
    # Round 22's misses, built by cause.
    libnvidia_container_outdated = "libnvidia-container-outdated"
    # Round 23's misses, built by cause.
    supervisorctl_wrong_server = "supervisorctl-wrong-server"
    # Round 24's misses, built by cause.
    nginx_user_unknown = "nginx-user-unknown"
    nvidia_ldconfig_failed = "nvidia-ldconfig-failed"
    memory_profiling_free_memory_grew = "memory-profiling-free-memory-grew"
    ptx_toolchain_unsupported = "ptx-toolchain-unsupported"
    certbot_challenge_wrong_answer = "certbot-challenge-wrong-answer"
    # Round 27's misses: the host's kernel refusing an unsigned module (Secure Boot)
    kernel_module_unsigned = "kernel-module-unsigned"
    # Round 29's misses, built by cause.
    docker_iptables_chain_missing = "docker-iptables-chain-missing"
    prometheus_rules_invalid = "prometheus-rules-invalid"
    supervisor_logfile_unusable = "supervisor-logfile-unusable"
    nginx_resolver_invalid = "nginx-resolver-invalid"
    # Round 31's misses, built by cause.
    client_certificate_untrusted = "client-certificate-untrusted"
    nginx_proxy_pass_uri_in_regex = "nginx-proxy-pass-uri-in-regex"
    certbot_dns_no_address = "certbot-dns-no-address"
    cuda_illegal_memory_access = "cuda-illegal-memory-access"
    # Round 32's misses, built by cause.
    nginx_directive_too_new = "nginx-directive-too-new"
    nginx_directive_unknown = "nginx-directive-unknown"
    docker_registry_certificate_untrusted = "docker-registry-certificate-untrusted"
    supervisor_config_invalid = "supervisor-config-invalid"
    # Round 33's misses, built by cause.
    open_files_exhausted = "open-files-exhausted"
    supervisor_minfds_above_limit = "supervisor-minfds-above-limit"
    systemd_limit_refused = "systemd-limit-refused"
    nginx_upstream_connect_denied = "nginx-upstream-connect-denied"
    nginx_variable_unknown = "nginx-variable-unknown"
    ipv6_unavailable = "ipv6-unavailable"
    client_certificate_name_mismatch = "client-certificate-name-mismatch"
    model_weights_corrupt = "model-weights-corrupt"
    service_flags_exclusive = "service-flags-exclusive"
    # Round 34's misses, built by cause.
    certbot_plugin_not_loaded = "certbot-plugin-not-loaded"
    certbot_caa_refused = "certbot-caa-refused"
    docker_nftables_refused = "docker-nftables-refused"
    grafana_plugin_unsigned = "grafana-plugin-unsigned"
    supervisor_user_not_root = "supervisor-user-not-root"
    model_weights_not_found = "model-weights-not-found"
    apparmor_ptrace_denied = "apparmor-ptrace-denied"
    systemd_private_socket_refused = "systemd-private-socket-refused"
    # Round 35's misses, built by cause.
    nginx_key_encrypted = "nginx-key-encrypted"
    nginx_dhparam_invalid = "nginx-dhparam-invalid"
    grafana_provisioning_not_provisioning = "grafana-provisioning-not-provisioning"
    # Round 36's misses, built by cause.
    nginx_upstream_not_tls = "nginx-upstream-not-tls"
    nginx_upstream_tls_refused = "nginx-upstream-tls-refused"
    prometheus_query_too_many_samples = "prometheus-query-too-many-samples"
    prometheus_lifecycle_disabled = "prometheus-lifecycle-disabled"
    cuda_driver_combination = "cuda-driver-combination"
    nvidia_driver_rpc_timeout = "nvidia-driver-rpc-timeout"
    grafana_datasource_variable_unresolved = "grafana-datasource-variable-unresolved"
    # Round 37's misses, built by cause.
    node_exporter_kernel_file_denied = "node-exporter-kernel-file-denied"
    web_config_field_unknown = "web-config-field-unknown"
    client_request_body_refused = "client-request-body-refused"
    # Round 38's misses, built by cause.
    docker_host_network_ports = "docker-host-network-ports"
    grafana_provisioning_stale_row = "grafana-provisioning-stale-row"
    nginx_upstream_closed = "nginx-upstream-closed"
    nginx_server_names_hash = "nginx-server-names-hash"
    # Round 42's misses, built by cause.
    certbot_dns_servfail = "certbot-dns-servfail"
    compose_key_unknown = "compose-key-unknown"
    prometheus_scrape_loopback_refused = "prometheus-scrape-loopback-refused"
    prometheus_data_path_relative = "prometheus-data-path-relative"
    model_repo_without_config = "model-repo-without-config"
    # no signature knows it: the decisive error line and the remedy the log names (fallback.py)
    unrecognised = "unrecognised"
    # Round 39's misses, built by cause.
    entrypoint_not_executable = "entrypoint-not-executable"
    engine_not_ready = "engine-not-ready"
    dcgm_hostengine_unreachable = "dcgm-hostengine-unreachable"
    nginx_duplicate_upstream = "nginx-duplicate-upstream"
    # Round 40's misses, built by cause.
    docker_container_name_conflict = "docker-container-name-conflict"
    docker_healthcheck_command_missing = "docker-healthcheck-command-missing"
    prometheus_samples_out_of_bounds = "prometheus-samples-out-of-bounds"
    # Round 41's misses, built by cause.
    certbot_dns_txt_mismatch = "certbot-dns-txt-mismatch"
    compose_file_invalid = "compose-file-invalid"
    grafana_live_origin_refused = "grafana-live-origin-refused"
    nginx_worker_connections_exhausted = "nginx-worker-connections-exhausted"
    node_exporter_textfile_unreadable = "node-exporter-textfile-unreadable"
    nvml_module_unusable = "nvml-module-unusable"


class Severity(str, Enum):
    fatal = "fatal"  # the service cannot start (or serve) until this is fixed
    advisory = "advisory"  # a warning the log carries; worth fixing, not what stopped it


@dataclass(frozen=True)
class Fix:
    """The change to make, said the way stackctl's user makes it."""

    # The whole instruction, printed as is (never cut).
    text: str
    # The stack.yaml key to change (e.g. "vllm.max_num_seqs"), if the fix is one.
    key: str | None = None
    # The vLLM flag that key becomes, or the flag to add/remove (e.g. "--max-num-seqs").
    flag: str | None = None
    # An environment variable to set or unset (e.g. "HF_TOKEN", "TRITON_PTXAS_PATH").
    env: str | None = None
    # The value to use, where the log states enough to compute it (e.g. "856").
    value: str | None = None


@dataclass(frozen=True)
class Diagnosis:
    cause: Cause
    # What happened, with the numbers the log states.
    summary: str
    fix: Fix
    # The log line the diagnosis rests on.
    evidence: str
    severity: Severity = Severity.fatal
    # Numbers and names read from the log (e.g. {"max_num_seqs": 1024, "blocks": 856}).
    values: Mapping[str, str | int | float] = field(default_factory=dict)

    @property
    def known(self) -> bool:
        """A signature recognised the failure (else it is the fallback's reading of the log)."""
        return self.cause is not Cause.unrecognised

    def one_line(self) -> str:
        return f"{self.summary}; fix: {self.fix.text}"


@dataclass(frozen=True)
class DiagnosisContext:
    """What the stack knows that the log does not: which service, which flags the user added."""

    service: str = "vllm"
    # vllm.extra_args of stack.yaml (None: unknown), to tell the user's flags from the profile's.
    extra_args: tuple[str, ...] | None = None
    # The flags stackctl's own rendered command adds (None: unknown), so a refused flag in neither
    # list is known to come from the user, not from a profile.
    stackctl_flags: tuple[str, ...] | None = None
    # Host port -> the stack.yaml key that sets it (e.g. 8000 -> "ports.vllm").
    port_keys: Mapping[int, str] = field(default_factory=dict)
    # True: the service failed to start (a failed `up`), so the log's last error is fatal; None:
    # unknown (`logs --explain` on a service that may be running).
    failed: bool | None = None
    # The runtime's one-line account of the failure ("vllm did not become healthy in 900 s").
    failure: str | None = None
    # The CPU architecture of the host whose services these are (platform.machine(): x86_64, aarch64);
    # None: unknown. Some failures read the same on every host and differ in cause on arm64.
    machine: str | None = None
    # stack.yaml's images (service -> image reference): which service an image a log names is.
    images: Mapping[str, str] = field(default_factory=dict)
