"""GPU and driver checks on recorded host samples, through a fake nvidia-smi on PATH."""

from stackctl.doctor.gpu import check_cuda_image, check_driver, check_gpu_visible
from stackctl.doctor.result import Status
from tests.support.fakehost import context, make_host
from tests.support.stack_builder import make_stack


def test_rtx_pro_6000_on_the_open_module_with_firmware_passes(tmp_path):
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", vllm={"image": "nvcr.io/nvidia/vllm:25.06-py3"})
    ctx = context(stack, make_host(tmp_path, "rtx-pro-6000-open-570"))
    gpu, driver, image = check_gpu_visible(ctx), check_driver(ctx), check_cuda_image(ctx)
    assert gpu.status is Status.ok and "RTX PRO 6000" in gpu.found and "sm_120" in gpu.found
    assert driver.status is Status.ok, driver
    assert "570.133.20" in driver.found and "open kernel module" in driver.found and "GSP firmware 570.133.20" in driver.found
    assert image.status is Status.ok and "CUDA 12.8" in image.found


def test_cuda_13_image_on_a_570_driver_fails(tmp_path):
    ctx = context(make_stack(tmp_path, hardware="rtx-pro-6000"), make_host(tmp_path, "rtx-pro-6000-open-570"))
    image = check_cuda_image(ctx)
    # The default image (the table's newest tag) is CUDA 13.x: any 13.x needs driver >= 580.
    assert image.status is Status.fail and "CUDA 13.4.3 needs driver >= 580, found 570" in image.found
    assert "nvidia-driver-580-open" in image.fix


def test_blackwell_on_the_proprietary_module_fails_with_the_open_driver_fix(tmp_path):
    ctx = context(make_stack(tmp_path, hardware="rtx-pro-6000"), make_host(tmp_path, "rtx-pro-6000-proprietary-570"))
    gpu, driver = check_gpu_visible(ctx), check_driver(ctx)
    assert gpu.status is Status.fail and "No devices were found" in gpu.found
    assert driver.status is Status.fail
    assert "proprietary kernel module" in driver.found
    assert "install nvidia-driver-570-open" in driver.fix and "reboot" in driver.fix


def test_open_module_without_gpu_firmware_fails(tmp_path):
    ctx = context(make_stack(tmp_path, hardware="rtx-pro-6000"), make_host(tmp_path, "rtx-pro-6000-open-no-firmware"))
    driver = check_driver(ctx)
    assert driver.status is Status.fail
    assert "no GPU firmware (GSP) loaded" in driver.found and "nvidia-firmware-575" in driver.fix


def test_gb10_unified_memory_reads_na_memory_and_sm_121(tmp_path):
    ctx = context(make_stack(tmp_path, hardware="dgx-spark", model="qwen3.6-35b-a3b-fp8"),
                  make_host(tmp_path, "dgx-spark-gb10-580"))
    gpu, driver, image = check_gpu_visible(ctx), check_driver(ctx), check_cuda_image(ctx)
    assert gpu.status is Status.ok and "NVIDIA GB10 (sm_121, unified memory)" in gpu.found
    assert driver.status is Status.ok and "580.95.05" in driver.found
    assert image.status is Status.ok


def test_old_proprietary_driver_is_too_old_for_driver_and_image(tmp_path):
    ctx = context(make_stack(tmp_path, hardware="generic", model="qwen3-32b-awq"),
                  make_host(tmp_path, "rtx-6000-ada-proprietary-550"))
    assert check_gpu_visible(ctx).status is Status.ok  # Ada runs the proprietary module fine
    driver, image = check_driver(ctx), check_cuda_image(ctx)
    assert driver.status is Status.fail and ">= 570" in driver.found
    assert image.status is Status.fail and "needs driver >= 580, found 550" in image.found


def test_image_without_blackwell_kernels_fails(tmp_path):
    stack = make_stack(tmp_path, hardware="dgx-spark", model="qwen3.6-35b-a3b-fp8", vllm={"image": "nvcr.io/nvidia/vllm:25.06-py3"})
    result = check_cuda_image(context(stack, make_host(tmp_path, "dgx-spark-gb10-580")))
    assert result.status is Status.fail and "sm_121" in result.found and "images.vllm" in result.fix


def test_no_driver_at_all(tmp_path):
    ctx = context(make_stack(tmp_path, hardware="rtx-pro-6000"), make_host(tmp_path, None))
    assert check_gpu_visible(ctx).status is Status.fail
    driver = check_driver(ctx)
    assert driver.status is Status.fail and "/proc/driver/nvidia/version missing" in driver.found


def test_cpu_hardware_needs_no_gpu(tmp_path):
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny")
    ctx = context(stack, make_host(tmp_path, None))
    assert {check(ctx).status for check in (check_gpu_visible, check_driver, check_cuda_image)} == {Status.ok}


def test_the_real_h100_capture_passes_with_the_default_image_and_the_h100_profile(tmp_path):
    # tests/data/doctor/hosts/h100-580: captured on the GPU check's H100 (not reconstructed).
    ctx = context(make_stack(tmp_path, hardware="h100"), make_host(tmp_path, "h100-580"))
    gpu, driver, image = check_gpu_visible(ctx), check_driver(ctx), check_cuda_image(ctx)
    assert gpu.status is Status.ok and gpu.found == "NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)", gpu
    assert driver.status is Status.ok and "580.159.04" in driver.found and "open kernel module" in driver.found
    assert image.status is Status.ok and "CUDA 13.4.3" in image.found, image
