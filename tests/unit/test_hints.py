import pytest

from stackctl.runtime.hints import hint_for


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("RuntimeError: Unsupported CPU attention configuration: head_size=16", "head"),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "gpu_memory_utilization"),
        ("api_server.py: error: unrecognized arguments: --mxfp4-layers", "flag"),
        ("api_server.py: error: argument --dtype: invalid choice: 'fp8'", "--dtype fp8"),
        ("nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)", "port"),
        ("OSError: [Errno 98] error while attempting to bind on address", "port"),
    ],
)
def test_known_failures_get_a_hint(line, expected):
    hint = hint_for(["INFO starting", line, "INFO shutting down"])
    assert hint and expected in hint


def test_unknown_failure_has_no_hint():
    assert hint_for(["Segmentation fault"]) is None
    assert hint_for([]) is None
