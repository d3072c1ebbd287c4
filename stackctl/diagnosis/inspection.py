"""vLLM's "Model architectures ['X'] failed to be inspected" (and "Error in inspecting model
architecture 'X'"), read by its cause.

vLLM imports a model's code in a subprocess to inspect it; the line says only that the subprocess
failed. Its own traceback, where the log holds it above the line, says why:

- it could not import a name from transformers (or a module of it): transformers and vLLM are of
  releases that do not match, usually transformers newer than the vLLM release (a newer vLLM);
- it could not read the checkpoint (config.json that is not JSON, a safetensors header it cannot
  deserialize): a stale or broken download (download the model again);
- anything else: that error is the one to fix.

With the bare line alone, both usual causes are named, and where to read the real one.
Not "Model architectures [...] are not supported for now": vLLM does not know that architecture at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stackctl.diagnosis.stated_cause import StatedCause

_FAILED = re.compile(r"Model architectures \[(?P<archs>[^\]]*)\] failed to be inspected"
                     r"|Error in inspecting model architecture '(?P<arch>[^']+)'")
# Python's "cannot import name 'X' from 'pkg.mod'" (stated_causes reads it too, where no inspection failed).
CANNOT_IMPORT = re.compile(r"cannot import name [`'\"](?P<name>[\w.]+)[`'\"] from [`'\"](?P<module>[\w.]+)[`'\"]")
_NO_MODULE = re.compile(r"No module named [`'\"](?P<module>[\w.]+)[`'\"]")
# The checkpoint's files as the subprocess reads them: config.json that is not JSON, a safetensors
# file cut short or not one at all, a config naming a model type this transformers lacks.
_CHECKPOINT = re.compile(r"JSONDecodeError|Error while deserializing header|SafetensorError|HeaderTooLarge"
                         r"|MetadataIncompleteBuffer|incomplete metadata|Unrecognized model in"
                         r"|(?:config|tokenizer_config|preprocessor_config)\.json")
# The last exception of the subprocess: "SomeError: message", not the registry's own wrappers.
_EXCEPTION = re.compile(r"\b(?P<type>(?:[A-Z]\w*)?(?:Error|Exception))(?:\[\w+\])?: (?P<message>\S.*)")
_WRAPPERS = ("CalledProcessError", "ValueError", "RuntimeError", "ValidationError")

_KEY = "images.vllm"


def inspection_failed(line: str, earlier: Sequence[str]) -> StatedCause | None:
    """The cause of vLLM's failed architecture inspection on `line`, read from the subprocess's
    traceback in `earlier` (the log above and around it); None when `line` is not that error."""
    match = _FAILED.search(line)
    if match is None:
        return None
    named = match["arch"] or ", ".join(part.strip(" '\"") for part in match["archs"].split(",")) or "the model's"
    name = f"architecture inspection: {named}"
    head = f"vLLM could not import the code of {named} in its inspection subprocess"
    for text in reversed(earlier):
        imported = CANNOT_IMPORT.search(text) or _NO_MODULE.search(text)
        if imported:
            return StatedCause(name, _mismatch(head, imported), _KEY)
    for text in reversed(earlier):
        if _CHECKPOINT.search(text) and _EXCEPTION.search(text):
            return StatedCause(name, _checkpoint(head, _error(text)), "vllm.model_path")
    other = next((error for text in reversed(earlier) if (error := _error(text))), None)
    if other:
        return StatedCause(name, (
            f"{head}: it failed with {other}: fix that error (the subprocess's traceback above names where it "
            "was raised); where it names no package, the two usual causes are transformers newer than this vLLM "
            "(a newer images.vllm) and a stale checkpoint (download the model again)"), _KEY)
    return StatedCause(name, (
        f"{head}, and the log does not show why: the subprocess's own traceback, printed above this error "
        "(`stackctl logs vllm`), names the cause; the two usual ones: transformers newer than this vLLM release "
        "(an ImportError or 'cannot import name' from transformers there): upgrade vLLM: set images.vllm to a newer "
        "vLLM release that ships a matching transformers (natively `stackctl install-engine` with it; never "
        "`pip install transformers` over the engine); or a stale or broken checkpoint (a config.json, JSON or "
        "safetensors error there): download the model again (`huggingface-cli download REPO --force-download` "
        "into hf_cache) or point vllm.model_path at the latest checkpoint"), _KEY)


def _mismatch(head: str, imported: re.Match[str]) -> str:
    module = imported["module"]
    package = module.split(".")[0]
    missing = (f"cannot import name {imported['name']} from {module}" if "name" in imported.groupdict()
               else f"no module named {module}")
    if package == "vllm":
        return (f"{head} ({missing}): the code importing it (a vLLM plugin or a model's own code) was written for "
                "another vLLM release: install the plugin's release built for this vLLM, or set images.vllm to "
                "the vLLM release the plugin names")
    return (f"{head} ({missing}): the installed {package} and this vLLM are of releases that do not match, "
            f"usually {package} newer than the vLLM release: upgrade vLLM: set images.vllm to a newer vLLM release, "
            f"which ships the {package} it was built with (natively `stackctl install-engine` with it, or pin "
            f"{package} to the version this vLLM requires); never `pip install {package}` over the engine")


def _checkpoint(head: str, error: str | None) -> str:
    return (f"{head}: it could not read the model's checkpoint ({error or 'its files'}): the download is stale or "
            "broken (interrupted, or files from another revision): download the model again "
            "(`huggingface-cli download REPO --force-download` into hf_cache, or remove its directory there "
            "first), or point vllm.model_path at the latest checkpoint")


def _error(text: str) -> str | None:
    match = _EXCEPTION.search(text)
    if match is None or match["type"] in _WRAPPERS:
        return None
    message = match["message"].strip().rstrip(".")
    return f"{match['type']}: {message[:160]}"
