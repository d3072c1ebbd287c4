"""Single-line failures (no real log is needed to know them): each names its fix."""

import pytest

from stackctl.diagnosis import Cause, DiagnosisContext, diagnose_log


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("RuntimeError: Unsupported CPU attention configuration: head_size=16", "head"),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "vllm.gpu_memory_utilization"),
        ("api_server.py: error: unrecognized arguments: --mxfp4-layers", "--mxfp4-layers"),
        ("api_server.py: error: argument --dtype: invalid choice: 'fp8'", "--dtype"),
        ("nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)", "port"),
        ("OSError: [Errno 98] error while attempting to bind on address", "port"),
        # What this repository's Docker engine answers Compose's `gpus: all` without the NVIDIA runtime.
        ('Error response from daemon: could not select device driver "" with capabilities: []', "nvidia-ctk"),
    ],
)
def test_known_failures_name_their_fix(line, expected):
    diagnosis = diagnose_log(["INFO starting", line, "INFO shutting down"])
    assert diagnosis is not None and expected in diagnosis.one_line()


def test_unknown_failure_is_the_fallbacks_reading_and_an_empty_log_has_none():
    assert diagnose_log(["Segmentation fault"]).cause is Cause.unrecognised
    assert diagnose_log([]) is None


def test_kv_memory_shortfall_without_vllms_estimate_names_the_length_that_fits():
    line = ("ValueError: To serve at least one request with the models's max seq len (65536), (8.00 GiB KV cache "
            "is needed, which is larger than the available KV cache memory (2.00 GiB). Try increasing "
            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
    diagnosis = diagnose_log([line])
    assert diagnosis is not None and diagnosis.fix.key == "vllm.max_model_len"
    assert "to about 16384" in diagnosis.fix.text and diagnosis.fix.value == "16384"


def test_kv_memory_shortfall_with_vllms_estimate_uses_it():
    line = ("ValueError: To serve at least one request with the models's max seq len (65536), (8.00 GiB KV cache "
            "is needed, which is larger than the available KV cache memory (2.00 GiB). Based on the available "
            "memory, the estimated maximum model length is 16000. Try increasing `gpu_memory_utilization`.")
    diagnosis = diagnose_log([line])
    assert diagnosis is not None and diagnosis.fix.value == "16000" and "16000 or less" in diagnosis.fix.text


def test_a_parser_name_close_to_one_listed_is_a_typo_and_one_unlike_any_needs_a_newer_engine():
    listed = "(chose from { deepseek_v3,hermes,llama3_json,mistral })'"
    typo = diagnose_log([f"KeyError: 'invalid tool call parser: llama3-json {listed}"])
    newer = diagnose_log([f"KeyError: 'invalid tool call parser: kimi_k2 {listed}"])
    assert typo is not None and "correct the name" in typo.fix.text and "newer vLLM" not in typo.fix.text
    assert newer is not None and "newer vLLM" in newer.fix.text and "images.vllm" in newer.fix.text


def test_a_404_is_a_metrics_path_on_an_exporter_and_a_base_url_on_a_client():
    exporter = diagnose_log(["404 page not found"], DiagnosisContext(service="gpu-exporter"))
    client = diagnose_log(["404 page not found"], DiagnosisContext(service="filter-proxy"))
    assert exporter is not None and exporter.cause is Cause.metrics_path_not_found and "/metrics" in exporter.fix.text
    assert client is not None and client.cause is Cause.client_base_url and client.fix.key == "ports.proxy"


def test_the_certbot_port_taken_is_the_one_the_log_names():
    busy_443 = diagnose_log(["Could not bind TCP port 443 because it is already in use by another process"])
    assert busy_443 is not None and busy_443.fix.key == "ports.https" and busy_443.values["port"] == 443


def test_an_nccl_system_error_is_told_apart_by_what_the_log_shows():
    bare = "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    shm = "NCCL WARN Error while creating shared memory segment /dev/shm/nccl-xxxxx (size 7340384)"
    buffsize = "host:1:2 [0] NCCL INFO NCCL_BUFFSIZE set by environment to 67108864."
    registration = "host:1:2 [5] misc/ibvwrap.cc:183 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Cannot allocate memory"
    assert diagnose_log([shm, bare]).cause is Cause.shm_too_small
    unnamed = diagnose_log([bare])
    assert unnamed.cause is Cause.nccl_system_error and unnamed.fix.env == "NCCL_DEBUG"
    assert all(word in unnamed.fix.text for word in ("NCCL_DEBUG=INFO", "/dev/shm", "NCCL_BUFFSIZE", "memlock"))
    # A variable the log shows set is named first; NCCL's own debug switch is not a suspect.
    suspect = diagnose_log([buffsize, "host:1:2 [0] NCCL INFO NCCL_DEBUG set by environment to INFO.", bare])
    assert suspect.fix.env == "NCCL_BUFFSIZE" and "NCCL_BUFFSIZE=67108864" in suspect.fix.text
    pinned = diagnose_log([buffsize, registration, bare])
    assert pinned.cause is Cause.nccl_system_error and pinned.fix.env == "NCCL_BUFFSIZE"
    assert pinned.values["buffsize"] == "67108864" and "default value" in pinned.fix.text


def test_a_refused_scrape_of_stackctls_own_job_names_that_exporters_image():
    line = ('msg="Failed to determine correct type of scrape target." component="scrape manager" scrape_pool=gpu '
            'target=http://127.0.0.1:9835/metrics content_type="" err="non-compliant scrape target sending blank '
            'Content-Type and no fallback_scrape_protocol specified for target"')
    diagnosis = diagnose_log([line], DiagnosisContext(service="prometheus", port_keys={9835: "ports.gpu_exporter"}))
    assert diagnosis.cause is Cause.prometheus_scrape_content_type
    assert diagnosis.fix.key == "images.gpu-exporter" and "ports.gpu_exporter" in diagnosis.fix.text


def test_grafanas_background_installer_tells_its_own_apps_from_a_plugin_asked_for():
    grafana = DiagnosisContext(service="grafana")
    asked = ('logger=plugin.backgroundinstaller level=error msg="Failed to install plugin" pluginId=grafana-clock-panel '
             'version= error="Get \\"https://grafana.com/api/plugins/grafana-clock-panel/versions\\": dial tcp: lookup '
             'grafana.com: no such host"')
    own = asked.replace("grafana-clock-panel", "grafana-pyroscope-app")
    missing = asked.replace('Get \\"https://grafana.com/api/plugins/grafana-clock-panel/versions\\": dial tcp: lookup '
                            'grafana.com: no such host', "404: Plugin not found")
    assert diagnose_log([asked], grafana).fix.env == "GF_INSTALL_PLUGINS"
    assert diagnose_log([own], grafana).cause is Cause.grafana_preinstall_offline
    assert diagnose_log([missing], grafana).cause is not Cause.grafana_plugin_offline


def test_a_torch_compile_failure_from_a_report_the_class_was_not_built_from():
    # vLLM issue 11450's error line: the class was built from issues 17018 and 28982.
    line = "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: TypeError: 'int' object is not iterable"
    diagnosis = diagnose_log(["INFO 12-23 21:29:38 model_runner.py:1415] Capturing cudagraphs for decoding.", line])
    assert diagnosis.cause is Cause.torch_compile_failed
    assert (diagnosis.fix.key, diagnosis.fix.flag) == ("vllm.extra_args", "--enforce-eager")
    assert diagnosis.values["error"] == "TypeError: 'int' object is not iterable"


def test_an_out_of_memory_error_during_compilation_names_its_own_cause():
    lines = ["torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
             ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 MiB. GPU 0 has a total capacity of "
             "139.72 GiB of which 60.69 MiB is free.")]
    assert diagnose_log(lines).cause is Cause.cuda_oom


def test_a_missing_chat_template_in_transformers_other_wording():
    # NVlabs/VILA#160's error (the class's newer wordings were built from omlx#2005 and lmms-eval#661).
    line = ("ValueError: Cannot use chat template functions because tokenizer.chat_template is not set and no template "
            "argument was passed! For information about writing templates and setting the tokenizer.chat_template "
            "attribute, please see the documentation at https://huggingface.co/docs/transformers/main/en/chat_templating")
    diagnosis = diagnose_log([line])
    assert diagnosis.cause is Cause.chat_template_missing
    assert (diagnosis.fix.key, diagnosis.fix.flag) == ("vllm.extra_args", "--chat-template")
