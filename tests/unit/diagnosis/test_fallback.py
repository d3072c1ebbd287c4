"""The fallback: the decisive error line past traceback noise and process prefixes, the remedy the
log names, and the stack.yaml key that sets it."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, DiagnosisContext, Severity, diagnose_log
from stackctl.diagnosis.log_lines import decisive_error, strip_prefixes
from stackctl.diagnosis.remedy import Remedy, RemedyKind, named_remedies
from stackctl.diagnosis.stack_keys import as_flag, placement

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
    # nginx's and certbot's words for a directive the configuration lacks (nginxconfig.io#432, certbot#5817, #5396).
    ('nginx: [emerg] no "ssl_certificate" is defined for the "listen ... ssl" directive in webiste.conf',
     Remedy(RemedyKind.directive, "ssl_certificate")),
    ("Could not automatically find a matching server block. Set the `server_name` directive to use the Nginx installer.",
     Remedy(RemedyKind.directive, "server_name")),
    (("Cannot find a VirtualHost matching domain mysite.ru. In order for Certbot to correctly perform the challenge "
     "please add a corresponding server_name directive to your nginx configuration"),
     Remedy(RemedyKind.directive, "server_name")),
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



def test_a_tools_own_argument_list_is_no_remedy_where_the_terminal_wrapped_its_marker_away():
    # nvidia-docker#825: the echoed nvidia-container-cli command went on past a line break, so its second
    # line has no "exec command: [" marker; its --require=cuda>=8.0 holds an offering word in its name.
    wrapped = ("pute --compat32 --graphics --utility --video --display --require=cuda>=8.0 --pid=32239 /var/lib/docker/"
               "overlay2/bd4f/merged]\\\\nnvidia-container-cli: m")
    assert named_remedies([wrapped]) == []
    docker = diagnose_log([("OCI runtime create failed: exec command: [/usr/bin/nvidia-container-cli --load-kmods "
                           "configure --device=all --com"), wrapped, "ount error: mount failed: /dev/x: unknown"],
                          DiagnosisContext(service="docker", failed=True))
    assert docker.cause is Cause.unrecognised and "--compat" not in docker.fix.text
    # A flag's name ends where its word does: --compat32 is no --compat.
    assert named_remedies(["try --compat32"]) == [Remedy(RemedyKind.flag, "--compat32")]
    # A flag the line offers stays one, also beside an echoed command, and "use --flag" offers it.
    assert Remedy(RemedyKind.flag, "--cap-add") in named_remedies(
        ["To get profiling metrics with dcgm-exporter, use --cap-add SYS_ADMIN"])


def test_a_refused_flag_is_one_to_remove_whatever_words_refuse_it():
    # vllm#13669: argparse's refusal alone, with no word that offers anything.
    assert named_remedies(["api_server.py: error: unrecognized arguments: --lora-path /models/lora"]) == [
        Remedy(RemedyKind.drop_flag, "--lora-path")]


@pytest.mark.parametrize(("service", "lines", "evidence"), [
    ("nginx", ['2024/01/01 00:00:00 [notice] 1#1: using the "epoll" event method',
               ('2024/01/01 00:00:00 [emerg] 1#1: invalid number of arguments in "proxy_buffering" directive in '
                '/etc/nginx/conf.d/x.conf:12')],
     '2024/01/01 00:00:00 [emerg] 1#1: invalid number of arguments in "proxy_buffering" directive in /etc/nginx/conf.d/x.conf:12'),
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


# Remedy phrasings read from real log lines (the file under tests/data, or the report, each names).
@pytest.mark.parametrize(("line", "remedy"), [
    # LongVT#9 (vLLM's refusal of a window past the model's): a variable with its value, no full stop.
    (("Value error, User-specified max_model_len (131072) is greater than the derived max_model_len "
      "(max_position_embeddings=32768.0 or model_max_length=None in model's config.json). To allow overriding this "
      "maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with "
      "extreme caution."), Remedy(RemedyKind.env, "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1")),
    # trust_remote_code__worker-vllm-issue-43: a setting assigned inside quotes.
    ("You can avoid this prompt in future by passing the argument `trust_remote_code=True`.",
     Remedy(RemedyKind.setting, "trust_remote_code", "True")),
    # codex_wire_api__webai-at-home-issue-213: a quoted assignment with a quoted value.
    ('How to fix: set `wire_api = "responses"` in your provider config.', Remedy(RemedyKind.setting, "wire_api",
                                                                               "responses")),
    # bfloat16_unsupported__vllm-issue-3503: the value after `=` is a word.
    (("ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your NVIDIA GeForce "
      "RTX 2080 Ti GPU has compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag "
      "in CLI, for example: --dtype=half."), Remedy(RemedyKind.flag, "--dtype", "half")),
    # socket_interface__vllm-issue-7074: "set ... with VAR".
    (("[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address. Using the loopback "
      "address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME."),
     Remedy(RemedyKind.env, "GLOO_SOCKET_IFNAME")),
    # unknown_env_var__proxmoxved-issue-2047: "set a VAR".
    (("Warning: You are sending unauthenticated requests to the HF Hub. Please set a HF_TOKEN to enable higher rate "
     "limits and faster downloads."), Remedy(RemedyKind.env, "HF_TOKEN")),
    # request_context_overflow__vllm-issue-121 (round 3): "Make sure that `setting`".
    (("ValueError: The prompt (total length 25938) is too long to fit into the model (context length 4096). Make sure "
      "that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens."),
     Remedy(RemedyKind.setting, "max_model_len")),
    # free_memory_below_target__vllm-issue-25837: a setting said in words.
    (("ValueError: Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory utilization (0.9, "
      "3.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."),
     Remedy(RemedyKind.setting, "gpu_memory_utilization")),
    # request_context_overflow__qwen-code-issue (llama.cpp's server): "the context size".
    (("srv    send_error: task id = 2119, error: the request exceeds the available context size. try increasing the "
     "context size or enable context shift"), Remedy(RemedyKind.setting, "max_model_len")),
    # cuda_oom__vllm-issue-188 (round 1): PyTorch's allocator option is part of its variable, no engine flag.
    (("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB (GPU 0; 10.73 GiB total "
      "capacity; 9.85 GiB already allocated; 46.44 MiB free; 9.86 GiB reserved in total by PyTorch) If reserved "
      "memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for "
      "Memory Management and PYTORCH_CUDA_ALLOC_CONF"), Remedy(RemedyKind.env, "PYTORCH_CUDA_ALLOC_CONF")),
    # model_positional__vllm-pr-17944 (round 4): a flag the log says to stop using.
    (("ValueError: With `vllm serve`, you should provide the model as a positional argument or in a config file "
      "instead of via the `--model` option."), Remedy(RemedyKind.drop_flag, "--model")),
    # service_flag_unknown__node-exporter-issue: the refused flag is to remove, and --help is no remedy.
    ("node_exporter: error: unknown long flag '--collector.boottime', try --help",
     Remedy(RemedyKind.drop_flag, "--collector.boottime")),
])
def test_more_ways_a_log_states_its_remedy(line, remedy):
    assert remedy in named_remedies([line])


def test_false_remedies_are_left_out():
    # transformers_too_old_architecture__model-runner-issue-731: an install command's flags and its git URL.
    upgrade = ("You can update Transformers with the command `pip install --upgrade transformers`. If this does not "
               "work, and the checkpoint is very new, then there may not be a release version that supports this model "
               "yet. In this case, you can get the most up-to-date code by installing Transformers from source with "
               "the command `pip install git+https://github.com/huggingface/transformers.git`")
    assert named_remedies([upgrade]) == [Remedy(RemedyKind.package, "transformers")]
    # no_kernel_image__vllm-issue-16901: a debugging variable is no setting either.
    assert named_remedies(["For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]) == []
    assert named_remedies(["node_exporter: error: unknown short flag '-c', try --help"]) == []
    # gated_model__skypilot-issue-2634: a placeholder states no value.
    assert named_remedies([("pass a token having permission to this repo either by logging in with `huggingface-cli "
                           "login` or by passing `token=<your_token>`")]) == []
    # Docker's pointer at its help is no command to run.
    assert named_remedies([('docker: Error response from daemon: could not select device driver "" with capabilities: '
                           "[[gpu]]. Run 'docker run --help' for more information")]) == []


def test_a_switch_becomes_its_flag_and_a_flag_to_stop_using_names_its_key():
    remote = diagnose_log([("ValueError: the repository needs its own code; set the option `trust_remote_code=True` to "
                           "remove this error.")], DiagnosisContext(service="vllm", failed=True))
    assert (remote.fix.key, remote.fix.flag, remote.fix.value) == ("vllm.extra_args", "--trust-remote-code", None)
    assert "add --trust-remote-code to vllm.extra_args" in remote.fix.text
    # Both ways of naming one setting read as one change (vLLM's eager-mode hint).
    eager = diagnose_log([("RuntimeError: capture failed. To run the model in eager mode, set 'enforce_eager=True' or "
                          "use '--enforce-eager' in the CLI.")], DiagnosisContext(service="vllm", failed=True))
    assert eager.fix.text.count("--enforce-eager") == 1 and eager.fix.flag == "--enforce-eager"
    model = diagnose_log([("ValueError: With `vllm serve`, you should provide the model as a positional argument or in "
                          "a config file instead of via the `--model` option.")],
                         DiagnosisContext(service="vllm", failed=True))
    assert (model.fix.key, model.fix.flag) == ("vllm.model_path", "--model")
    assert "remove --model from vllm.extra_args" in model.fix.text


def test_a_client_side_refusal_names_the_engines_key():
    # The proxy relays vLLM's refusal ("try increasing the context size"): the window is the engine's key;
    # nginx's own setting of that name would be no engine flag.
    window = named_remedies([("srv    send_error: task id = 2119, error: the request exceeds the available context "
                             "size. try increasing the context size or enable context shift")])[0]
    assert placement(window, "filter-proxy").key == "vllm.max_model_len"
    assert as_flag(window, "filter-proxy") == "--max-model-len"
    assert placement(window, "nginx").key is None and as_flag(window, "nginx") is None
