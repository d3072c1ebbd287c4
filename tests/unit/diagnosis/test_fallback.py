"""The fallback: the decisive error line past traceback noise and process prefixes, the remedy the
log names, and the stack.yaml key that sets it."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, DiagnosisContext, Severity, diagnose_log
from stackctl.diagnosis.log_lines import decisive_error, strip_prefixes
from stackctl.diagnosis.remedy import Remedy, RemedyKind, named_remedies

# An engine error no class knows (max_num_batched_tokens below max_model_len has its own class now),
# naming its remedies the way vLLM's config errors do.
CHUNKED = ("ValueError: the encoder cache budget (2048) is smaller than one image's embeddings (8192). Please "
           "increase `max_num_batched_tokens` or decrease `max_model_len`.")
ENGINE_CORE = [
    "(EngineCore_DP0 pid=279) ERROR 08-06 10:10:10 [core.py:700] EngineCore failed to start.",
    "(EngineCore_DP0 pid=279) ERROR 08-06 10:10:10 [core.py:700] Traceback (most recent call last):",
    '(EngineCore_DP0 pid=279) ERROR 08-06 10:10:10 [core.py:700]   File "/vllm/v1/engine/core.py", line 691, in run',
    "(EngineCore_DP0 pid=279) ERROR 08-06 10:10:10 [core.py:700]     engine_core = EngineCoreProc(*args, **kwargs)",
    "(EngineCore_DP0 pid=279) ERROR 08-06 10:10:10 [core.py:700]                   ^^^^^^^^^^^^^^^^^^^^^^^^^^",
    f"(EngineCore_DP0 pid=279) ERROR 08-06 10:10:10 [core.py:700] {CHUNKED}",
    "(EngineCore_DP0 pid=279) Process EngineCore_DP0:",
    "(APIServer pid=1) Traceback (most recent call last):",
    '(APIServer pid=1)   File "/usr/local/bin/vllm", line 10, in <module>',
    "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
]


def test_prefixes_come_off_and_a_tracebacks_indentation_stays():
    assert strip_prefixes("vllm-1  | (EngineCore_DP0 pid=7) [rank0]: ValueError: x") == "ValueError: x"
    assert strip_prefixes('(APIServer pid=1)   File "a.py", line 1') == '  File "a.py", line 1'
    assert strip_prefixes("ERROR 08-06 10:10:10 [core.py:700] ValueError: x") == "ValueError: x"


def test_the_engines_error_is_found_past_the_api_servers_wrapper_and_its_remedies_named():
    diagnosis = diagnose_log(ENGINE_CORE)
    assert diagnosis.cause is Cause.unrecognised and diagnosis.severity is Severity.fatal
    assert diagnosis.evidence == CHUNKED
    assert diagnosis.summary == f"vllm stopped on: {CHUNKED}"
    assert (diagnosis.fix.key, diagnosis.fix.flag) == ("vllm.extra_args", "--max-num-batched-tokens")
    assert "add --max-num-batched-tokens to vllm.extra_args in stack.yaml" in diagnosis.fix.text
    assert "set vllm.max_model_len in stack.yaml (--max-model-len)" in diagnosis.fix.text


def test_a_message_on_the_lines_after_its_exception_is_read_whole():
    lines = ["Traceback (most recent call last):", '  File "x.py", line 1, in <module>',
             "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
             "  Value error, Invalid repository ID or local directory specified: 'x' [type=value_error]",
             "    For further information visit https://errors.pydantic.dev/2.11/v/value_error"]
    found = decisive_error(lines)
    assert found.text == ("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig Value "
                          "error, Invalid repository ID or local directory specified: 'x' [type=value_error]")


@pytest.mark.parametrize(("line", "remedy"), [
    (("ValueError: could not load the vocabulary; set the environment variable TIKTOKEN_ENCODINGS_BASE to a "
     "directory with the encoding files"), Remedy(RemedyKind.env, "TIKTOKEN_ENCODINGS_BASE")),
    ("ImportError: No module named 'flash_attn'", Remedy(RemedyKind.package, "flash-attn")),
    ("ImportError: please run `pip install vllm[audio]` to use audio", Remedy(RemedyKind.package, "vllm[audio]")),
    ("try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation",
     Remedy(RemedyKind.env, "PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")),
    ("OSError: libcudart.so.12: cannot open shared object file: No such file or directory",
     Remedy(RemedyKind.file, "libcudart.so.12")),
    ('nginx: [emerg] could not build server_names_hash, you should increase server_names_hash_bucket_size: 64',
     Remedy(RemedyKind.directive, "server_names_hash_bucket_size")),
    (("Error: ✗ failed to extract plugin archive: Permission denied. Make sure you have write access to "
      "/var/lib/grafana/plugins/x"), Remedy(RemedyKind.writable, "/var/lib/grafana/plugins/x")),
    ("RuntimeError: The NVIDIA driver on your system is too old. Please update your GPU driver",
     Remedy(RemedyKind.driver, "the NVIDIA driver")),
    ("ValueError: no free LoRA slot. Try increasing max_loras.", Remedy(RemedyKind.setting, "max_loras")),
    ('level=error msg="runtime too slow" hint="set GOMAXPROCS=4"', Remedy(RemedyKind.env, "GOMAXPROCS", "4")),
    ("Error: another program is already listening; run `supervisorctl -c /etc/supervisord.conf shutdown` first",
     Remedy(RemedyKind.command, "supervisorctl -c /etc/supervisord.conf shutdown")),
])
def test_the_remedy_a_message_names(line, remedy):
    assert remedy in named_remedies([line])


def test_a_setting_is_a_flag_only_for_the_engine_and_a_quoted_install_is_a_package_not_a_command():
    line = "RuntimeError: the batch does not fit; try increasing max_num_batched_tokens"
    engine = diagnose_log([line], DiagnosisContext(service="vllm", failed=True))
    assert (engine.fix.key, engine.fix.flag) == ("vllm.extra_args", "--max-num-batched-tokens")
    nginx = diagnose_log(["nginx: [emerg] the response does not fit, try increasing proxy_buffer_size"],
                         DiagnosisContext(service="nginx", failed=True))
    assert nginx.fix.flag is None and "--proxy-buffer-size" not in nginx.fix.text
    assert "proxy_buffer_size in nginx's configuration" in nginx.fix.text
    assert named_remedies(["ImportError: please run `pip install vllm[audio]` to use audio"]) == [
        Remedy(RemedyKind.package, "vllm[audio]")]


def test_a_driver_or_a_path_to_make_writable_is_placed_in_stackctls_terms():
    # A driver complaint no signature knows (the known ones name the CUDA version: driver-too-old).
    driver = diagnose_log(["RuntimeError: this GPU's firmware interface is not supported, please update your driver"],
                          DiagnosisContext(service="vllm", failed=True))
    assert driver.cause is Cause.unrecognised and driver.fix.key == "images.vllm" and "nvidia-smi" in driver.fix.text
    path = diagnose_log(["Error: Permission denied. Make sure you have write access to /srv/grafana/plugins"],
                        DiagnosisContext(service="grafana", failed=True))
    assert "give grafana write access to /srv/grafana/plugins" in path.fix.text and "chown" in path.fix.text


def test_debug_variables_and_echoed_commands_are_not_remedies():
    assert named_remedies(["RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"]) == []
    assert named_remedies(["usage: vllm serve [-h] [--max-model-len MAX_MODEL_LEN] [--enforce-eager]"]) == []
    assert named_remedies(["exec command: [/usr/bin/nvidia-container-cli --load-kmods configure --ldconfig=@x]"]) == []
    # A command the line says failed, echoed whole: its flags were run, they are no remedy.
    failed = ("failed to start daemon: unable to insert jump to DOCKER rule in FORWARD chain:  (iptables failed: "
              "iptables --wait -I FORWARD -m set --match-set docker-ext-bridges-v4 dst -j DOCKER: Warning: Extension "
              "set revision 0 not supported, missing kernel module?")
    assert [remedy for remedy in named_remedies([failed]) if remedy.kind is RemedyKind.flag] == []
    assert Remedy(RemedyKind.flag, "--max-model-len", "4096") in named_remedies(
        ["ValueError: engine failed: the window does not fit; try --max-model-len 4096"])


@pytest.mark.parametrize(("service", "lines", "evidence"), [
    ("nginx", ['2024/01/01 00:00:00 [notice] 1#1: using the "epoll" event method',
               '2024/01/01 00:00:00 [emerg] 1#1: unknown directive "proxy_bufering" in /etc/nginx/conf.d/x.conf:12'],
     '2024/01/01 00:00:00 [emerg] 1#1: unknown directive "proxy_bufering" in /etc/nginx/conf.d/x.conf:12'),
    ("prometheus", ['ts=2024-01-01T00:00:00Z caller=main.go:1 level=info msg="Starting Prometheus"',
                    ('ts=2024-01-01T00:00:00Z caller=main.go:2 level=error msg="Fatal error" err="opening storage failed: '
                    '/prometheus/01HX: invalid magic number 0"'),
                    'ts=2024-01-01T00:00:00Z caller=main.go:3 level=info msg="See you next time!"'],
     ('ts=2024-01-01T00:00:00Z caller=main.go:2 level=error msg="Fatal error" err="opening storage failed: '
     '/prometheus/01HX: invalid magic number 0"')),
    ("node-exporter", ["panic: runtime error: invalid memory address or nil pointer dereference",
                       "goroutine 1 [running]:", "main.main()"],
     "panic: runtime error: invalid memory address or nil pointer dereference"),
])
def test_each_services_way_of_logging_an_error_is_read(service, lines, evidence):
    diagnosis = diagnose_log(lines, DiagnosisContext(service=service, failed=True))
    assert diagnosis.cause is Cause.unrecognised and diagnosis.evidence == evidence
    assert diagnosis.severity is Severity.fatal


def test_an_error_record_in_a_service_not_known_to_have_failed_is_a_warning():
    lines = ["INFO started", "ERROR 01-01 00:00:00 [serving.py:1] Error in preprocessing prompt inputs",
             "INFO: 127.0.0.1:5000 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request"]
    diagnosis = diagnose_log(lines)
    assert diagnosis.severity is Severity.advisory
    assert diagnosis.summary == "vllm's log reports an error: Error in preprocessing prompt inputs"


def test_a_failed_start_without_an_error_line_names_the_timeout_key():
    context = DiagnosisContext(service="vllm", failed=True,
                               failure="vllm did not become healthy in 900 s (last check: connection refused)")
    diagnosis = diagnose_log(["INFO Loading weights took 600 s"], context)
    assert diagnosis.severity is Severity.fatal and diagnosis.fix.key == "start_timeouts.vllm"
    assert diagnosis.fix.value == "900" and diagnosis.evidence == "INFO Loading weights took 600 s"
