
from stackctl.config import parse_stack_config
from stackctl.profiles import HARDWARE_PROFILES, MODEL_PROFILES
from tests.support.stack_builder import config_error


def test_defaults_are_valid():
    config = parse_stack_config({})
    assert config.hardware == "generic"
    assert config.ports.vllm == 8000 and config.ports.proxy == 4000
    assert config.served_name == MODEL_PROFILES[config.model].served_name


def test_unknown_top_level_key_names_key_and_allowed_keys():
    message = config_error({"modle": "qwen3-32b"})
    assert "unknown key 'modle'" in message
    assert "model" in message and "hardware" in message


def test_unknown_nested_key_names_full_path():
    message = config_error({"services": {"graphana": True}})
    assert "services.graphana" in message
    assert "grafana" in message and "monitoring" in message


def test_wrong_type_names_key_and_value():
    message = config_error({"ports": {"vllm": "eight thousand"}})
    assert "ports.vllm" in message and "eight thousand" in message


def test_unknown_profiles_list_allowed_values():
    message = config_error({"hardware": "rtx-5090"})
    assert "hardware" in message and "rtx-5090" in message
    for name in HARDWARE_PROFILES:
        assert name in message
    message = config_error({"model": "llama"})
    for name in MODEL_PROFILES:
        assert name in message


def test_runtime_literal_lists_choices():
    message = config_error({"runtime": "podman"})
    assert "runtime" in message and "compose" in message and "native" in message


def test_mxfp4_on_dgx_spark_is_refused_with_reason():
    message = config_error({"hardware": "dgx-spark", "model": "gpt-oss-120b"})
    assert "sm_121" in message and "MXFP4" in message


def test_mxfp4_on_rtx_pro_6000_is_fine():
    assert parse_stack_config({"hardware": "rtx-pro-6000", "model": "gpt-oss-120b"}).model == "gpt-oss-120b"


def test_port_clash_between_enabled_services():
    message = config_error({"ports": {"prometheus": 8000}})
    assert "ports.prometheus" in message and "ports.vllm" in message and "8000" in message


def test_port_of_disabled_service_may_overlap():
    config = parse_stack_config({"services": {"monitoring": False}, "ports": {"prometheus": 8000}})
    assert config.ports.prometheus == 8000


def test_tls_needs_hostname():
    assert "hostname" in config_error({"services": {"tls": True}})


def test_cpu_hardware_only_serves_the_demo_model():
    assert "tiny" in config_error({"hardware": "cpu", "model": "qwen3-32b"})
    assert parse_stack_config({"hardware": "cpu", "model": "tiny"}).model == "tiny"


def test_secret_flags_in_extra_args_are_refused():
    message = config_error({"vllm": {"extra_args": ["--api-key=abc"]}})
    assert "VLLM_API_KEY" in message and "abc" not in message.split("got")[0]


def test_vllm_environment_takes_variables_but_never_a_secret():
    config = parse_stack_config({"vllm": {"environment": {"TIKTOKEN_ENCODINGS_BASE": "/models/tiktoken"}}})
    assert config.vllm.environment == {"TIKTOKEN_ENCODINGS_BASE": "/models/tiktoken"}
    assert ".env" in config_error({"vllm": {"environment": {"HF_TOKEN": "hf_abc"}}})
    assert "not an environment variable name" in config_error({"vllm": {"environment": {"A-B": "1"}}})


def test_unified_memory_refuses_starving_utilization():
    message = config_error({"hardware": "dgx-spark", "vllm": {"gpu_memory_utilization": 0.9}})
    assert "0.7" in message and "unified" in message


def test_top_level_must_be_mapping():
    assert "mapping" in config_error(["hardware"])  # type: ignore[arg-type]


def test_images_name_known_services_and_real_references():
    config = parse_stack_config({"images": {"prometheus": "registry.local:5000/prom/prometheus:v3.5.0",
                                            "vllm": "nvcr.io/nvidia/vllm@sha256:" + "0" * 64}})
    assert config.images["prometheus"] == "registry.local:5000/prom/prometheus:v3.5.0"
    assert "unknown service 'promethus'" in config_error({"images": {"promethus": "prom/prometheus"}})
    message = config_error({"images": {"nginx": "nginx latest"}})
    assert "images" in message and "'nginx latest' for nginx is not an image reference" in message


def test_vllm_image_of_older_stack_files_moves_to_images():
    assert parse_stack_config({"vllm": {"image": "nvcr.io/nvidia/vllm:26.05-py3"}}).images == {
        "vllm": "nvcr.io/nvidia/vllm:26.05-py3"}
    message = config_error({"vllm": {"image": "a/b:1"}, "images": {"vllm": "c/d:2"}})
    assert "vllm.image and images.vllm disagree" in message


def test_build_args_and_project_are_checked():
    assert parse_stack_config({"build_args": {"BASE_IMAGE": "localhost/python:3.11"}}).build_args
    assert "unknown build argument 'BASE'" in config_error({"build_args": {"BASE": "x"}})
    assert parse_stack_config({"project": "llm_box-2"}).project == "llm_box-2"
    assert "project" in config_error({"project": "LLM Box"})


def test_every_enabled_service_has_its_ports_checked_for_clashes():
    # The GPU exporter runs without a GPU too, so its port clashes are caught there as well.
    message = config_error({"hardware": "cpu", "model": "tiny", "ports": {"gpu_exporter": 9100}})
    assert "port clash" in message and "gpu_exporter" in message and "node_exporter" in message
