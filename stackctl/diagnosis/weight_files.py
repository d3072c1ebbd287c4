"""A model's safetensors file that is cut short or not one at all: read by the model-weights-corrupt signature and
by the fallback alike.

safetensors reads an 8-byte header length and then the JSON header: "MetadataIncompleteBuffer" is a file shorter
than its header says (an interrupted download, a full disk, a broken upload: Qwen3-VL#264, vllm#15445,
gpustack#815, airllm#137), "HeaderTooLarge" a file that is no safetensors at all (a Git LFS pointer file cloned
without git-lfs, an HTML error page saved in its place), "incomplete metadata, file not fully covered" a file
longer or shorter than its tensors.
"""

from __future__ import annotations

import re

CORRUPT_WEIGHTS = re.compile(r"Error while deserializing header: (?P<error>MetadataIncompleteBuffer|HeaderTooLarge"
                             r"|InvalidHeaderDeserialization)|incomplete metadata, file not fully covered")


def corrupt_weights_reason(text: str) -> str | None:
    match = CORRUPT_WEIGHTS.search(text)
    if match is None:
        return None
    return match["error"] or "incomplete metadata"


def corrupt_weights_fix(reason: str) -> str:
    kind = ("not a safetensors file at all: most often a Git LFS pointer (a `git clone` without git-lfs) or an error "
            "page saved in its place" if reason in ("HeaderTooLarge", "InvalidHeaderDeserialization") else
            "cut short or corrupted: an interrupted or incomplete download, a disk that filled while writing, or a "
            "broken upload of the model")
    return (f"a safetensors file of the model is {kind} ({reason}), so vLLM cannot read its header: download the "
            "model again (`huggingface-cli download REPO --force-download` into hf_cache, or remove the model's "
            "directory under hf_cache first; `ls -l` of the *.safetensors files against the sizes the hub lists "
            "finds the short one), or for a local checkpoint (vllm.model_path) copy it again whole (`git lfs pull` "
            "in a cloned repository); where a fresh download fails the same way, the file on the hub is broken: "
            "tell the model's publisher, or use an earlier revision")
