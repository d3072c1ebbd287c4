"""Single-line failures (no real log is needed to know them): each names its fix."""

import pytest

from stackctl.diagnosis import diagnose_log


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("RuntimeError: Unsupported CPU attention configuration: head_size=16", "head"),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "vllm.gpu_memory_utilization"),
        ("api_server.py: error: unrecognized arguments: --mxfp4-layers", "--mxfp4-layers"),
        ("api_server.py: error: argument --dtype: invalid choice: 'fp8'", "--dtype"),
        ("nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)", "port"),
        ("OSError: [Errno 98] error while attempting to bind on address", "port"),
    ],
)
def test_known_failures_name_their_fix(line, expected):
    diagnosis = diagnose_log(["INFO starting", line, "INFO shutting down"])
    assert diagnosis is not None and expected in diagnosis.one_line()


def test_unknown_failure_has_no_diagnosis():
    assert diagnose_log(["Segmentation fault"]) is None
    assert diagnose_log([]) is None
