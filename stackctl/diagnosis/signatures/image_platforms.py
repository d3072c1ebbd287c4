"""An image with no build for this host's platform: Docker finds no matching manifest in the image's list."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.image_platforms import (
    NO_MATCHING_MANIFEST,
    missing_platform,
    missing_platform_fix,
)
from stackctl.diagnosis.signature import (
    Signature,
    found,
    images_entry,
    images_key,
    signature,
    unnamed,
)
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _no_matching_manifest(evidence: Evidence) -> Diagnosis:
    platform = missing_platform(evidence.text)
    if platform is None:
        raise ValueError("no platform named on this line")
    key = images_key(evidence)
    return found(evidence, Cause.wrong_architecture,
                 f"Docker cannot pull the image: it has no build for {platform}, this host's platform",
                 Fix(missing_platform_fix(platform, images_entry(key)), key=key), platform=platform)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.wrong_architecture, unnamed(NO_MATCHING_MANIFEST), _no_matching_manifest),
)
