"""Back-pressure's decision: a queue past the bound on two readings in a row turns requests away."""

import pytest

from stackctl.proxy.backend.queue_watch import BackendQueueWatch
from stackctl.proxy.errors import Overloaded


def watch(*readings: float | None, bound: int = 64) -> BackendQueueWatch:
    queue = BackendQueueWatch(backend=None, max_waiting=bound, poll_s=1.0)  # type: ignore[arg-type]
    for reading in readings:
        queue.record(reading)
    return queue


@pytest.mark.parametrize("readings", [
    (),                # nothing read yet
    (200,),            # one reading past the bound: a burst being admitted
    (0, 200),          # a spike after a quiet reading
    (200, 10),         # it drained
    (200, None),       # the backend stopped answering: it answers for itself
    (64, 64),          # at the bound is not past it
])
def test_no_refusal(readings):
    watch(*readings).check()


@pytest.mark.parametrize("readings", [(65, 65), (0, 300, 120), (None, 90, 91)])
def test_a_queue_past_the_bound_twice_in_a_row_is_refused_with_the_last_reading(readings):
    with pytest.raises(Overloaded) as refused:
        watch(*readings).check()
    assert f"{readings[-1]:g} requests are waiting (the bound is 64)" in refused.value.message


def test_zero_turns_it_off():
    watch(500, 500, bound=0).check()


def test_the_log_says_when_refusals_begin_and_end(caplog):
    caplog.set_level("INFO", logger="stackctl.proxy")
    queue = watch(10, 90, 120, 130)
    queue.record(5)
    said = [record.getMessage() for record in caplog.records]
    assert said == ["refusing new requests: the backend's queue read 90 then 120 waiting (bound 64)",
                    "accepting requests again: the backend's queue reads 5 waiting"]
