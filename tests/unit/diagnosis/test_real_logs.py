"""Every real failure log collected from public issues is diagnosed: its class, the exact stack.yaml
key / vLLM flag / variable of the fix, and the values the log states."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from stackctl.diagnosis import Cause, DiagnosisContext, Severity, diagnose_log
from tests.unit.diagnosis.real_logs import FAILURE_LOGS, REQUEST_ERRORS, expected_class, read_log

NGINX = DiagnosisContext(service="nginx", port_keys={80: "ports.http", 443: "ports.https"})
PROXY = DiagnosisContext(service="filter-proxy")
# Docker Compose's own output, read with the default stack.yaml's ports.
DOCKER = DiagnosisContext(service="docker", port_keys={80: "ports.http", 443: "ports.https", 3000: "ports.grafana",
                                                       9090: "ports.prometheus", 8000: "ports.vllm"})


@dataclass(frozen=True)
class Expect:
    cause: Cause
    key: str | None = None
    flag: str | None = None
    env: str | None = None
    value: str | None = None
    values: dict = field(default_factory=dict)
    context: DiagnosisContext = field(default_factory=DiagnosisContext)
    severity: Severity = Severity.fatal


C = Cause
UTIL, UTIL_FLAG = "vllm.gpu_memory_utilization", "--gpu-memory-utilization"
LEN, LEN_FLAG = "vllm.max_model_len", "--max-model-len"
SEQS, SEQS_FLAG = "vllm.max_num_seqs", "--max-num-seqs"
EXTRA = "vllm.extra_args"
MODELSCOPE = "VLLM_USE_MODELSCOPE"
from stackctl.profiles.engines import DEFAULT_VLLM_IMAGE as NGC

SHM = Expect(C.shm_too_small)
NCCL = Expect(C.nccl_system_error, "vllm.environment", env="NCCL_DEBUG", severity=Severity.fatal)
NCCL_REGISTRATION = Expect(C.nccl_system_error, "vllm.environment", env="NCCL_BUFFSIZE")

EXPECTED: dict[str, Expect] = {
    "attention_sinks_unsupported__flash-attention-pr-2336": Expect(C.attention_sinks_unsupported, EXTRA, "--attention-backend", value="TRITON_ATTN"),
    "attention_sinks_unsupported__vllm-issue-40153": Expect(C.attention_sinks_unsupported, EXTRA, "--attention-backend", value="TRITON_ATTN"),
    "context_window_exceeded__inference-issue-1715": Expect(C.context_window_exceeded, LEN, LEN_FLAG, value="2048", values={"max_model_len": 4096, "window": 2048}),
    "context_window_exceeded__qanything-issue-457": Expect(C.context_window_exceeded, LEN, LEN_FLAG, value="2048", values={"max_model_len": 4096, "window": 2048}),
    "context_window_exceeded__vector-inference-issue-61": Expect(C.context_window_exceeded, LEN, LEN_FLAG, value="4096", values={"max_model_len": 32768, "window": 4096}),
    "cuda_graph_oom__vllm-issue-19186": Expect(C.cuda_graph_oom, UTIL, UTIL_FLAG),
    "cuda_graph_oom__worker-vllm-issue-40": Expect(C.cuda_graph_oom, UTIL, UTIL_FLAG, values={"tried": "112.00 MiB"}),
    "cuda_oom__vllm-issue-15105": Expect(C.cuda_oom, UTIL, UTIL_FLAG, values={"tried": "1.74 GiB"}),
    "cuda_oom__vllm-issue-31273": Expect(C.cuda_oom, UTIL, UTIL_FLAG, values={"tried": "80.00 MiB"}),
    "cuda_oom__vllm-pr-20321": Expect(C.cuda_oom, UTIL, UTIL_FLAG, values={"tried": "896.00 MiB"}),
    "disk_full__comfyui-instantmesh-issue-4": Expect(C.disk_full, "hf_cache"),
    "disk_full__diffusers-issue-4957": Expect(C.disk_full, "hf_cache"),
    "disk_full__huggingface-hub-issue-2742": Expect(C.disk_full, "hf_cache", values={"needed_mb": 3864.73, "free_mb": 3421.6}),
    "driver_too_old__fooocus-issue-1313": Expect(C.driver_too_old, "images.vllm", values={"driver_cuda": "11.4"}),
    "driver_too_old__gpustack-issue-1540": Expect(C.driver_too_old, "images.vllm"),
    "driver_too_old__verl-omni-issue-133": Expect(C.driver_too_old, "images.vllm", values={"driver_cuda": "12.8"}),
    "driver_too_old__vllm-issue-11623": Expect(C.driver_too_old, "images.vllm", values={"driver_cuda": "11.4"}),
    "driver_too_old__vllm-issue-4375": Expect(C.driver_too_old, "images.vllm"),
    "free_memory_below_target__kvcached-issue-29": Expect(C.free_memory_below_target, UTIL, UTIL_FLAG, value="0.74", values={"free_gib": 59.32, "total_gib": 79.15, "gpu_memory_utilization": 0.9}),
    "free_memory_below_target__pytorch-issue-175666": Expect(C.free_memory_below_target, UTIL, UTIL_FLAG, value="0.89", values={"free_gib": 19.77, "total_gib": 22.05}),
    "free_memory_below_target__vllm-issue-20305": Expect(C.free_memory_below_target, UTIL, UTIL_FLAG, value="0.66", values={"free_gib": 31.44, "gpu_memory_utilization": 0.95}),
    "free_memory_below_target__vllm-issue-25837": Expect(C.free_memory_below_target, UTIL, UTIL_FLAG, value="0.80", values={"free_gib": 3.22, "total_gib": 4.0}),
    "free_memory_below_target__vllm-omni-pr-1842": Expect(C.free_memory_below_target, UTIL, UTIL_FLAG, value="0.80", values={"free_gib": 111.99, "total_gib": 139.8}),
    "gated_model__ai-virtual-agent-issue-200": Expect(C.gated_model, env="HF_TOKEN", value="meta-llama/Llama-3.1-8B-Instruct"),
    "gated_model__mlx-examples-issue-759": Expect(C.gated_model, env="HF_TOKEN", value="mistralai/Mistral-7B-Instruct-v0.2"),
    "gated_model__neosapiens-issue-3": Expect(C.gated_model, env="HF_TOKEN", value="meta-llama/Llama-2-7b"),
    "gated_model__sglang-pr-14644": Expect(C.gated_model, env="HF_TOKEN", value="meta-llama/Llama-3.2-1B-Instruct"),
    "kv_cache_too_small__basalam-product-catalog-generator-issue-10": Expect(C.kv_cache_too_small, LEN, LEN_FLAG, value="3664", values={"max_model_len": 4096}),
    "kv_cache_too_small__qanything-issue-289": Expect(C.kv_cache_too_small, LEN, LEN_FLAG, value="3792", values={"max_model_len": 4096}),
    "kv_cache_too_small__tpu-inference-pr-223": Expect(C.kv_cache_too_small, LEN, LEN_FLAG, value="5632", values={"max_model_len": 131072, "available_gib": 0.71}),
    "kv_cache_too_small__vllm-issue-10517": Expect(C.kv_cache_too_small, LEN, LEN_FLAG, value="23648", values={"max_model_len": 29000}),
    # No estimate in this older message: the share of the window the available memory holds.
    "kv_cache_too_small__vllm-issue-16118": Expect(C.kv_cache_too_small, LEN, LEN_FLAG, value="435595", values={"max_model_len": 1048576, "needed_gib": 24.0, "available_gib": 9.97}),
    "kv_cache_too_small__vllm-issue-25350": Expect(C.kv_cache_too_small, LEN, LEN_FLAG, value="122080", values={"max_model_len": 221000}),
    "kv_cache_too_small__vllm-issue-34076": Expect(C.kv_cache_too_small, LEN, LEN_FLAG, value="34736", values={"max_model_len": 262144, "available_gib": 3.18}),
    # Round 8's miss, built from these: the rank the log states, rounded up to a value vLLM accepts.
    "lora_rank_too_large__ms-swift-issue-4221": Expect(C.lora_rank_too_large, EXTRA, "--max-lora-rank", value="32", values={"rank": 32, "limit": 16}),
    "lora_rank_too_large__truss-pr-1752": Expect(C.lora_rank_too_large, EXTRA, "--max-lora-rank", value="8", values={"refused": 1}),
    "lora_rank_too_large__vllm-omni-pr-1397": Expect(C.lora_rank_too_large, EXTRA, "--max-lora-rank", value="64", values={"refused": 48}),
    "mamba_cache_overflow__nvidia-retail-shopping-assistant-pr-95": Expect(C.mamba_cache_overflow, SEQS, SEQS_FLAG, value="524", values={"max_num_seqs": 1024, "mamba_blocks": 524}),
    "mamba_cache_overflow__vllm-issue-49064-h100": Expect(C.mamba_cache_overflow, SEQS, SEQS_FLAG, value="969", values={"max_num_seqs": 1024, "mamba_blocks": 969}),
    "mamba_cache_overflow__vllm-issue-49064-rocm": Expect(C.mamba_cache_overflow, SEQS, SEQS_FLAG, value="161", values={"max_num_seqs": 256, "mamba_blocks": 161}),
    "mamba_cache_overflow__vllm-pr-38632": Expect(C.mamba_cache_overflow, SEQS, SEQS_FLAG, value="600", values={"max_num_seqs": 1024, "mamba_blocks": 600}),
    "model_not_found__meta-llama-issue-555": Expect(C.model_not_found, "vllm.model_path", "--model", env="HF_TOKEN", values={"model": "meta-llama/Llama-2-13b-chat-hf"}),
    "model_not_found__ragflow-plus-issue-64": Expect(C.model_not_found, "vllm.model_path", "--model", value="/models"),
    "model_not_found__vllm-issue-13510": Expect(C.model_not_found, "vllm.model_path", "--model", env="HF_TOKEN", values={"model": "neuralmagic/Meta-Llama-3-8B-Instruct-FP8-dynamic"}),
    "model_not_found__vllm-issue-5727": Expect(C.model_not_found, "vllm.model_path", "--model", value="/model"),
    "model_not_found__vllm-omni-issue-541": Expect(C.model_not_found, "vllm.model_path", "--model", env="HF_TOKEN", values={"model": "Qwen/Qwen-Image-Edit-2509"}),
    # A bare name asked of the Hub (its 404), and VLLM_USE_MODELSCOPE sending every name to ModelScope's hub:
    # built from vllm#2629, #2329, modelscope#864 and GPT2-chitchat#92, tested on the three after them.
    "model_not_found__GPT2-chitchat-issue-92": Expect(C.model_not_found, "vllm.model_path", "--model", value="model_epoch40_50w"),
    "model_not_found__vllm-issue-2629": Expect(C.model_not_found, "vllm.model_path", "--model", env=MODELSCOPE, values={"model": "gpt2"}),
    "model_not_found__vllm-issue-2329": Expect(C.model_not_found, "vllm.model_path", "--model", env=MODELSCOPE, values={"model": "/data/share/rwq/Qwen-7B-Chat"}),
    "model_not_found__modelscope-issue-864": Expect(C.model_not_found, "vllm.model_path", "--model", env=MODELSCOPE, values={"model": "meta-llama/Meta-Llama-3-8B"}),
    "model_not_found__swarms-issue-361": Expect(C.model_not_found, "vllm.model_path", "--model", env=MODELSCOPE, values={"model": "databricks/dolly-v2-12b"}),
    "model_not_found__Yi-1.5-issue-15": Expect(C.model_not_found, "vllm.model_path", "--model", env=MODELSCOPE, values={"model": "01-ai/Yi-1.5-34B-Chat"}),
    "model_not_found__LlamaFactory-issue-3058": Expect(C.model_not_found, "vllm.model_path", "--model", env=MODELSCOPE, values={"model": "Nexusflow/Starling-LM-7B-beta"}),
    "no_cache_memory__qanything-issue-302": Expect(C.no_cache_memory, UTIL, UTIL_FLAG),
    "no_cache_memory__rl-swarm-issue-118": Expect(C.no_cache_memory, UTIL, UTIL_FLAG),
    "no_cache_memory__vllm-issue-10439": Expect(C.no_cache_memory, UTIL, UTIL_FLAG),
    "no_gpu__media-preview-generator-issue-47": Expect(C.no_gpu),
    "no_gpu__openedai-images-flux-issue-7": Expect(C.no_gpu),
    "no_gpu__vllm-issue-12847": Expect(C.no_gpu),
    # PyTorch's warning for GB10 (12.1 above its 12.0): worth acting on, not what stopped the start.
    "no_kernel_image__pytorch-issue-172629": Expect(C.no_kernel_image, "images.vllm", value=NGC, values={"capability": "12.1"}, severity=Severity.advisory),
    "no_kernel_image__vllm-issue-14452": Expect(C.no_kernel_image, "images.vllm", value=NGC),
    "no_kernel_image__vllm-issue-18995": Expect(C.no_kernel_image, "images.vllm", value=NGC),
    "port_in_use__alastria-node-issue-628": Expect(C.port_in_use, "ports.https", values={"port": 443}, context=NGINX),
    "port_in_use__docker-nginx-issue-50": Expect(C.port_in_use, "ports.http", values={"port": 80}, context=NGINX),
    "port_in_use__openui-issue-226": Expect(C.port_in_use, "ports.proxy", values={"port": 7878}, context=PROXY),
    # Ports vLLM picks for its own workers: no stack.yaml key moves them.
    "port_in_use__vllm-issue-11617-c10d": Expect(C.port_in_use),
    "port_in_use__vllm-issue-11617": Expect(C.port_in_use),
    # Docker's "port is already allocated": the port's key, else the key of the service Compose names.
    "port_in_use__internet-monitoring-issue-13": Expect(C.port_in_use, "ports.prometheus", values={"port": 9090}, context=DOCKER),
    "port_in_use__grafana-mongodb-docker-issue-7": Expect(C.port_in_use, "ports.grafana", values={"port": 3000}, context=DOCKER),
    "port_in_use__sitespeed-issue-1391": Expect(C.port_in_use, values={"port": 8080}, context=DOCKER),
    "hub_offline__text-generation-inference-issue-3192": Expect(C.hub_offline, "vllm.model_path", "--model", values={"model": "meta-llama/Meta-Llama-3.1-8B-Instruct"}),
    "port_in_use__vllm-issue-8204": Expect(C.port_in_use, "ports.vllm", "--port", values={"port": 44319}),
    "ptxas_unknown_arch__triton-inference-server-issue-8632": Expect(C.ptxas_unknown_arch, env="TRITON_PTXAS_PATH", value="/usr/local/cuda/bin/ptxas", values={"arch": "sm_110a"}),
    "ptxas_unknown_arch__triton-issue-8539": Expect(C.ptxas_unknown_arch, env="TRITON_PTXAS_PATH", value="/usr/local/cuda/bin/ptxas", values={"arch": "sm_121a"}),
    "ptxas_unknown_arch__vllm-issue-30163": Expect(C.ptxas_unknown_arch, env="TRITON_PTXAS_PATH", value="/usr/local/cuda/bin/ptxas", values={"arch": "sm_121a"}),
    "quantization_unsupported__1cat-vllm-issue-27": Expect(C.quantization_unsupported, "model", values={"quantization": "fp8"}),
    "quantization_unsupported__vllm-issue-22422": Expect(C.quantization_unsupported, "images.vllm", values={"quantization": "mxfp4"}),
    "quantization_unsupported__vllm-issue-41477": Expect(C.quantization_unsupported, "model", values={"quantization": "mxfp4"}),
    "quantization_unsupported__vllm-issue-4327": Expect(C.quantization_unsupported, "model", values={"quantization": "fp8"}),
    "quantization_unsupported__vllm-pr-22339": Expect(C.quantization_unsupported, "images.vllm", values={"quantization": "mxfp4"}),
    "ray_node_without_gpu__lm-evaluation-harness-issue-2410": Expect(C.ray_node_without_gpu, env="VLLM_HOST_IP"),
    "ray_node_without_gpu__vllm-issue-29265": Expect(C.ray_node_without_gpu, env="VLLM_HOST_IP", values={"node_ip": "74.10.28.48"}),
    "refused_choice__tpu-inference-pr-1136": Expect(C.refused_choice, EXTRA, "--kv-cache-dtype", values={"refused": "fp8_5m2"}),
    "refused_choice__unsloth-pr-2811": Expect(C.refused_choice, EXTRA, "--dtype", value="auto", values={"refused": "torch.bfloat16"}),
    "refused_choice__vllm-issue-9312": Expect(C.refused_choice, EXTRA, "--tool-call-parser", values={"refused": "llama3_json"}),
    "refused_choice__vllm-recipes-issue-51": Expect(C.refused_choice, EXTRA, "--tool-call-parser", values={"refused": "openai"}),
    "refused_flag__vllm-issue-18538-v0.10": Expect(C.refused_flag, EXTRA, "--enable-reasoning"),
    "refused_flag__vllm-issue-18538": Expect(C.refused_flag, EXTRA, "--enable-reasoning", values={"flags": "--enable-reasoning, --reasoning-parser"}),
    "refused_flag__vllm-issue-27347": Expect(C.refused_flag, EXTRA, "--all2all-backend"),
    "refused_flag__vllm-issue-42399": Expect(C.refused_flag, EXTRA, "--reasoning-config"),
    "sampler_warmup_oom__llm-d-issue-787": Expect(C.sampler_warmup_oom, SEQS, SEQS_FLAG, value="512", values={"max_num_seqs": 1024}),
    "sampler_warmup_oom__vllm-issue-14452": Expect(C.sampler_warmup_oom, SEQS, SEQS_FLAG, value="512", values={"max_num_seqs": 1024}),
    # Round 8's miss (an NCCL system error read as /dev/shm), built from these: the bare "unhandled system
    # error" names no call (NCCL_DEBUG=INFO shows it; the fix lists /dev/shm, NCCL_BUFFSIZE and memlock), the
    # network refusing to register NCCL's buffers does. The first two are the bare lines of /dev/shm reports.
    "nccl_system_error__minimax-01-issue-42": NCCL,
    "nccl_system_error__nccl-issue-1466": NCCL,
    "nccl_system_error__vllm-issue-5828": NCCL,
    "nccl_system_error__nccl-tests-issue-206": NCCL_REGISTRATION,
    "nccl_system_error__nccl-issue-563": NCCL_REGISTRATION,
    "shm_too_small__minimax-01-issue-42-debug": Expect(C.shm_too_small, values={"segment_bytes": 7340384}),
    "shm_too_small__vllm-issue-14537": Expect(C.shm_too_small, values={"segment_bytes": 7340384}),
    "shm_too_small__vllm-issue-859": SHM,
    "shm_too_small__vllm-issue-1091": SHM,
    "shm_too_small__vllm-issue-1710": Expect(C.shm_too_small, values={"shm_bytes": 67108864}, severity=Severity.advisory),
    "socket_interface__aws-do-eks-pr-50": Expect(C.socket_interface, env="NCCL_SOCKET_IFNAME"),
    "socket_interface__verl-issue-967": Expect(C.socket_interface, env="NCCL_SOCKET_IFNAME"),
    "socket_interface__vllm-issue-5094": Expect(C.socket_interface, env="NCCL_SOCKET_IFNAME"),
    "socket_interface__vllm-issue-7074": Expect(C.socket_interface, env="NCCL_SOCKET_IFNAME"),
    "trust_remote_code__h2o-llmstudio-issue-560": Expect(C.trust_remote_code, EXTRA, "--trust-remote-code", values={"model": "pansophic/rocket-3B"}),
    "trust_remote_code__openllm-issue-421": Expect(C.trust_remote_code, EXTRA, "--trust-remote-code"),
    "trust_remote_code__textgen-issue-5730": Expect(C.trust_remote_code, EXTRA, "--trust-remote-code"),
    "trust_remote_code__worker-vllm-issue-43": Expect(C.trust_remote_code, EXTRA, "--trust-remote-code"),
    "unknown_architecture__blackfish-issue-322": Expect(C.unknown_architecture, "images.vllm", values={"architecture": "qwen3_5_moe"}),
    "unknown_architecture__inference-issue-4561": Expect(C.unknown_architecture, "images.vllm", values={"architecture": "qwen3_vl"}),
    "unknown_architecture__vllm-issue-19793": Expect(C.unknown_architecture, "images.vllm", values={"architecture": "qwen3_moe"}),
    "unknown_architecture__vllm-issue-9515": Expect(C.unknown_architecture, "images.vllm", values={"architecture": "LlamaForCausalLM"}),
    "unknown_architecture__vllm-issue-9624": Expect(C.unknown_architecture, "images.vllm", values={"architecture": "LlamaForCausalLM"}),
    "unknown_env_var__llm-d-fast-model-actuation-issue-597": Expect(C.unknown_env_var, env="VLLM_USE_V1", severity=Severity.advisory),
    "unknown_env_var__llm-d-issue-1269": Expect(C.unknown_env_var, env="VLLM_SVC_QWEN3_30B_A3B_DECODE_TP2_PORT_8000_TCP", severity=Severity.advisory),
    "unknown_env_var__model-serving-minefield-issue-19": Expect(C.unknown_env_var, env="VLLM_FLASHINFER_MOE_BACKEND", severity=Severity.advisory),
    "unknown_env_var__proxmoxved-issue-2047": Expect(C.unknown_env_var, env="VLLM_MODEL", values={"variables": "VLLM_MODEL, VLLM_HOST, VLLM_SERVE_ARGS"}, severity=Severity.advisory),
    "unknown_env_var__vllm-issue-48493": Expect(C.unknown_env_var, env="VLLM_PROD_MINIMAX_M3_ENGINE_SERVICE_SERVICE_HOST", severity=Severity.advisory),
    "engine_dependency_mismatch__vllm-ascend-pr-2365": Expect(C.engine_dependency_mismatch, "images.vllm",
                                                              values={"package": "transformers"}),
    "engine_dependency_mismatch__DeepSeek-OCR-issue-302": Expect(C.engine_dependency_mismatch, "images.vllm",
                                                                values={"package": "transformers"}),
    "engine_dependency_mismatch__rllm-issue-388": Expect(C.engine_dependency_mismatch, "images.vllm",
                                                         values={"package": "transformers"}),
    "engine_dependency_mismatch__worker-vllm-pr-258": Expect(C.engine_dependency_mismatch, "images.vllm",
                                                             values={"package": "transformers"}),
    "batched_tokens_below_max_model_len__vllm-issue-28981": Expect(
        C.batched_tokens_below_max_model_len, EXTRA, "--max-num-batched-tokens", value="40960",
        values={"budget": 2048, "window": 40960}),
    "batched_tokens_below_max_model_len__verl-pr-7626": Expect(
        C.batched_tokens_below_max_model_len, EXTRA, "--max-num-batched-tokens", value="131072"),
    "weights_do_not_fit__vllm-issue-636": Expect(C.weights_do_not_fit, "model", "--tensor-parallel-size", values={"tried": "160.00 MiB"}),
}

LOGS = sorted(FAILURE_LOGS.glob("*.log"))


def test_every_collected_log_has_an_expectation_and_a_source():
    assert {path.stem for path in LOGS} == set(EXPECTED)
    for path in LOGS:
        read_log(path)  # asserts the source header
        assert expected_class(path) == EXPECTED[path.stem].cause.name, path.name


def test_the_collection_covers_every_class_with_real_logs():
    from tests.unit.diagnosis.real_logs import SERVICE_FAILURES

    covered = {expect.cause for expect in EXPECTED.values()}
    covered |= {Cause[expected_class(path)] for path in SERVICE_FAILURES.glob("*.log")}
    request_time = {Cause.auto_tool_choice_disabled, Cause.served_model_mismatch, Cause.roles_must_alternate}
    # The CPU engine's own head-size refusal is covered by the engine tests that produce it; the
    # fallback's reading is what no signature knows.
    # Round 10's Grafana 12 refused core plugin: its only real log so far is the round's own
    # (tests/data/heldout_round10); it still needs a second report (the 401 from a key-protected vLLM has one).
    # Round 11's classes whose only real log so far is the round's own (tests/data/heldout_round11): no other
    # public report carrying the log line was found yet (the unit tests pin each with its neighbours;
    # nginx's misplaced directive and Prometheus's removed feature flag have a second report now).
    one_report = {Cause.grafana_core_plugin_install, Cause.attention_backend_forced_invalid,
                  Cause.cuda_toolkit_too_old_for_gpu, Cause.tokenizer_mode_unknown, Cause.spec_decode_token_budget,
                  Cause.position_index_out_of_range, Cause.dcgm_profiling_module_missing,
                  Cause.certbot_nginx_server_root, Cause.anthropic_system_role_refused, Cause.cuda_init_unknown}
    # Round 12's classes whose only real log so far is the round's own (tests/data/heldout_round12).
    one_report |= {Cause.grafana_datasource_prune, Cause.flashinfer_kernel_failed, Cause.multiproc_executor_across_nodes,
                   Cause.engine_core_failed_unlogged}
    # Round 14's classes whose only real log so far is the round's own (tests/data/heldout_round14): a
    # quantization flag other than the checkpoint's (the other reports found name a vLLM bug or a GGUF's
    # borrowed config), curl refused where an exporter does not listen, and NVML not injected into
    # dcgm-exporter on arm64 (dcgm-exporter#621; its line is the same on amd64, where #612 is the runtime
    # missing: the host's architecture tells them apart; no second arm64 report carrying it was found).
    one_report |= {Cause.quantization_mismatch, Cause.listen_address_refused, Cause.nvml_not_injected_arm64}
    # Round 34's classes whose only real logs so far are the round's own (tests/data/heldout_round34): no other
    # public report with its fix stated was found yet for nf_tables refusing Docker's chains (one log per kind), a
    # checkpoint without weights in the format vLLM loads, AppArmor's ptrace denial and systemd's private socket.
    one_report |= {Cause.docker_nftables_refused, Cause.model_weights_not_found, Cause.apparmor_ptrace_denied,
                   Cause.systemd_private_socket_refused}
    # Round 35's class whose only real log so far is the round's own (tests/data/heldout_round35): no other public
    # report of a provisioning file of the wrong shape ("cannot unmarshal !!map into []*dashboards.DashboardsAsConfigV0")
    # was found; Grafana's config reader (it tells the two formats apart by apiVersion alone) states the cause.
    one_report |= {Cause.grafana_provisioning_not_provisioning}
    # Round 39's class whose only real log so far is the round's own (tests/data/heldout_round39): no other public
    # report of a client refused at a model server's route while it loads, with the fix stated, was found
    # (vllm#2414 and aibrix#1449 carry such refusals without one).
    one_report |= {Cause.engine_not_ready}
    # Round 41's classes whose only real log so far is the round's own (tests/data/heldout_round41): no other public
    # report carrying node-exporter's textfile line with its fix was found (lest/prometheus-rpm#102,
    # voxpupuli/puppet-prometheus_reporter#8 and prometheus/client_golang#489 state the cause without the line), nor
    # one with vLLM's NVML module told apart by its log (vllm#12947's and xorbitsai/inference#2825's fix is stated,
    # their logs are a title and a screenshot).
    one_report |= {Cause.node_exporter_textfile_unreadable, Cause.nvml_module_unusable}
    # Round 42's: a relative data path (its only real log is the round's own, tests/data/heldout_round42;
    # alertmanager#1343 and istio-tutorial#50 carry the line without the fix stated), and a Compose key no Compose has
    # where it stands, the general reading beside a later Compose's key (docker/docs#16129 and #4303 carry the lines,
    # pinned in test_round42_classes, without a fix their reporters confirmed).
    one_report |= {Cause.prometheus_data_path_relative, Cause.compose_key_unknown}
    assert set(Cause) - covered - request_time - one_report == {Cause.cpu_attention_head_size, Cause.unrecognised}


@pytest.mark.parametrize("path", LOGS, ids=lambda path: path.stem)
def test_real_log_is_diagnosed_with_its_fix(path):
    expect = EXPECTED[path.stem]
    _source, lines = read_log(path)
    diagnosis = diagnose_log(lines, expect.context)
    assert diagnosis is not None, f"{path.name}: no diagnosis"
    assert diagnosis.cause is expect.cause
    assert diagnosis.severity is expect.severity
    fix = diagnosis.fix
    assert (fix.key, fix.flag, fix.env, fix.value) == (expect.key, expect.flag, expect.env, expect.value)
    for name, value in expect.values.items():
        assert diagnosis.values.get(name) == value, name
    # The fix names its own key / flag / variable / value in the sentence the user reads.
    for named in (fix.key, fix.flag, fix.env, fix.value):
        if named:
            assert named in fix.text, f"{named!r} missing from: {fix.text}"
    assert diagnosis.evidence and diagnosis.evidence in "\n".join(line.strip() for line in lines)


@pytest.mark.parametrize(("name", "cause", "flag"), [
    ("auto_tool_choice__langchain4j-issue-3475", Cause.auto_tool_choice_disabled, "--enable-auto-tool-choice"),
    ("unknown_model__vllm-issue-3485", Cause.served_model_mismatch, "--served-model-name"),
    ("unknown_model__vllm-pr-58025", Cause.served_model_mismatch, "--served-model-name"),
])
def test_request_time_failures_logged_by_vllm_are_diagnosed_too(name, cause, flag):
    _source, lines = read_log(REQUEST_ERRORS / f"{name}.txt")
    diagnosis = diagnose_log(lines)
    assert diagnosis is not None and diagnosis.cause is cause
    assert diagnosis.fix.flag == flag
