"""Classes whose fix depends on values the log states, tried both ways: the same wording yields a
different fix when the log says something else."""

from __future__ import annotations

from stackctl.diagnosis import Cause, DiagnosisContext, diagnose_log

_OOM = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB (GPU 0; {total} GiB total "
        "capacity; 9.85 GiB already allocated; 46.44 MiB free; 9.86 GiB reserved in total by PyTorch)")


def test_an_oom_whose_weights_alone_exceed_the_gpu_names_a_smaller_or_quantized_model():
    command = "$ python -m vllm.entrypoints.openai.api_server --model {model} --dtype half"
    too_big = diagnose_log([command.format(model="mistralai/Mistral-7B-v0.1"), _OOM.format(total="10.73")])
    assert too_big.cause is Cause.weights_do_not_fit and too_big.fix.key == "model" and "AWQ" in too_big.fix.text
    # The same 7B model quantized to 4 bits (3.3 GiB), or on an 80 GiB GPU, fits: the memory settings are the fix.
    for model, total in (("TheBloke/Mistral-7B-v0.1-AWQ", "10.73"), ("mistralai/Mistral-7B-v0.1", "79.15")):
        fits = diagnose_log([command.format(model=model), _OOM.format(total=total)])
        assert fits.cause is Cause.cuda_oom and fits.fix.key == "vllm.gpu_memory_utilization"


def test_the_schedulers_prompt_limit_is_the_window_or_the_batch_budget_as_the_log_states():
    refused = "WARNING 02-20 17:08:38 scheduler.py:949] Input prompt (100005 tokens) is too long and exceeds limit of 2048"
    unknown = diagnose_log([refused])
    assert unknown.cause is Cause.prompt_exceeds_batched_tokens
    assert (unknown.fix.key, unknown.fix.flag, unknown.fix.value) == ("vllm.max_model_len", "--max-num-batched-tokens",
                                                                      "100005")
    budget = diagnose_log(["INFO non-default args: {'max_model_len': 163840}", refused])
    assert budget.cause is Cause.prompt_exceeds_batched_tokens and budget.fix.key == "vllm.extra_args"
    window = diagnose_log(["INFO non-default args: {'max_model_len': 2048}", refused])
    assert window.cause is Cause.request_context_overflow and window.fix.key == "vllm.max_model_len"


def test_a_package_the_log_says_it_needs_is_the_fallbacks_remedy():
    lines = ["ValueError: Couldn't instantiate the backend tokenizer from one of:",
             "You need to have sentencepiece installed to convert a slow tokenizer to a fast one."]
    diagnosis = diagnose_log(lines, DiagnosisContext(service="vllm", failed=True))
    assert diagnosis.cause is Cause.unrecognised and "sentencepiece" in diagnosis.fix.text
    assert diagnosis.fix.key == "images.vllm"


def test_a_taken_port_in_windows_words_names_the_services_port_key():
    line = ('level=error msg="Error starting HTTP server" err="listen tcp :9835: bind: Only one usage of each socket '
            'address (protocol/network address/port) is normally permitted."')
    diagnosis = diagnose_log([line], DiagnosisContext(service="gpu-exporter", port_keys={9835: "ports.gpu_exporter"}))
    assert diagnosis.cause is Cause.port_in_use and diagnosis.fix.key == "ports.gpu_exporter"
