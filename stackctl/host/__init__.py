"""Facts about this machine, read once and shared: its GPUs and NVIDIA driver, its memory, disks,
ports and Docker engine. The ground floor: doctor checks them, `pull` and the native engine choice ask
them, the GPU exporter samples memory; this package imports nothing else from stackctl."""

from stackctl.host.command import CommandOutput
from stackctl.host.facts import DockerFacts, HostFacts, PortHolder, PortProbe, nearest_existing
from stackctl.host.gpu import GPU_QUERY_FIELDS, GpuInfo, GpuQuery, parse_gpu_query
from stackctl.host.meminfo import MemInfo, parse_meminfo, read_meminfo

__all__ = ["GPU_QUERY_FIELDS", "CommandOutput", "DockerFacts", "GpuInfo", "GpuQuery", "HostFacts", "MemInfo",
           "PortHolder", "PortProbe", "nearest_existing", "parse_gpu_query", "parse_meminfo", "read_meminfo"]
