"""How much of each Claude Code turn vLLM's prefix cache serves, with the filter-proxy's two
placements of Claude Code's inline system messages, measured in the same run.

One command, one table, one figure. For each placement, on a fresh vLLM CPU engine serving the
demo model (window 131072), through `stackctl proxy serve --system-placement P`:

- a real five-turn Claude Code session (`claude -p`, then `--continue`), the first turn
  yesterday and the rest today (two time zones 26 h apart): Claude Code appends "The date has
  changed..." as a system message, as in a session resumed the next morning;
- the first turn of a second session (another prompt): what one session leaves for the next.

Per turn: vLLM's `vllm:prefix_cache_hits` / `vllm:prefix_cache_queries` (tokens served from the
cache / prompt tokens looked up) and the turn's wall time. `front` merges every system text into
the first message (the proxy's conversion before `in-place`); `in-place` (the default) keeps the
inline text where it stood, as a <system-reminder>, and drops Claude Code's per-session billing
header.

    .venv/bin/python benchmarks/prefix_cache.py [--figure benchmarks/figures/prefix_cache.svg]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx
from proxy_process import proxy_process

from tests.support.npm_clients import CLAUDE_CODE, InstalledClient, installed
from tests.support.vllm_server import running_vllm

WINDOW = 131072
YESTERDAY, TODAY = "Etc/GMT+12", "Etc/GMT-14"  # 26 h apart: the date always differs
PLACEMENTS = ("front", "in-place")
CLIENT_KEY = "sk-bench-prefix-cache"


@dataclass(frozen=True)
class Turn:
    label: str
    hits: float
    queries: float
    seconds: float

    @property
    def ratio(self) -> float:
        return self.hits / self.queries if self.queries else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--figure", type=Path, default=REPO / "benchmarks" / "figures" / "prefix_cache.svg")
    parser.add_argument("--turns", type=int, default=5)
    options = parser.parse_args()
    claude = installed(CLAUDE_CODE, CLAUDE_CODE.pinned)
    results: dict[str, list[Turn]] = {}
    with tempfile.TemporaryDirectory(prefix="prefix-bench-") as scratch:
        for placement in PLACEMENTS:
            work = Path(scratch) / placement
            work.mkdir()
            results[placement] = measure(placement, claude, work, options.turns)
    print_table(results, claude)
    options.figure.parent.mkdir(parents=True, exist_ok=True)
    options.figure.write_text(svg(results, claude))
    print(f"figure: {options.figure}")


def measure(placement: str, claude: InstalledClient, work: Path, turns: int) -> list[Turn]:
    with running_vllm(work, max_model_len=WINDOW) as vllm, proxy(vllm.base_url, vllm.api_key, placement, work) as url:
        session = work / "session"
        session.mkdir()
        measured = []
        for number in range(1, turns + 1):
            flags = ("--continue",) if number > 1 else ()
            zone = YESTERDAY if number == 1 else TODAY
            measured.append(turn(vllm.base_url, claude, url, session, f"turn {number}: say hi", flags, zone,
                                 f"turn {number}" + (" (next day)" if number == 2 else "")))
        other = work / "other-session"
        other.mkdir()
        measured.append(turn(vllm.base_url, claude, url, other, "a new session: say hello", (), TODAY,
                             "new session, turn 1"))
    return measured


def turn(vllm_url: str, claude: InstalledClient, proxy_url: str, cwd: Path, prompt: str, flags: tuple[str, ...],
         zone: str, label: str) -> Turn:
    before = prefix_counters(vllm_url)
    env = {
        "PATH": os.environ["PATH"], "HOME": str(cwd.parent / "home"), "TZ": zone,
        "ANTHROPIC_BASE_URL": proxy_url, "ANTHROPIC_AUTH_TOKEN": CLIENT_KEY, "ANTHROPIC_MODEL": "tiny",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": "tiny", "CLAUDE_CODE_AUTO_COMPACT_WINDOW": str(WINDOW),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }  # fmt: skip
    began = time.monotonic()
    done = subprocess.run([str(claude.executable), "-p", prompt, "--output-format", "json", *flags], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=900, check=False)
    seconds = time.monotonic() - began
    if done.returncode != 0 or '"is_error":false' not in done.stdout:
        sys.exit(f"{claude.label} failed on {label}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    after = prefix_counters(vllm_url)
    return Turn(label, after[0] - before[0], after[1] - before[1], seconds)


def prefix_counters(vllm_url: str) -> tuple[float, float]:
    values = {}
    for line in httpx.get(f"{vllm_url}/metrics", timeout=10).text.splitlines():
        for name in ("hits", "queries"):
            if line.startswith(f"vllm:prefix_cache_{name}_total"):
                values[name] = float(line.split()[-1])
    return values["hits"], values["queries"]


def proxy(backend_url: str, backend_key: str | None, placement: str, work: Path):  # type: ignore[no-untyped-def]
    return proxy_process(backend_url, backend_key, client_key=CLIENT_KEY, model="tiny", placement=placement, work=work)


def session_ratio(turns: list[Turn]) -> float:
    session = turns[:-1]
    return sum(t.hits for t in session) / sum(t.queries for t in session)


def print_table(results: dict[str, list[Turn]], claude: InstalledClient) -> None:
    print(f"\n{claude.label}, vLLM CPU + demo model (window {WINDOW}); hits/queries in prompt tokens\n")
    labels = [turn.label for turn in results[PLACEMENTS[0]]]
    print(f"{'':22}" + "".join(f"{placement:>34}" for placement in PLACEMENTS))
    for index, label in enumerate(labels):
        cells = "".join(
            f"{t.hits:>9.0f} / {t.queries:>6.0f} = {t.ratio:5.1%} {t.seconds:5.1f} s"
            for t in (results[p][index] for p in PLACEMENTS)
        )
        print(f"{label:22}{cells}")
    ratios = {placement: session_ratio(turns) for placement, turns in results.items()}
    print("\nfive-turn session, hits/queries: " + ", ".join(f"{p} {r:.1%}" for p, r in ratios.items()))
    prefilled = {p: sum(t.queries - t.hits for t in turns[:-1]) for p, turns in results.items()}
    print("tokens prefilled over the session: " + ", ".join(f"{p} {n:.0f}" for p, n in prefilled.items()))


def svg(results: dict[str, list[Turn]], claude: InstalledClient) -> str:
    """A grouped bar chart: per turn, each placement's share of the prompt served from cache."""
    colours = {"front": "#b0b0b0", "in-place": "#2b7bb9"}
    labels = [turn.label for turn in results[PLACEMENTS[0]]]
    width, height, left, bottom, top = 760, 360, 60, 70, 50
    plot_w, plot_h = width - left - 20, height - top - bottom
    group = plot_w / len(labels)
    bar = group / (len(PLACEMENTS) + 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-size="11" '
        + 'font-family="sans-serif">',
        f'<text x="{left}" y="20" font-size="14">vLLM prefix-cache hits / queries per Claude Code turn</text>',
        f'<text x="{left}" y="36" fill="#555">{claude.label}, demo model on vLLM CPU; '
        + ", ".join(f"{p}: session {session_ratio(t):.1%}" for p, t in results.items()) + "</text>",
    ]
    for tick in range(0, 101, 25):
        y = top + plot_h * (1 - tick / 100)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}%</text>')
    for index, label in enumerate(labels):
        x0 = left + index * group + bar / 2
        for offset, placement in enumerate(PLACEMENTS):
            ratio = results[placement][index].ratio
            h = plot_h * ratio
            x = x0 + offset * bar
            parts.append(f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar * 0.9:.1f}" height="{h:.1f}" '
                         f'fill="{colours[placement]}"/>')
            parts.append(f'<text x="{x + bar * 0.45:.1f}" y="{top + plot_h - h - 3:.1f}" text-anchor="middle" '
                         f'font-size="9">{ratio:.0%}</text>')
        parts.append(f'<text x="{left + index * group + group / 2:.1f}" y="{top + plot_h + 16}" '
                     f'text-anchor="middle">{label}</text>')
    for offset, placement in enumerate(PLACEMENTS):
        y = height - 22
        x = left + offset * 200
        parts.append(f'<rect x="{x}" y="{y - 9}" width="12" height="12" fill="{colours[placement]}"/>')
        parts.append(f'<text x="{x + 18}" y="{y + 1}">--system-placement {placement}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    main()
