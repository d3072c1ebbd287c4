"""The host's NVIDIA driver not reaching CUDA inside a container: CUDA error 803 (a driver library that does not
match the running module, most often the image's compat libraries), the runtime's driver RPC timing out (GPUs not
in persistence mode)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.gpu_driver_handoff import (
    DRIVER_COMBINATION,
    RPC_TIMEOUT,
    driver_combination_fix,
    rpc_timeout_fix,
)
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.stack_keys import ENVIRONMENT
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _driver_combination(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.cuda_driver_combination,
                 "CUDA cannot start: the driver library it loaded does not match the NVIDIA kernel module (error 803), "
                 "most often the image's CUDA compatibility libraries found before the host driver's",
                 Fix(driver_combination_fix(), key=ENVIRONMENT, env="LD_LIBRARY_PATH"))


def _rpc_timeout(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.nvidia_driver_rpc_timeout,
                 "the NVIDIA container runtime timed out asking the driver about the GPUs (not in persistence mode), "
                 "so the container does not start", Fix(rpc_timeout_fix()))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.cuda_driver_combination, DRIVER_COMBINATION.pattern, _driver_combination),
    signature(Cause.nvidia_driver_rpc_timeout, RPC_TIMEOUT.pattern, _rpc_timeout),
)
