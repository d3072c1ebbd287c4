"""vLLM refusing what its build or options cannot do: a forced attention backend the model does not
fit, a kernel guarded to another Blackwell SM than this GPU's (FP8 CUTLASS on GB10's SM 12.1), a JIT
compiler (FlashInfer) finding a CUDA toolkit too old for the GPU or none at all (no nvcc), a tokenizer mode this release does not
have, a speculative-decoding token budget below zero, and a device-side index past a model's table
(positions beyond max_position_embeddings)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import CONSEQUENCE, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_EXTRA = "vllm.extra_args"
_BACKEND = re.compile(r"Selected backend (?:AttentionBackendEnum\.)?(?P<backend>\w+) is not valid for this "
                      r"configuration\. Reason: \[?'?(?P<reason>[^'\]]+)")


def _attention_backend_forced_invalid(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_BACKEND)
    backend, reason = values.get("backend", "the forced backend"), values.get("reason", "")
    return found(evidence, Cause.attention_backend_forced_invalid,
                 f"vLLM was told to use the {backend} attention backend, which cannot run this model here"
                 + (f" ({reason})" if reason else ""),
                 Fix(f"remove the attention backend override (--attention-backend {backend} in vllm.extra_args, or "
                     f"VLLM_ATTENTION_BACKEND={backend} in vllm.environment) so vLLM picks one that fits the model, "
                     f"or name one that supports it (TRITON_ATTN runs every head size); do not force {backend} for "
                     "this model; then `stackctl up`", key=_EXTRA, flag="--attention-backend"),
                 backend=backend, **({"reason": reason} if reason else {}))


_ONLY_SM = re.compile(r"This kernel only supports (?P<sm>sm_?\d+)")


def _kernel_arch_guard(evidence: Evidence) -> Diagnosis:
    sm = evidence.read(_ONLY_SM).get("sm", "sm120").replace("_", "")
    return found(evidence, Cause.kernel_arch_guard,
                 f"a kernel in this vLLM build refuses to run outside {sm}: on a GB10 (DGX Spark, SM12.1) the FP8 "
                 "CUTLASS kernels guarded for SM 12.0 only trap (cudaErrorLaunchFailure)",
                 Fix("use a vLLM image whose kernels accept the whole SM 12.x family (the guard enable_sm120_only "
                     "became enable_sm120_family, vLLM PR 35568): a newer release, or a patched vLLM image built for "
                     "SM12.1 (rebuild vLLM with the fix), in images.vllm; until then a BF16 or NVFP4 model (not FP8) "
                     "avoids these kernels; then `stackctl up`", key="images.vllm"), sm=sm)


_TOOLKIT_FOR_SM = re.compile(r"SM (?P<sm>[\d.x]+) requires CUDA >= (?P<cuda>\d+\.\d+)")


def _cuda_toolkit_too_old_for_gpu(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_TOOLKIT_FOR_SM)
    sm, cuda = values.get("sm", "12.x"), values.get("cuda", "12.9")
    return found(evidence, Cause.cuda_toolkit_too_old_for_gpu,
                 f"the CUDA toolkit vLLM's JIT kernels (FlashInfer) compile with is older than this GPU (SM {sm}) "
                 f"needs: CUDA {cuda} or newer",
                 Fix(f"give the engine CUDA {cuda} or a newer CUDA toolkit: natively point CUDA_HOME (vllm.environment) "
                     f"at a toolkit >= {cuda} (`nvcc --version`), or use an images.vllm built on CUDA {cuda}+ (the NGC "
                     "image is); to run meanwhile without FlashInfer's JIT sampler set VLLM_USE_FLASHINFER_SAMPLER=0; "
                     "then `stackctl up`", key="vllm.environment", env="CUDA_HOME"),
                 sm=sm, cuda=cuda)


_TOKENIZER_MODE = re.compile(r"No tokenizer registered for tokenizer_mode='(?P<mode>[^']+)'")


def _tokenizer_mode_unknown(evidence: Evidence) -> Diagnosis:
    mode = evidence.read(_TOKENIZER_MODE).get("mode", "")
    return found(evidence, Cause.tokenizer_mode_unknown,
                 f"this vLLM has no tokenizer mode {mode or '(the one asked for)'}: a model's own tokenizer mode comes "
                 "with the vLLM release that added the model",
                 Fix(f"upgrade vLLM: set images.vllm to a newer vLLM that has tokenizer_mode {mode or 'it'} (the "
                     "model's card names the release, sometimes a nightly); or drop --tokenizer-mode from "
                     "vllm.extra_args if the model does not need it; then `stackctl up`", key="images.vllm"),
                 **({"mode": mode} if mode else {}))


_BUDGET = re.compile(r"max_num_scheduled_tokens is set to (?P<budget>-?\d+)")


def _spec_decode_token_budget(evidence: Evidence) -> Diagnosis:
    budget = evidence.read(_BUDGET).get("budget", "")
    return found(evidence, Cause.spec_decode_token_budget,
                 f"the scheduler's token budget is {budget or 'below zero'}: speculative decoding reserves "
                 "num_speculative_tokens slots for every sequence, more than --max-num-batched-tokens holds",
                 Fix("raise max-num-batched-tokens (--max-num-batched-tokens in vllm.extra_args) above max_num_seqs x "
                     "(1 + num_speculative_tokens), or lower max-num-seqs (vllm.max_num_seqs) or the "
                     "num_speculative_tokens of --speculative-config; then `stackctl up`",
                     key=_EXTRA, flag="--max-num-batched-tokens"),
                 **({"budget": int(budget)} if budget else {}))


_INDEX = re.compile(r"index out of bounds: 0 <= \w+ < (?P<size>\d+)")


def _position_index_out_of_range(evidence: Evidence) -> Diagnosis:
    size = evidence.read(_INDEX).get("size", "")
    bound = size or "the model's max_position_embeddings"
    return found(evidence, Cause.position_index_out_of_range,
                 f"a GPU kernel indexed past a table of {size or 'N'} entries (device-side assert): a position beyond "
                 "the model's max_position_embeddings, from a context window set longer than the model was built for",
                 Fix(f"lower the max model length (vllm.max_model_len, --max-model-len) to at most {bound}, the "
                     "model's max_position_embeddings (config.json); a longer window needs RoPE scaling the model "
                     "supports, not VLLM_ALLOW_LONG_MAX_MODEL_LEN. If that number is the model's vocab_size "
                     "instead, a token id is out of range: the tokenizer does not match the weights; then "
                     "`stackctl up`", key="vllm.max_model_len", flag="--max-model-len", value=size or None),
                 **({"size": int(size)} if size else {}))


_FLASHINFER_ERROR = re.compile(r"(?P<kernel>Batch(?:Prefill|Decode)\w*) failed with error:? (?:code )?(?P<error>[\w ]+)")


def _flashinfer_kernel_failed(evidence: Evidence) -> Diagnosis:
    """FlashInfer's own attention kernels failing at their launch: builds whose kernels do not run on
    this GPU (Turing, sm75, since FlashInfer 0.6.11), or a combination of features one build lacks.
    vLLM's automatic choice may still pick FlashInfer there, so the backend has to be named."""
    said = evidence.read(_FLASHINFER_ERROR)
    kernel, error = said.get("kernel", "BatchPrefillWithPagedKVCache"), said.get("error", "").strip()
    return found(evidence, Cause.flashinfer_kernel_failed,
                 f"FlashInfer's attention kernel {kernel} failed{f' ({error})' if error else ''}: the FlashInfer "
                 "build in this engine does not run this model's attention on this GPU (on Turing, sm75, recent "
                 "builds fail this way), so the engine stops",
                 Fix("avoid FlashInfer attention: add `--attention-backend TRITON_ATTN` to vllm.extra_args in "
                     "stack.yaml (the flag; newer vLLM ignores the VLLM_ATTENTION_BACKEND variable), and drop a "
                     "`--attention-backend FLASHINFER` set there; then `stackctl up`", key="vllm.extra_args",
                     flag="--attention-backend", value="TRITON_ATTN"),
                 kernel=kernel, **({"error": error} if error else {}))


def _multiproc_executor_across_nodes(evidence: Evidence) -> Diagnosis:
    """A worker rebuilding a multiprocessing semaphore finds no /mp-* file: the semaphore lives in the
    /dev/shm of the process that made it. vLLM's multiprocessing executor spanning hosts (tensor parallel
    over two nodes, the default of newer releases) fails this way; so do workers without a shared /dev/shm."""
    return found(evidence, Cause.multiproc_executor_across_nodes,
                 "a vLLM worker could not open the multiprocessing semaphore its parent made (a /mp-* file in "
                 "/dev/shm): the workers do not share one /dev/shm, as across nodes with the multiprocessing "
                 "executor, which newer vLLM releases pick by default",
                 Fix("for a model spread over several nodes, use Ray: add `--distributed-executor-backend ray` to "
                     "vllm.extra_args in stack.yaml (with the Ray cluster started on every node), or pin the "
                     "container image (images.vllm) to the release that worked; on one host, the engine's "
                     "processes must share /dev/shm (one container; stackctl's vllm service sets ipc: host); "
                     "then `stackctl up`", key="vllm.extra_args", flag="--distributed-executor-backend",
                     value="ray"))


def _cuda_compiler_missing(evidence: Evidence) -> Diagnosis:
    """FlashInfer (vLLM's top-k/top-p sampler, some attention and MoE kernels) and torch's extension
    builder compile kernels at first use with nvcc: an environment without the CUDA toolkit, or one
    where CUDA_HOME and PATH do not lead to it, stops the engine at its first compile."""
    sampler = any(re.search(r"flashinfer[._/]sampl", line) for line in evidence.lines)
    return found(evidence, Cause.cuda_compiler_missing,
                 "vLLM's just-in-time kernel compiler (FlashInfer's JIT"
                 + (", for its sampler" if sampler else "") + ") found no nvcc: there is no CUDA toolkit where "
                 "CUDA_HOME and PATH lead",
                 Fix("give the engine a CUDA toolkit: keep images.vllm an image that ships one (the NGC image has "
                     "nvcc under /usr/local/cuda); on the native runtime install the CUDA toolkit matching torch's "
                     "CUDA and set CUDA_HOME to it (`CUDA_HOME: /usr/local/cuda` under vllm.environment, its bin/ on "
                     "PATH; `nvcc --version` must work). To start without FlashInfer's JIT sampler meanwhile, set "
                     "VLLM_USE_FLASHINFER_SAMPLER=0 under vllm.environment (vLLM's PyTorch sampler instead); then "
                     "`stackctl up`", key="vllm.environment", env="CUDA_HOME"))


_ERROR_ABOVE = re.compile(r"\w(?:Error|Exception)\b:|\bERROR\b|Traceback \(most recent call last\)")


def _engine_core_failed_unlogged(evidence: Evidence) -> Diagnosis:
    """vLLM's API process gave up on an engine core that reported failure without exiting (no exit
    code: `Failed core proc(s): {}`). Where the core's own error is in the log, that error is the cause
    (the fallback reads it); this reads only a log where it is not."""
    if any(_ERROR_ABOVE.search(line) for line in evidence.lines[: evidence.index]):
        raise ValueError("the engine core's own error is above: read that")
    return found(evidence, Cause.engine_core_failed_unlogged,
                 "the engine core failed to initialise and no error of its own is in the log (no process exited "
                 "with a code): the engine failed where it logs nothing, as vLLM releases before 0.24.0 did at start "
                 "on unified-memory GPUs (GB10 / DGX Spark)",
                 Fix("read the whole engine log first (`stackctl logs vllm`: an `EngineCore` error or a killed "
                     "process names the cause); if there is none, upgrade vLLM: set images.vllm to a newer vLLM "
                     "(0.24.0 or later starts on unified-memory GPUs where older releases failed this way); "
                     "then `stackctl up`", key="images.vllm"))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.multiproc_executor_across_nodes, r"SemLock\._rebuild\(|resource_tracker: '/mp-\w+': \[Errno 2\]",
              _multiproc_executor_across_nodes),
    signature(Cause.engine_core_failed_unlogged, r"Engine core initialization failed\..*Failed core proc\(s\): \{\}",
              _engine_core_failed_unlogged, CONSEQUENCE),
    signature(Cause.flashinfer_kernel_failed, r"Batch(?:Prefill|Decode)\w*WithPagedKVCache\w* failed with error",
              _flashinfer_kernel_failed),
    signature(Cause.attention_backend_forced_invalid, r"Selected backend \S+ is not valid for this configuration", _attention_backend_forced_invalid),
    signature(Cause.cuda_compiler_missing, r"Could not find nvcc|No such file or directory: '(?:\S*/)?nvcc'"
              r"|/bin/sh: \d+: \S*/nvcc: not found|CUDA_HOME environment variable is not set", _cuda_compiler_missing),
    signature(Cause.kernel_arch_guard, r"This kernel only supports sm_?\d+", _kernel_arch_guard),
    signature(Cause.cuda_toolkit_too_old_for_gpu, r"SM [\d.x]+ requires CUDA >= \d+\.\d+", _cuda_toolkit_too_old_for_gpu),
    signature(Cause.tokenizer_mode_unknown, r"No tokenizer registered for tokenizer_mode=", _tokenizer_mode_unknown),
    signature(Cause.spec_decode_token_budget, r"max_num_scheduled_tokens is set to -\d+", _spec_decode_token_budget),
    # A device-side assert is what the engine dies of; the index check names the table it ran past.
    signature(Cause.position_index_out_of_range, r"Assertion `index out of bounds: 0 <= \w+ < \d+` failed",
              _position_index_out_of_range, CONSEQUENCE + 5),
)
