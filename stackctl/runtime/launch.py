"""`python -m stackctl.runtime.launch SPEC`: how the supervisor starts one native service.

The supervisor's config holds only this command, never a secret: at every start (the first, and
each restart after a crash) this reads the stack's .env, fills the service's `${VAR}`
environment, records the process for `status` and `doctor`, and becomes the service (exec, same
pid, so the supervisor signals the service itself).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from stackctl.envfile import read_env
from stackctl.errors import StackError
from stackctl.interpolate import interpolate
from stackctl.runtime.processes import ProcessRecord, start_ticks, stop_process

LEFTOVER_GRACE_S = 10.0


class LaunchSpec(BaseModel):
    """What `up` wrote for one service: its command, environment (with `${VAR}` references)
    and where its record and log go."""

    service: str
    argv: list[str]
    environment: dict[str, str]
    env_file: str
    record_file: str
    log_file: str
    # The `up` that wrote this spec: starts are counted per `up` (restarts = starts - 1).
    generation: float


def launch(spec: LaunchSpec) -> None:
    variables = {**read_env(Path(spec.env_file)), **os.environ}
    environment = dict(os.environ)
    for key, value in spec.environment.items():
        environment[key] = interpolate(value, variables)
    record_file = Path(spec.record_file)
    previous = _read_record(record_file)
    if previous is not None:
        # A crashed run's children (vLLM's engine core) outlive it in its process group, holding
        # memory and ports: they go before the service starts again.
        stop_process(previous, LEFTOVER_GRACE_S)
    starts = previous.starts + 1 if previous and previous.generation == spec.generation else 1
    log_file = Path(spec.log_file)
    record = ProcessRecord(
        service=spec.service, pid=os.getpid(), start_ticks=start_ticks(os.getpid()) or 0, started_at=time.time(),
        log_file=str(log_file), log_offset=log_file.stat().st_size if log_file.exists() else 0,
        starts=starts, generation=spec.generation,
    )
    record_file.parent.mkdir(parents=True, exist_ok=True)
    temporary = record_file.with_suffix(".tmp")
    temporary.write_text(record.model_dump_json())
    os.replace(temporary, record_file)
    os.execvpe(spec.argv[0], spec.argv, environment)


def _read_record(path: Path) -> ProcessRecord | None:
    try:
        return ProcessRecord.model_validate_json(path.read_text())
    except (OSError, ValidationError):
        return None


def main(argv: list[str]) -> int:
    try:
        launch(LaunchSpec.model_validate_json(Path(argv[1]).read_text()))
    except (OSError, ValidationError, StackError, IndexError) as error:
        # Lands in the service's log (the supervisor captures it), where `up` and `logs` look.
        print(f"stackctl: cannot start the service: {error}", file=sys.stderr)
        return 1
    return 0  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv))
