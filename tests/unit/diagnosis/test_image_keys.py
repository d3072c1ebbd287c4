"""Which `images:` key a fix names when the failure is an image's (its architecture, its pull): the
image the log names, matched against stack.yaml's images or by its name, else the service whose log
it is; never a placeholder (real lines from the reports under tests/data)."""

from __future__ import annotations

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, DiagnosisContext, diagnose_log
from stackctl.diagnosis.diagnose import context_for
from stackctl.diagnosis.stack_keys import image_service

# Qwen3.6-27B-AEON-DFlash#9: Docker's own log, the image named by the command pasted with it.
_ARM64_ONLY = ["The requested image's platform (linux/arm64) does not match the detected host platform (linux/amd64/v3)",
               "docker inspect ghcr.io/aeon-7/vllm-aeon-ultimate-dflash:qwen36-v4 --format '{{.Architecture}} {{.Os}}'",
               "arm64 linux"]
# chatgpt-telegram-bot#196: no image named.
_EXEC_FORMAT = ["exec /usr/local/bin/python: exec format error"]


def _diagnosed(lines, context):
    diagnosis = diagnose_log(lines, context)
    assert diagnosis is not None
    assert "SERVICE" not in diagnosis.fix.text
    return diagnosis


def test_dockers_log_naming_a_vllm_build_names_images_vllm_and_the_hosts_platform():
    diagnosis = _diagnosed(_ARM64_ONLY, DiagnosisContext(service="docker"))
    assert diagnosis.cause is Cause.wrong_architecture and diagnosis.fix.key == "images.vllm"
    assert "set images.vllm in stack.yaml" in diagnosis.fix.text and "linux/amd64/v3" in diagnosis.fix.text


def test_an_image_stack_yaml_sets_is_matched_by_its_repository_whatever_the_tag():
    config = parse_stack_config({"images": {"gpu-exporter": "ghcr.io/aeon-7/vllm-aeon-ultimate-dflash:other"}})
    diagnosis = _diagnosed(_ARM64_ONLY, context_for("docker", config))
    assert diagnosis.fix.key == "images.gpu-exporter"


def test_without_an_image_named_the_services_own_log_names_its_key():
    for service in ("vllm", "node-exporter", "grafana"):
        assert _diagnosed(_EXEC_FORMAT, DiagnosisContext(service=service)).fix.key == f"images.{service}"


def test_without_an_image_named_dockers_log_takes_the_one_image_stack_yaml_sets_or_says_how_to_find_it():
    config = parse_stack_config({"images": {"vllm": "vllm/vllm-openai:v0.11.0"}})
    assert _diagnosed(_EXEC_FORMAT, context_for("docker", config)).fix.key == "images.vllm"
    unknown = _diagnosed(_EXEC_FORMAT, DiagnosisContext(service="docker"))
    assert unknown.fix.key is None and "`stackctl status` names the service" in unknown.fix.text


def test_image_names_map_to_their_service_the_more_specific_word_first():
    assert image_service("prom/node-exporter:v1.9.1", {}) == "node-exporter"
    assert image_service("docker.io/prom/prometheus:v3.5.0", {}) == "prometheus"
    assert image_service("nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3", {}) == "gpu-exporter"
    assert image_service("utkuozdemir/nvidia_gpu_exporter:1.3.2", {}) == "gpu-exporter"
    assert image_service("nvcr.io/nvidia/vllm:25.09-py3", {}) == "vllm"
    assert image_service("freeswitch-debian", {}) is None
    assert image_service("library/nginx:1.29-alpine", {"nginx": "nginx:1.27"}) == "nginx"


_DENIED = ("Error response from daemon: pull access denied for {image}, repository does not exist or may require "
           "'docker login': denied: requested access to the resource is denied")


def test_a_pull_refused_by_a_named_registry_says_which_registry_to_log_in_to():
    # dynamo#515 (nvcr.io) and llmstack#295 (Docker Hub).
    nvcr = _diagnosed([_DENIED.format(image="nvcr.io/nvidian/nim-llm-dev/yatai-bentos-jsm3")],
                      DiagnosisContext(service="docker"))
    assert nvcr.cause is Cause.image_pull_denied and "`docker login nvcr.io`" in nvcr.fix.text
    hub = _diagnosed([_DENIED.format(image="llmstack-app")], DiagnosisContext(service="vllm"))
    assert hub.fix.key == "images.vllm" and "`docker login` first" in hub.fix.text
