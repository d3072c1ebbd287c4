"""The engine install and what it can load: a Hugging Face cache it may not write, a compiled
extension built against another torch, a package out of step with the code importing it
(transformers, outlines), a model format or config newer than the engine, a
tokenizer it cannot load, a tensor parallel size larger than the GPUs it sees, and a torch.compile
step that fails while the engine builds the model's graph."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.log_lines import strip_prefixes
from stackctl.diagnosis.signature import CONSEQUENCE, ROOT_CAUSE, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_EXTRA_ARGS = "vllm.extra_args"
_DENIED = re.compile(r"Permission denied: '(?P<path>[^']+)'")


def _hf_cache_permission(evidence: Evidence) -> Diagnosis:
    path = evidence.read(_DENIED).get("path", "")
    # A user with no home directory ("/") makes the cache ~/.cache resolve to /.cache.
    homeless = path.rstrip("/") == "/.cache"
    why = ("the process runs as a user without a home directory, so ~/.cache is /.cache" if homeless else
           "the directory belongs to another user (often root, from an earlier run)")
    return found(evidence, Cause.hf_cache_permission,
                 f"the engine may not write the Hugging Face cache {path or ''}: {why}".rstrip(),
                 Fix("stackctl mounts hf_cache (stack.yaml) into vLLM and points HF_HOME at it: that directory must be "
                     "writable by the user vLLM runs as (`sudo chown -R $(id -u):$(id -g) DIR`, or the container's "
                     "uid); a process started by hand needs HF_HOME set to a writable directory (under "
                     "vllm.environment in stack.yaml, HF_HOME: /DIR)", key="hf_cache", env="HF_HOME"),
                 **({"path": path} if path else {}))


def _engine_abi_mismatch(evidence: Evidence) -> Diagnosis:
    library = evidence.read(re.compile(r"(?P<library>\S*_C\S*\.so)")).get("library", "vllm's _C extension")
    return found(evidence, Cause.engine_abi_mismatch,
                 f"{library} was built against another torch than the one installed (undefined symbol): the engine's "
                 "packages do not match (a torch ABI mismatch)",
                 Fix("install vLLM with the torch it was built for, in a clean environment: `stackctl install-engine` "
                     "rebuilds the native engine's venv (a pip install of another torch version over vLLM breaks it); "
                     "under Compose use an images.vllm that ships both, e.g. stackctl's default, or rebuild the image "
                     "so vLLM is compiled against the matching torch (install torch first, build vLLM last)",
                     key="images.vllm"),
                 library=library)


_IMPORT = re.compile(r"cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'")
# An exception class transformers defines (printed with its module path), and the tokenizer
# attribute transformers 5 removed that vLLM releases before its v5 support still read.
_TRANSFORMERS_RAISED = re.compile(r"(?:^|\s)transformers\.[\w.]+\.\w*(?:Error|Exception):"
                                  r"|has no attribute all_special_tokens_extended")


# A call from vLLM's code into another package that the installed package's signature refuses (a
# keyword it no longer takes, a positional-only argument): the package the call names is out of step.
_SIGNATURE_REFUSED = (r"TypeError: [\w.]+\(\) (?:got (?:an unexpected keyword argument|some positional-only arguments "
                      r"passed as keyword arguments)|missing \d+ required positional argument)")
_CALLED_LIBRARY = re.compile(r"(?:\w+ = )?(?:await )?(?P<library>(?!self\b|vllm\b)[a-z_]\w*)\.[A-Z]?\w*[.(]")


def _engine_dependency_mismatch(evidence: Evidence) -> Diagnosis:
    """A name the code expects is missing from an installed package: that package is newer or older
    than the one vLLM (or the model's code) was written against, usually after a pip install over
    the engine's own pins."""
    said = evidence.read(_IMPORT)
    # transformers' own exceptions, and the tokenizer attribute transformers 5 removed, name it.
    transformers = not said and bool(_TRANSFORMERS_RAISED.search(evidence.text))
    called = _called_library(evidence)
    package = said.get("module", "").split(".")[0] or ("transformers" if transformers else called or "a dependency")
    name = said.get("name", "")
    return found(evidence, Cause.engine_dependency_mismatch,
                 (f"the installed {package} has no {name}: its version is out of step with the vLLM (or the model's "
                  "code) importing it") if name else
                 (f"{package} failed inside vLLM's start in a way this vLLM does not expect: the installed {package} "
                  "is newer (or older) than the one this vLLM release was built against"),
                 Fix(f"run vLLM with the {package} version it was released with: under Compose set images.vllm to a "
                     f"release image (it ships a tested set; a newer vLLM release for a newer model or {package}); "
                     f"natively `stackctl install-engine` rebuilds the venv with vLLM's own pins (or downgrade {package} to "
                     f"the version vLLM requires). Never `pip install "
                     f"{package}` over the engine; `pip check` lists what no longer matches",
                     key="images.vllm"), **({"package": package} if said or transformers else {}))


def _per_layer_attribute(evidence: Evidence) -> Diagnosis:
    """transformers 5.15 refuses a global read of an attribute that varies per layer (Gemma 4's
    head_dim): a vLLM released before it reads the global one, so the model does not load."""
    attribute = evidence.read(re.compile(r"'(?P<attribute>\w+)' is a per-layer")).get("attribute", "head_dim")
    return found(evidence, Cause.engine_dependency_mismatch,
                 f"transformers (5.15 or later) refused vLLM's read of the model's global {attribute}, which varies "
                 "per layer in this model's config: the installed transformers is newer than this vLLM handles",
                 Fix("upgrade vLLM: set images.vllm to vLLM 0.28.0 or later, which reads per-layer attributes; or pin "
                     "transformers below 5.15 (e.g. transformers==5.14.1) in the engine: natively `stackctl "
                     "install-engine` rebuilds the venv with vLLM's own pins, and `pip check` lists what no longer "
                     "matches", key="images.vllm"), package="transformers", attribute=attribute)


def _traceback_before(evidence: Evidence) -> list[str]:
    return [line.strip() for line in evidence.lines[max(0, evidence.index - 8):evidence.index]]


def _called_library(evidence: Evidence) -> str:
    """The package whose function the last statement of the traceback called (`llguidance.X(...)`)."""
    for line in reversed(_traceback_before(evidence)):
        match = _CALLED_LIBRARY.match(line)
        if match:
            return match["library"]
    return ""


def _engine_dependency_mismatch_in_vllm(evidence: Evidence) -> Diagnosis:
    if not any(re.search(r"[/\\]vllm[/\\]", line) for line in _traceback_before(evidence)):
        # No vLLM frame made the call (a user's script, a client): not the engine's to fix.
        raise ValueError("no vLLM frame")
    return _engine_dependency_mismatch(evidence)


def _cuda_graph_capture_failed(evidence: Evidence) -> Diagnosis:
    """A kernel that this vLLM release runs while it captures CUDA graphs is not capturable (a
    release regression, or a feature such as speculative decoding that its capture path gets wrong):
    the release before it, or eager mode, starts."""
    return found(evidence, Cause.cuda_graph_capture_failed,
                 "vLLM failed while capturing CUDA graphs: a kernel it runs under capture does an operation CUDA "
                 "forbids there (cudaErrorStreamCaptureUnsupported), a bug of this vLLM release, not of the GPU",
                 Fix("downgrade vLLM: pin the vLLM version by setting images.vllm to the previous vLLM release that "
                     "started this model (a nightly or a new release is the usual culprit; report it upstream), or "
                     f"add --enforce-eager to {_EXTRA_ARGS} in stack.yaml to skip CUDA graphs (slower decoding) until "
                     "a fixed release; a feature named in the traceback (speculative decoding, a new attention "
                     "backend) can be turned off instead", key="images.vllm"))


def _engine_too_old_for_model(evidence: Evidence) -> Diagnosis:
    gguf = ".gguf" in evidence.text
    what = ("a GGUF file, which this vLLM cannot load (it reads it as a config.json)" if gguf else
            "a config (rope_scaling of Llama 3.1 and newer) that this engine's transformers does not know")
    return found(evidence, Cause.engine_too_old_for_model,
                 f"the model is {what}: the engine is older than the model's format",
                 Fix("use a newer engine: set images.vllm in stack.yaml to a newer release (or `stackctl install-engine` "
                     "for the native runtime)" + ("; or serve the model's original safetensors weights, or an "
                                                  "AWQ/GPTQ/FP8 quantization, instead of the GGUF file" if gguf else ""),
                     key="images.vllm"))


def _tokenizer_load_failed(evidence: Evidence) -> Diagnosis:
    sentencepiece = "sentencepiece" in evidence.text.lower()
    return found(evidence, Cause.tokenizer_load_failed,
                 "the engine could not load the model's tokenizer" + (" (its SentencePiece model file is unreadable)"
                                                                      if sentencepiece else ""),
                 Fix("give vLLM a tokenizer it can load: add --tokenizer with a directory or Hub id that has one "
                     "(the base model's, e.g. the original repository of a merged or fine-tuned checkpoint) to "
                     f"{_EXTRA_ARGS} in stack.yaml; check that the model directory's tokenizer files (tokenizer.json, "
                     "tokenizer.model) are complete", key=_EXTRA_ARGS, flag="--tokenizer"))


_WORLD = re.compile(r"world_size \((?P<asked>\d+)\) is less than than max local gpu count \((?P<gpus>\d+)\)")


def _tp_exceeds_gpus(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_WORLD)
    asked, gpus = values.get("asked"), values.get("gpus")
    sizes = f" ({asked} asked, {gpus} visible)" if values else ""
    return found(evidence, Cause.tp_exceeds_gpus,
                 f"the tensor parallel size is larger than the GPUs vLLM sees{sizes}",
                 Fix(f"set --tensor-parallel-size in {_EXTRA_ARGS} to at most the GPUs vLLM sees{f' ({gpus})' if gpus else ''}"
                     " (`nvidia-smi -L`), and check CUDA_VISIBLE_DEVICES (under vllm.environment, or in the shell): "
                     "it must list that many GPUs; more GPUs than one host has need --pipeline-parallel-size across "
                     "hosts (hosts: in stack.yaml)", key=_EXTRA_ARGS, flag="--tensor-parallel-size", value=gpus),
                 **({"tensor_parallel_size": int(asked), "gpus": int(gpus)} if values else {}))


# An older record's prefix, which strip_prefixes leaves: "ERROR 04-23 00:04:19 multiproc_worker_utils.py:240]".
_OLD_RECORD = re.compile(r"^.*?\.py:\d+\]\s?")
_COMPILE_ERROR = re.compile(r"(?:InductorError|BackendCompilerFailed): (?:backend='\w+' raised:\s*)?(?P<error>\S.*)")


def _torch_compile_failed(evidence: Evidence) -> Diagnosis:
    """vLLM compiles the model with torch.compile (PyTorch's inductor, Triton kernels built with the
    host's C compiler) before it captures CUDA graphs; a compiler bug, a torch/Triton pairing or a
    missing compiler stops the start there. Eager mode skips that step."""
    # The error is on the trigger's line, or (after "raised:") on the next one.
    following = [_OLD_RECORD.sub("", strip_prefixes(line)).strip()
                 for line in evidence.lines[evidence.index:evidence.index + 2]]
    match = _COMPILE_ERROR.search(" ".join(following))
    error = match["error"].strip() if match else ""
    return found(evidence, Cause.torch_compile_failed,
                 "vLLM's torch.compile step (PyTorch inductor) failed while building the model's graph"
                 + (f": {error[:160]}" if error else ""),
                 Fix(f"start without compiling: add --enforce-eager to {_EXTRA_ARGS} in stack.yaml (no torch.compile "
                     "and no CUDA graphs: slower decoding, the same answers); then try an images.vllm whose torch "
                     "and Triton match (a native engine: `stackctl install-engine` again) and clear "
                     "~/.cache/vllm/torch_compile_cache; a gcc or Python.h error needs a C compiler and the Python "
                     "headers where vLLM runs", key=_EXTRA_ARGS, flag="--enforce-eager"),
                 **({"error": error[:160]} if error else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.hf_cache_permission,
              r"PermissionError: \[Errno 13\] Permission denied: '[^']*(?:\.cache|huggingface)", _hf_cache_permission),
    # The mangled names of torch's own namespaces (c10, at, torch) undefined: built against another torch.
    signature(Cause.engine_abi_mismatch, r"_C\S*\.so: undefined symbol|undefined symbol: _ZN(?:3c10|2at|5torch)\d", _engine_abi_mismatch),
    signature(Cause.engine_dependency_mismatch, r"ImportError: cannot import name '\w+' from '(?!vllm\b)[\w.]+'",
              _engine_dependency_mismatch),
    signature(Cause.engine_dependency_mismatch, _TRANSFORMERS_RAISED.pattern, _engine_dependency_mismatch),
    # Weighed above transformers' own exception line, which the same error also matches.
    signature(Cause.engine_dependency_mismatch, r"AmbiguousGlobalPerLayerAttributeError", _per_layer_attribute,
              ROOT_CAUSE + 1),
    # Only where vLLM's own frame made the call: a TypeError in a user's script is no engine mismatch.
    signature(Cause.engine_dependency_mismatch, _SIGNATURE_REFUSED, _engine_dependency_mismatch_in_vllm, CONSEQUENCE),
    # Graph capture refused by a kernel this release runs under capture; an out-of-memory during capture is memory's.
    signature(Cause.cuda_graph_capture_failed,
              r"cudaErrorStreamCapture(?:Unsupported|Invalidated)|operation not permitted when stream is capturing"
              r"|CUDA_ERROR_STREAM_CAPTURE_(?:UNSUPPORTED|INVALIDATED)", _cuda_graph_capture_failed),
    signature(Cause.engine_too_old_for_model,
              r"config file at '[^']+\.gguf' is not a valid JSON file|`?rope_scaling`? must be a dictionary with (?:with )?"
              r"two fields", _engine_too_old_for_model),
    signature(Cause.tokenizer_load_failed,
              r"Failed to load the tokenizer|sentencepiece_processor\.cc\(\d+\) \[model_proto->ParseFromArray",
              _tokenizer_load_failed),
    signature(Cause.tp_exceeds_gpus,
              r"set tensor_parallel_size to less than max local gpu count|world_size \(\d+\) is less than than max "
              r"local gpu count", _tp_exceeds_gpus),
    # A consequence weight: an out-of-memory error or a missing kernel image during compilation names
    # its own cause.
    signature(Cause.torch_compile_failed, r"torch\._inductor\.exc\.InductorError|BackendCompilerFailed: backend=",
              _torch_compile_failed, CONSEQUENCE),
)
