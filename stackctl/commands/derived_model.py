"""`stackctl init --model hf:ORG/NAME` (or a model directory): derive the profile, print every
choice with its reason, and hand init the stack.yaml settings that hold it."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console

from stackctl.config import StackConfig
from stackctl.envfile import read_env
from stackctl.layout import StackLayout
from stackctl.models.derive import derive_profile
from stackctl.models.source import HF_PREFIX, is_model_reference, load_source
from stackctl.profiles import HARDWARE_PROFILES

__all__ = ["derived_model_choices", "is_model_reference"]


def derived_model_choices(layout: StackLayout, reference: str, hardware: str, console: Console) -> dict:
    """The `model`, `models` (and for a directory `vllm.model_path`) settings for stack.yaml."""
    from stackctl.errors import ConfigError

    if hardware not in HARDWARE_PROFILES:
        raise ConfigError(f"unknown hardware profile '{hardware}'; allowed: {', '.join(HARDWARE_PROFILES)}")
    token = read_env(layout.env_file).get("HF_TOKEN") if layout.env_file.exists() else None
    # HF_HOME, where set, is the cache this host already uses: the stack mounts the same one.
    hf_home = os.environ.get("HF_HOME", "").strip()
    hf_cache = Path(hf_home or str(StackConfig.model_fields["hf_cache"].default)).expanduser()
    source = load_source(reference, hf_cache=hf_cache, token=token)
    derivation = derive_profile(source, HARDWARE_PROFILES[hardware])
    console.print(f"model profile '{derivation.name}' derived from {source.reference}'s config.json "
                  f"(hardware: {hardware}):")
    for choice in derivation.choices:
        console.print(f"  {choice.setting}: {choice.value}  ({choice.reason})", markup=False, soft_wrap=True)
    for line in derivation.to_choose:
        console.print(f"[yellow]  {line}[/yellow]", soft_wrap=True)
    settings: dict = {
        "model": derivation.name,
        "models": {derivation.name: derivation.model.model_dump(mode="json", exclude_defaults=True)},
    }
    if hf_home:
        settings["hf_cache"] = hf_home
    if not reference.startswith(HF_PREFIX):
        settings["vllm"] = {"model_path": source.reference}
    return settings
