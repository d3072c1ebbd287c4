"""The GPU exporter through its real code path, fed NVML facts by a stand-in `pynvml` module."""

import sys
import types

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from stackctl.gpu_exporter import GpuSampler, render_metrics, start_exporter
from stackctl.host import MemInfo, parse_meminfo

GIB = 1024**3
# A DGX Spark-like /proc/meminfo: lots of page cache, so MemFree << MemAvailable.
SPARK_MEMINFO = """\
MemTotal:       125829120 kB
MemFree:         10485760 kB
MemAvailable:    94371840 kB
Buffers:           524288 kB
Cached:          80740352 kB
"""


class FakeNvml(types.ModuleType):
    """Module-shaped like pynvml: the same function names, constants and error classes."""

    NVML_TEMPERATURE_GPU = 0
    NVML_ERROR_NOT_SUPPORTED = 3
    NVML_ERROR_DRIVER_NOT_LOADED = 9
    NVML_ERROR_LIBRARY_NOT_FOUND = 12
    NVML_ERROR_FUNCTION_NOT_FOUND = 13

    class NVMLError(Exception):
        def __init__(self, value: int) -> None:
            super().__init__(f"NVML error {value}")
            self.value = value

    def __init__(self, gpus=(), init_error=None):
        super().__init__("pynvml")
        self.gpus = list(gpus)
        self.init_error = init_error
        self.init_calls = 0
        self.NVMLError_NotSupported = type("NVMLError_NotSupported", (self.NVMLError,), {})
        self.NVMLError_LibraryNotFound = type("NVMLError_LibraryNotFound", (self.NVMLError,), {})
        self.NVMLError_DriverNotLoaded = type("NVMLError_DriverNotLoaded", (self.NVMLError,), {})
        self.NVMLError_FunctionNotFound = type("NVMLError_FunctionNotFound", (self.NVMLError,), {})

    def nvmlInit(self):
        self.init_calls += 1
        if self.init_error is not None:
            raise self.init_error

    def nvmlShutdown(self):
        pass

    def nvmlSystemGetDriverVersion(self):
        return "580.95.05"

    def nvmlDeviceGetCount(self):
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index):
        return self.gpus[index]

    def nvmlDeviceGetName(self, handle):
        return handle["name"]

    def nvmlDeviceGetUUID(self, handle):
        return handle["uuid"]

    def _reading(self, handle, key):
        value = handle.get(key)
        if value is None:
            raise self.NVMLError_NotSupported(self.NVML_ERROR_NOT_SUPPORTED)
        return value

    nvmlMemory_v2 = 0x02000028

    def nvmlDeviceGetMemoryInfo(self, handle, version=None):
        if version is None:
            return self._reading(handle, "memory")
        if "memory_v2" not in handle:  # a GPU written as a driver older than v2 answers it
            raise self.NVMLError_FunctionNotFound(self.NVML_ERROR_FUNCTION_NOT_FOUND)
        return self._reading(handle, "memory_v2")

    def nvmlDeviceGetUtilizationRates(self, handle):
        return types.SimpleNamespace(gpu=self._reading(handle, "util"), memory=0)

    def nvmlDeviceGetTemperature(self, handle, sensor):
        assert sensor == self.NVML_TEMPERATURE_GPU
        return self._reading(handle, "temp")

    def nvmlDeviceGetPowerUsage(self, handle):
        return self._reading(handle, "power_mw")


def rtx_pro_6000():
    memory = types.SimpleNamespace(total=96 * GIB, used=70 * GIB, free=26 * GIB)
    return {"name": "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "uuid": "GPU-1111-aaaa",
            "memory": memory, "util": 87, "temp": 64, "power_mw": 412_500}


def h100():
    """The H100 of the GPU check (driver 580, vLLM holding its pool), NVML's two answers: the first
    counts the driver's reserved 479.5 MiB as used; nvidia-smi showed memory.used 73705 MiB."""
    v1 = types.SimpleNamespace(total=85_520_809_984, used=77_788_413_952, free=7_732_396_032)
    v2 = types.SimpleNamespace(total=85_520_809_984, reserved=502_792_192, used=77_285_621_760, free=7_732_396_032)
    return {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-8a4716e2", "memory": v1, "memory_v2": v2, "util": 0,
            "temp": 32, "power_mw": 117_699}


def gb10(memory=None):
    # GB10: NVML has no framebuffer figures (NotSupported); power is reported.
    return {"name": "NVIDIA GB10", "uuid": "GPU-2222-bbbb", "memory": memory, "util": 55, "temp": 48,
            "power_mw": 31_000}


def samples(text: str) -> dict[tuple[str, tuple], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(text: str, metric: str, **labels: str) -> float:
    return samples(text)[(metric, tuple(sorted(labels.items())))]


def no_meminfo() -> MemInfo:
    raise AssertionError("a GPU with its own memory must not read /proc/meminfo")


def test_discrete_gpu_reports_nvml_figures_under_the_exporter_names():
    text = render_metrics(GpuSampler(FakeNvml([rtx_pro_6000()]), meminfo=no_meminfo))
    uuid = "1111-aaaa"  # NVML's "GPU-" prefix dropped, as nvidia-smi based exporters label it
    assert value(text, "stackctl_gpu_present", reason="") == 1
    assert value(text, "nvidia_smi_memory_total_bytes", uuid=uuid) == 96 * GIB
    assert value(text, "nvidia_smi_memory_used_bytes", uuid=uuid) == 70 * GIB
    assert value(text, "nvidia_smi_memory_free_bytes", uuid=uuid) == 26 * GIB
    assert value(text, "nvidia_smi_utilization_gpu_ratio", uuid=uuid) == pytest.approx(0.87)
    assert value(text, "nvidia_smi_temperature_gpu", uuid=uuid) == 64
    assert value(text, "nvidia_smi_power_draw_watts", uuid=uuid) == pytest.approx(412.5)
    assert value(text, "stackctl_gpu_unified_memory", uuid=uuid) == 0
    assert value(text, "nvidia_smi_gpu_info", uuid=uuid, index="0", driver_version="580.95.05",
                 name="NVIDIA RTX PRO 6000 Blackwell Workstation Edition") == 1


def test_memory_used_is_nvidia_smis_and_the_drivers_reserved_share_is_apart():
    text = render_metrics(GpuSampler(FakeNvml([h100()]), meminfo=no_meminfo))
    used = value(text, "nvidia_smi_memory_used_bytes", uuid="8a4716e2")
    assert used // 2**20 == 73705  # what nvidia-smi printed beside it
    assert value(text, "nvidia_smi_memory_reserved_bytes", uuid="8a4716e2") == 502_792_192
    assert used + 502_792_192 + value(text, "nvidia_smi_memory_free_bytes", uuid="8a4716e2") == 85_520_809_984


def test_unified_memory_reports_the_os_pool_with_memavailable_as_free():
    meminfo = parse_meminfo(SPARK_MEMINFO)
    text = render_metrics(GpuSampler(FakeNvml([gb10()]), meminfo=lambda: meminfo))
    uuid = "2222-bbbb"
    assert value(text, "stackctl_gpu_unified_memory", uuid=uuid) == 1
    assert value(text, "nvidia_smi_memory_total_bytes", uuid=uuid) == 125829120 * 1024
    # MemAvailable (90 GiB), not MemFree (10 GiB): page cache is given back to CUDA on demand.
    assert value(text, "nvidia_smi_memory_free_bytes", uuid=uuid) == 94371840 * 1024
    assert value(text, "nvidia_smi_memory_used_bytes", uuid=uuid) == (125829120 - 94371840) * 1024
    assert value(text, "nvidia_smi_power_draw_watts", uuid=uuid) == 31


def test_a_zero_framebuffer_also_counts_as_unified_memory():
    zero = types.SimpleNamespace(total=0, used=0, free=0)
    meminfo = parse_meminfo(SPARK_MEMINFO)
    text = render_metrics(GpuSampler(FakeNvml([gb10(zero)]), meminfo=lambda: meminfo))
    assert value(text, "nvidia_smi_memory_free_bytes", uuid="2222-bbbb") == 94371840 * 1024


def test_unsupported_readings_are_left_out_not_reported_as_zero():
    gpu = {**rtx_pro_6000(), "power_mw": None, "temp": None}
    text = render_metrics(GpuSampler(FakeNvml([gpu]), meminfo=no_meminfo))
    names = {name for name, _ in samples(text)}
    assert "nvidia_smi_power_draw_watts" not in names and "nvidia_smi_temperature_gpu" not in names
    assert "nvidia_smi_utilization_gpu_ratio" in names


@pytest.mark.parametrize(("error_class", "code", "reason"), [
    ("NVMLError_LibraryNotFound", 12, "nvml_library_not_found"),
    ("NVMLError_DriverNotLoaded", 9, "driver_not_loaded"),
    ("NVMLError", 999, "nvml_error"),
])
def test_no_gpu_is_a_clear_signal_not_a_crash(error_class, code, reason):
    nvml = FakeNvml()
    nvml.init_error = getattr(nvml, error_class)(code)
    sampler = GpuSampler(nvml, meminfo=no_meminfo)
    text = render_metrics(sampler)
    assert samples(text) == {("stackctl_gpu_present", (("reason", reason),)): 0}
    render_metrics(sampler)
    assert nvml.init_calls == 2  # retried on the next scrape: a driver loaded later is picked up


def test_nvml_without_devices_and_without_the_package(monkeypatch):
    assert value(render_metrics(GpuSampler(FakeNvml([]))), "stackctl_gpu_present", reason="no_devices") == 0
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` now raises ImportError
    sampler = GpuSampler(meminfo=no_meminfo)
    assert value(render_metrics(sampler), "stackctl_gpu_present", reason="nvidia_ml_py_missing") == 0


def test_meminfo_parsing():
    info = parse_meminfo(SPARK_MEMINFO)
    assert info == MemInfo(125829120 * 1024, 94371840 * 1024)
    with pytest.raises(ValueError, match="MemAvailable"):
        parse_meminfo("MemTotal: 1024 kB\nMemFree: 512 kB\n")


def test_http_exporter_serves_on_a_free_port():
    exporter = start_exporter("127.0.0.1", 0, GpuSampler(FakeNvml([rtx_pro_6000()])))
    try:
        reply = httpx.get(exporter.url, timeout=5)
        assert reply.status_code == 200
        assert value(reply.text, "nvidia_smi_temperature_gpu", uuid="1111-aaaa") == 64
    finally:
        exporter.stop()


def test_cli_once_prints_one_scrape_whatever_the_host():
    import typer
    from typer.testing import CliRunner

    from stackctl.commands import gpu_exporter as gpu_exporter_command

    app = typer.Typer()
    app.callback()(lambda: None)
    gpu_exporter_command.register(app)
    result = CliRunner().invoke(app, ["gpu-exporter", "--once"])
    assert result.exit_code == 0, result.output
    present = [s for s in text_string_to_metric_families(result.stdout) if s.name == "stackctl_gpu_present"]
    assert len(present) == 1 and present[0].samples[0].value in (0, 1)
