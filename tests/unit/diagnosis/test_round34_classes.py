"""Round 34's misses, built by cause: another program's argparse error is not vLLM's refused flag; a certbot
plugin the certbot that ran does not load, a domain's CAA records, Docker's chains refused by nf_tables, Grafana's
unsigned plugin, supervisord's user= as non-root; each beside the neighbours that keep their own class, and read
by the fallback too where the error line states the cause. The lines are real: from tests/data, quoted from the
public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, diagnose_log
from stackctl.diagnosis.diagnose import context_for
from stackctl.diagnosis.fallback import fallback_diagnosis

_DEFAULTS = parse_stack_config({})


def _diagnose(lines: list[str], service: str):
    diagnosis = diagnose_log(lines, context_for(service, _DEFAULTS))
    assert diagnosis is not None
    return diagnosis


def _fallback(lines: list[str], service: str):
    diagnosis = fallback_diagnosis(lines, context_for(service, _DEFAULTS))
    assert diagnosis is not None and diagnosis.cause is Cause.unrecognised
    return diagnosis


# --- only vLLM's own argparse errors are vLLM's flags ------------------------------------------------------

_CERTBOT_USAGE = [  # hsmade/certbot-dns-transip#16
    "usage: ",
    "  certbot [SUBCOMMAND] [options] [-d DOMAIN] [-d DOMAIN] ...",
    ("certbot: error: unrecognized arguments: --certbot-dns-transip:dns-transip-credentials /etc/letsencrypt/transip.ini "
     "--certbot-dns-transip:dns-transip-propagation-seconds 240"),
]


@pytest.mark.parametrize("service", ["certbot", "vllm", "docker"])
def test_certbots_unrecognized_arguments_are_never_a_vllm_flag_to_remove(service):
    diagnosis = _diagnose(_CERTBOT_USAGE, service)
    assert diagnosis.cause is not Cause.refused_flag
    assert "vllm.extra_args" not in diagnosis.fix.text and diagnosis.fix.key != "vllm.extra_args"


@pytest.mark.parametrize("lines", [
    ["vllm: error: unrecognized arguments: --enable-reasoning"],  # vllm#18538
    ["api_server.py: error: unrecognized arguments: /root/models/Qwen3-8B"],  # vllm#27389
    ["usage: vllm [-h] [-v]", "vllm: error: unrecognized arguments: --temperature 0.8"],  # ramalama#2635
    ["unrecognized arguments: --enable-prompt-tokens-details"],  # deepseek-v4-flash-dspark#17: no program named
])
def test_vllms_own_argparse_errors_stay_refused_flags(lines):
    assert _diagnose(lines, "vllm").cause is Cause.refused_flag


def test_a_bare_unrecognized_arguments_line_is_vllms_only_in_a_vllm_or_container_log():
    line = ["unrecognized arguments: --enable-prompt-tokens-details"]
    assert _diagnose(line, "docker").cause is Cause.refused_flag
    assert _diagnose(line, "prometheus").cause is not Cause.refused_flag


def test_another_programs_invalid_choice_is_not_vllms_refused_choice():
    # vLLM's own (tpu-inference#1136) keeps its class; the same argparse words from another program do not.
    ours = ("vllm bench <bench_type> [options] throughput: error: argument --kv-cache-dtype: invalid choice: 'fp8_5m2' "
            "(choose from auto, bfloat16, fp8, fp8_ds_mla, fp8_e4m3, fp8_e5m2, fp8_inc)")
    assert _diagnose([ours], "vllm").cause is Cause.refused_choice
    theirs = ours.replace("vllm bench <bench_type> [options] throughput", "certbot")
    assert _diagnose([theirs], "certbot").cause is not Cause.refused_choice
