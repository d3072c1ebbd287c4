"""Hardware and model profiles: the facts that turn a user's two choices into correct vLLM flags."""

from stackctl.profiles.hardware import HARDWARE_PROFILES, HardwareProfile
from stackctl.profiles.model_profiles import MODEL_PROFILES, ModelProfile

__all__ = ["HARDWARE_PROFILES", "MODEL_PROFILES", "HardwareProfile", "ModelProfile"]
