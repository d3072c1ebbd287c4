"""The engine against the model, before any download: the table, the local image's own word,
and the native CUDA venv. Real check code on recorded hosts and a fake `docker` on PATH."""

from stackctl.doctor import run_checks
from stackctl.doctor.engine import check_engine, check_engine_version
from stackctl.doctor.gpu import check_cuda_image
from stackctl.doctor.result import Status
from stackctl.profiles.compat import newest_image
from tests.support.fakehost import by_name, context, make_host
from tests.support.stack_builder import make_stack

OLD = "nvcr.io/nvidia/vllm:25.11-py3"
NEWEST = newest_image().reference


def test_the_old_default_image_is_refused_for_qwen36_and_a_working_tag_is_named(tmp_path):
    stack = make_stack(tmp_path, hardware="dgx-spark", model="qwen3.6-35b-a3b-fp8", images={"vllm": OLD})
    result = check_engine(context(stack, make_host(tmp_path, "dgx-spark-gb10-580")))
    assert result.status is Status.fail, result
    assert "at most 0.11.1" in result.found and "Qwen3_5MoeForConditionalGeneration" in result.found
    assert f"set images.vllm: {NEWEST}" in result.fix and "sm_121" in result.fix and "driver 580" in result.fix


def test_the_default_image_serves_every_default_model(tmp_path):
    for model in ("qwen3.6-27b", "qwen3.6-35b-a3b-fp8"):
        stack = make_stack(tmp_path / model, hardware="dgx-spark", model=model)
        result = check_engine(context(stack, make_host(tmp_path / model, "dgx-spark-gb10-580")))
        assert result.status is Status.ok, result
        assert f"{NEWEST}: vLLM {newest_image().vllm} (NGC {newest_image().tag})" in result.found


def test_a_pulled_image_is_asked_for_its_version_through_its_environment(tmp_path):
    image = "registry.internal/vllm:custom"
    inspect = {"Config": {"Env": ["PATH=/usr/bin", "VLLM_VERSION=0.16.0"], "Labels": {}}}
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model="qwen3.6-27b", images={"vllm": image})
    result = check_engine(context(stack, make_host(tmp_path, "rtx-pro-6000-open-570", docker="info-nvidia.json",
                                                   images={image: inspect})))
    assert result.status is Status.fail
    assert "vLLM 0.16.0 (from the local image)" in result.found and "served from vLLM 0.17.0" in result.found


def test_an_unknown_image_not_pulled_yet_is_a_warning_naming_the_pull(tmp_path):
    image = "registry.internal/vllm:custom"
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model="qwen3.6-27b", images={"vllm": image})
    result = check_engine(context(stack, make_host(tmp_path, "rtx-pro-6000-open-570", docker="info-nvidia.json")))
    assert result.status is Status.warn and f"docker pull {image}" in result.fix


def test_the_full_doctor_runs_the_image_to_read_its_vllm(tmp_path):
    image = "registry.internal/vllm:custom"
    inspect = {"Config": {"Env": ["PATH=/usr/bin"], "Labels": {}}}
    stack = make_stack(tmp_path, hardware="dgx-spark", model="qwen3.6-27b", images={"vllm": image})
    old = make_host(tmp_path / "a", "dgx-spark-gb10-580", docker="info-nvidia.json", images={image: inspect},
                    image_vllm={image: "0.11.1+9114fd76"})
    result = check_engine_version(context(stack, old))
    assert result.status is Status.fail and "carries vLLM 0.11.1+9114fd76" in result.found
    assert f"images.vllm: {NEWEST}" in result.fix
    new = make_host(tmp_path / "b", "dgx-spark-gb10-580", docker="info-nvidia.json", images={image: inspect},
                    image_vllm={image: "0.20.1"})
    assert check_engine_version(context(stack, new)).status is Status.ok


def test_fast_doctor_only_inspects_and_the_full_one_runs(tmp_path):
    stack = make_stack(tmp_path, hardware="dgx-spark", model="qwen3.6-27b")
    facts = make_host(tmp_path, "dgx-spark-gb10-580", docker="info-nvidia.json")
    fast = {result.name for result in run_checks(stack, True, facts=facts)}
    full = {result.name for result in run_checks(stack, False, facts=facts)}
    assert "engine" in fast and "engine-version" not in fast and "engine-version" in full


def test_a_570_driver_is_told_that_no_tag_serves_qwen36_until_580(tmp_path):
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model="qwen3.6-27b", images={"vllm": OLD})
    ctx = context(stack, make_host(tmp_path, "rtx-pro-6000-open-570"))
    engine, image = check_engine(ctx), check_cuda_image(ctx)
    assert engine.status is Status.fail
    assert "with driver 570: install nvidia-driver-580-open" in engine.fix and NEWEST in engine.fix
    assert image.status is Status.fail and "needs driver >= 580, found 570" in image.found


def test_a_dense_qwen3_on_570_is_offered_an_image_that_runs_there(tmp_path):
    # Every tag in the table is CUDA 13: on 570 the fix is the driver, never a tag that cannot run.
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model="qwen3-32b")
    image = check_cuda_image(context(stack, make_host(tmp_path, "rtx-pro-6000-open-570")))
    assert image.status is Status.fail and "images.vllm" not in image.fix


def test_native_gpu_stack_without_an_engine_says_what_up_will_install(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCTL_HOME", str(tmp_path / "home"))
    stack = make_stack(tmp_path, runtime="native", hardware="dgx-spark", model="qwen3.6-35b-a3b-fp8")
    result = check_engine(context(stack, make_host(tmp_path, "dgx-spark-gb10-580")))
    assert result.status is Status.warn
    assert "no CUDA engine installed yet; `up` installs vLLM 0.32.0" in result.found
    assert "stackctl install-engine" in result.fix
    old_driver = check_engine(context(stack, make_host(tmp_path / "old", "rtx-pro-6000-open-570")))
    assert old_driver.status is Status.fail and "needs NVIDIA driver >= 580 (found 570)" in old_driver.fix


def test_cpu_stacks_need_no_engine_check(tmp_path):
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny")
    assert by_name(check_engine(context(stack, make_host(tmp_path))), "engine").status is Status.ok
