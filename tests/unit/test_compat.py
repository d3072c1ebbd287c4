"""The engine/model compatibility table (stackctl/profiles/compat.yaml) and the choices made from it."""

import pytest
from packaging.version import Version

from stackctl.config import parse_stack_config
from stackctl.profiles import HARDWARE_PROFILES, MODEL_PROFILES, compat
from stackctl.profiles.engines import DEFAULT_VLLM_IMAGE, default_vllm_image

QWEN36 = "Qwen3_5ForConditionalGeneration"


def test_every_row_cites_its_source_and_tags_move_forward():
    table = compat.table()
    assert table.ngc_images and table.architectures and table.pypi_vllm
    assert all(row.source.startswith("https://") for row in (*table.ngc_images, *table.architectures))
    by_tag = sorted(table.ngc_images, key=lambda row: Version(row.tag))
    # NVIDIA's images only move forward: a newer tag never carries an older vLLM or CUDA.
    assert [Version(row.vllm) for row in by_tag] == sorted(Version(row.vllm) for row in by_tag)
    assert [Version(row.cuda) for row in by_tag] == sorted(Version(row.cuda) for row in by_tag)


def test_every_gpu_model_profile_names_an_architecture_the_table_knows():
    for profile in MODEL_PROFILES.values():
        assert compat.architecture_floor(profile.architecture) is not None, profile.name


def test_default_images_are_the_newest_tag_that_serves_each_profile():
    newest = compat.newest_image()
    assert DEFAULT_VLLM_IMAGE == f"nvcr.io/nvidia/vllm:{newest.tag}-py3"
    for hardware in ("rtx-pro-6000", "dgx-spark", "generic"):
        for model in MODEL_PROFILES.values():
            if model.gpu_only and not HARDWARE_PROFILES[hardware].unsupported_reason(model.quantization):
                image = default_vllm_image(HARDWARE_PROFILES[hardware], model)
                facts = compat.image_facts(image)
                assert facts is not None and compat.engine_serves(facts.exact_vllm, model.architecture).ok, (hardware, model.name)
    # Qwen3.5/3.6 arrived in vLLM 0.17.0: the old default (25.11, vLLM <= 0.11.1) cannot serve it.
    assert default_vllm_image(HARDWARE_PROFILES["dgx-spark"], MODEL_PROFILES["qwen3.6-35b-a3b-fp8"]) != "nvcr.io/nvidia/vllm:25.11-py3"


def test_a_tag_between_listed_releases_is_bounded_by_its_neighbours():
    facts = compat.image_facts("nvcr.io/nvidia/vllm:25.11-py3")
    assert (facts.vllm_at_least, facts.vllm_at_most, facts.cuda) == ("0.10.2", "0.11.1", "13.0")
    verdict = compat.engine_serves(None, QWEN36, at_least=facts.vllm_at_least, at_most=facts.vllm_at_most)
    assert verdict.ok is False and "0.17.0" in verdict.reason
    post = compat.image_facts("nvcr.io/nvidia/vllm:26.05.post1-py3")
    assert compat.engine_serves(None, QWEN36, at_least=post.vllm_at_least, at_most=post.vllm_at_most).ok is True
    assert compat.image_facts("vllm/vllm-openai:v0.32.0") is None


@pytest.mark.parametrize(("cuda", "driver"), [("12.6", 560), ("12.8", 570), ("13.0.2", 580), ("13.4.3", 580)])
def test_minimum_driver_follows_cuda_minor_version_compatibility(cuda, driver):
    assert compat.min_driver(cuda) == driver


def test_blackwell_kernels_need_their_cuda():
    assert compat.cuda_serves_gpu("12.8", "sm_120") and not compat.cuda_serves_gpu("12.6", "sm_120")
    assert not compat.cuda_serves_gpu("12.8", "sm_121") and compat.cuda_serves_gpu("13.0", "sm_121")


def test_no_listed_tag_serves_qwen36_on_a_570_driver():
    assert compat.best_image(QWEN36, "sm_120", 570) is None
    assert compat.best_image("Qwen3ForCausalLM", "sm_120", 570) is None  # every listed tag is CUDA 13
    assert compat.best_image(QWEN36, "sm_121", 580).tag == compat.newest_image().tag


def test_native_engine_pins_the_newest_pypi_vllm_that_serves_the_model():
    chosen = compat.best_pypi_vllm(QWEN36, 580)
    assert chosen.version == max((row.version for row in compat.table().pypi_vllm), key=Version)
    assert compat.best_pypi_vllm(QWEN36, 570) is None


def test_the_torch_2_11_releases_are_listed_but_the_default_stays_the_newest():
    rows = {row.version: row for row in compat.table().pypi_vllm}
    torch_2_11 = sorted((version for version, row in rows.items() if row.torch == "2.11.0"), key=Version)
    assert torch_2_11[0] == "0.20.0" and torch_2_11[-1] == "0.26.0" and len(torch_2_11) == 11
    assert {rows[version].cuda for version in torch_2_11} == {"13.0"}
    assert compat.best_pypi_vllm(QWEN36, 580).version == compat.best_pypi_vllm(None).version == "0.32.0"


def test_versions_with_local_or_dev_parts_compare_by_release():
    assert compat.engine_serves("0.17.1+cu130", QWEN36).ok
    assert compat.engine_serves("0.16.0", QWEN36).ok is False
    assert compat.engine_serves("0.32.0", "SomethingNewForCausalLM").ok is None


def test_rendered_gpu_stack_uses_the_chosen_image_and_images_vllm_still_overrides(tmp_path):
    import yaml

    from stackctl.layout import StackLayout
    from stackctl.stack import Stack

    def vllm_image(settings: dict) -> str:
        (tmp_path / "stack.yaml").write_text(yaml.safe_dump(settings))
        services = Stack.load(StackLayout(tmp_path)).services
        return next(service for service in services if service.name == "vllm").compose["image"]

    spark = {"hardware": "dgx-spark", "model": "qwen3.6-35b-a3b-fp8"}
    config = parse_stack_config(spark)
    assert vllm_image(spark) == default_vllm_image(config.hardware_profile, config.model_profile)
    pinned = "registry.internal/nvidia/vllm:26.05.post1-py3"
    assert vllm_image({**spark, "images": {"vllm": pinned}}) == pinned


@pytest.mark.parametrize("columns", ["80", "250"])
def test_profiles_shows_the_engine_each_model_needs_whole_at_any_width(tmp_path, columns):
    from stackctl.profiles import MODEL_PROFILES
    from tests.support.cli import run_cli

    done = run_cli("profiles", cwd=tmp_path, env={"COLUMNS": columns})
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    lines = done.stdout.splitlines()
    start = next(index for index, line in enumerate(lines) if "qwen3.6-35b-a3b-fp8" in line)
    cells = "\n".join(lines[start:start + 3])
    newest = compat.newest_image()
    assert "vLLM >= 0.17.0" in cells and f"{newest.tag} (vLLM {newest.vllm})" in cells
    assert f"vllm {compat.best_pypi_vllm(QWEN36).version}" in cells
    for model in MODEL_PROFILES.values():
        assert any(model.name in line.split() or f"│ {model.name} " in line for line in lines), model.name
        for parser in filter(None, (model.tool_call_parser, model.reasoning_parser)):
            assert parser in done.stdout
    assert max(len(line) for line in lines if line.startswith(("│", "┃", "┏"))) <= int(columns)


def test_the_compose_unit_stages_the_weights_before_compose_starts(tmp_path):
    from stackctl.config import parse_stack_config
    from stackctl.layout import StackLayout
    from stackctl.runtime import runtime_for
    from stackctl.systemd_unit import render_unit

    layout = StackLayout(tmp_path)
    unit = render_unit(layout, runtime_for("compose", layout, parse_stack_config({})))
    lines = unit.splitlines()
    pull = next(index for index, line in enumerate(lines) if line.startswith("ExecStartPre=") and line.endswith(" pull"))
    start = next(index for index, line in enumerate(lines) if line.startswith("ExecStart="))
    assert pull < start and "TimeoutStartSec=infinity" in lines
