"""Which diagnosis wins when several lines match, and what the stack's own settings change in a fix."""

from __future__ import annotations

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import (
    Cause,
    DiagnosisContext,
    Severity,
    context_for,
    diagnose_log,
    diagnose_service_log,
)
from tests.unit.diagnosis.real_logs import FAILURE_LOGS, read_log, throughput_lines

ENGINE_FAILED = "(EngineCore_DP0 pid=120) RuntimeError: Engine core initialization failed. See root cause above."
GRAPH_OOM = [
    "(EngineCore_DP0 pid=120) INFO 01-01 00:00:00 [gpu_model_runner.py:4000] Capturing CUDA graphs (mixed prefill-decode)",
    "(EngineCore_DP0 pid=120)     cuda_graph_memory_bytes = self.model_runner.capture_model()",
    "(EngineCore_DP0 pid=120) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB.",
]


def lines_of(name: str) -> list[str]:
    return read_log(FAILURE_LOGS / f"{name}.log")[1]


def test_a_root_cause_beats_the_generic_error_logged_after_it():
    diagnosis = diagnose_log([*GRAPH_OOM, ENGINE_FAILED, "unhandled system error (run with NCCL_DEBUG=INFO for details)"])
    assert diagnosis is not None and diagnosis.cause is Cause.cuda_graph_oom
    assert diagnosis.fix.key == "vllm.gpu_memory_utilization" and "--enforce-eager" in diagnosis.fix.text


def test_a_named_cause_beats_the_out_of_memory_error_next_to_it():
    lines = [*GRAPH_OOM, *lines_of("mamba_cache_overflow__vllm-pr-38632")]
    diagnosis = diagnose_log(lines)
    assert diagnosis is not None and diagnosis.cause is Cause.mamba_cache_overflow


def test_oom_phase_comes_from_the_closest_marker_above_it():
    loading = ["INFO Starting to load model /models/big...", "  File \"vllm/model_executor/model_loader/base_loader.py\"",
               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    assert diagnose_log(GRAPH_OOM[:1] + loading).cause is Cause.weights_do_not_fit
    assert diagnose_log(loading[:1] + GRAPH_OOM).cause is Cause.cuda_graph_oom
    assert diagnose_log(loading[2:]).cause is Cause.cuda_oom


def test_the_latest_engine_start_is_diagnosed():
    first_start = ["INFO 01-01 [api_server.py:1] vLLM API server version 0.11.0",
                   *lines_of("kv_cache_too_small__vllm-issue-34076")]
    second_start = ["INFO 01-02 [api_server.py:1] vLLM API server version 0.11.0",
                    *lines_of("mamba_cache_overflow__vllm-issue-49064-h100")]
    assert diagnose_log(first_start + second_start).cause is Cause.mamba_cache_overflow
    assert diagnose_log(second_start + first_start).cause is Cause.kv_cache_too_small


def test_an_earlier_failure_is_found_when_the_latest_start_has_none_yet():
    failed = ["INFO vLLM API server version 0.11.0", *lines_of("no_cache_memory__vllm-issue-10439")]
    restarting = ["INFO vLLM API server version 0.11.0", "INFO non-default args: {'model': 'x'}",
                  "WARNING Unknown vLLM environment variable detected: VLLM_TYPO"]
    diagnosis = diagnose_log(failed + restarting)
    assert diagnosis.cause is Cause.no_cache_memory and diagnosis.severity is Severity.fatal


def test_a_warning_alone_is_advisory():
    diagnosis = diagnose_log(["WARNING Unknown vLLM environment variable detected: VLLM_TYPO"])
    assert diagnosis.cause is Cause.unknown_env_var and diagnosis.severity is Severity.advisory


def test_a_log_without_an_error_gives_no_diagnosis():
    assert diagnose_log([]) is None
    assert diagnose_log(["INFO all good", "WARNING Failed to fetch the usage stats"]) is None


def test_a_crash_no_signature_knows_is_named_by_its_line_past_the_wrapper_after_it():
    diagnosis = diagnose_log(["INFO all good", "Segmentation fault (core dumped)", ENGINE_FAILED])
    assert diagnosis is not None and diagnosis.cause is Cause.unrecognised and not diagnosis.known
    assert diagnosis.severity is Severity.fatal and diagnosis.evidence == "Segmentation fault (core dumped)"


def test_settings_the_log_states_sharpen_the_fix():
    lines = ["INFO [utils.py:286] non-default args: {'model': 'm', 'gpu_memory_utilization': 0.95, 'max_num_seqs': 8}",
             "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`"]
    assert "above 0.95" in diagnose_log(lines).fix.text
    graph = ["INFO non-default args: {'gpu_memory_utilization': 0.9}", *GRAPH_OOM]
    assert "below 0.90" in diagnose_log(graph).fix.text


def test_a_refused_flag_the_user_added_is_removed_from_extra_args():
    lines = ["vllm: error: unrecognized arguments: --enable-reasoning"]
    mine = DiagnosisContext(extra_args=("--enable-reasoning", "--seed", "0"))
    fix = diagnose_log(lines, mine).fix
    assert (fix.key, fix.flag) == ("vllm.extra_args", "--enable-reasoning") and fix.text.startswith("remove")


def test_a_refused_flag_from_the_profile_asks_for_a_newer_engine():
    lines = ["api_server.py: error: unrecognized arguments: --tool-call-parser qwen3_coder"]
    fix = diagnose_log(lines, context_for("vllm", parse_stack_config({"vllm": {"extra_args": ["--seed", "0"]}}))).fix
    assert (fix.key, fix.flag) == ("images.vllm", "--tool-call-parser")
    assert "not in vllm.extra_args" in fix.text


@pytest.mark.parametrize("flag", ["--lora-path", "--omni", "--config"])
def test_a_refused_flag_stackctls_command_does_not_add_is_the_users_to_remove(flag):
    # Not in vllm.extra_args of this stack.yaml either (a command typed by hand, or an edit since the
    # start): stackctl's rendered command does not carry it, so no newer engine is asked for.
    lines = ["usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...",
             f"vllm: error: unrecognized arguments: {flag} /models/x"]
    fix = diagnose_log(lines, context_for("vllm", parse_stack_config({}))).fix
    assert (fix.key, fix.flag) == ("vllm.extra_args", flag)
    assert fix.text.startswith(f"remove {flag} from vllm.extra_args") and "no such flag" in fix.text


def test_the_stack_names_the_port_key():
    config = parse_stack_config({"hardware": "cpu", "model": "tiny", "ports": {"http": 8080, "proxy": 4001}})
    nginx = diagnose_service_log("nginx", ["nginx: [emerg] bind() to 0.0.0.0:8080 failed (98: Address already in use)"],
                                 config)
    assert (nginx.fix.key, nginx.values["port"]) == ("ports.http", 8080) and nginx.fix.flag is None
    assert "ss -ltnp 'sport = :8080'" in nginx.fix.text
    context = context_for("vllm", config)
    assert context.port_keys[4001] == "ports.proxy" and context.extra_args == ()


def test_the_api_port_comes_from_the_stated_arguments_when_the_error_omits_it():
    lines = ["INFO [api_utils.py:286] non-default args: {'host': '127.0.0.1', 'port': 8123, 'model': 'm'}",
             '  File "vllm/entrypoints/launchers/launcher.py", line 398, in setup_server',
             "OSError: [Errno 98] Address already in use"]
    diagnosis = diagnose_log(lines)
    assert diagnosis.values["port"] == 8123 and diagnosis.fix.key == "ports.vllm" and diagnosis.fix.flag == "--port"


def test_a_cut_line_that_triggers_without_its_values_does_not_crash():
    diagnosis = diagnose_log(["ValueError: max_num_seqs exceeds available Mamba cache blocks"])
    # No signature can read it, so the fallback leads with the line itself.
    assert diagnosis.cause is Cause.unrecognised
    assert diagnosis.evidence == "ValueError: max_num_seqs exceeds available Mamba cache blocks"


def test_wrapped_messages_are_read_whole():
    diagnosis = diagnose_log(lines_of("context_window_exceeded__vector-inference-issue-61"))
    assert diagnosis.values == {"max_model_len": 32768, "window": 4096}


def test_the_failure_is_found_past_a_long_log_of_noise():
    # As `logs --explain` reads it: up to 5000 lines, mostly throughput lines that match nothing.
    # How fast: benchmarks/diagnosis_speed.py (no timed assertion here).
    diagnosis = diagnose_log([*throughput_lines(5000), *lines_of("mamba_cache_overflow__vllm-pr-38632")])
    assert diagnosis.cause is Cause.mamba_cache_overflow


def test_go_services_port_clash_names_their_key():
    line = ('ts=2025-01-01T00:00:00Z level=error caller=main.go:1 msg="Unable to start web server" '
            'err="listen tcp 0.0.0.0:9091: bind: address already in use"')
    config = parse_stack_config({"hardware": "cpu", "model": "tiny", "ports": {"prometheus": 9091}})
    diagnosis = diagnose_service_log("prometheus", [line], config)
    assert (diagnosis.values["port"], diagnosis.fix.key) == (9091, "ports.prometheus")


def test_a_clash_without_a_port_number_names_the_services_key():
    diagnosis = diagnose_service_log("grafana", ["Error: bind: address already in use"])
    assert diagnosis.fix.key == "ports.grafana" and "port" not in diagnosis.values
    assert "another vLLM" in diagnose_log(["OSError: [Errno 98] Address already in use"]).summary


@pytest.mark.parametrize(("refused", "successor", "written"), [
    # vLLM 0.13 removed --task: a pooling task is --runner pooling with --convert for the head.
    ("--task embed", "--runner", "--runner pooling --convert embed"),
    ("--task=classify", "--runner", "--runner pooling --convert classify"),
    ("--task reward --trust-remote-code", "--runner", "--runner pooling --convert reward"),
    ("--task generate", "--runner", "--runner generate"),
    ('--rope-scaling={"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}', "--hf-overrides",
     "--hf-overrides '{\"rope_scaling\""),
    ("--speculative-model ngram --num-speculative-tokens 5", "--speculative-config", "--speculative-config"),
])
def test_a_removed_flag_with_a_successor_names_the_successor(refused, successor, written):
    fix = diagnose_log([f"vllm: error: unrecognized arguments: {refused}"]).fix
    assert (fix.key, fix.flag) == ("vllm.extra_args", successor)
    assert fix.text.startswith(f"remove {refused.split('=')[0].split()[0]} from vllm.extra_args") and written in fix.text


def test_a_removed_task_without_its_value_names_both_runners():
    fix = diagnose_log(["vllm: error: unrecognized arguments: --task"]).fix
    assert fix.flag == "--runner" and "--runner pooling" in fix.text and "--runner generate" in fix.text


@pytest.mark.parametrize("refused", ["--disable-log-requests", "--enable-reasoning --reasoning-parser deepseek_r1"])
def test_a_removed_flag_whose_behaviour_is_now_the_default_is_only_removed(refused):
    first = refused.split()[0]
    fix = diagnose_log([f"vllm: error: unrecognized arguments: {refused}"]).fix
    assert (fix.key, fix.flag) == ("vllm.extra_args", first) and fix.text.startswith(f"remove {first}")
    assert "this vLLM has no such flag" not in fix.text


def test_an_unknown_flag_is_not_given_a_successor():
    # --task-type is no removed flag of vLLM's: no table entry may reach it by its prefix.
    fix = diagnose_log(["vllm: error: unrecognized arguments: --task-type embed"]).fix
    assert fix.flag == "--task-type" and "this vLLM has no such flag" in fix.text
