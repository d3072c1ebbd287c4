"""How fast diagnosis reads a long log: `stackctl logs SERVICE --explain` reads up to 5000 lines
(commands/diagnosis_output.py, EXPLAIN_LOG_LINES), and a long-running vLLM's log is mostly
throughput lines that match nothing. Reads 5000 such lines with a real failure at the end, and
prints the time per line beside a baseline measured in the same run: one search of one short
pattern over the same lines (what touching each line with Python's `re` costs at least).

    .venv/bin/python benchmarks/diagnosis_speed.py [--lines 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_ROOT))

from stackctl.diagnosis import diagnose_log
from tests.unit.diagnosis.real_logs import FAILURE_LOGS, read_headers, throughput_lines

_FAILURE = FAILURE_LOGS / "mamba_cache_overflow__vllm-pr-38632.log"
_BASELINE = re.compile(r"Traceback \(most recent call last\)")


def best_of(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=5000, help="lines of noise before the failure")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best counts")
    args = parser.parse_args()
    _headers, failure = read_headers(_FAILURE)
    lines = [*throughput_lines(args.lines), *failure]
    diagnosis = diagnose_log(lines)
    if diagnosis is None:
        sys.exit("the failure at the end of the log was not found")
    read = best_of(args.repeat, lambda: diagnose_log(lines))
    floor = best_of(args.repeat, lambda: [_BASELINE.search(line) for line in lines])
    per_line, floor_per_line = read / len(lines) * 1e6, floor / len(lines) * 1e6
    print(f"{len(lines)} lines ({args.lines} of noise, then {_FAILURE.stem}): found {diagnosis.cause.value}")
    print(f"  diagnosis: {read:.3f} s, {per_line:.1f} us a line")
    print(f"  baseline (one short pattern searched per line): {floor:.4f} s, {floor_per_line:.2f} us a line")
    print(f"  ratio: {per_line / floor_per_line:.0f}x the baseline")


if __name__ == "__main__":
    main()
