"""benchmarks/diagnosis_coverage.py runs and prints both figures; every log the signatures were
built from keeps its fix (the held-out figure is reported, not pinned; between rounds there is none)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.unit.diagnosis.real_logs import HELDOUT_ROUNDS

_ROOT = Path(__file__).resolve().parents[3]


def test_the_benchmark_prints_both_figures_and_misses_nothing_of_the_own_set():
    done = subprocess.run([sys.executable, "benchmarks/diagnosis_coverage.py"], cwd=_ROOT, capture_output=True,
                          text=True, timeout=300, check=True)
    own = re.search(r"^own set .*: (\d+)/(\d+) = ", done.stdout, re.MULTILINE)
    held = re.search(r"^held-out .*: (\d+)/(\d+) = [\d.]+% with the right fix named", done.stdout, re.MULTILINE)
    assert own, done.stdout
    assert own[1] == own[2] and "own miss" not in done.stdout, done.stdout
    collected = len(list((_ROOT / "tests/data/heldout_failures").glob("*.log")))
    if collected:
        assert held and int(held[2]) == collected, done.stdout
    else:
        # Between rounds: the last one joined the own set and the next is not collected yet.
        assert held is None and re.search(r"^held-out .*: no held-out round yet", done.stdout, re.MULTILINE), done.stdout


def test_fallback_alone_prints_odd_even_and_all_rounds_and_lists_only_odd_misses():
    done = subprocess.run([sys.executable, "benchmarks/diagnosis_coverage.py", "--fallback-alone", "--misses"],
                          cwd=_ROOT, capture_output=True, text=True, timeout=300, check=True)
    figures = {part: re.search(rf"^fallback alone, held-out {part} rounds *: (\d+)/(\d+) = ", done.stdout, re.MULTILINE)
               for part in ("odd", "even", "all")}
    assert all(figures.values()), done.stdout
    odd, even, together = (figures[part] for part in ("odd", "even", "all"))
    assert odd and even and together
    assert int(odd[1]) + int(even[1]) == int(together[1]) and int(odd[2]) + int(even[2]) == int(together[2])
    misses = re.findall(r"^  fallback-alone miss: (\S+):", done.stdout, re.MULTILINE)
    assert len(misses) == int(odd[2]) - int(odd[1])
    odd_names = {path.stem for directory in HELDOUT_ROUNDS if int(directory.name.removeprefix("heldout_round")) % 2
                 for path in directory.glob("*.log")}
    assert set(misses) <= odd_names
