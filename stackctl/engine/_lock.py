"""An exclusive file lock, so two processes never build the same engine or model at once."""

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive_lock(lock_path: Path) -> Iterator[None]:
    """Hold an flock on lock_path for the duration of the block (blocks until free).

    Several test sessions (one per engineer, or CI beside a developer) share one
    $STACKCTL_HOME; without the lock, two concurrent first installs would write one venv.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
