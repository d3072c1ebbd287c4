"""`doctor`'s last-start check: the last failed `up`, diagnosed, with its fix printed whole."""

from __future__ import annotations

from rich.console import Console

from stackctl.commands.doctor import render_table
from stackctl.diagnosis.start_record import record_failed_start
from stackctl.doctor import run_checks
from stackctl.doctor.last_start import check_last_start
from stackctl.doctor.result import Status
from tests.support.fakehost import context, make_host
from tests.support.stack_builder import make_stack
from tests.unit.diagnosis.real_logs import FAILURE_LOGS, read_log
from tests.unit.doctor.test_cli import demo_stack

MAMBA = read_log(FAILURE_LOGS / "mamba_cache_overflow__vllm-issue-49064-h100.log")[1]
GATED = read_log(FAILURE_LOGS / "gated_model__ai-virtual-agent-issue-200.log")[1]


def check(stack, tmp_path):
    return check_last_start(context(stack, make_host(tmp_path)))


def test_no_recorded_failure_is_ok(tmp_path):
    assert check(demo_stack(tmp_path), tmp_path).status is Status.ok


def test_a_recorded_failure_is_diagnosed_with_its_fix(tmp_path):
    stack = make_stack(tmp_path, runtime="compose", hardware="rtx-pro-6000")
    record_failed_start(stack.layout, service="vllm", message="vllm did not become healthy", log_tail=MAMBA,
                        runtime="compose")
    result = check(stack, tmp_path)
    assert result.status is Status.fail
    assert "(vllm): max_num_seqs (1024) exceeds the Mamba cache blocks available (969)" in result.found
    assert result.fix == "set vllm.max_num_seqs to 969 or less (--max-num-seqs)"


def test_a_changed_stack_yaml_turns_it_into_a_warning(tmp_path):
    stack = make_stack(tmp_path, runtime="compose", hardware="rtx-pro-6000")
    record_failed_start(stack.layout, service="vllm", message="m", log_tail=MAMBA, runtime="compose")
    stack.layout.stack_file.write_text(stack.layout.stack_file.read_text() + "vllm: {max_num_seqs: 900}\n")
    result = check(stack, tmp_path)
    assert result.status is Status.warn and "stack.yaml changed since" in result.found
    assert "set vllm.max_num_seqs to 969 or less" in result.fix


def test_an_unknown_failure_leads_with_its_error_line_and_points_at_the_whole_log(tmp_path):
    stack = demo_stack(tmp_path)
    record_failed_start(stack.layout, service="nginx", message="nginx exited during start",
                        log_tail=["Segmentation fault", "WARNING Unknown vLLM environment variable detected: VLLM_X"],
                        runtime="native")
    result = check(stack, tmp_path)
    assert result.status is Status.fail and "(nginx): nginx stopped on: Segmentation fault" in result.found
    assert "`stackctl logs nginx`" in result.fix


def test_a_failed_start_without_any_error_line_still_says_what_to_do(tmp_path):
    stack = demo_stack(tmp_path)
    record_failed_start(stack.layout, service="vllm", message="vllm did not become healthy in 900 s (last check: 503)",
                        log_tail=["INFO Loading safetensors checkpoint shards: 40% Completed | 4/10"], runtime="native")
    result = check(stack, tmp_path)
    assert result.status is Status.fail and "its log shows no error" in result.found
    assert "raise start_timeouts.vllm in stack.yaml above 900 s" in result.fix


def test_up_preflight_leaves_the_history_out(tmp_path):
    stack = demo_stack(tmp_path)
    record_failed_start(stack.layout, service="vllm", message="m", log_tail=GATED, runtime="native")
    names = {row.name for row in run_checks(stack, fast_only=True, facts=make_host(tmp_path))}
    assert "last-start" not in names  # `up` must not refuse to retry because the last try failed
    slow = run_checks(stack, fast_only=False, facts=make_host(tmp_path), engine_python=tmp_path / "none")
    assert next(row for row in slow if row.name == "last-start").status is Status.fail


def test_doctor_prints_the_fix_whole_at_80_columns(tmp_path):
    stack = demo_stack(tmp_path)
    record_failed_start(stack.layout, service="vllm", message="vllm exited during start", log_tail=GATED,
                        runtime="native")
    console = Console(width=80, record=True, highlight=False, soft_wrap=True)
    render_table([check(stack, tmp_path)], console)
    text = console.export_text()
    assert "…" not in text
    fix = ("fix last-start: accept the model's terms at https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct with "
           "your account, then put a token with read access in .env as HF_TOKEN and run `stackctl up` again")
    assert fix in text.splitlines()


def test_doctor_table_keeps_what_a_check_found_whole_at_80_columns(tmp_path):
    from stackctl.doctor.result import fail

    found = ("max_model_len 131072; the model takes 131072 tokens (max_position_embeddings 131072) "
             "(/root/.local/share/stackctl/models/tiny/config.json) [rank0] is literal text")
    console = Console(width=80, record=True, highlight=False, soft_wrap=True)
    render_table([fail("model-window", found, "set vllm.max_model_len to 65536 or less (--max-model-len)")], console)
    text = console.export_text()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    cells = "".join("".join(line.split("│")[3].split()) for line in text.splitlines() if line.count("│") == 4)
    assert cells == "".join(found.split())  # every character, in order (a long path may fold)
    assert "fix model-window: set vllm.max_model_len to 65536 or less (--max-model-len)" in text.splitlines()
