"""vLLM's "Model architectures ['X'] failed to be inspected", read by the cause its inspection
subprocess's traceback states (transformers of another release, a stale checkpoint, another error),
or with the bare line both usual causes; kept apart from "are not supported for now" (vLLM does not
know the architecture) and from an ImportError with no inspection behind it. Both readings: the
signature (unknown-architecture) and the fallback with signatures off. The lines are real: from
tests/data, or quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause
from stackctl.diagnosis.diagnose import context_for, diagnose_log
from stackctl.diagnosis.fallback import fallback_diagnosis
from stackctl.diagnosis.verdict import Diagnosis

_DEFAULTS = parse_stack_config({})
# vllm#12932, LlamaFactory#7182, lmm-r1#48 (held-out round 28): the line alone.
_FAILED = ("ValueError: Model architectures ['Qwen2_5_VLForConditionalGeneration'] failed to be inspected. "
           "Please check the logs for more details.")
# transformers#36246: vllm 0.7.2 with transformers 4.49.0, the cause behind vllm#12932 (fixed in vLLM 0.7.3).
_TRANSFORMERS_NEWER = ("ImportError: cannot import name 'Qwen2_5_VLImageProcessor' from 'transformers.models.qwen2_5_vl' "
                       "(/usr/local/lib/python3.10/dist-packages/transformers/models/qwen2_5_vl/__init__.py)")
# exllama#242: a safetensors file cut short (fixed by downloading the model again).
_BROKEN_CHECKPOINT = "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge"
# The registry's record above the subprocess's traceback (vllm#9624).
_RECORD = "ERROR 10-23 23:20:26 registry.py:272] Error in inspecting model architecture 'Qwen2_5_VLForConditionalGeneration'"


def _both(lines: list[str]) -> tuple[Diagnosis, Diagnosis]:
    """The signature's diagnosis and the fallback's alone."""
    context = context_for("vllm", _DEFAULTS, failed=True)
    signature = diagnose_log(lines, context)
    fallback = fallback_diagnosis(lines, context)
    assert signature is not None and fallback is not None
    return signature, fallback


@pytest.mark.parametrize("reading", [0, 1], ids=["signature", "fallback"])
def test_the_bare_line_names_both_usual_causes_and_where_to_read_the_real_one(reading: int):
    diagnosis = _both([_FAILED])[reading]
    assert diagnosis.cause is (Cause.unknown_architecture, Cause.unrecognised)[reading]
    fix = diagnosis.fix
    assert fix.key == "images.vllm"
    assert "could not import the code of Qwen2_5_VLForConditionalGeneration" in fix.text
    assert "transformers newer than this vLLM release" in fix.text and "images.vllm" in fix.text
    assert "download the model again" in fix.text and "does not show why" in fix.text


@pytest.mark.parametrize("reading", [0, 1], ids=["signature", "fallback"])
def test_an_import_from_transformers_above_it_is_transformers_and_vllm_of_releases_that_do_not_match(reading: int):
    fix = _both([_RECORD, _TRANSFORMERS_NEWER, _FAILED])[reading].fix
    assert fix.key == "images.vllm"
    assert "cannot import name Qwen2_5_VLImageProcessor from transformers.models.qwen2_5_vl" in fix.text
    assert "the installed transformers and this vLLM are of releases that do not match" in fix.text
    assert "set images.vllm to a newer vLLM release" in fix.text and "download the model again" not in fix.text


@pytest.mark.parametrize("reading", [0, 1], ids=["signature", "fallback"])
def test_a_checkpoint_it_could_not_read_is_downloaded_again(reading: int):
    fix = _both([_RECORD, _BROKEN_CHECKPOINT, _FAILED])[reading].fix
    assert fix.key == "vllm.model_path"
    assert "could not read the model's checkpoint (SafetensorError: Error while deserializing header" in fix.text
    assert "download the model again" in fix.text and "newer vLLM" not in fix.text


def test_a_plugin_importing_from_vllm_is_the_plugin_of_another_vllm_release():
    # vllm-plugin-FL#446 (tests/data/service_failures): the inspection line above the subprocess's error.
    lines = ["Model architectures ['Qwen3_5MoeForConditionalGeneration'] failed to be inspected.",
             "ImportError: cannot import name 'ModelRegistry' from 'vllm' (unknown location)"]
    for diagnosis in _both(lines):
        assert "the plugin's release built for this vLLM" in diagnosis.fix.text


def test_another_error_of_the_subprocess_is_named_as_the_one_to_fix():
    # xinference's troubleshooting page (tests/data/service_failures): conda's MKL against libgomp.
    lines = [("Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL is incompatible with libgomp-a34b3233.so.1 "
              "library."), _FAILED]
    for diagnosis in _both(lines):
        assert "it failed with Error: mkl-service + Intel(R) MKL: MKL_THREADING_LAYER=INTEL" in diagnosis.fix.text
        assert "fix that error" in diagnosis.fix.text


def test_an_architecture_vllm_does_not_know_stays_a_newer_vllm_without_the_checkpoint():
    # vllm#9515 (tests/data/vllm_failures): "are not supported for now" is not a failed inspection.
    line = ("ValueError: Model architectures ['LlamaForCausalLM'] are not supported for now. Supported architectures: "
            "['AquilaModel', 'AquilaForCausalLM', 'ArcticForCausalLM']")
    signature, fallback = _both([line])
    assert signature.cause is Cause.unknown_architecture
    for diagnosis in (signature, fallback):
        assert diagnosis.fix.key == "images.vllm" and "inspection subprocess" not in diagnosis.fix.text
        assert "download the model again" not in diagnosis.fix.text


def test_an_import_error_without_a_failed_inspection_stays_a_version_mismatch():
    context = context_for("vllm", _DEFAULTS, failed=True)
    fallback = fallback_diagnosis([_TRANSFORMERS_NEWER], context)
    assert fallback is not None and "inspection subprocess" not in fallback.fix.text
    assert fallback.fix.text.startswith("the error states its cause: the installed transformers has no "
                                        "Qwen2_5_VLImageProcessor")
