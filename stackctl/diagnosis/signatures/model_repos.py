"""A Hugging Face repository that exists but holds no config.json: an adapter or fine-tuned files without the base
model's."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.model_repo_files import (
    NO_CONFIG,
    repo_without_config,
    repo_without_config_fix,
)
from stackctl.diagnosis.signature import ROOT_CAUSE, Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _repo_without_config(evidence: Evidence) -> Diagnosis:
    repo = repo_without_config(evidence.line)
    if repo is None:
        raise ValueError("a local path, not a Hub repository: model-not-found reads it")
    return found(evidence, Cause.model_repo_without_config,
                 f"the Hugging Face repository {repo} has no config.json: it is no whole model (an adapter, or "
                 "fine-tuned files without the base model's), so vLLM cannot load it",
                 Fix(repo_without_config_fix(repo), key="vllm.model_path", flag="--enable-lora"), model=repo)


SIGNATURES: tuple[Signature, ...] = (
    # Heavier than model-not-found (model_source), which reads the same line as a typo.
    signature(Cause.model_repo_without_config, unnamed(NO_CONFIG), _repo_without_config, ROOT_CAUSE + 1),
)
