"""Read the GPUs through NVML into plain values; no Prometheus here.

The NVML module is passed in (`pynvml` from nvidia-ml-py by default) so tests can hand in a
stand-in object with the same functions and errors, and exercise this exact code path.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from stackctl.host.meminfo import MemInfo, read_meminfo

# Why no GPU is reported: short, stable values for the `reason` label.
NO_NVML_PACKAGE = "nvidia_ml_py_missing"
NO_LIBRARY = "nvml_library_not_found"
NO_DRIVER = "driver_not_loaded"
NO_DEVICES = "no_devices"
NVML_FAILED = "nvml_error"


@dataclass(frozen=True)
class GpuSample:
    index: int
    uuid: str  # without NVML's "GPU-" prefix, as nvidia-smi-based exporters label it
    name: str
    # On unified memory the pool shared with the CPU: MemTotal and MemAvailable of the OS.
    unified_memory: bool
    memory_total_bytes: int | None
    memory_used_bytes: int | None
    memory_free_bytes: int | None
    utilization_ratio: float | None
    temperature_celsius: float | None
    power_watts: float | None
    # The driver's own share of the framebuffer (NVML's v2 memory info): in neither used nor free.
    memory_reserved_bytes: int | None = None


@dataclass(frozen=True)
class GpuReport:
    gpus: list[GpuSample] = field(default_factory=list)
    reason: str = ""  # set when there is no GPU to report
    detail: str = ""  # the underlying error, for logs
    driver_version: str = ""

    @property
    def present(self) -> bool:
        return bool(self.gpus)


def load_nvml() -> ModuleType | None:
    try:
        return importlib.import_module("pynvml")
    except ImportError:
        return None


class GpuSampler:
    """Samples every GPU on each call; NVML is initialised once, retried while it fails."""

    def __init__(self, nvml: Any | None = None, meminfo: Callable[[], MemInfo] = read_meminfo) -> None:
        self._nvml = nvml if nvml is not None else load_nvml()
        self._meminfo = meminfo
        self._initialised = False

    def sample(self) -> GpuReport:
        nvml = self._nvml
        if nvml is None:
            return GpuReport(reason=NO_NVML_PACKAGE, detail="python package nvidia-ml-py is not installed")
        try:
            if not self._initialised:
                nvml.nvmlInit()
                self._initialised = True
            count = nvml.nvmlDeviceGetCount()
            driver = _text(_optional(nvml, nvml.nvmlSystemGetDriverVersion) or "")
            gpus = [self._sample_device(nvml, index) for index in range(count)]
        except nvml.NVMLError as error:
            return GpuReport(reason=_reason(nvml, error), detail=str(error))
        if not gpus:
            return GpuReport(reason=NO_DEVICES, detail="NVML found no GPU", driver_version=driver)
        return GpuReport(gpus=gpus, driver_version=driver)

    def close(self) -> None:
        if self._initialised and self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except self._nvml.NVMLError:
                pass
            self._initialised = False

    def _sample_device(self, nvml: Any, index: int) -> GpuSample:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        memory = _memory_info(nvml, handle)
        # Unified memory (GB10): NVML has no dedicated framebuffer to report (NotSupported, or a
        # zero total). vLLM allocates from the OS's pool, so that pool is the GPU's memory.
        unified = memory is None or not memory.total
        if unified:
            pool = self._meminfo()
            total, used, free = pool.total_bytes, pool.used_bytes, pool.available_bytes
        else:
            total, used, free = memory.total, memory.used, memory.free
        utilization = _optional(nvml, nvml.nvmlDeviceGetUtilizationRates, handle)
        temperature = _optional(nvml, nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
        power_mw = _optional(nvml, nvml.nvmlDeviceGetPowerUsage, handle)
        return GpuSample(
            index=index,
            uuid=_text(nvml.nvmlDeviceGetUUID(handle)).removeprefix("GPU-"),
            name=_text(nvml.nvmlDeviceGetName(handle)),
            unified_memory=unified,
            memory_total_bytes=total,
            memory_used_bytes=used,
            memory_free_bytes=free,
            utilization_ratio=utilization.gpu / 100 if utilization is not None else None,
            temperature_celsius=float(temperature) if temperature is not None else None,
            power_watts=power_mw / 1000 if power_mw is not None else None,
            memory_reserved_bytes=None if unified else getattr(memory, "reserved", None),
        )


def _memory_info(nvml: Any, handle: Any) -> Any:
    """Memory as nvidia-smi shows it. NVML's first memory call counts the driver's reserved share
    as used: on the H100 of the GPU check (driver 580) 479 MiB more than nvidia-smi's memory.used.
    Its v2 (drivers >= 510) reports the reserved share apart, as nvidia-smi does."""
    version = getattr(nvml, "nvmlMemory_v2", None)
    if version is not None:
        try:
            return nvml.nvmlDeviceGetMemoryInfo(handle, version)
        except nvml.NVMLError as error:
            if _is(nvml, error, "NVMLError_NotSupported", "NVML_ERROR_NOT_SUPPORTED"):
                return None  # no framebuffer of its own (GB10)
            if not _is(nvml, error, "NVMLError_FunctionNotFound", "NVML_ERROR_FUNCTION_NOT_FOUND"):
                raise
    return _optional(nvml, nvml.nvmlDeviceGetMemoryInfo, handle)  # a driver older than v2


def _optional(nvml: Any, function: Callable[..., Any], *args: Any) -> Any:
    """A reading some GPUs do not support (power on some boards, memory on GB10): None then."""
    try:
        return function(*args)
    except nvml.NVMLError as error:
        if _is(nvml, error, "NVMLError_NotSupported", "NVML_ERROR_NOT_SUPPORTED"):
            return None
        raise


def _reason(nvml: Any, error: Exception) -> str:
    if _is(nvml, error, "NVMLError_LibraryNotFound", "NVML_ERROR_LIBRARY_NOT_FOUND"):
        return NO_LIBRARY
    if _is(nvml, error, "NVMLError_DriverNotLoaded", "NVML_ERROR_DRIVER_NOT_LOADED"):
        return NO_DRIVER
    return NVML_FAILED


def _is(nvml: Any, error: Exception, class_name: str, code_name: str) -> bool:
    error_class = getattr(nvml, class_name, None)
    if error_class is not None and isinstance(error, error_class):
        return True
    code = getattr(nvml, code_name, None)
    return code is not None and getattr(error, "value", None) == code


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
