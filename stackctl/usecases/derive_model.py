"""`init --model hf:ORG/NAME` (or a model directory): derive a model profile from its
config.json and return it with the stack.yaml settings that hold it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stackctl.config import StackConfig
from stackctl.envfile import read_env
from stackctl.errors import ConfigError
from stackctl.layout import StackLayout
from stackctl.models.derive import Derivation, derive_profile
from stackctl.models.source import HF_PREFIX, load_source
from stackctl.profiles import HARDWARE_PROFILES


@dataclass(frozen=True)
class DerivedModel:
    reference: str  # what was derived from (hf:ORG/NAME or a directory)
    hardware: str
    derivation: Derivation  # every choice with its reason, and what is left to choose
    settings: dict[str, Any]  # `model`, `models` (and `vllm.model_path`, `hf_cache`) for stack.yaml


def derive_model(layout: StackLayout, reference: str, hardware: str) -> DerivedModel:
    if hardware not in HARDWARE_PROFILES:
        raise ConfigError(f"unknown hardware profile '{hardware}'; allowed: {', '.join(HARDWARE_PROFILES)}")
    token = read_env(layout.env_file).get("HF_TOKEN") if layout.env_file.exists() else None
    # HF_HOME, where set, is the cache this host already uses: the stack mounts the same one.
    hf_home = os.environ.get("HF_HOME", "").strip()
    hf_cache = Path(hf_home or str(StackConfig.model_fields["hf_cache"].default)).expanduser()
    source = load_source(reference, hf_cache=hf_cache, token=token)
    derivation = derive_profile(source, HARDWARE_PROFILES[hardware])
    settings: dict[str, Any] = {
        "model": derivation.name,
        "models": {derivation.name: derivation.model.model_dump(mode="json", exclude_defaults=True)},
    }
    if hf_home:
        settings["hf_cache"] = hf_home
    if not reference.startswith(HF_PREFIX):
        settings["vllm"] = {"model_path": source.reference}
    return DerivedModel(source.reference, hardware, derivation, settings)
