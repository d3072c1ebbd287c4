"""Process supervision on real processes (sleep, sh), no stack involved."""

import subprocess
import sys
import time
from pathlib import Path

from stackctl.runtime.processes import (
    ProcessRecord,
    is_running,
    last_line,
    start_ticks,
    stop_process,
    tail,
)
from tests.support.stacks import group_members, process_alive


def start_process(service: str, argv: list[str], env: dict[str, str], log_file: Path, cwd: Path) -> ProcessRecord:
    """A process in a session of its own, recorded the way the native launcher records services."""
    with log_file.open("ab") as log:
        offset = log.tell()
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   cwd=cwd, start_new_session=True)
    return ProcessRecord(service=service, pid=process.pid, start_ticks=start_ticks(process.pid) or 0,
                         started_at=time.time(), log_file=str(log_file), log_offset=offset)


def test_start_detached_record_and_stop_the_whole_group(tmp_path):
    # A parent that starts a child in its group and ignores SIGTERM: SIGKILL must follow.
    script = "trap '' TERM; sleep 60 & echo started; wait"
    record = start_process("svc", ["sh", "-c", script], {"PATH": "/usr/bin:/bin"}, tmp_path / "svc.log", tmp_path)
    deadline = time.monotonic() + 5
    while "started" not in last_line(tmp_path / "svc.log") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert is_running(record) and len(group_members(record.pid)) == 2
    assert stop_process(record, grace_s=0.5)
    assert not process_alive(record.pid) and not group_members(record.pid)
    assert not stop_process(record, grace_s=0.5)


def test_recycled_pid_is_not_mistaken_for_ours(tmp_path):
    record = start_process("svc", [sys.executable, "-c", "import time; time.sleep(30)"], {}, tmp_path / "l", tmp_path)
    impostor = record.model_copy(update={"start_ticks": record.start_ticks + 1})
    assert is_running(record) and not is_running(impostor)
    stop_process(record, grace_s=2)


def test_tail_reads_only_this_run(tmp_path):
    log = tmp_path / "svc.log"
    log.write_text("old run\n")
    record = start_process("svc", ["sh", "-c", "for i in 1 2 3; do echo line$i; done"], {"PATH": "/usr/bin:/bin"}, log, tmp_path)
    deadline = time.monotonic() + 5
    while is_running(record) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert tail(log, 2, record.log_offset) == ["line2", "line3"]
    assert tail(log, 10, record.log_offset) == ["line1", "line2", "line3"]
    assert last_line(log, record.log_offset) == "line3"
