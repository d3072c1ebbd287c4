"""Real failure logs of every service the stack runs (Docker and the NVIDIA container runtime,
nginx, certbot, Prometheus, Grafana, node-exporter, supervisord, and vLLM's request-time and newer
start failures), each class built from several public reports: each is diagnosed with the fix in
stackctl's terms. The held-out set (tests/data/heldout_failures, when a round is collected) is measured,
never asserted here: benchmarks/diagnosis_coverage.py prints both figures."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from stackctl.diagnosis import Cause, DiagnosisContext, Severity, diagnose_log
from tests.unit.diagnosis.real_logs import (
    FAILURE_LOGS,
    HELDOUT_ROUNDS,
    SERVICE_FAILURES,
    expected_class,
    read_headers,
)

C, ADVISORY = Cause, Severity.advisory


@dataclass(frozen=True)
class Expect:
    key: str | None = None
    flag: str | None = None
    env: str | None = None
    severity: Severity = Severity.fatal
    # Words the fix sentence must carry (the command or setting the user acts on).
    says: tuple[str, ...] = ()
    values: dict = field(default_factory=dict)


BY_CLASS: dict[Cause, Expect] = {
    C.cuda_forked_subprocess: Expect("vllm.environment", env="VLLM_WORKER_MULTIPROC_METHOD", says=("spawn",)),
    C.supervisor_spawn_failed: Expect(),
    C.attention_sinks_unsupported: Expect("vllm.extra_args", "--attention-backend"),
    C.container_cuda_requirement: Expect("images.vllm", says=("driver",)),
    C.no_gpu_runtime: Expect(says=("nvidia-ctk runtime configure", "cdi generate")),
    C.nvidia_runtime_unregistered: Expect(says=("instead of runtime: nvidia", "nvidia-ctk runtime configure",
                                                "systemctl restart docker")),
    C.gpu_driver_not_loaded: Expect(says=("nvidia-smi",)),
    C.kernel_module_unsigned: Expect(says=("mokutil --import", "Secure Boot off")),
    C.driver_library_mismatch: Expect(says=("reboot",)),
    C.wrong_architecture: Expect("images.{service}", says=("uname -m",)),
    C.image_pull_denied: Expect("images.vllm", says=("docker login",)),
    C.docker_permission: Expect("runtime", says=("usermod -aG docker",)),
    C.docker_not_running: Expect("runtime", says=("systemctl enable --now docker",)),
    C.docker_disk_full: Expect(says=("docker system df", "data-root")),
    C.mount_propagation: Expect("services.monitoring", says=("mount --make-rshared",)),
    C.harmony_vocab_offline: Expect("vllm.environment", env="TIKTOKEN_ENCODINGS_BASE", says=("o200k_base.tiktoken",)),
    C.request_context_overflow: Expect("vllm.max_model_len", severity=ADVISORY, says=("compact", "truncate")),
    C.bfloat16_unsupported: Expect("vllm.extra_args", "--dtype", says=("--dtype half",)),
    C.tp_heads_not_divisible: Expect("vllm.extra_args", "--tensor-parallel-size", says=("--pipeline-parallel-size",)),
    C.system_message_position: Expect(severity=ADVISORY, says=("--system-placement in-place",)),
    C.tool_parser_failure: Expect("vllm.extra_args", "--tool-call-parser", severity=ADVISORY),
    C.chat_template_missing: Expect("vllm.extra_args", "--chat-template", severity=ADVISORY),
    C.nginx_certificate_missing: Expect("letsencrypt_dir", says=("sudo certbot certificates",)),
    C.nginx_upstream_down: Expect("ports.proxy", severity=ADVISORY, says=("stackctl logs filter-proxy",)),
    C.listen_address_not_on_host: Expect(says=("ip -br addr",)),
    C.prometheus_config_field_misplaced: Expect(says=("scrape_configs", "config.plain")),
    C.nginx_upstream_timeout: Expect("limits.max_concurrent", severity=ADVISORY, says=("proxy_read_timeout",)),
    C.nginx_body_too_large: Expect(severity=ADVISORY, says=("client_max_body_size",)),
    C.nginx_upstream_host_unknown: Expect("hosts", says=("getent hosts",)),
    C.certbot_challenge_unreachable: Expect("hostname", says=("port 80",)),
    C.certbot_dns_missing: Expect("hostname", says=("an A record (and/or AAAA)",)),
    C.certbot_challenge_not_this_host: Expect("hostname", says=("the A record", "port 80 must be reachable")),
    C.certbot_rate_limited: Expect("letsencrypt_dir", says=("retry",)),
    C.prometheus_storage_permission: Expect("images.prometheus", says=("65534",)),
    C.prometheus_storage_locked: Expect(says=("other Prometheus", "NFS")),
    C.grafana_data_permission: Expect("images.grafana", says=("472",)),
    C.grafana_datasource_provisioning: Expect(says=("apiVersion: 1", "deleteDatasources")),
    C.prometheus_config_invalid: Expect(says=("promtool check config", "prometheus.yml")),
    C.node_exporter_proc_permission: Expect(severity=ADVISORY,
                                            says=("pid: host", "label=type:spc_t", "privileged security context")),
    C.exporter_invalid_metric_output: Expect("images.gpu-exporter", severity=ADVISORY, says=("newer exporter release",)),
    C.system_role_unsupported: Expect("vllm.extra_args", "--chat-template", severity=ADVISORY,
                                      says=("first user message", "system placement")),
    C.client_anthropic_beta_header_rejected: Expect(env="CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS",
                                                    says=("strip the beta header",)),
    C.certbot_nginx_plugin_missing: Expect(says=("python3-certbot-nginx", "authenticator = webroot")),
    C.gpu_exporter_needs_sys_admin: Expect("images.gpu-exporter", says=("cap_add: [SYS_ADMIN]", "default-counters.csv")),
    C.grafana_angular_plugin_disabled: Expect(env="GF_SECURITY_ANGULAR_SUPPORT_ENABLED", severity=ADVISORY,
                                              says=("React plugin", "remove the Angular plugins")),
    C.docker_iptables_chain_missing: Expect(says=("sudo systemctl restart docker", "firewalld or ufw")),
    C.prometheus_rules_invalid: Expect(says=("promtool check rules", "`groups:`")),
    C.supervisor_logfile_unusable: Expect(says=("regular file",)),
    C.nginx_resolver_invalid: Expect(says=("IP address of a DNS server", "resolver 127.0.0.11")),
    C.client_certificate_untrusted: Expect(env="NODE_EXTRA_CA_CERTS", says=("CA certificate", "stackctl makes no CA")),
    C.nginx_proxy_pass_uri_in_regex: Expect(says=("location ^~", "drop the URI from proxy_pass", "nginx -t")),
    C.certbot_dns_no_address: Expect("hostname", says=("dig +trace", "authoritative DNS servers", "DNS provider")),
    C.cuda_illegal_memory_access: Expect("vllm.extra_args", "--compilation-config",
                                         says=("--enforce-eager", "cudagraph_mode", "CUDA_LAUNCH_BLOCKING=1")),
    C.nginx_directive_too_new: Expect(says=("listen 443 ssl http2;", "1.25.1", "nginx -v", "did not render")),
    C.nginx_directive_unknown: Expect(says=("headers-more", "load_module", "nginx -V", "did not render")),
    C.docker_registry_certificate_untrusted: Expect(says=("CA certificate", "update-ca-certificates",
                                                          "/etc/docker/certs.d/", "systemctl restart docker")),
    C.supervisor_config_invalid: Expect(says=("supervisorctl reread", "writes its own supervisord.conf")),
    C.open_files_exhausted: Expect(says=("LimitNOFILE=65535", "--ulimit nofile=65535:65535", "ulimits: nofile:")),
    C.supervisor_minfds_above_limit: Expect(says=("--ulimit nofile=", "lower minfds=")),
    C.systemd_limit_refused: Expect(says=("instead of infinity", "LimitNOFILE=65535", "fs.nr_open")),
    C.nginx_upstream_connect_denied: Expect(says=("setsebool -P httpd_can_network_connect 1",)),
    C.nginx_variable_unknown: Expect(says=("map $http_upgrade $connection_upgrade", "Connection \"\"")),
    C.ipv6_unavailable: Expect(says=("disable_ipv6", "remove that listen line")),
    C.client_certificate_name_mismatch: Expect("hostname", says=("subjectAltName", "reissue the certificate")),
    C.model_weights_corrupt: Expect("vllm.model_path", says=("download the model again", "--force-download")),
    C.service_flags_exclusive: Expect("images.node-exporter", "{flag}", says=("update the flag", "pin the version")),
    C.certbot_plugin_not_loaded: Expect(says=("certbot plugins", "same environment", "trust-plugin-with-root=ok")),
    C.certbot_caa_refused: Expect("hostname", says=("letsencrypt.org", "accounturi", "dig CAA")),
    C.grafana_plugin_unsigned: Expect(env="GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS",
                                      says=("allow_loading_unsigned_plugins", "signed release")),
    C.supervisor_user_not_root: Expect(says=("remove user=", "start supervisord as root")),
    C.nginx_key_encrypted: Expect("letsencrypt_dir", says=("openssl rsa -in", "ssl_password_file", "privkey.pem")),
    C.nginx_dhparam_invalid: Expect(says=("openssl dhparam -out", "drop the ssl_dhparam line", "ssl-dhparams.pem")),
    C.nginx_upstream_not_tls: Expect(severity=ADVISORY, says=("plain HTTP", "proxy_pass http://", "TLS port")),
    C.nginx_upstream_tls_refused: Expect(severity=ADVISORY, says=("proxy_ssl_server_name on;", "proxy_ssl_name")),
    C.prometheus_query_too_many_samples: Expect(flag="--query.max-samples", severity=ADVISORY,
                                                says=("shorter range", "recording rule")),
    C.prometheus_lifecycle_disabled: Expect(flag="--web.enable-lifecycle", severity=ADVISORY, says=("SIGHUP",)),
    C.cuda_driver_combination: Expect("vllm.environment", env="LD_LIBRARY_PATH",
                                      says=("LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "ld.so.conf", "reboot")),
    C.nvidia_driver_rpc_timeout: Expect(says=("nvidia-persistenced", "nvidia-smi -pm 1")),
    C.grafana_datasource_variable_unresolved: Expect(severity=ADVISORY, says=("stackctl-prometheus",
                                                                              "\"type\": \"datasource\"")),
    C.node_exporter_kernel_file_denied: Expect(severity=ADVISORY, says=("User=root", "AmbientCapabilities=CAP_DAC_READ_SEARCH",
                                                                        "--no-collector.", "chown or chmod does not apply")),
    C.web_config_field_unknown: Expect(says=("tls_server_config", "promtool check web-config")),
    C.client_request_body_refused: Expect(env="CLAUDE_CODE_SIMPLE", says=("claude --bare", "CLAUDE_CODE_SIMPLE=1")),
    C.docker_kernel_module_missing: Expect(says=("sudo modprobe", "modules-load.d")),
    C.nvidia_cdi_hook_missing: Expect(says=("nvidia-cdi-hook", "nvidia-ctk cdi generate")),
    C.nvidia_toolkit_imex_channel: Expect(says=("1.17.3 or later", "1.16.2")),
    C.prometheus_alertmanager_api_v1_removed: Expect(says=("api_version: v2", "alerting.alertmanagers"),
                                                     values={"accepted": "v2"}),
    C.prometheus_duplicate_job_name: Expect(says=("job_name unique", "stackctl up")),
    C.prometheus_config_field_newer: Expect("images.prometheus", says=("or later",)),
    C.gpu_access_lost: Expect(says=("daemon-reload", "create-dev-char-symlinks", "stackctl down")),
    C.client_base_url: Expect("ports.proxy", says=("ANTHROPIC_BASE_URL", "stackctl connect")),
    C.tool_choice_without_tools: Expect(severity=ADVISORY, says=("tool_choice", "drop_params")),
    C.supervisor_gave_up: Expect(says=("--explain",)),
    # A command by name alone is looked up on supervisord's own PATH (supervisor#748, #847); a full path that is
    # not there keeps the install fix (code_snippets#82).
    C.supervisor_command_missing: Expect(says=("full path", "environment=PATH=", "4.0.0")),
    # Round 5's misses, each built from other reports of the same cause.
    C.certbot_port_80_busy: Expect("ports.{port}", says=("--standalone", "--webroot")),
    C.nginx_duplicate_listen: Expect("ports.{port}", says=("listen", "nginx -t")),
    C.nginx_header_too_big: Expect(severity=ADVISORY, says=("proxy_buffer_size",)),
    C.nginx_key_mismatch: Expect("letsencrypt_dir", says=("ssl_certificate_key", "privkey.pem")),
    C.grafana_plugin_offline: Expect(env="GF_INSTALL_PLUGINS"),
    C.grafana_datasource_unreachable: Expect("ports.prometheus", severity=ADVISORY, says=("datasource",)),
    C.prometheus_tsdb_corrupt: Expect(says=("meta.json", "NFS", "local disk")),
    C.prometheus_scrape_timeout: Expect(severity=ADVISORY, says=("scrape_timeout", "scrape_interval")),
    C.gpu_exporter_profiling_unsupported: Expect("images.gpu-exporter", says=("2.1.2", "default-counters.csv")),
    C.image_pull_rate_limit: Expect(says=("docker login", "the images entry of the service that would not start")),
    C.compose_too_old: Expect(says=("docker compose", "1.28")),
    C.cgroup_devices_missing: Expect(says=("cgroup v2", "nvidia-container-toolkit")),
    C.no_gpu_device: Expect(env="NVIDIA_VISIBLE_DEVICES", says=("nvidia-smi -L",)),
    C.hf_cache_permission: Expect("hf_cache", env="HF_HOME", says=("chown",)),
    C.engine_abi_mismatch: Expect("images.vllm", says=("stackctl install-engine", "torch")),
    C.engine_too_old_for_model: Expect("images.vllm"),
    C.tokenizer_load_failed: Expect("vllm.extra_args", "--tokenizer"),
    C.tp_exceeds_gpus: Expect("vllm.extra_args", "--tensor-parallel-size", says=("CUDA_VISIBLE_DEVICES",)),
    C.prompt_exceeds_batched_tokens: Expect("vllm.max_model_len", "--max-num-batched-tokens", severity=ADVISORY,
                                            says=("vllm.extra_args",)),
    C.supervisor_not_running: Expect(says=("stackctl up", "supervisorctl -c")),
    C.codex_wire_api: Expect("ports.proxy", severity=ADVISORY, says=('wire_api = "responses"', "stackctl connect codex")),
    C.litellm_provider_prefix: Expect("served_model_name", severity=ADVISORY,
                                      says=("provider prefix", "hosted_vllm/", "openai/", "ollama_chat/")),
    C.gateway_model_unknown: Expect("aliases", severity=ADVISORY, says=("model_list",)),
    C.request_refused_unlogged: Expect("vllm.extra_args", "--enable-auto-tool-choice", severity=ADVISORY,
                                       says=("--tool-call-parser", "vllm.max_model_len")),
    C.prometheus_config_permission: Expect(says=("65534", "chmod", "readable")),
    C.grafana_admin_password_ignored: Expect(env="GF_SECURITY_ADMIN_PASSWORD", severity=ADVISORY,
                                             says=("reset-admin-password", "first start", "grafana.db")),
    C.node_exporter_statfs_denied: Expect(flag="--collector.filesystem.mount-points-exclude", severity=ADVISORY,
                                          says=("ignored-mount-points",)),
    C.thinking_budget: Expect(env="MAX_THINKING_TOKENS", severity=ADVISORY, says=("budget_tokens", "max_tokens")),
    # Round 7's misses, each built from other reports of the same cause.
    C.client_context_window_too_small: Expect("vllm.max_model_len", severity=ADVISORY,
                                              says=("contextWindow", "openclaw.json"), values={"minimum": 16000}),
    C.container_driver_libs_conflict: Expect("images.vllm", says=("libnvidia-ml.so.1", "nvidia/cuda", "apt remove")),
    C.container_runtime_missing: Expect("images.vllm", says=("NVIDIA_VISIBLE_DEVICES", "nvidia/cuda", "--gpus")),
    C.gpu_hook_direct: Expect(says=("runtime: nvidia",)),
    C.wsl_no_gpu_adapter: Expect(says=("WSL 2", "wsl --update", "nvidia-smi")),
    C.metrics_path_not_found: Expect(severity=ADVISORY, says=("/metrics", "metrics_path")),
    C.grafana_config_missing: Expect("images.grafana", says=("grafana.ini", "/etc/grafana")),
    C.service_flag_unknown: Expect("images.{service}", "{flag}", says=("--help",)),
    C.mm_limit_per_prompt: Expect("vllm.extra_args", "--limit-mm-per-prompt", severity=ADVISORY),
    C.torch_compile_failed: Expect("vllm.extra_args", "--enforce-eager", says=("torch_compile_cache",)),
    C.quantization_config_missing: Expect("model", "--quantization", says=("pre-quantized", "AutoAWQ")),
    C.quantization_method_unknown: Expect("images.vllm", says=("newer vLLM",)),
    C.model_not_cached_offline: Expect("vllm.model_path", env="HF_HUB_OFFLINE", says=("huggingface-cli download",)),
    # Round 8's misses, each built from other reports of the same cause.
    C.grafana_dashboard_json_invalid: Expect(says=("not valid JSON", "python3 -m json.tool", "line and column")),
    # Wordings of newer releases (Prometheus 3's strict scrape protocol).
    C.prometheus_scrape_content_type: Expect("images.prometheus", severity=ADVISORY,
                                             says=("curl -si", "fallback_scrape_protocol", "prom/prometheus:v2")),
    C.gpu_device_rules_denied: Expect(says=("no-cgroups = true", "rootless", "cdi generate")),
    C.grafana_preinstall_offline: Expect(env="GF_PLUGINS_PREINSTALL_DISABLED", severity=ADVISORY,
                                         says=("GF_PLUGINS_PREINSTALL_DISABLED=true", "HTTPS_PROXY")),
    C.supervisor_port_taken: Expect(says=("supervisorctl -c", "supervisord.conf")),
    # Round 10's misses, each built from other reports of the same cause.
    C.docker_client_too_old: Expect(env="DOCKER_API_VERSION", says=("docker-compose-plugin", "DOCKER_MIN_API_VERSION"),
                                    values={"minimum": "1.44"}),
    C.image_entrypoint_doubled: Expect("images.vllm", says=("--entrypoint", "vllm-entrypoint")),
    C.engine_dependency_mismatch: Expect("images.vllm", says=("stackctl install-engine", "pip check")),
    C.cuda_graph_capture_failed: Expect("images.vllm", says=("previous vLLM release", "--enforce-eager")),
    C.chat_template_content_format: Expect("vllm.extra_args", "--chat-template-content-format", severity=ADVISORY,
                                           says=("string", "auto")),
    C.grafana_install_plugins_deprecated: Expect(env="GF_PLUGINS_PREINSTALL_SYNC", severity=ADVISORY,
                                                 says=("GF_INSTALL_PLUGINS", "GF_PLUGINS_PREINSTALL ")),
    C.grafana_plugin_install_failed: Expect(env="GF_PLUGINS_PREINSTALL", says=("GF_PLUGINS_PREINSTALL_SYNC", "plugin id")),
    C.service_flag_deprecated: Expect(flag="{flag}", severity=ADVISORY, says=("replace",)),
    C.gpu_exporter_dcgm_mismatch: Expect("images.gpu-exporter", says=("newer dcgm-exporter image", "dcgmi -v")),
    C.nginx_certbot_include_missing: Expect("letsencrypt_dir", says=("remove the include", "certbot --nginx")),
    # Round 11's misses, each built from other reports of the same cause.
    C.supervisor_user_unknown: Expect(says=("user line in the program section", "existing user")),
    C.dcgm_field_unsupported: Expect("images.gpu-exporter", says=("remove the unsupported metric", "counters file")),
    C.grafana_not_a_dashboard: Expect(severity=ADVISORY, says=("move the non-dashboard JSON files", "unwrap")),
    C.nginx_directive_deprecated: Expect(severity=ADVISORY, says=("remove http2 from the listen line", "http2 on;")),
    C.kernel_arch_guard: Expect("images.vllm", says=("enable_sm120_family", "SM12.1")),
    # Round 12's misses, each built from other reports of the same cause.
    C.certbot_nginx_parse_failed: Expect(says=("remove the commented line", "log_format", "certonly --webroot")),
    C.grafana_provisioning_incomplete: Expect(severity=ADVISORY, says=("mkdir -p", "provisioning")),
    C.grafana_plugin_list_syntax: Expect(env="GF_INSTALL_PLUGINS", says=("remove the space after the comma",)),
    C.nvidia_toolkit_hook_failed: Expect(says=("nvidia-container-toolkit-base", "nvidia-ctk cdi generate")),
    # Round 13's misses, each built from other reports of the same cause.
    C.bind_mount_type_mismatch: Expect(says=("directory", "create the file before `up`", "stackctl down")),
    C.cuda_compiler_missing: Expect("vllm.environment", env="CUDA_HOME", says=("VLLM_USE_FLASHINFER_SAMPLER=0", "nvcc")),
    # Round 14's misses, each built from the round's log and another report of the same cause.
    C.supervisor_http_socket: Expect(says=("[unix_http_server] file=", "supervisor.sock")),
    C.nginx_no_resolver: Expect("hosts", says=("resolver 127.0.0.11",)),
    C.endpoint_path_unknown: Expect("ports.proxy", severity=ADVISORY, says=("/v1/chat/completions", "/v1/models")),
    # Round 16's misses, each built from other reports of the same cause (tested on the round's log).
    C.certbot_no_server_block: Expect("hostname", says=("server_name", "sites-enabled", "stackctl up")),
    C.grafana_database_locked: Expect(env="GF_DATABASE_WAL", severity=ADVISORY, says=("wal = true", "NFS", "PostgreSQL")),
    C.multimodal_not_recognised: Expect("images.vllm", says=("newer vLLM", "original checkpoint", "--limit-mm-per-prompt")),
    # vLLM's failed architecture inspection, by the error its subprocess states.
    C.unknown_architecture: Expect("images.vllm", says=("inspection subprocess",)),
    # Round 17's misses, each built from other reports of the same cause (tested on the round's logs).
    C.prometheus_config_missing: Expect(says=("create the prometheus.yml", "host path", "stackctl up")),
    C.supervisorctl_section_missing: Expect(says=("supervisorctl -c", "add a [supervisorctl] section", "[unix_http_server]",
                                                  "[rpcinterface:supervisor]", "stackctl status")),
    C.grafana_default_datasource_conflict: Expect(says=("one default datasource per organisation", "isDefault: false")),
    C.certbot_placeholder_domain: Expect("hostname", says=("replace the placeholder domain", "your real domain")),
    C.nginx_config_disabled_missing_certs: Expect(says=("port 80 server block", "redirector.conf", "separate file")),
    # Round 18's misses, each built from other reports of the same cause (tested on the round's logs and others).
    C.node_exporter_statfs_missing: Expect(flag="--collector.filesystem.mount-points-exclude", severity=ADVISORY,
                                           says=("harmless", "--collector.filesystem.fs-types-exclude")),
    C.nginx_certificate_invalid: Expect("letsencrypt_dir", says=("empty certificate file", "openssl x509", "Remove the empty or bad file")),
    # Left from round 17: two server blocks claiming one name (a warning) or the default (a refusal) on one address.
    C.nginx_server_conflict: Expect("hostname", severity=ADVISORY, says=("sudo nginx -T", "sudo nginx -t")),
    # Round 21's misses, built by cause from other reports.
    C.nginx_certificate_unreadable: Expect("letsencrypt_dir", says=("namei -l", "chown", "container_file_t")),
    C.nvml_insufficient_permissions: Expect(says=("label=disable", "security_opt", "container_use_devices")),
    C.prometheus_wal_corrupt: Expect(says=("zero-byte", "remove the empty file", "df -h")),
    C.node_exporter_udev_data_missing: Expect(flag="--path.udev.data", severity=ADVISORY,
                                              says=("/run/udev:/run/udev:ro", "/host/run/udev/data")),
    # Round 22's misses, built by cause.
    C.libnvidia_container_outdated: Expect(says=("libnvidia-container1 libnvidia-container-tools nvidia-container-toolkit",
                                                 "nvidia-container-cli --version")),
    # Round 23's misses, built by cause.
    C.supervisorctl_wrong_server: Expect(says=("supervisorctl -c", "[supervisorctl]", "pgrep -a supervisord")),
    # Round 24's misses, built by cause.
    C.nginx_user_unknown: Expect(says=("user directive", "www-data", "nginx -t")),
    C.memory_profiling_free_memory_grew: Expect("vllm.extra_args", "--kv-cache-memory-bytes",
                                                says=("skips memory profiling", "unified memory")),
    C.ptx_toolchain_unsupported: Expect("images.vllm", says=("ENTRYPOINT", "nvidia_entrypoint.sh", "forward compatibility",
                                                             "vllm-entrypoint")),
    C.certbot_challenge_wrong_answer: Expect("hostname", says=("before any redirect", "nginx -T", "return 301")),
    C.nvidia_ldconfig_failed: Expect(says=("/etc/nvidia-container-runtime/config.toml", "@/sbin/ldconfig.real",
                                           "ls -l /sbin/ldconfig*")),
    C.model_tools_unsupported: Expect(severity=ADVISORY, says=("supports tools", "--enable-auto-tool-choice")),
    C.client_key_rejected: Expect(env="OPENAI_API_KEY", severity=ADVISORY, says=("OPENAI_BASE_URL", "stackctl connect")),
    # Round 11's one-report classes, given a second report of the same cause in other words.
    C.nginx_directive_misplaced: Expect(says=("sudo nginx -t",)),
    C.prometheus_feature_flag_removed: Expect(severity=ADVISORY, says=("remove --enable-feature=",)),
    # Round 10's one-report class, given a second report.
    C.vllm_unauthorized: Expect(env="VLLM_API_KEY", severity=ADVISORY, says=("Authorization: Bearer", "ports.proxy")),
    # Round 39's misses, built by cause.
    C.entrypoint_not_executable: Expect(says=("chmod +x", "noexec", "chown does not help")),
    C.dcgm_hostengine_unreachable: Expect("images.gpu-exporter", says=("nvidia-smi", "systemctl --now enable nvidia-dcgm",
                                                                       "no NVIDIA GPU")),
    C.nginx_duplicate_upstream: Expect(says=("rename the upstream", "include the file that defines it once")),
}
# A request whose output budget alone is past the model's limit: the fix is the client's cap, not a
# shorter conversation (the class's other fix).
SAYS: dict[str, tuple[str, ...]] = {
    "supervisor_command_missing__code-snippets-issue-82": ("stackctl install-engine",),
    "docker_registry_certificate_untrusted__moby-issue-20912": ("TLS-intercepting proxy", "Docker Desktop"),
    "docker_registry_certificate_untrusted__docker-registry-issue-1008": (
        "private registry", "/etc/docker/certs.d/ec2-52-17-207-222.eu-west-1.compute.amazonaws.com:443/ca.crt",
        "update-ca-certificates", "systemctl restart docker"),
    "supervisor_config_invalid__opencanary_web-issue-12": ("/etc/supervisord.d/tornado.ini", "[program:NAME]"),
    "supervisor_config_invalid__shell-scripts-issue-44": ("is no supervisord configuration", "echo_supervisord_conf"),
    "supervisor_config_invalid__supervisor-issue-946": ("remove the quotes", "laravel-worker.conf"),
    "supervisor_config_invalid__supervisor-issue-113": ("true or false",),
    "supervisor_config_invalid__supervisor-pr-529": ("KEY=\"value\" pairs", "'KEY=val,KEY2=val,KEY3'"),
    "supervisor_config_invalid__supervisor-issue-1557": ("inline comment", "program:printenv"),
    "unknown_architecture__vllm-plugin-FL-issue-446": ("cannot import name ModelRegistry from vllm",
                                                       "the plugin's release built for this vLLM"),
    "unknown_architecture__inference-troubleshooting-mkl": ("it failed with Error: mkl-service", "fix that error"),
    "request_context_overflow__nextchat-issue-3195": ("cap max_tokens in the client (at most 4096",),
    "request_context_overflow__code-gpt-docs-issue-284": ("cap max_tokens in the client (at most 4096",),
    "request_context_overflow__extractthinker-issue-346": ("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "limit.output",
                                                           "at most 16384"),
    # A placeholder contact address, not a domain: certbot's --email, which no stack.yaml key sets.
    "certbot_placeholder_domain__Internet.nl-issue-1885": ("stackctl tls issue --email", "not one at example.com"),
}
KEYS: dict[str, str | None] = {"listen_address_not_on_host__llama-cpp-python-issue-77": "vllm.extra_args",
                               "certbot_placeholder_domain__Internet.nl-issue-1885": None,
                               # A namespace's mount entry: 0.15 did not skip its filesystem type, 1.x does.
                               "node_exporter_statfs_missing__node_exporter-issue-773": "images.node-exporter",
                               "node_exporter_statfs_missing__node_exporter-issue-795": "images.node-exporter",
                               # A duplicate default_server: the port's key, not the name's.
                               "nginx_server_conflict__ala-install-issue-175": "ports.http",
                               "nginx_server_conflict__openlibrary-issue-7544": "ports.http",
                               "nginx_server_conflict__certbot-issue-5780": "ports.https"}
FLAGS: dict[str, str] = {"listen_address_not_on_host__llama-cpp-python-issue-77": "--host",
                         "node_exporter_statfs_missing__node_exporter-issue-773": "--collector.filesystem.fs-types-exclude",
                         "node_exporter_statfs_missing__node_exporter-issue-795": "--collector.filesystem.fs-types-exclude"}
# The variable that sets a client's base URL, where the log shows which client it is (Claude Code's
# words, the OpenAI SDK's); Codex and Continue keep theirs in a config file.
ENVS: dict[str, str] = {
    "client_certificate_untrusted__continue-issue-341": "SSL_CERT_FILE",
    "client_certificate_untrusted__shell-ai-issue-16": "SSL_CERT_FILE",
    **dict.fromkeys(("client_base_url__claude-code-issue-33355", "client_base_url__claude-code-issue-50229",
                     "client_base_url__claude-code-issue-71188", "client_base_url__claude-code-proxy-issue-7",
                     "client_base_url__inference-issue-4535"), "ANTHROPIC_BASE_URL"),
    **dict.fromkeys(("client_base_url__llama-deploy-issue-153", "client_base_url__openmanus-issue-470",
                     "client_base_url__openmanus-issue-770"), "OPENAI_BASE_URL"),
}
# Logs whose class's fix they share, where the service keeps running (a warning, not a stop).
SEVERITIES: dict[str, Severity] = {"gpu_exporter_needs_sys_admin__aws-observability-helm-charts-pr-217": ADVISORY,
                                   **{f"nginx_server_conflict__{report}": Severity.fatal for report in
                                      ("ala-install-issue-175", "openlibrary-issue-7544", "certbot-issue-5780")}}
# What single logs state beyond their class (the values read from them).
VALUES: dict[str, dict] = {
    "docker_iptables_chain_missing__dockprom-issue-130": {"chain": "DOCKER-ISOLATION-STAGE-1"},
    "docker_iptables_chain_missing__containerlab-issue-2944": {"chain": "DOCKER-ISOLATION-STAGE-2"},
    "docker_iptables_chain_missing__moby-issue-35161": {"chain": "DOCKER"},
    "supervisor_logfile_unusable__misp-docker-issue-25": {"program": "email_00"},
    "nginx_resolver_invalid__modsecurity-crs-docker-pull-365": {"resolver": "RESOLVER"},
    "container_cuda_requirement__dashdot-issue-1226": {"cuda": "12.8", "min_driver": 570},
    "container_cuda_requirement__llama-cpp-issue-9665": {"cuda": "12.6", "min_driver": 560},
    "container_cuda_requirement__vortex-issue-106": {"cuda": "10.2"},
    "gpu_driver_not_loaded__docker-wine-steam-issue-15": {"device": "/dev/nvidia-uvm"},
    "image_pull_denied__vila-issue-147": {"image": "vila-server"},
    "mount_propagation__hyperdrive-issue-96": {"path": "/proc"},
    # The latest of the log's two refusals.
    "request_context_overflow__llama-verifications-issue-58": {"window": 131072, "prompt": 152548},
    "request_context_overflow__vllm-issue-20409": {"window": 16384, "prompt": 112946, "completion": 10000},
    "tool_parser_failure__vllm-issue-26561": {"parser": "hermes"},
    # Other servers' and clients' words for a request past the window: the sizes each states.
    "request_context_overflow__bolt-diy-issue-401": {"window": 200000, "prompt": 202609},
    "request_context_overflow__harbor-pr-996": {"window": 1024, "prompt": 1015, "completion": 10},
    "request_context_overflow__suna-issue-172": {"window": 200000, "prompt": 174167, "completion": 64000},
    "request_context_overflow__llama-cpp-issue-19774": {"window": 4096, "prompt": 4390},
    "request_context_overflow__gemini-cli-issue-6678": {"window": 1048576, "prompt": 1200293},
    "request_context_overflow__logdetective-website-pr-193": {"window": 2048, "prompt": 2285},
    "bfloat16_unsupported__vllm-issue-1157": {"capability": "7.5"},
    "bfloat16_unsupported__triton-server-issue-7632": {"capability": "7.0"},
    "tp_heads_not_divisible__vllm-issue-414": {"heads": 52, "tensor_parallel_size": 3},
    "tp_heads_not_divisible__vllm-issue-52435": {"heads": 64, "tensor_parallel_size": 3},
    "nginx_upstream_down__gunicorn-issue-661": {"upstream": "http://unix:/home/user/webapps/my_project/run/gunicorn.sock:/"},
    "nginx_upstream_down__localtunnel-server-issue-56": {"upstream": "http://127.0.0.1:3000/?new"},
    "nginx_upstream_host_unknown__piped-issue-3679": {"upstream": "pipedfrontend:80"},
    "certbot_dns_missing__plexactyl-issue-15": {"domain": "client.bytehosting.us"},
    "supervisor_gave_up__supervisor-issue-578": {"program": "shadowsocks", "exit_status": 1},
    "supervisor_command_missing__supervisor-issue-748": {"command": "ssserver"},
    "supervisor_spawn_failed__supervisor-issue-1383": {"target": "mytool", "errno": "EACCES"},
    "supervisor_spawn_failed__mlflow-easyauth-issue-1": {"target": "/app/mlflow.sh"},
    "supervisor_spawn_failed__azuracast-issue-1701": {"target": "/var/azuracast/stations/rush/config",
                                                      "errno": "EACCES"},
    "grafana_data_permission__varken-issue-178": {"path": "/config/data"},
    "prometheus_config_invalid__kubecost-pr-410": {"line": 2, "fields": "clusterIDConfigmap"},
    "prometheus_config_invalid__prometheus-issue-1149": {"line": 359},
    "prometheus_config_invalid__prometheus-issue-2663": {"line": 30},
    "prometheus_config_invalid__cortex-issue-473": {"line": 2},
    "prometheus_config_field_newer__prometheus-playground-issue-2": {"line": 4, "fields": "fallback_scrape_protocol"},
    "prometheus_config_field_newer__prometheus-issue-2879": {"fields": "static_configs"},
    "prometheus_duplicate_job_name__prometheus-operator-issue-3853": {"job": "default/testmonitor/0"},
    "docker_kernel_module_missing__moby-pr-49524": {"modules": "ip_set, ip_set_hash_net, xt_set"},
    "grafana_angular_plugin_disabled__unpoller-dashboards-issue-40": {"plugins": "natel-discrete-panel"},
    "exporter_invalid_metric_output__dcgm-exporter-issue-488": {"metric": "DCGM_FI_DEV_CUDA_VISIBLE_DEVICES_STR"},
    "client_anthropic_beta_header_rejected__new-api-issue-2975": {
        "betas": "prompt-caching-scope-2026-01-05, structured-outputs-2025-12-15"},
    "docker_kernel_module_missing__docker-wps-office-issue-8": {"modules": "ip_tables, iptable_nat", "table": "nat"},
    "nginx_duplicate_listen__engintron-issue-1499": {"address": "[::]:443"},
    "prometheus_tsdb_corrupt__prometheus-operator-issue-3634": {"block": "/prometheus/01ENRA5TM45DGMR9PG0NF5R3M6"},
    "no_gpu_device__nvidia-container-toolkit-issue-632": {"device": "2"},
    "tp_exceeds_gpus__vllm-issue-15217": {"tensor_parallel_size": 2, "gpus": 1},
    "prompt_exceeds_batched_tokens__vllm-issue-13209": {"prompt": 32889, "limit": 2048},
    "grafana_datasource_unreachable__grafana-issue-46434": {"port": 9090},
    "request_context_overflow__yakgpt-issue-13": {"window": 4097, "prompt": 3245, "completion": 1050},
    "request_context_overflow__sglang-issue-8096": {"window": 32768, "prompt": 85050},
    "request_refused_unlogged__vllm-issue-13340": {"route": "/v1/chat/completions", "refused": 1},
    "prometheus_config_permission__quickstart-thanos-issue-164": {"path": "/etc/prometheus/prometheus1.yaml"},
    "node_exporter_statfs_denied__kubeasz-issue-870": {"path": "/host/sys/kernel/debug/tracing"},
    "node_exporter_statfs_denied__node-exporter-issue-1923": {
        "path": "/host/var/lib/kubelet/pods/33eb1c82-7b2f-4800-b8b9-d196ac850850/volumes/kubernetes.io~glusterfs/"
                "pvc-8ebd7266-62d5-44d2-8b5e-dd6e93c1d962"},
    "gateway_model_unknown__litellm-issue-8326": {"model": "claude-3-5-haiku-20241022"},
    "gateway_model_unknown__openui-issue-200": {"model": "claude-3-5-sonnet"},
    "client_base_url__just-every-code-issue-345": {"url": "http://localhost:8090/v1/responses"},
    "litellm_provider_prefix__openhands-issue-11608": {"model": "unsloth/qwen3-coder-30b-a3b-instruct"},
    "grafana_data_permission__grafana-issue-16782": {"path": "/var/lib/grafana/plugins"},
    "certbot_port_80_busy__certbot-issue-3958": {"port": 443},
    "client_base_url__aiyabot-issue-8": {"url": "192.168.100.105:7860/login"},
    "gpu_hook_direct__tensorrt-llm-issue-799": {"mode": "csv"},
    "gpu_hook_direct__dstack-issue-2306": {"mode": "cdi"},
    "mm_limit_per_prompt__xinference-issue-3054": {"modality": "image", "limit": 2},
    "quantization_config_missing__vllm-issue-13612": {"method": "gptq"},
    "quantization_method_unknown__unsloth-issue-482": {"method": "bitsandbytes"},
    "model_not_cached_offline__vllm-issue-1432": {"model": "huggyllama/llama-7b"},
    "prometheus_scrape_content_type__scaphandre-pr-417": {"target": "http://scaphandre:8080/metrics"},
    "prometheus_scrape_content_type__pretix-issue-5133": {"content_type": "text/html; charset=utf-8"},
    "grafana_dashboard_json_invalid__vald-pr-1914": {"file": "/var/lib/grafana/dashboards-vald/02/vald-discoverer.json"},
    "service_flag_unknown__node-exporter-issue-2293": {"flag": "--collector.boottime"},
    "supervisor_not_running__supervisor-issue-232": {"url": "http://127.0.0.1:9001"},
    "supervisor_user_unknown__supervisor-issue-1385": {"user": "pythonapp", "section": "program:crypto_arbitrage_produce"},
    "grafana_not_a_dashboard__grafana-issue-13029": {"file": "/Dashboards/Main Org./this-is-a-title.json"},
    "nginx_directive_deprecated__nuts-node-issue-2336": {"old": "listen ... http2", "new": "http2"},
    "docker_client_too_old__docker-hoster-issue-23": {"client": "1.35"},
    "grafana_plugin_list_syntax__grafana-issue-17531": {
        "entry": "https://github.com/NatelEnergy/grafana-plotly-panel/archive/master.zip"},
    "engine_dependency_mismatch__vllm-rbln-issue-1092": {"package": "transformers", "attribute": "head_dim"},
    "nvidia_toolkit_hook_failed__bluefin-issue-3454": {"hook": "/usr/bin/nvidia-cdi-hook"},
    "certbot_nginx_parse_failed__certbot-issue-9801": {"file": "/etc/nginx/sites-enabled/name.com"},
    "bind_mount_type_mismatch__mktxp-stack-issue-17": {"source": "/data/compose/1/prometheus/prometheus.yml",
                                                       "target": "/etc/prometheus/prometheus.yml"},
    "bind_mount_type_mismatch__nginx-proxy-issue-923": {"path": "/etc/nginx/conf.d/demo.getdairyfarms.com.conf"},
    "bind_mount_type_mismatch__dynamo-issue-1432": {"path": "/etc/prometheus/prom-custom.yml"},
    "request_context_overflow__nextchat-issue-3195": {"max_tokens": 8192, "output_limit": 4096},
    "nginx_directive_misplaced__falcon-prediction-app-issue-3": {"directive": "server", "file": "/etc/nginx/nginx.conf"},
    "nginx_directive_misplaced__open-ethereum-pool-issue-203": {"directive": "location"},
    "prometheus_feature_flag_removed__prometheus-k8s-operator-issue-455": {"option": "remote-write-receiver"},
    "vllm_unauthorized__dify-vllm-provider-issue-2": {"route": "/v1/chat/completions"},
    "request_context_overflow__extractthinker-issue-346": {"max_tokens": 32000, "output_limit": 16384},
    "grafana_plugin_install_failed__grafana-issue-119715": {
        "plugin": "https://github.com/grafana/grafana-json-datasource/releases/download/v1.3.17/"
                  "marcusolsson-json-datasource-1.3.17.zip"},
}
LOGS = sorted(SERVICE_FAILURES.glob("*.log"))
# A held-out round's label (its collector's words) for a class built from that log and another report.
ROUND_LABELS = {"cuda_graph_capture_regression": "cuda_graph_capture_failed",
                "certbot_standalone_challenge_dns_not_propagated": "certbot_challenge_not_this_host",
                "grafana_plugin_preinstall_sync_unreachable": "grafana_plugin_install_failed",
                "image_entrypoint_prepended": "image_entrypoint_doubled",
                "nginx_options_ssl_include_missing": "nginx_certbot_include_missing",
                "supervisord_invalid_program_user": "supervisor_user_unknown",
                "dcgm_unsupported_profiling_field": "dcgm_field_unsupported",
                "grafana_non_dashboard_json_in_provisioned_dir": "grafana_not_a_dashboard",
                "nginx_listen_http2_deprecated": "nginx_directive_deprecated",
                "fp8_kernel_sm120_only_on_gb10": "kernel_arch_guard",
                "certbot_nginx_parse_comment_brace": "certbot_nginx_parse_failed",
                "certbot_nginx_parse_log_format_comment": "certbot_nginx_parse_failed",
                "grafana_plugin_list_space_before_url": "grafana_plugin_list_syntax",
                "grafana_dashboard_provider_no_folder": "grafana_provisioning_incomplete",
                "toolkit_hook_outdated_nvidia_ctk": "nvidia_toolkit_hook_failed",
                "bind_mount_file_onto_directory": "bind_mount_type_mismatch",
                "prometheus_config_path_is_directory": "bind_mount_type_mismatch",
                "flashinfer_jit_no_nvcc_cuda_home": "cuda_compiler_missing",
                "certbot_nginx_config_directive_not_allowed": "nginx_directive_misplaced",
                "prometheus_removed_feature_flag_agent": "prometheus_feature_flag_removed",
                "api_key_unexpected_401": "vllm_unauthorized",
                "http_server_socket_eacces": "supervisor_http_socket",
                "http_server_socket_einval": "supervisor_http_socket",
                "no_resolver_for_upstream_name": "nginx_no_resolver",
                "model_does_not_support_tools": "model_tools_unsupported",
                "placeholder_api_key_sent": "client_key_rejected",
                "wrong_endpoint_path": "endpoint_path_unknown",
                "certbot_no_matching_server_block": "certbot_no_server_block",
                "grafana_sqlite_database_locked": "grafana_database_locked",
                "multimodal_arch_needs_newer_vllm": "multimodal_not_recognised",
                "multimodal_checkpoint_format_unsupported": "multimodal_not_recognised",
                "grafana_multiple_default_datasources": "grafana_default_datasource_conflict",
                "grafana_default_datasource_per_org": "grafana_default_datasource_conflict",
                "prometheus_config_file_missing": "prometheus_config_missing",
                "nvidia_runtime_unknown_after_reboot": "nvidia_runtime_unregistered",
                "runtime_nvidia_use_device_reservation": "nvidia_runtime_unregistered",
                "container_runtime_unknown": "nvidia_runtime_unregistered",
                "node_exporter_statfs_namespace_mount": "node_exporter_statfs_missing",
                "nginx_certificate_empty_file": "nginx_certificate_invalid",
                "model_not_downloaded_repo_id": "model_not_found",
                "grafana_readonly_database_migration": "grafana_data_permission",
                "nginx_certificate_key_permission_denied": "nginx_certificate_unreadable",
                "nvml_insufficient_permissions_selinux": "nvml_insufficient_permissions",
                "prometheus_empty_wal_segment": "prometheus_wal_corrupt",
                "udev_data_dir_missing_in_container": "node_exporter_udev_data_missing",
                "image_bundles_nvidia_smi_file_exists": "container_driver_libs_conflict",
                "toolkit_mount_stat_failed_old_libnvidia_container": "libnvidia_container_outdated",
                "prometheus_config_file_not_readable": "prometheus_config_permission",
                "supervisorctl_wrong_config_rpc_404": "supervisorctl_wrong_server",
                "nginx_user_missing_getpwnam": "nginx_user_unknown",
                "nvidia_container_cli_ldconfig_path_wrong": "nvidia_ldconfig_failed",
                "nvidia_container_cli_cuda_unknown_error": "driver_library_mismatch",
                "vllm_memory_profiling_free_memory_grew_unified_memory": "memory_profiling_free_memory_grew",
                "vllm_ptx_unsupported_toolchain_entrypoint_replaced": "ptx_toolchain_unsupported",
                "certbot_http01_unauthorized_redirect_misconfigured": "certbot_challenge_wrong_answer",
                "node_exporter_listen_address_not_on_host": "listen_address_not_on_host",
                "prometheus3_fallback_scrape_protocol_in_global": "prometheus_config_field_misplaced",
                "docker29_isolation_chain_missing": "docker_iptables_chain_missing",
                "docker_isolation_chain_missing_after_update": "docker_iptables_chain_missing",
                "prometheus_rule_annotation_unquoted_colon": "prometheus_rules_invalid",
                "prometheus_rules_v1_format_in_v2": "prometheus_rules_invalid",
                "supervisord_logfile_is_directory": "supervisor_logfile_unusable",
                "supervisord_main_logfile_permission_denied": "supervisor_logfile_unusable",
                "nginx_resolver_not_an_address": "nginx_resolver_invalid",
                "certbot_unknown_host_broken_authoritative_dns": "certbot_dns_no_address",
                "client_self_signed_cert_in_chain": "client_certificate_untrusted",
                "client_self_signed_cert_in_chain_console": "client_certificate_untrusted",
                "docker28_iptables_raw_table_missing": "docker_kernel_module_missing",
                "docker29_iptables_raw_table_missing": "docker_kernel_module_missing",
                "docker_legacy_iptables_modules_missing_custom_kernel": "docker_kernel_module_missing",
                "nginx_proxy_pass_uri_in_regex_location": "nginx_proxy_pass_uri_in_regex",
                "vllm_illegal_memory_access_cudagraph": "cuda_illegal_memory_access",
                "docker_pull_x509_unknown_authority_proxy": "docker_registry_certificate_untrusted",
                "nginx_http2_directive_unknown_below_1_25": "nginx_directive_too_new",
                "nginx_http2_directive_unknown_ubuntu_1_24": "nginx_directive_too_new",
                "supervisord_program_file_without_section_header": "supervisor_config_invalid",
                "supervisord_quoted_ini_values": "supervisor_config_invalid",
                "client_tls_cert_altname_invalid_ip_not_in_cert": "client_certificate_name_mismatch",
                "nginx_connection_upgrade_variable_without_map": "nginx_variable_unknown",
                "nginx_ipv6_listen_on_host_without_ipv6": "ipv6_unavailable",
                "nginx_selinux_blocks_upstream_connect": "nginx_upstream_connect_denied",
                "prometheus_limitnofile_infinity_not_permitted": "systemd_limit_refused",
                "prometheus_too_many_open_files_alertmanager_dial": "open_files_exhausted",
                "supervisord_minfds_docker_ulimit_nofile": "supervisor_minfds_above_limit",
                "supervisord_percent_in_command_needs_escaping": "supervisor_config_invalid",
                "vllm_safetensors_metadata_incomplete_buffer_corrupt_shard": "model_weights_corrupt",
                "node_exporter_systemd_unit_whitelist_and_include_mutually_exclusive": "service_flags_exclusive",
                "driver_nvidia_smi_no_module_for_custom_kernel": "gpu_driver_not_loaded",
                "certbot_caa_accounturi_record_prevents_issuance": "certbot_caa_refused",
                "certbot_dns_plugin_args_unrecognized_old_system_certbot": "certbot_plugin_not_loaded",
                "certbot_dns_plugin_entrypoint_not_ipluginfactory_old_certbot": "certbot_plugin_not_loaded",
                "certbot_dns_plugin_installed_for_other_user_unrecognized_args": "certbot_plugin_not_loaded",
                "docker_dind_nf_tables_chain_add_failed_needs_iptables_legacy": "docker_nftables_refused",
                "docker_nftables_filter_chain_docker_already_exists": "docker_nftables_refused",
                "grafana_unsigned_plugin_not_loaded": "grafana_plugin_unsigned",
                "supervisord_user_root_cannot_drop_privilege_as_nonroot": "supervisor_user_not_root",
                "nginx_encrypted_private_key_needs_passphrase": "nginx_key_encrypted",
                "nginx_empty_dhparam_file_no_start_line": "nginx_dhparam_invalid",
                "nginx_https_to_plain_http_upstream_wrong_version_number": "nginx_upstream_not_tls",
                "nginx_upstream_tls_needs_sni_proxy_ssl_server_name": "nginx_upstream_tls_refused",
                "prometheus_query_max_samples_exceeded": "prometheus_query_too_many_samples",
                "prometheus_reload_lifecycle_api_disabled": "prometheus_lifecycle_disabled",
                "vllm_error_803_ldcache_nvidia_runtime_driver_mismatch": "cuda_driver_combination",
                "toolkit_driver_rpc_timeout_without_persistence_mode": "nvidia_driver_rpc_timeout",
                "grafana_provisioned_dashboard_datasource_template_variable": "grafana_datasource_variable_unresolved",
                "node-exporter_collectors_denied_nonroot_user": "node_exporter_kernel_file_denied",
                "node-exporter_web_config_yaml_indentation": "web_config_field_unknown",
                "filter-proxy_claude_code_400_body_invalid_plugins": "client_request_body_refused",
                "certbot_failed_validation_rate_limit_wait": "certbot_rate_limited",
                "certbot_standalone_renew_tls_sni_port_443": "certbot_port_80_busy",
                "docker_entrypoint_not_executable_shim_task": "entrypoint_not_executable",
                "filter-proxy_vllm_not_ready_connection_refused": "engine_not_ready",
                "gpu-exporter_dcgm_hostengine_no_nvidia_gpu_instance": "dcgm_hostengine_unreachable",
                "grafana_datasource_bad_gateway_wrong_url": "grafana_datasource_unreachable",
                "nginx_cert_path_outside_container_mount": "nginx_certificate_missing",
                "nginx_duplicate_upstream_google_module_name": "nginx_duplicate_upstream",
                "vllm_sampler_warmup_oom_gpu_util_one": "sampler_warmup_oom"}


def test_every_class_is_built_from_several_reports():
    # A held-out round's log joined the own set once measured: filed under a class, it counts as one of its reports.
    built_from = [*LOGS, *FAILURE_LOGS.glob("*.log"), *(path for round_ in HELDOUT_ROUNDS for path in round_.glob("*.log"))]
    counts = {cause: sum(ROUND_LABELS.get(expected_class(path), expected_class(path)) == cause.name
                         for path in built_from) for cause in BY_CLASS}
    assert {cause.name: n for cause, n in counts.items() if n < 2} == {}
    assert {expected_class(path) for path in LOGS} <= {cause.name for cause in BY_CLASS}
    assert counts[C.tp_exceeds_gpus] >= 2  # the round-5 report and vLLM issue 15217


@pytest.mark.parametrize("path", LOGS, ids=lambda path: path.stem)
def test_each_services_real_failure_is_diagnosed_with_its_fix_in_stackctls_terms(path):
    headers, lines = read_headers(path)
    cause = Cause[expected_class(path)]
    expect = BY_CLASS[cause]
    diagnosis = diagnose_log(lines, DiagnosisContext(service=headers["service"]))
    assert diagnosis is not None and diagnosis.cause is cause, diagnosis
    assert diagnosis.severity is SEVERITIES.get(path.stem, expect.severity)
    fix = diagnosis.fix
    port = "https" if "443" in "\n".join(lines) else "http"
    key = expect.key.format(service=headers["service"], port=port) if expect.key else None
    key = KEYS.get(path.stem, key)
    flag = expect.flag.format(flag=diagnosis.values.get("flag", "")) if expect.flag else None
    flag = FLAGS.get(path.stem, flag)
    assert (fix.key, fix.flag, fix.env) == (key, flag, ENVS.get(path.stem, expect.env))
    for named in (fix.key, fix.flag, fix.env, *SAYS.get(path.stem, expect.says)):
        if named:
            assert named in fix.text, f"{named!r} missing from: {fix.text}"
    for name, value in {**expect.values, **VALUES.get(path.stem, {})}.items():
        assert diagnosis.values.get(name) == value, name


def test_a_failed_start_with_a_request_error_in_its_log_still_leads_with_what_stopped_it():
    request = ["ERROR 01-01 [serving_chat.py:1] Error in preprocessing prompt inputs",
               ("ValueError: This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
               "(4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.")]
    crash = ["Traceback (most recent call last):", '  File "x.py", line 1, in run',
             "RuntimeError: CUDA error: an illegal memory access was encountered"]
    diagnosis = diagnose_log([*request, *crash])
    assert diagnosis.cause is Cause.unrecognised and "illegal memory access" in diagnosis.summary
    # The fallback still names the illegal access's fix (its signature, a consequence, loses to the request's).
    assert diagnosis.fix.flag == "--compilation-config" and "--enforce-eager" in diagnosis.fix.text
    # The request's own traceback alone is the known warning, not "stopped on".
    assert diagnose_log(request).cause is Cause.request_context_overflow


def test_another_programs_error_loading_its_config_is_not_prometheus():
    """Prometheus says "Error loading config (--config.file=...)"; Codex says "Error loading
    config.toml": only the first is a prometheus.yml to correct."""
    codex = ['Error loading config.toml: `wire_api = "chat"` is no longer supported.']
    prometheus = [('level=error msg="Error loading config (--config.file=/etc/prometheus/prometheus.yml)" '
                   'err="parsing YAML file /etc/prometheus/prometheus.yml: yaml: line 7: did not find expected key"')]
    said = diagnose_log(codex, DiagnosisContext(service="filter-proxy"))
    assert said is None or said.cause is not C.prometheus_config_invalid
    diagnosis = diagnose_log(prometheus, DiagnosisContext(service="prometheus"))
    assert diagnosis is not None and diagnosis.cause is C.prometheus_config_invalid and diagnosis.values["line"] == 7



def _prometheus(line: str):
    diagnosis = diagnose_log([line], DiagnosisContext(service="prometheus"))
    assert diagnosis is not None
    return diagnosis


def test_prometheus_config_refusals_are_told_apart_by_cause():
    """Prometheus 3 refusing an Alertmanager v1 section, a duplicate job_name, and a field newer than
    the running image each get their own fix; a field no release knows stays the generic correction."""
    err = 'msg="Error loading config (--config.file=/etc/prometheus/prometheus.yml)" err="parsing YAML file p.yml: {}"'
    alertmanager = _prometheus(err.format("expected Alertmanager api version to be one of [v2] but got v1"))
    assert alertmanager.cause is C.prometheus_alertmanager_api_v1_removed
    duplicate = _prometheus(err.format('found multiple scrape configs with job name \\"vllm\\"'))
    assert duplicate.cause is C.prometheus_duplicate_job_name and duplicate.values["job"] == "vllm"
    newer = _prometheus(err.format("yaml: unmarshal errors:\\n  line 9: field scrape_protocols not found in type "
                                   "config.ScrapeConfig"))
    assert newer.cause is C.prometheus_config_field_newer and "Prometheus 2.49 or later" in newer.fix.text
    typo = _prometheus(err.format("yaml: unmarshal errors:\\n  line 3: field scrape_intervall not found in type "
                                  "config.plain"))
    assert typo.cause is C.prometheus_config_invalid and typo.fix.text.startswith("correct prometheus.yml at line 3")


def test_prometheus_1x_unknown_fields_wording_names_the_moved_field():
    old = _prometheus('level=error msg="Error loading config: couldn\'t load configuration (-config.file=/etc/prometheus/'
                      'prometheus.yml): unknown fields in scrape_config: target_groups"')
    assert old.cause is C.prometheus_config_invalid and "`target_groups` is now static_configs" in old.fix.text


def test_docker_28s_bridge_without_ipset_modules_names_them_and_docker_27():
    """Docker 28's bare EINVAL creating its bridge and iptables' missing `set` extension are the ipset
    modules; a module modprobe could not find is named as the log names it."""
    prefix = 'failed to start daemon: Error initializing network controller: error obtaining controller instance: '
    bare = [prefix + 'failed to register "bridge" driver: invalid argument']
    diagnosis = diagnose_log(bare, DiagnosisContext(service="docker"))
    assert diagnosis is not None and diagnosis.cause is C.docker_kernel_module_missing
    assert "modprobe ip_set ip_set_hash_net xt_set" in diagnosis.fix.text and "27.5.1" in diagnosis.fix.text
    # Another bridge failure (an address pool, say) is not a missing module.
    other = [prefix + 'failed to register "bridge" driver: failed to create bridge: address already in use']
    said = diagnose_log(other, DiagnosisContext(service="docker"))
    assert said is None or said.cause is not C.docker_kernel_module_missing


def test_a_non_gpu_exporters_unparsable_sample_names_no_gpu_image():
    """The same parse error from another exporter names a newer release of it, not images.gpu-exporter."""
    line = ('level=warn component="scrape manager" scrape_pool=k8s_usage target=http://localhost:9100/metrics '
            'msg="append failed" err="strconv.ParseFloat: parsing \\"226202814n\\": invalid syntax"')
    diagnosis = diagnose_log([line], DiagnosisContext(service="prometheus"))
    assert diagnosis is not None and diagnosis.cause is C.exporter_invalid_metric_output
    assert diagnosis.fix.key is None and diagnosis.values["value"] == "226202814n"


def test_round_10_classes_told_apart_from_their_neighbours():
    """A signature TypeError outside vLLM's frames is no engine mismatch; a 401 in vLLM's access log
    names VLLM_API_KEY; a core plugin in Grafana's list names the plugin to drop."""
    script = ['  File "/home/me/run.py", line 3, in main', "    client.chat(model=m, tokenizer=t)",
              "TypeError: Client.chat() got an unexpected keyword argument 'tokenizer'"]
    said = diagnose_log(script, DiagnosisContext(service="vllm"))
    assert said is None or said.cause is not C.engine_dependency_mismatch
    refused = diagnose_log(['INFO:     10.0.0.5:4242 - "POST /v1/completions HTTP/1.1" 401 Unauthorized'],
                           DiagnosisContext(service="vllm"))
    assert refused is not None and refused.cause is C.vllm_unauthorized and refused.fix.env == "VLLM_API_KEY"
    assert refused.values["route"] == "/v1/completions"
    line = ("Error: ✗ [plugin.forbiddenCorePluginInstall] plugin stackdriver is a core plugin and cannot be "
            "installed separately")
    core = diagnose_log([line], DiagnosisContext(service="grafana"))
    assert core is not None and core.cause is C.grafana_core_plugin_install and "remove stackdriver" in core.fix.text


def test_round_11_classes_read_the_family_not_one_wording():
    """Each round-11 class reads its family: any deprecated nginx directive, any removed Prometheus
    feature flag, any misplaced directive, any position table; and says what it read."""
    renamed = diagnose_log([('nginx: [warn] the "ssl" directive is deprecated, use the "listen ... ssl" directive '
                            'instead in /etc/nginx/conf.d/site.conf:4')], DiagnosisContext(service="nginx"))
    assert renamed is not None and renamed.cause is C.nginx_directive_deprecated
    assert 'replace the "ssl" directive with the "listen ... ssl" directive' in renamed.fix.text
    receiver = _prometheus('level=WARN source=main.go:291 msg="Unknown option for --enable-feature" '
                           'option=remote-write-receiver')
    assert receiver.cause is C.prometheus_feature_flag_removed and receiver.fix.flag is None
    assert "--web.enable-remote-write-receiver" in receiver.fix.text
    misplaced = diagnose_log([('nginx: [emerg] "worker_processes" directive is not allowed here in '
                              '/etc/nginx/sites-enabled/app:1')], DiagnosisContext(service="nginx"))
    assert misplaced is not None and misplaced.cause is C.nginx_directive_misplaced
    assert "remove the worker_processes directive" in misplaced.fix.text and "certbot" not in misplaced.fix.text
    window = diagnose_log(["Assertion `index out of bounds: 0 <= tmp4 < 32768` failed."], DiagnosisContext())
    assert window is not None and window.cause is C.position_index_out_of_range
    assert window.fix.value == "32768" and window.fix.key == "vllm.max_model_len"
    backend = diagnose_log([("ValueError: Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this "
                            "configuration. Reason: ['kv_cache_dtype not supported']")], DiagnosisContext())
    assert backend is not None and backend.cause is C.attention_backend_forced_invalid
    assert backend.values == {"backend": "FLASH_ATTN", "reason": "kv_cache_dtype not supported"}
    # A torch symbol undefined anywhere is the torch ABI; another library's undefined symbol is not.
    abi = diagnose_log(["ImportError: /x/flash_attn_2_cuda.so: undefined symbol: _ZN2at4_ops5zeros4callEv"],
                       DiagnosisContext())
    assert abi is not None and abi.cause is C.engine_abi_mismatch and "matching torch" in abi.fix.text
    other = diagnose_log(["ImportError: /x/libfoo.so: undefined symbol: png_set_longjmp_fn"], DiagnosisContext())
    assert other is None or other.cause is not C.engine_abi_mismatch


def test_round_12_classes_tell_causes_apart_and_leave_neighbours_alone():
    """Round 12's classes read the family and stay off their neighbours: Docker's missing GPU driver
    names the toolkit, its reinstall and snap Docker; a client's own output budget names Claude Code's
    variable only at its default; an engine-core failure with its own error above is that error's."""
    docker = DiagnosisContext(service="docker")
    runtime = diagnose_log([('docker: Error response from daemon: could not select device driver "" with '
                            'capabilities: [[gpu]].')], docker)
    assert runtime is not None and runtime.cause is C.no_gpu_runtime
    for told_apart in ("nvidia-ctk --version", "--reinstall nvidia-container-toolkit", "snap list docker", "docker-ce"):
        assert told_apart in runtime.fix.text
    # A CDI spec without the GPUs is not a snap or an upgrade matter.
    cdi = diagnose_log(["failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all"], docker)
    assert cdi is not None and cdi.cause is C.no_gpu_runtime and "snap" not in cdi.fix.text
    refusal = ("'max_tokens' or 'max_completion_tokens' is too large: {asked}. This model's maximum context length "
               "is 32768 tokens and your request has 1000 input tokens ({asked} > 32768 - 1000).")
    claude = diagnose_log([refusal.format(asked=32000)], DiagnosisContext(service="filter-proxy"))
    assert claude.fix.text.startswith("Claude Code or opencode's default output budget (32000): Claude Code: set "
                                      "CLAUDE_CODE_MAX_OUTPUT_TOKENS in its environment to at most 31768")
    other = diagnose_log([refusal.format(asked=40000)], DiagnosisContext(service="filter-proxy"))
    assert other.fix.text.startswith("cap max_tokens in the client")
    # The bare empty-procs line names a newer vLLM; the same line under the core's own error is that error's.
    bare = diagnose_log(["RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"])
    assert bare is not None and bare.cause is C.engine_core_failed_unlogged and bare.fix.key == "images.vllm"
    above = diagnose_log(["(EngineCore pid=1) ValueError: some engine error no signature knows",
                          "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"])
    assert above is not None and above.cause is C.unrecognised and "some engine error" in above.summary
    # Grafana: a datasource missing from a dashboard's query is not provisioning's prune.
    query = diagnose_log(['logger=context level=error msg="Could not find datasource Data source not found"'],
                         DiagnosisContext(service="grafana"))
    assert query is None or query.cause is not C.grafana_datasource_prune
    prune = diagnose_log(["data source not found"], DiagnosisContext(service="grafana"))
    assert prune is not None and prune.cause is C.grafana_datasource_prune and "prune: true" in prune.fix.text
    # A Prometheus value that must be a list says so, with the line; a list where one map belongs too.
    listed = _prometheus("  FAILED: parsing YAML file p.yml: yaml: unmarshal errors:\n"
                         "  line 4: cannot unmarshal !!map into []*config.ScrapeConfig")
    assert listed.cause is C.prometheus_config_invalid and "`scrape_configs` must be a list" in listed.fix.text
    # supervisord's own "not executable" names chmod; a command it cannot find stays its own class.
    spawn = diagnose_log(["INFO spawnerr: command at '/opt/run.sh' is not executable"],
                         DiagnosisContext(service="supervisord"))
    assert spawn.cause is C.supervisor_spawn_failed and "chmod +x" in spawn.fix.text
    missing = diagnose_log(["INFO spawnerr: can't find command 'run.sh'"], DiagnosisContext(service="supervisord"))
    assert missing.cause is C.supervisor_command_missing
    # FlashInfer's decode kernel too; another library's "failed with error" is not FlashInfer's.
    decode = diagnose_log([("RuntimeError: BatchDecodeWithPagedKVCachePyTorchWrapper failed with error "
                           "unspecified launch failure")])
    assert decode.cause is C.flashinfer_kernel_failed and decode.fix.value == "TRITON_ATTN"
    other_kernel = diagnose_log(["RuntimeError: GemmKernel failed with error invalid argument"])
    assert other_kernel is None or other_kernel.cause is not C.flashinfer_kernel_failed


def test_round_13_classes_read_the_family_and_leave_neighbours_alone():
    """A path of the wrong type under a bind mount, in Docker's words or in the service's own; no nvcc
    for a JIT compile; a client's default output budget past a model's output limit; a container
    started without the GPU (nvidia-smi missing); a Let's Encrypt certificate whose files are gone."""
    docker, nginx = DiagnosisContext(service="docker"), DiagnosisContext(service="nginx")
    python = diagnose_log(["IsADirectoryError: [Errno 21] Is a directory: '/etc/app/config.yaml'"],
                          DiagnosisContext(service="filter-proxy"))
    assert python is not None and python.cause is C.bind_mount_type_mismatch
    assert python.values["path"] == "/etc/app/config.yaml" and "remove the directory" in python.fix.text
    # The same reads failing for another reason are their own classes.
    denied = _prometheus('level=error msg="Error loading config (--config.file=/etc/prometheus/prometheus.yml)" '
                         'err="open /etc/prometheus/prometheus.yml: permission denied"')
    assert denied.cause is not C.bind_mount_type_mismatch
    missing = diagnose_log(['nginx: [emerg] open() "/etc/nginx/conf.d/site.conf" failed (2: No such file or directory)'],
                           nginx)
    assert missing is None or missing.cause is not C.bind_mount_type_mismatch
    # Another runc refusal (an entrypoint that is no executable) is not a mount of the wrong type.
    exec_failed = diagnose_log([('Error response from daemon: failed to create task for container: OCI runtime create '
                                 'failed: runc create failed: unable to start container process: exec: "/entry.sh": '
                                 'permission denied: unknown')], docker)
    assert exec_failed is None or exec_failed.cause is not C.bind_mount_type_mismatch
    # torch's extension builder says it in its own words; a compile that ran and failed is not a missing nvcc.
    torch = diagnose_log(["OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root."])
    assert torch is not None and torch.cause is C.cuda_compiler_missing and torch.fix.env == "CUDA_HOME"
    assert "for its sampler" not in torch.summary
    compiled = diagnose_log(["RuntimeError: Error building extension 'sampling': nvcc fatal : Unsupported gpu architecture"])
    assert compiled is None or compiled.cause is not C.cuda_compiler_missing
    # A default budget no client table knows is capped generically; a vLLM window refusal keeps its window.
    openai = "max_tokens is too large: {asked}. This model supports at most 8192 completion tokens, whereas you provided {asked}."
    other = diagnose_log([openai.format(asked=10000)], DiagnosisContext(service="filter-proxy"))
    assert other.fix.text.startswith("cap max_tokens in the client (at most 8192, the model's output limit")
    opencode = diagnose_log([openai.format(asked=32000)], DiagnosisContext(service="filter-proxy"))
    assert "opencode: set the model's limit.output in opencode.json to at most 8192" in opencode.fix.text
    assert "OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX" in opencode.fix.text
    # nvidia-smi missing without the colon of a shell's "command not found".
    bare = diagnose_log(["!! ERROR: nvidia-smi not found"], docker)
    assert bare is not None and bare.cause is C.no_gpu_runtime and "--gpus all" in bare.fix.text
    # A Let's Encrypt certificate's files gone: reissue; a self-made certificate elsewhere names no certbot renewal.
    line = ('nginx: [emerg] cannot load certificate "{path}": BIO_new_file() failed (SSL: error:02001002:system '
            "library:fopen:No such file or directory)")
    issued = diagnose_log([line.format(path="/etc/letsencrypt/live/example.org/fullchain.pem")], nginx)
    assert issued.cause is C.nginx_certificate_missing and "certbot renew --force-renewal" in issued.fix.text
    own = diagnose_log([line.format(path="/etc/nginx/ssl/fullchain.pem")], nginx)
    assert own.cause is C.nginx_certificate_missing and "force-renewal" not in own.fix.text


def test_a_misplaced_nginx_block_is_told_by_where_it_stands():
    """A main-context directive in an included file is removed; a server block at nginx.conf's top is
    wrapped or moved to conf.d/; a location outside any server block is moved into one."""
    nginx = DiagnosisContext(service="nginx")
    line = 'nginx: [emerg] "{directive}" directive is not allowed here in {file}:{line}'
    included = diagnose_log([line.format(directive="user", file="/etc/nginx/conf.d/site.conf", line=1)], nginx)
    assert "remove the user directive" in included.fix.text and "inside http {}" in included.fix.text
    # A server block at the top of an included site file is not nginx.conf's: no restore of the main file.
    site = diagnose_log([line.format(directive="server", file="/etc/nginx/sites-enabled/app", line=1)], nginx)
    assert site.cause is C.nginx_directive_misplaced and "restore the main nginx.conf" not in site.fix.text
    top = diagnose_log([line.format(directive="upstream", file="/etc/nginx/nginx.conf", line=1)], nginx)
    assert "the upstream block belongs inside http {}" in top.fix.text
    location = diagnose_log([line.format(directive="location", file="/etc/nginx/conf.d/app.conf", line=12)], nginx)
    assert "move the location block inside a server {} block" in location.fix.text and "line 12" in location.fix.text


def test_round_14_classes_read_the_family_and_leave_neighbours_alone():
    """supervisord's HTTP socket refused, nginx without a resolver, a model without tools, OpenAI's 401
    for another server's key, a --quantization other than the checkpoint's, curl refused, a negative
    derived max_tokens, the Hub's 5xx, harmony's unwritable cache, runtime: nvidia unregistered, an
    upstream on localhost only."""
    supervisord, nginx = DiagnosisContext(service="supervisord"), DiagnosisContext(service="nginx")
    proxy, docker = DiagnosisContext(service="filter-proxy"), DiagnosisContext(service="docker")
    socket = "Error: Cannot open an HTTP server: socket.error reported errno.{errno} ({number})"
    too_long = diagnose_log([socket.format(errno="EINVAL", number=22)], supervisord)
    assert too_long.cause is C.supervisor_http_socket and "107 bytes" in too_long.summary
    # A socket in use is the running supervisord's, its own class.
    in_use = diagnose_log([socket.format(errno="EADDRINUSE", number=98)], supervisord)
    assert in_use is None or in_use.cause is not C.supervisor_http_socket
    # A name nginx cannot resolve at start is the upstream's, not the run-time resolver's.
    at_start = diagnose_log(['nginx: [emerg] host not found in upstream "vllm:8000" in /etc/nginx/conf.d/a.conf:3'], nginx)
    assert at_start.cause is C.nginx_upstream_host_unknown
    lua = diagnose_log(['failed to connect: no resolver defined to resolve "graph.qq.com"'], nginx)
    assert lua.cause is C.nginx_no_resolver and lua.values["host"] == "graph.qq.com"
    # vLLM's own refusal of tools names its flags; Ollama's names the model.
    vllm_tools = diagnose_log([('{"object":"error","message":"\\"auto\\" tool choice requires --enable-auto-tool-choice '
                                'and --tool-call-parser to be set"}')], proxy)
    assert vllm_tools.cause is C.auto_tool_choice_disabled
    ollama = diagnose_log(["400 codellama:latest does not support tools"], proxy)
    assert ollama.cause is C.model_tools_unsupported and ollama.values["model"] == "codellama:latest"
    # A real key OpenAI masks is no placeholder; the fix is still the base URL and the stack's key.
    masked = diagnose_log([("401 Incorrect API key provided: sk-proj-****MxYA. You can find your API key at "
                            "https://platform.openai.com/account/api-keys.")], proxy)
    assert masked.cause is C.client_key_rejected and "placeholder" not in masked.summary
    # A method vLLM does not know, and a method asked of an unquantized model, stay their own classes.
    mismatch = diagnose_log([("ValueError: Quantization method specified in the model config (fp8) does not match the "
                              "quantization method specified in the `quantization` argument (gguf).")])
    assert mismatch.cause is C.quantization_mismatch and "--quantization fp8" in mismatch.fix.text
    assert diagnose_log(["ValueError: Cannot find the config file for awq"]).cause is C.quantization_config_missing
    # curl refused names the exporter's listen address only for an exporter.
    refused = "curl: (7) Failed to connect to localhost port 9100 after 0 ms: Connection refused"
    exporter = diagnose_log([refused], DiagnosisContext(service="node-exporter"))
    assert exporter.cause is C.listen_address_refused and "--web.listen-address" in exporter.fix.text
    assert "--web.listen-address" not in diagnose_log([refused], proxy).fix.text
    timeout = diagnose_log(["curl: (28) Failed to connect to localhost port 9100 after 3000 ms: Timeout was reached"],
                           DiagnosisContext(service="node-exporter"))
    assert timeout is None or timeout.cause is not C.listen_address_refused
    # A prompt past the window as vLLM's derived budget; a client's own -1 is not one.
    negative = "max_tokens must be at least 1, got -{over}. (parameter=max_tokens, value=-{over})"
    past = diagnose_log([negative.format(over=46771)], proxy)
    assert past.cause is C.request_context_overflow and past.values["over"] == 46771
    assert past.fix.key == "vllm.max_model_len"
    minus_one = diagnose_log([negative.format(over=1)], proxy)
    assert minus_one is None or minus_one.cause is not C.request_context_overflow
    # The Hub's 504 (huggingface_hub's words as faster-whisper#261 and transformers#23228 show them).
    for line in (("huggingface_hub.utils._errors.HfHubHTTPError: 504 Server Error: Gateway Time-out for url: "
                  "https://huggingface.co/api/models/guillaumekln/faster-whisper-tiny.en/revision/main"),
                 ("HTTPError: 504 Server Error: Gateway Time-out for url: https://huggingface.co/api/models/"
                  "bert-base-uncased/tree/main?recursive=True")):
        down = diagnose_log([line])
        assert down.cause is C.model_not_cached_offline and down.fix.env == "HF_HUB_OFFLINE" and "504" in down.summary
    # A 404 from the Hub is a model that is not there, not the Hub down.
    missing = diagnose_log([("huggingface_hub.utils._errors.RepositoryNotFoundError: 404 Client Error. Repository Not "
                             "Found for url: https://huggingface.co/api/models/org/nope/revision/main.")])
    assert missing.cause is C.model_not_found
    # harmony's vocab: a cache directory not writable, against a host with no route to the blob store.
    offline = diagnose_log([("openai_harmony.HarmonyError: error downloading or loading vocab file: failed to download "
                             "or load vocab file")])
    assert offline.fix.env == "TIKTOKEN_ENCODINGS_BASE"
    # runtime: nvidia unregistered names the device reservation; a missing toolkit under --gpus does not.
    unregistered = diagnose_log(["Error response from daemon: unknown or invalid runtime name: nvidia"], docker)
    assert unregistered.cause is C.nvidia_runtime_unregistered and "instead of runtime: nvidia" in unregistered.fix.text
    toolkit = diagnose_log(['could not select device driver "" with capabilities: [[gpu]]'], docker)
    assert toolkit.cause is C.no_gpu_runtime and "instead of runtime: nvidia" not in toolkit.fix.text
    # An upstream refused on another address names the listen address; on loopback it does not.
    upstream = ('connect() failed (111: Connection refused) while connecting to upstream, client: 1.2.3.4, server: _, '
                'request: "POST /v1/messages HTTP/1.1", upstream: "http://{address}:8080/v1/messages"')
    remote = diagnose_log([upstream.format(address="10.0.0.5")], nginx)
    assert "bind to 0.0.0.0" in remote.fix.text
    assert "bind to 0.0.0.0" not in diagnose_log([upstream.format(address="127.0.0.1")], nginx).fix.text


def test_a_404_on_a_path_the_engine_serves_is_not_an_unserved_path():
    # vLLM answers 404 on its own routes for a model it does not serve: another cause.
    served = diagnose_log(['INFO:     127.0.0.1:40000 - "POST /v1/chat/completions HTTP/1.1" 404 Not Found'],
                          DiagnosisContext(service="vllm"))
    assert served is None or served.cause is not C.endpoint_path_unknown
    unserved = diagnose_log(['INFO:     127.0.0.1:55504 - "GET / HTTP/1.1" 404 Not Found',
                             'INFO:     127.0.0.1:53798 - "POST /v1/generate HTTP/1.1" 404 Not Found'],
                            DiagnosisContext(service="vllm"))
    assert unserved.cause is C.endpoint_path_unknown and unserved.values["paths"] == "/, /v1/generate"


def test_a_window_overflow_on_the_release_that_ignores_max_model_len_names_a_newer_vllm():
    refusal = "ValueError: The decoder prompt (length 18425) is longer than the maximum model length of 12288."
    capped = diagnose_log(["INFO 07-08 10:00:00 [api_server.py:1] vLLM API server version 0.9.1", refusal])
    assert capped.cause is C.request_context_overflow and capped.fix.key == "images.vllm"
    assert "vLLM 0.9.2 or newer" in capped.fix.text
    other = diagnose_log(["INFO 07-08 10:00:00 [api_server.py:1] vLLM API server version 0.9.2", refusal])
    assert other.fix.key == "vllm.max_model_len"


def test_round_16_classes_read_their_cause_and_leave_neighbours_alone():
    """dcgm-exporter's privilege warning gives way to a failure that stops the exporter (dcgm-exporter#34's
    NVML error after it); Grafana's retry notice without an error is no failure; a refused multimodal
    limit is not the per-request limit; nginx's missing certificate directive names the site."""
    warned = [("Warning #2: dcgm-exporter doesn't have sufficient privileges to expose profiling metrics. To get "
              "profiling metrics with dcgm-exporter, use --cap-add SYS_ADMIN"),
              'time="2022-05-24T08:06:48Z" level=info msg="Starting dcgm-exporter"',
              "Error: Failed to initialize NVML",
              'time="2022-05-24T08:06:48Z" level=fatal msg="Error starting nv-hostengine: DCGM initialization error"']
    stopped = diagnose_log(warned, DiagnosisContext(service="gpu-exporter"))
    assert stopped is not None and stopped.severity is Severity.fatal and "SYS_ADMIN" not in stopped.fix.text
    assert diagnose_log(warned[:2], DiagnosisContext(service="gpu-exporter")).severity is ADVISORY
    retry = [('t=2017-11-13T14:56:30+0000 lvl=info msg="Database table locked, sleeping then retrying" logger=sqlstore '
             'retry=0')]
    said = diagnose_log(retry, DiagnosisContext(service="grafana"))
    assert said is None or said.cause is not C.grafana_database_locked
    per_request = diagnose_log(["ValueError: At most 1 image(s) may be provided in one request."])
    assert per_request is not None and per_request.cause is C.mm_limit_per_prompt
    site = diagnose_log([('nginx: [emerg] no "ssl_certificate" is defined for the "listen ... ssl" directive in '
                         "/etc/nginx/sites-enabled/stackctl-site.conf:12")], DiagnosisContext(service="nginx"))
    assert site is not None and site.values["site"] == "/etc/nginx/sites-enabled/stackctl-site.conf"
    assert "ssl_certificate_key" in site.fix.text and site.fix.key == "letsencrypt_dir"


def test_round_17_classes_need_their_cause_and_leave_neighbours_alone():
    """One Prometheus line names a missing file, a denied one or bad YAML: each its own fix. Grafana's
    provisioning error is two defaults only when it says so (and an old Grafana's wording names the
    upgrade). certbot's NXDOMAIN for a real domain is a missing record; for a reserved name, a placeholder."""
    prometheus = 'msg="Error loading config (--config.file=/etc/prometheus/prometheus.yml)" err="open {}"'
    missing = diagnose_log([prometheus.format("/etc/prometheus/prometheus.yml: no such file or directory")],
                           DiagnosisContext(service="prometheus"))
    denied = diagnose_log([prometheus.format("/etc/prometheus/prometheus.yml: permission denied")],
                          DiagnosisContext(service="prometheus"))
    parsed = diagnose_log([('msg="Error loading config (--config.file=/etc/prometheus/prometheus.yml)" '
                           'err="parsing YAML file /etc/prometheus/prometheus.yml: yaml: line 7: did not find expected key"')],
                          DiagnosisContext(service="prometheus"))
    assert (missing.cause, denied.cause, parsed.cause) == (
        C.prometheus_config_missing, C.prometheus_config_permission, C.prometheus_config_invalid)
    assert missing.values["path"] == "/etc/prometheus/prometheus.yml" and missing.fix.text.startswith("create the")

    grafana = DiagnosisContext(service="grafana")
    yaml_error = diagnose_log(["Datasource provisioning error: yaml: line 5: mapping values are not allowed"], grafana)
    per_org = diagnose_log([("Datasource provisioning error: datasource.yaml config is invalid. Only one datasource "
                            "per organization can be marked as default")], grafana)
    old = diagnose_log(["error: datasource.yaml config is invalid. Only one datasource can be marked as default"], grafana)
    assert yaml_error.cause is C.grafana_datasource_provisioning and "isDefault" not in yaml_error.fix.text
    assert (per_org.cause, per_org.fix.key) == (C.grafana_default_datasource_conflict, None)
    assert (old.cause, old.fix.key) == (C.grafana_default_datasource_conflict, "images.grafana")

    certbot = DiagnosisContext(service="certbot")
    real = diagnose_log(["Detail: DNS problem: NXDOMAIN looking up A for llm.mylab.net - check that a DNS record exists"],
                        certbot)
    placeholder = diagnose_log([("Detail: DNS problem: NXDOMAIN looking up A for www.example.org - check that a DNS "
                                "record exists")], certbot)
    assert real.cause is C.certbot_dns_missing
    assert placeholder.cause is C.certbot_placeholder_domain and placeholder.values["domain"] == "www.example.org"
    # A real domain that merely contains the word is no placeholder.
    lookalike = diagnose_log(["Detail: DNS problem: NXDOMAIN looking up A for example.company.io"], certbot)
    assert lookalike.cause is C.certbot_dns_missing


def test_round_18_classes_need_their_cause_and_leave_neighbours_alone():
    """nginx's certificate that is not there, and one that is there but not PEM: each its own fix (a
    certbot file is issued again by certbot). node-exporter's statfs denied, and a mount that is gone.
    A model name asked of ModelScope's hub, of Hugging Face's, and a local directory that is missing."""
    nginx = DiagnosisContext(service="nginx")
    absent = diagnose_log([('nginx: [emerg] cannot load certificate "/etc/letsencrypt/live/llm.lab.net/fullchain.pem": '
                            "BIO_new_file() failed (SSL: error:80000002:system library::No such file or directory)")],
                          nginx)
    empty = diagnose_log([('nginx: [emerg] cannot load certificate "/etc/letsencrypt/live/llm.lab.net/fullchain.pem": '
                           "PEM_read_bio_X509_AUX() failed (SSL: error:0480006C:PEM routines::no start line:Expecting: "
                           "TRUSTED CERTIFICATE)")], nginx)
    key = diagnose_log([('nginx: [emerg] cannot load certificate key "/etc/letsencrypt/live/llm.lab.net/privkey.pem": '
                         "PEM_read_bio_PrivateKey() failed (SSL: error:0909006C:PEM routines:get_name:no start line:"
                         "Expecting: ANY PRIVATE KEY)")], nginx)
    assert (absent.cause, empty.cause, key.cause) == (
        C.nginx_certificate_missing, C.nginx_certificate_invalid, C.nginx_certificate_invalid)
    assert "sudo certbot delete --cert-name" in empty.fix.text and "openssl x509" in empty.fix.text
    assert "openssl pkey" in key.fix.text and key.values["certificate"].endswith("privkey.pem")

    exporter = DiagnosisContext(service="node-exporter")
    statfs = 'level=error msg="Error on statfs() system call for \\"/rootfs/run/docker/netns/1a2b\\": {}"'
    denied = diagnose_log([statfs.format("permission denied")], exporter)
    gone = diagnose_log([statfs.format("no such file or directory")], exporter)
    assert (denied.cause, gone.cause) == (C.node_exporter_statfs_denied, C.node_exporter_statfs_missing)
    assert gone.values["path"] == "/rootfs/run/docker/netns/1a2b" and gone.fix.key is None

    vllm = DiagnosisContext(service="vllm")
    modelscope = diagnose_log(["requests.exceptions.HTTPError: The request model: my-finetune does not exist!"], vllm)
    hub = diagnose_log(["ValueError: Invalid repository ID or local directory specified: 'my-finetune'."], vllm)
    local = diagnose_log(["ValueError: Invalid repository ID or local directory specified: '/models/my-finetune'."], vllm)
    assert {modelscope.cause, hub.cause, local.cause} == {C.model_not_found}
    assert modelscope.fix.env == "VLLM_USE_MODELSCOPE" and "download the model first" in modelscope.fix.text.lower()
    assert (hub.fix.env, hub.fix.value) == (None, "my-finetune") and "local path" in hub.fix.text
    assert local.fix.value == "/models/my-finetune" and "VLLM_USE_MODELSCOPE" not in local.fix.text


def test_nginx_server_conflicts_are_told_apart_from_duplicate_listen_options():
    """A name two blocks claim is a warning nginx survives; two default servers and two sets of listen
    options on one socket stop it, each with its own fix."""
    nginx = DiagnosisContext(service="nginx")
    name = diagnose_log(['nginx: [warn] conflicting server name "llm.lab.net" on 0.0.0.0:443, ignored'], nginx)
    default = diagnose_log(["nginx: [emerg] a duplicate default server for [::]:443 in /etc/nginx/conf.d/other.conf:3"],
                           nginx)
    options = diagnose_log(["nginx: [emerg] duplicate listen options for [::]:443 in /etc/nginx/conf.d/other.conf:3"],
                           nginx)
    assert (name.cause, name.severity, name.values["server_name"]) == (C.nginx_server_conflict, ADVISORY, "llm.lab.net")
    assert (default.cause, default.severity, default.fix.key) == (C.nginx_server_conflict, Severity.fatal, "ports.https")
    assert "remove `default_server`" in default.fix.text and "/etc/nginx/conf.d/other.conf:3" in default.fix.text
    assert options.cause is C.nginx_duplicate_listen
    # A fatal error in the same log wins over the warning.
    both = diagnose_log([name.evidence, default.evidence], nginx)
    assert both.severity is Severity.fatal


def test_round_21_classes_need_their_cause_and_leave_neighbours_alone():
    """Grafana's SQLite refusing a write (its data directory's owner), nginx's key there but unreadable (not
    missing, not invalid), NVML denied the devices by SELinux (not a missing runtime, not a lost GPU), a
    WAL segment or head chunk file left empty (not a block's meta.json), and udev's data missing in
    node-exporter's container (a warning a fatal error beside it outranks)."""
    grafana = DiagnosisContext(service="grafana")
    readonly = diagnose_log([('t=2018-02-08T05:32:53+0000 lvl=eror msg="Fail to initialize orm engine" logger=sqlstore '
                              'error="Sqlstore::Migration failed err: attempt to write a readonly database\\n"')], grafana)
    # grafana#15316: SQLite busy, not refused: its own class.
    locked = diagnose_log([('t=2020-02-25T04:10:06+0000 lvl=eror msg="Failed to look up user based on cookie" '
                           'logger=context error="database is locked"')], grafana)
    assert (readonly.cause, readonly.fix.key) == (C.grafana_data_permission, "images.grafana")
    assert "readonly database" in readonly.summary and "grafana.db" in readonly.fix.text
    assert "chown -R 472:472" in readonly.fix.text
    assert locked.cause is C.grafana_database_locked

    nginx = DiagnosisContext(service="nginx")
    key = '/etc/letsencrypt/live/llm.lab.net/privkey.pem'
    refused = diagnose_log([(f'nginx: [emerg] cannot load certificate key "{key}": BIO_new_file() failed (SSL: '
                            "error:8000000D:system library::Permission denied:calling fopen("
                            f"{key}, r) error:10080002:BIO routines::system lib)")], nginx)
    absent = diagnose_log([(f'nginx: [emerg] cannot load certificate key "{key}": BIO_new_file() failed (SSL: '
                           "error:80000002:system library::No such file or directory:calling fopen("
                           f"{key}, r) error:10000080:BIO routines::no such file)")], nginx)
    assert (refused.cause, refused.values["certificate"]) == (C.nginx_certificate_unreadable, key)
    assert f"namei -l {key}" in refused.fix.text and "letsencrypt_dir" in refused.fix.text
    assert absent.cause is C.nginx_certificate_missing

    docker = DiagnosisContext(service="docker")
    denied = diagnose_log(["Failed to initialize NVML: Insufficient Permissions"], docker)
    lost = diagnose_log(["Failed to initialize NVML: Unknown Error"], docker)
    # nvidia-gpu-prometheus-exporter#1's gonvml, with no NVML library at all.
    missing = diagnose_log([("2018/05/29 17:39:20 Couldn't initialize gonvml: could not load NVML library. Make sure "
                            "NVML is in the shared library search path.")], docker)
    assert denied.cause is C.nvml_insufficient_permissions and "label=disable" in denied.fix.text
    assert "install the NVIDIA Container Toolkit" not in denied.fix.text
    assert (lost.cause, missing.cause) == (C.gpu_access_lost, C.no_gpu_runtime)

    prometheus = DiagnosisContext(service="prometheus")
    segment = diagnose_log([('level=error ts=2017-10-12T09:48:20.103205196Z caller=main.go:317 msg="Opening storage '
                            'failed" err="validate meta \\"/prometheus/wal/000025\\": EOF"')], prometheus)
    block = diagnose_log([('level=error ts=2020-10-29T03:29:33.202Z caller=main.go:764 err="opening storage failed: '
                          'block dir: \\"/prometheus/01ENRA5TM45DGMR9PG0NF5R3M6\\": open /prometheus/'
                          '01ENRA5TM45DGMR9PG0NF5R3M6/meta.json: no such file or directory"')], prometheus)
    assert (segment.cause, segment.values["file"]) == (C.prometheus_wal_corrupt, "/prometheus/wal/000025")
    assert "remove the empty file: the file /prometheus/wal/000025" in segment.fix.text
    assert block.cause is C.prometheus_tsdb_corrupt

    exporter = DiagnosisContext(service="node-exporter")
    udev = ('ts=2023-05-18T14:33:18.824Z caller=diskstats_linux.go:264 level=error collector=diskstats msg="Failed to '
            'open directory, disabling udev device properties" path=/run/udev/data')
    warning = diagnose_log([udev], exporter)
    assert (warning.cause, warning.severity, warning.fix.flag) == (
        C.node_exporter_udev_data_missing, ADVISORY, "--path.udev.data")
    # kubesphere#5025 (heldout_round4): the exporter's port taken stops it.
    bind = ('ts=2022-07-03T03:09:24.247Z caller=node_exporter.go:202 level=error err="listen tcp 127.0.0.1:9100: bind: '
            'address already in use"')
    assert diagnose_log([udev, bind], exporter).severity is Severity.fatal



def test_round_22_classes_read_the_runtimes_error_and_leave_neighbours_alone():
    """Any driver file the image already has where the runtime mounts the host's (nvidia-smi as well as a
    library) is the image's driver files; a GPU's name or a bus id cut short that the runtime fails to
    stat is an old libnvidia-container; a device node missing or a socket refused is neither."""
    docker = DiagnosisContext(service="docker")
    merged = "/var/lib/docker/overlay2/bd4f3570d4eb99d9df1117bd3751a00c8c0eb63429e65eba2a196c6c543cc52f/merged"
    smi = diagnose_log([(f"nvidia-container-cli: mount error: file creation failed: {merged}/usr/bin/nvidia-smi: "
                        "file exists")], docker)
    library = diagnose_log([(f"nvidia-container-cli: mount error: file creation failed: {merged}/usr/lib/x86_64-linux-gnu/"
                            "libnvidia-ml.so.1: file exists: unknown.")], docker)
    assert (smi.cause, smi.values["file"], smi.fix.key) == (C.container_driver_libs_conflict, "nvidia-smi", "images.vllm")
    assert "driver file nvidia-smi" in smi.summary and "remove the driver files" in smi.fix.text
    assert (library.cause, library.values["file"]) == (C.container_driver_libs_conflict, "libnvidia-ml.so.1")
    # nvidia-docker#1300: the persistenced socket refused (no such device or address) is no file the image has.
    socket = diagnose_log([(f"nvidia-container-cli: mount error: file creation failed: {merged}/run/nvidia-persistenced/"
                           "socket: no such device or address")], docker)
    assert socket.cause is not C.container_driver_libs_conflict

    name = diagnose_log(["nvidia-container-cli: mount error: stat failed: /GeForce: no such file or directory"], docker)
    bus = diagnose_log([("stderr: nvidia-container-cli: mount error: stat failed: /proc/driver/nvidia/gpus/cfdd:00:00.0: "
                         "no such file or directory")], docker)
    assert (name.cause, name.values["path"]) == (C.libnvidia_container_outdated, "/GeForce")
    assert (bus.cause, bus.values["path"]) == (C.libnvidia_container_outdated, "/proc/driver/nvidia/gpus/cfdd:00:00.0")
    assert "libnvidia-container1 libnvidia-container-tools" in name.fix.text
    # nvidia-container-runtime#123: a Jetson's device node listed in its csv but absent is no misread path.
    jetson = diagnose_log(["nvidia-container-cli: mount error: stat failed: /dev/nvidiactl: no such file or directory"],
                          docker)
    assert jetson.cause is not C.libnvidia_container_outdated


# Round 38's misses, built by cause, in one block: the tables above are read when the tests run.
BY_CLASS.update({
    C.docker_host_network_ports: Expect(says=("ports section", "network_mode: host", "ports.* sets")),
    C.grafana_provisioning_stale_row: Expect(severity=ADVISORY, says=("dashboard_provisioning", "sqlite3",
                                                                      "fresh grafana.db")),
    C.nginx_upstream_closed: Expect(severity=ADVISORY, says=("its own log", "$http_connection", "keepalive")),
    C.nginx_server_names_hash: Expect(says=("server_names_hash_bucket_size", "http block")),
    # Read with no stack.yaml: nginx's own port key.
    C.port_in_use: Expect("ports.http", says=("nginx is already running", "sudo nginx -s stop", "systemctl stop nginx")),
})
ROUND_LABELS.update({
    "docker_host_network_with_port_mappings": "docker_host_network_ports",
    "docker_vm_virtual_disk_full": "docker_disk_full",
    "grafana_stale_provisioning_row": "grafana_provisioning_stale_row",
    "grafana_startup_plugin_install_missing": "grafana_plugin_install_failed",
    "nginx_forced_upgrade_connection_header": "nginx_upstream_closed",
    "nginx_server_names_bucket_too_small": "nginx_server_names_hash",
    "nginx_started_twice_ports_held_by_itself": "port_in_use",
})
# Compose v2 starts the container and drops the ports: a warning.
SEVERITIES["docker_host_network_ports__springboot-monitoring-demo-issue-2"] = ADVISORY
# grafana-cli's refusal before Grafana 12: the list is GF_INSTALL_PLUGINS, not Grafana 12's preinstall.
ENVS["grafana_plugin_install_failed__grafana-issue-28732"] = "GF_INSTALL_PLUGINS"
SAYS.update({
    "grafana_plugin_install_failed__grafana-issue-28732": ("remove the plugin from GF_INSTALL_PLUGINS", "plugin id"),
    "docker_disk_full__docker-for-win-issue-1042": ("virtual disk", "Disk image size", "docker-machine"),
    "nginx_server_names_hash__data.gov-issue-423": ("server_names_hash_max_size 1024;",
                                                    "server_names_hash_bucket_size 128;"),
})
VALUES.update({
    "docker_host_network_ports__playground-issue-53": {"services": "boots"},
    "docker_host_network_ports__springboot-monitoring-demo-issue-2": {"services": "prometheus, grafana"},
    "grafana_provisioning_stale_row__grafana-issue-31147": {
        "file": "/etc/grafana/provisioning/dashboards/Monitoring Infra - Dashboard/GrafanaServersPerformance.json",
        "provider": "dashboards"},
    "nginx_server_names_hash__mailcow-dockerized-issue-472": {"bucket": 32, "suggested": 64},
    "nginx_server_names_hash__prometheus-boshrelease-pr-327": {"bucket": 64, "suggested": 128},
    "nginx_upstream_closed__v2ray-web-manager-issue-86": {"upstream": "http://127.0.0.1:xxxx"},
    "port_in_use__boa-issue-1780": {"port": 443, "ports": "80, 443"},
})


# Round 40's misses, built by cause, in one block: the tables above are read when the tests run.
BY_CLASS.update({
    C.docker_container_name_conflict: Expect(says=("docker rm", "docker container prune", "docker compose down",
                                                   "`project`")),
    C.docker_healthcheck_command_missing: Expect(says=("apt-get install -y", "apk add --no-cache", "wget",
                                                       "stackctl renders no Docker healthcheck")),
    C.prometheus_samples_out_of_bounds: Expect(severity=ADVISORY, says=("honor_timestamps: false",
                                                                       "out_of_order_time_window", "outOfOrderTimeWindow",
                                                                       "timedatectl")),
})
ROUND_LABELS.update({
    "certbot_http01_403_forced_https_redirect_varnish": "certbot_challenge_wrong_answer",
    "docker_healthcheck_curl_missing_in_image": "docker_healthcheck_command_missing",
    "nginx_cert_file_trailing_text_wrong_tag": "nginx_certificate_invalid",
    "nginx_too_big_header_fastcgi_wordpress": "nginx_header_too_big",
    "prometheus_samples_too_old_exporter_timestamps": "prometheus_samples_out_of_bounds",
    "prometheus_scrape_config_file_missing_top_key": "prometheus_config_invalid",
})
# A FastCGI upstream: its own buffer, not proxy_pass's.
SAYS["nginx_header_too_big__VVV-pr-135"] = ("fastcgi_buffer_size", "fastcgi_buffers",
                                                                      "not proxy_buffer_size")
VALUES.update({
    "docker_container_name_conflict__vanilla-docker-pr-29": {"name": "database"},
    "docker_container_name_conflict__docs-pr-17816": {"name": "rest-server", "container": "abc"},
    "docker_healthcheck_command_missing__allure-docker-service-ui-issue-12": {"command": "curl"},
    "prometheus_samples_out_of_bounds__ha_cluster_exporter-pr-89": {"job": "cluster", "dropped": 1,
                                                                    "target": "http://192.168.123.15:9002/metrics"},
})


# Round 41's misses, built by cause, in one block: the tables above are read when the tests run.
BY_CLASS.update({
    C.certbot_dns_txt_mismatch: Expect(says=("dig +short TXT", "wildcard CNAME", "remove the CNAME",
                                             "port 80 and the hostname's A record play no part")),
    C.compose_file_invalid: Expect(says=("head -n 5", "<!DOCTYPE html>", "raw.githubusercontent.com",
                                         "docker compose config")),
    C.grafana_live_origin_refused: Expect(env="GF_LIVE_ALLOWED_ORIGINS", severity=ADVISORY,
                                          says=("[live] allowed_origins", "root_url", "GF_SERVER_ROOT_URL")),
    C.nginx_worker_connections_exhausted: Expect(says=("events { worker_connections 10240; }", "worker_rlimit_nofile",
                                                       "keepalive_timeout")),
})
ROUND_LABELS.update({
    "certbot_dns01_wildcard_cname_shadows_txt": "certbot_dns_txt_mismatch",
    "docker_compose_yaml_is_html_page": "compose_file_invalid",
    "docker_manifest_unknown_no_latest_tag": "image_pull_denied",
    "grafana_live_ws_origin_443_in_root_url": "grafana_live_origin_refused",
    "node-exporter_textfile_prom_written_0600_unreadable": "node_exporter_textfile_unreadable",
    "vllm_failed_to_infer_device_type_pynvml": "nvml_module_unusable",
})
# Images a reporter pulled by hand, in no images entry of stack.yaml: the tag goes where the image is named.
KEYS.update(dict.fromkeys(("image_pull_denied__dockfish-issue-13", "image_pull_denied__docker-credential-helpers-issue-266")))
SAYS.update({
    # acme-dns: a TXT record holding the name its CNAME should point to.
    "certbot_dns_txt_mismatch__acme-dns-certbot-joohoi-issue-22": ("is a host name, not a token",
                                                                   "remove the TXT record and create the CNAME"),
    # NAME and *.NAME in one order: both tokens at one name.
    "certbot_dns_txt_mismatch__certbot-issue-7679": ("both TXT values must be there at once",
                                                     "beside the first instead of replacing it"),
    **dict.fromkeys(("image_pull_denied__dockfish-issue-13", "image_pull_denied__docker-credential-helpers-issue-266"),
                    ("has no `latest` tag", "specific version tag", "docker login")),
    # The origin is another host than root_url's, not root_url's default port.
    "grafana_live_origin_refused__grafana-issue-36443": ("allowed_origins = http://nas001.local:3000",
                                                         "not the address the browser uses"),
})
VALUES.update({
    "certbot_dns_txt_mismatch__acme-dns-certbot-joohoi-issue-22": {"name": "_acme-challenge.subdomain.here",
                                                                   "value": "hash-hash-hash.auth.acme-dns.io."},
    "compose_file_invalid__bigbluebutton-exporter-issue-50": {"file": "./docker-compose.yaml", "line": 123,
                                                              "column": 34},
    "grafana_live_origin_refused__grafana-issue-36693": {"origin": "http://localhost:3000",
                                                         "app_url": "http://localhost:10080/"},
    "image_pull_denied__dockfish-issue-13": {"image": "ivangabriele/dockfish", "tag": "latest"},
    "nginx_worker_connections_exhausted__bigbluebutton-docker-issue-91": {"connections": 1024,
                                                                          "during": "connecting to upstream"},
    "nginx_worker_connections_exhausted__bigbluebutton-issue-11347": {"connections": 768},
})
# Round 42's misses, built by cause, in one block: the tables above are read when the tests run.
BY_CLASS.update({
    C.certbot_dns_servfail: Expect(says=("DNSSEC", "a DS record at the registrar", "dig +cd", "dnsviz.net",
                                         "registrar's NS records")),
    C.prometheus_scrape_loopback_refused: Expect(severity=ADVISORY, says=("network_mode: host", "host.docker.internal",
                                                                          "host-gateway")),
    C.model_repo_without_config: Expect("vllm.model_path", "--enable-lora", says=("--lora-modules", "base model",
                                                                                  "merge_and_unload")),
})
ROUND_LABELS.update({
    "certbot_dns01_servfail_broken_dnssec_at_registrar": "certbot_dns_servfail",
    "docker_compose_top_level_name_old_compose": "compose_too_old",
    "docker_mysql_image_no_arm64_manifest": "wrong_architecture",
    "grafana_admin_password_only_on_first_run": "grafana_admin_password_ignored",
    "prometheus_container_scrapes_own_localhost": "prometheus_scrape_loopback_refused",
    "prometheus_files_under_static_configs": "prometheus_config_field_misplaced",
    "prometheus_relative_data_dir_unit_workdir": "prometheus_data_path_relative",
    "vllm_compressed_weight_scale_keyerror_old_vllm": "engine_too_old_for_model",
    "vllm_config_json_only_finetuned_files": "model_repo_without_config",
})
# A key a later Compose added: the release that added it, not the GPU reservations' 1.28.
SAYS.update({stem: ("docker compose version", "docker-compose-plugin", "or remove")
             for stem in ("compose_too_old__langchain-extract-issue-16", "compose_too_old__Zeppelin-issue-409",
                          "compose_too_old__docker-course-issue-2")})
# An image without a build for the host, pulled by Docker itself: no stackctl service named, so no images key.
for _stem in ("wrong_architecture__getting-started-issue-233", "wrong_architecture__mysql-issue-838"):
    KEYS[_stem] = None
    SAYS[_stem] = ("uname -m", "platform: linux/amd64", "mariadb", "docker manifest inspect")
VALUES.update({
    "certbot_dns_servfail__certbot-route53-issue-4": {"domain": "nginx.remcam.io", "record": "TXT"},
    "compose_too_old__langchain-extract-issue-16": {"key": "name", "release": "2.3.3"},
    "compose_too_old__Zeppelin-issue-409": {"key": "name", "where": "root"},
    "compose_too_old__docker-course-issue-2": {"key": "develop", "release": "2.22.0", "where": "services.web"},
    "wrong_architecture__mysql-issue-838": {"platform": "linux/arm64/v8"},
    "prometheus_scrape_loopback_refused__dockprom-issue-173": {"port": 8090, "target": "http://localhost:8090/metrics"},
    "model_repo_without_config__FastChat-issue-1689": {"model": "project-baize/baize-lora-7B"},
})
