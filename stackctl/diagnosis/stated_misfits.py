"""Causes an error line states where two things do not fit together, as the fallback's stated classes (stated_classes):
where a signature misses the line (a wording a little off its trigger, a log read with signatures that do not apply),
the fallback still names the cause's fix.

- a domain whose DNS answers the ACME server with SERVFAIL: DNSSEC at the registrar, or name servers that do not
  serve the zone (acme_dns_failures);
- a key the Compose that ran does not have: one a later Compose added, or a typo or misplaced key (compose_file_keys);
- an image with no build for this host's platform (image_platforms);
- a file_sd_configs field written outside file_sd_configs in prometheus.yml (prometheus_discovery_fields);
- a quantized checkpoint's parameter this vLLM's loader has no place for (quantized_checkpoint_keys);
- a Hugging Face repository without config.json: an adapter or fine-tuned files (model_repo_files).

Two readers of the same round are not among them: Prometheus's relative data path (prometheus_data_paths), since the
fallback names its permission remedy (a chown) beside any stated cause, which is not this fix; and a loopback scrape
refused (scrape_loopback), since which port is stackctl's needs the context the fallback's own reading of a refused
connection already has.
"""

from __future__ import annotations

from stackctl.diagnosis.acme_dns_failures import servfail, servfail_domain, servfail_fix
from stackctl.diagnosis.compose_file_keys import (
    GPU_DEVICES,
    additional_property,
    newer_key_fix,
    newer_release,
    unknown_key_fix,
)
from stackctl.diagnosis.image_platforms import missing_platform, missing_platform_fix
from stackctl.diagnosis.model_repo_files import repo_without_config, repo_without_config_fix
from stackctl.diagnosis.prometheus_discovery_fields import discovery_field, discovery_field_fix
from stackctl.diagnosis.quantized_checkpoint_keys import quantization_key, quantization_key_fix
from stackctl.diagnosis.signature import images_entry
from stackctl.diagnosis.stated_cause import StatedCause


def misfits_stated(line: str) -> list[StatedCause]:
    """The causes `line` states that one of these readers knows."""
    return [*_servfail(line), *_compose_key(line), *_platform(line), *_discovery_field(line),
            *_checkpoint_key(line), *_repo_without_config(line)]


def _servfail(line: str) -> list[StatedCause]:
    match = servfail(line)
    if match is None:
        return []
    return [StatedCause(f"DNS SERVFAIL: {servfail_domain(match)}", servfail_fix(match["type"].upper(), match["domain"]))]


def _compose_key(line: str) -> list[StatedCause]:
    refusal = additional_property(line)
    if refusal is None or refusal[1] == GPU_DEVICES:
        return []
    where, key = refusal
    release = newer_release(where, key)
    return [StatedCause(f"Compose key: {key}", newer_key_fix(key, release) if release else unknown_key_fix(where, key))]


def _platform(line: str) -> list[StatedCause]:
    platform = missing_platform(line)
    return [] if platform is None else [StatedCause(f"no image for {platform}",
                                                    missing_platform_fix(platform, images_entry(None)))]


def _discovery_field(line: str) -> list[StatedCause]:
    refused = discovery_field(line)
    return [] if refused is None else [StatedCause(f"prometheus.yml field: {refused[0]}", discovery_field_fix(*refused))]


def _checkpoint_key(line: str) -> list[StatedCause]:
    match = quantization_key(line)
    if match is None:
        return []
    return [StatedCause(f"checkpoint parameter: {match['param']}", quantization_key_fix(match["name"], match["param"]),
                        key="images.vllm")]


def _repo_without_config(line: str) -> list[StatedCause]:
    repo = repo_without_config(line)
    return [] if repo is None else [StatedCause(f"repository without config.json: {repo}", repo_without_config_fix(repo),
                                                key="vllm.model_path", flag="--enable-lora")]
