"""Disk space on the HF cache's real filesystem, and unified-memory budgets from /proc/meminfo."""

import os
from pathlib import Path

import pytest

from stackctl.doctor.memory import check_unified_memory
from stackctl.doctor.result import Status
from stackctl.doctor.served_model import check_disk
from tests.support.fakehost import context, make_host, write_index
from tests.support.stack_builder import make_stack

GB = 10**9


def disk(tmp_path, cache: Path, facts=None, model="qwen3.6-35b-a3b-fp8"):
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model=model, hf_cache=str(cache))
    return check_disk(context(stack, facts or make_host(tmp_path, None)))


def test_enough_space_for_the_checkpoint(tmp_path):
    cache = tmp_path / "hf"
    write_index(cache, "Qwen/Qwen3.6-35B-A3B-FP8", total_size=1 * GB)
    result = disk(tmp_path, cache)
    assert result.status is Status.ok and "needs 1.0 GB (checkpoint index)" in result.found


def test_checkpoint_larger_than_the_disk_fails_before_download(tmp_path):
    cache = tmp_path / "hf"
    write_index(cache, "Qwen/Qwen3.6-35B-A3B-FP8", total_size=10**16)
    result = disk(tmp_path, cache)
    assert result.status is Status.fail
    assert "point hf_cache in stack.yaml at a larger disk" in result.fix
    assert "lvextend" not in result.fix  # not an LVM root here


def test_lvm_root_gets_the_lvextend_hint(tmp_path):
    cache = tmp_path / "hf"
    write_index(cache, "Qwen/Qwen3.6-35B-A3B-FP8", total_size=10**16)
    facts = make_host(tmp_path, None)
    (facts.root / "proc" / "self").mkdir(parents=True)
    (facts.root / "proc" / "self" / "mounts").write_text(
        "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
        "/dev/mapper/ubuntu--vg-ubuntu--lv / ext4 rw,relatime 0 0\n"
        "/dev/nvme0n1p2 /boot ext4 rw,relatime 0 0\n")
    result = disk(tmp_path, cache, facts)
    assert "sudo lvextend -r -l +100%FREE /dev/mapper/ubuntu--vg-ubuntu--lv" in result.fix


def test_partial_download_counts_toward_the_need(tmp_path):
    cache = tmp_path / "hf"
    free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
    write_index(cache, "Qwen/Qwen3.6-35B-A3B-FP8", total_size=free + 20 * GB)
    blobs = cache / "hub" / "models--Qwen--Qwen3.6-35B-A3B-FP8" / "blobs"
    blobs.mkdir(parents=True)
    assert disk(tmp_path, cache).status is Status.fail
    with open(blobs / "shard-1-of-2.incomplete", "wb") as handle:  # sparse: counts its size, uses no space
        handle.truncate(free // 10 + 40 * GB)
    result = disk(tmp_path, cache)
    assert result.status is Status.ok, result


@pytest.mark.skipif(not Path("/dev/shm").is_dir() or not os.access("/dev/shm", os.W_OK), reason="no writable tmpfs at /dev/shm")
def test_on_a_small_tmpfs(tmp_path):
    import tempfile

    with tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
        cache = Path(shm) / "hf"
        free = os.statvfs(shm).f_bavail * os.statvfs(shm).f_frsize
        write_index(cache, "Qwen/Qwen3.6-35B-A3B-FP8", total_size=free * 2)
        assert disk(tmp_path, cache).status is Status.fail
        write_index(cache, "Qwen/Qwen3.6-35B-A3B-FP8", total_size=min(free // 4, GB))
        assert disk(tmp_path, cache).status is Status.ok


def test_unified_memory_leaves_the_os_enough(tmp_path):
    stack = make_stack(tmp_path, hardware="dgx-spark", model="qwen3.6-35b-a3b-fp8")
    result = check_unified_memory(context(stack, make_host(tmp_path, "dgx-spark-gb10-580")))
    assert result.status is Status.warn
    assert "unified memory 129 GB, --gpu-memory-utilization 0.70 leaves 39 GB to the OS" in result.found
    assert "CUDA-graph capture and torch.compile allocate outside" in result.fix


def test_unified_memory_with_eager_mode_passes(tmp_path):
    stack = make_stack(tmp_path, hardware="dgx-spark", model="qwen3.6-35b-a3b-fp8", vllm={"extra_args": ["--enforce-eager"]})
    assert check_unified_memory(context(stack, make_host(tmp_path, "dgx-spark-gb10-580"))).status is Status.ok


def test_small_unified_memory_box_fails(tmp_path):
    facts = make_host(tmp_path, "dgx-spark-gb10-580")
    (facts.root / "proc" / "meminfo").write_text("MemTotal:       58593750 kB\nMemFree:        50000000 kB\n")
    stack = make_stack(tmp_path, hardware="dgx-spark", model="qwen3.6-35b-a3b-fp8")
    result = check_unified_memory(context(stack, facts))
    assert result.status is Status.fail
    assert "leaves 18 GB to the OS" in result.found and "set vllm.gpu_memory_utilization: 0.66" in result.fix


def test_discrete_gpu_memory_is_separate(tmp_path):
    stack = make_stack(tmp_path, hardware="rtx-pro-6000")
    result = check_unified_memory(context(stack, make_host(tmp_path, "rtx-pro-6000-open-570")))
    assert result.status is Status.ok and "126 GiB RAM" in result.found
