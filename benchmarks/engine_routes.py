"""What the filter-proxy costs in front of a real engine: one table, measured in one run on a running
stack, for each concurrency level:

- direct: streamed chat completions straight to vLLM (its own port and key);
- direct+usage: the same, asking vLLM for usage on every chunk (`continuous_usage_stats`, as the
  proxy's Anthropic route did before it asked once, at the end): what that costs vLLM's server;
- openai: the same requests through the filter-proxy's OpenAI route (a client key);
- anthropic: the same prompt as Anthropic Messages through the proxy's translation.

TTFT p50/p99, aggregate text tokens/s and failed streams (a stream that ends without its closing
event, or an error status), and what each route adds to direct: per level, --rounds rounds run
every route once, back to back, and each route's share of direct's throughput and its added TTFT
are taken round by round (the median, with the rounds' range). Where the CPU went, per route: the
cores used by vLLM's server (the process on its port and its engine processes), by the proxy (its
parent and workers) and by the client, read from /proc around each pass (process_cpu.py). Every
reply asks for --tokens tokens (`ignore_eos` where the API has it; the GPU check's model never
ends a turn by itself, so the Anthropic route runs to the same length). The client (benchmarks/stream_client.py) is sharded
over worker processes; `--client-check` first measures it alone against vLLM with one worker and
with several, so a ceiling of the client is not read as one of the proxy.

    .venv/bin/python benchmarks/engine_routes.py --stack DIR [--levels 1,16,64,256] [--tokens 256]
        [--rounds 3] [--mixed] [--client-check] [--proxy-port PORT] [--json FILE]

--mixed runs each route and direct at the same time, half the streams each, and compares what a
closed loop of each side's agents delivers (tokens over TTFT + streaming) and their TTFT: the
engine's own swings between passes (10-20% at 64 and 256 streams on an H100) then touch both.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from process_cpu import PortCpu
from stream_client import LevelResult, Target, run_level

from stackctl.config import load_stack_config
from stackctl.envfile import read_env

PROMPT = "Write a long story about a lighthouse keeper."
DIRECT, DIRECT_USAGE, OPENAI, ANTHROPIC = "direct", "direct+usage", "openai route", "anthropic route"


@dataclass(frozen=True)
class StackAccess:
    vllm_port: int
    proxy_port: int
    vllm_key: str
    client_key: str
    model: str


def stack_access(stack_dir: Path, proxy_port: int | None = None) -> StackAccess:
    config = load_stack_config(stack_dir / "stack.yaml")
    env = read_env(stack_dir / ".env")
    client_key = env["STACKCTL_PROXY_KEYS"].split(",")[0].split("=", 1)[1]
    return StackAccess(config.ports.vllm, proxy_port or config.ports.proxy, env.get("VLLM_API_KEY", ""), client_key,
                       config.served_name)


def targets(access: StackAccess, tokens: int) -> list[Target]:
    chat_body = {"model": access.model, "stream": True, "max_tokens": tokens, "ignore_eos": True,
                 "stream_options": {"include_usage": True}, "messages": [{"role": "user", "content": PROMPT}]}
    chat = json.dumps(chat_body).encode()
    chat_usage = json.dumps({**chat_body, "stream_options": {"include_usage": True,
                                                             "continuous_usage_stats": True}}).encode()
    messages = json.dumps({"model": access.model, "stream": True, "max_tokens": tokens,
                           "messages": [{"role": "user", "content": PROMPT}]}).encode()
    return [
        Target(DIRECT, access.vllm_port, "/v1/chat/completions", {"authorization": f"Bearer {access.vllm_key}"}, chat,
               "openai"),
        Target(DIRECT_USAGE, access.vllm_port, "/v1/chat/completions",
               {"authorization": f"Bearer {access.vllm_key}"}, chat_usage, "openai"),
        Target(OPENAI, access.proxy_port, "/v1/chat/completions", {"authorization": f"Bearer {access.client_key}"},
               chat, "openai"),
        Target(ANTHROPIC, access.proxy_port, "/v1/messages",
               {"x-api-key": access.client_key, "anthropic-version": "2023-06-01"}, messages, "anthropic"),
    ]


def per_pass(concurrency: int) -> int:
    """Requests each connection sends in one pass: enough for several seconds of steady decoding
    at GPU speed, so a pass is not one wave's ramp up and down (whose edges dominated the short
    passes of the first H100 runs: direct alone moved 12k-20k tokens/s between passes at 256)."""
    return {1: 8, 16: 4, 64: 4}.get(concurrency, 2)


@dataclass
class ServerCpu:
    """CPU seconds each server used while one route ran at one level (all its rounds)."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, used: dict[str, float]) -> None:
        for name, seconds in used.items():
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def cores(self, name: str, wall_seconds: float) -> float:
        return self.seconds.get(name, 0.0) / wall_seconds if wall_seconds else float("nan")


@dataclass(frozen=True)
class Paired:
    """A route against direct, round by round (each round runs every route once, back to back):
    the throughput share and the added TTFT p50 of each round, so the spread between rounds shows."""

    shares: list[float]
    added_ttft_ms: list[float]

    @staticmethod
    def of(route: list[LevelResult], direct: list[LevelResult]) -> Paired:
        pairs = list(zip(route, direct, strict=True))
        return Paired([mine.usage_rate / base.usage_rate if base.usage_rate else float("nan") for mine, base in pairs],
                      [mine.ttft_ms(0.5) - base.ttft_ms(0.5) for mine, base in pairs])

    @property
    def share(self) -> float:
        return statistics.median(self.shares)

    @property
    def added_ms(self) -> float:
        return statistics.median(self.added_ttft_ms)


@dataclass
class Measured:
    results: list[LevelResult] = field(default_factory=list)  # each route's rounds merged, per level
    cpu: dict[tuple[str, int], ServerCpu] = field(default_factory=dict)
    paired: dict[tuple[str, int], Paired] = field(default_factory=dict)


def reply_seconds(target: Target, concurrency: int, processes: int | None = None) -> float:
    """One untimed round at this level: how long a reply takes (the median), over which the
    agents' first requests are then spread."""
    probe = run_level(target, concurrency, 1, processes=processes)
    durations = sorted(sample.stream_seconds for sample in probe.ok) or [0.0]
    return durations[len(durations) // 2]


def measure(routes: list[Target], levels: list[int], servers: dict[str, int], rounds: int = 3,
            processes: int | None = None) -> Measured:
    """Each level: one untimed round learns how long a reply takes (the agents' first requests are
    then spread over it, the same for every route), then `rounds` rounds of every route, in one
    order and then the reverse, so no route is favoured by going first (a cold cache, a warming
    GPU). `servers` (name -> port): whose CPU to read around each pass."""
    measured = Measured()
    for concurrency in levels:
        spread = reply_seconds(routes[0], concurrency, processes)
        by_round: list[dict[str, LevelResult]] = []
        for number in range(rounds):
            this: dict[str, LevelResult] = {}
            for route in routes if number % 2 == 0 else list(reversed(routes)):
                meter = PortCpu(servers)
                this[route.name] = run_level(route, concurrency, per_pass(concurrency), spread_seconds=spread,
                                             processes=processes)
                measured.cpu.setdefault((route.name, concurrency), ServerCpu()).add(meter.used())
            by_round.append(this)
        for route in routes:
            merged = merge([this[route.name] for this in by_round])
            measured.results.append(merged)
            if DIRECT in by_round[0]:
                measured.paired[(route.name, concurrency)] = Paired.of([this[route.name] for this in by_round],
                                                                       [this[DIRECT] for this in by_round])
            print(f"  {route.name:<16} c{concurrency:<4} {summary(merged)}; "
                  f"{cores_text(measured.cpu[(route.name, concurrency)], merged)}", flush=True)
    return measured


def cores_text(cpu: ServerCpu, result: LevelResult) -> str:
    return ", ".join(f"{name} {cpu.cores(name, result.wall_seconds):.2f} cores" for name in cpu.seconds)


def merge(parts: list[LevelResult]) -> LevelResult:
    """The passes of one route as one result: their samples, their walls and CPU added."""
    merged = LevelResult(parts[0].target, parts[0].concurrency, client_processes=parts[0].client_processes)
    for part in parts:
        merged.samples += part.samples
        merged.wall_seconds += part.wall_seconds
        merged.client_cpu_seconds += part.client_cpu_seconds
    return merged


def summary(result: LevelResult) -> str:
    return (f"TTFT p50 {result.ttft_ms(0.5):.1f} ms, {result.aggregate_rate:.0f} deltas/s, {result.usage_rate:.0f} tok/s, "
            f"{result.mean_usage_tokens:.0f} tok/stream, {result.failures} failed, client {result.client_cores:.2f} cores")


def client_check(direct: Target, concurrency: int) -> dict[str, float]:
    """The client alone against vLLM: one worker process against several, at the highest level."""
    single = run_level(direct, concurrency, per_pass(concurrency), processes=1)
    sharded = run_level(direct, concurrency, per_pass(concurrency))
    tokens = sum(sample.tokens for sample in single.ok) or 1
    check = {"concurrency": concurrency, "one_worker_tokens_per_s": single.aggregate_rate,
             "sharded_tokens_per_s": sharded.aggregate_rate, "sharded_workers": sharded.client_processes,
             "client_cpu_us_per_token": single.client_cpu_seconds / tokens * 1e6,
             "one_worker_cores": single.client_cores}
    print(f"client check at c{concurrency}: one worker {single.aggregate_rate:.0f} tok/s "
          f"({single.client_cores:.2f} cores, {check['client_cpu_us_per_token']:.1f} us CPU/token), "
          f"{sharded.client_processes} workers {sharded.aggregate_rate:.0f} tok/s", flush=True)
    return check


def table(measured: Measured, levels: list[int]) -> str:
    """`vs direct` and `added p50`: the median over the rounds of each round's figure against
    direct's in the same round, with the rounds' range in brackets."""
    lines = [("| concurrency | route | TTFT p50 | TTFT p99 | added p50 | text deltas/s | tokens/s | vs direct | tok/stream "
             "| failed | vLLM cores | proxy cores | client cores |"), "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for concurrency in levels:
        for result in (result for result in measured.results if result.concurrency == concurrency):
            used = measured.cpu.get((result.target, concurrency), ServerCpu())
            paired = measured.paired.get((result.target, concurrency))
            if result.target == DIRECT or paired is None:
                added, share = "-", "100.0%" if result.target == DIRECT else "-"
            else:
                added = (f"{paired.added_ms:+.1f} ms ({min(paired.added_ttft_ms):+.1f}..{max(paired.added_ttft_ms):+.1f})")
                share = f"{paired.share:.1%} ({min(paired.shares):.0%}-{max(paired.shares):.0%})"
            lines.append(f"| {concurrency} | {result.target} | {result.ttft_ms(0.5):.1f} ms | {result.ttft_ms(0.99):.1f} ms "
                         f"| {added} | {result.aggregate_rate:.0f} | {result.usage_rate:.0f} | {share} "
                         f"| {result.mean_usage_tokens:.0f} | {result.failures}/{len(result.samples)} "
                         f"| {used.cores('vllm', result.wall_seconds):.2f} | {used.cores('proxy', result.wall_seconds):.2f} "
                         f"| {result.client_cores:.2f} |")
    return "\n".join(lines)


def as_json(measured: Measured) -> list[dict]:
    rows = []
    for result in measured.results:
        key = (result.target, result.concurrency)
        used = measured.cpu.get(key, ServerCpu())
        paired = measured.paired.get(key)
        rows.append({
            "route": result.target, "concurrency": result.concurrency, "streams": len(result.samples),
            "failed": result.failures, "errors": sorted({sample.error for sample in result.samples if sample.error})[:5],
            "ttft_p50_ms": result.ttft_ms(0.5), "ttft_p99_ms": result.ttft_ms(0.99),
            "text_deltas_per_s": result.aggregate_rate, "tokens_per_s": result.usage_rate,
            "tokens_per_stream": result.mean_usage_tokens, "deltas_per_stream": result.mean_tokens,
            "client_cores": result.client_cores, "client_processes": result.client_processes,
            "server_cores": {name: used.cores(name, result.wall_seconds) for name in used.seconds},
            "share_of_direct_by_round": paired.shares if paired else None,
            "added_ttft_p50_ms_by_round": paired.added_ttft_ms if paired else None,
        })
    return rows


# ---- mixed: each route beside direct at the same time, on the same engine ------------------------


@dataclass(frozen=True)
class Side:
    """One side of a mixed pass: its streams' TTFT and what a closed loop of them delivers."""

    result: LevelResult

    @property
    def cycle_rate(self) -> float:
        """Tokens per second of one agent's loop: tokens over (TTFT + streaming), summed over its
        streams; a closed loop of C agents delivers C times this."""
        ok = self.result.ok
        seconds = sum(sample.ttft + sample.stream_seconds for sample in ok)
        return sum(sample.usage_tokens or sample.tokens for sample in ok) / seconds if seconds else 0.0


@dataclass
class MixedRow:
    route: str
    concurrency: int
    shares: list[float] = field(default_factory=list)  # the route's loop rate / direct's, per round
    added_ttft_ms: list[float] = field(default_factory=list)
    route_rounds: list[LevelResult] = field(default_factory=list)
    direct_rounds: list[LevelResult] = field(default_factory=list)

    @property
    def route_result(self) -> LevelResult:
        return merge(self.route_rounds)

    @property
    def direct_result(self) -> LevelResult:
        return merge(self.direct_rounds)


def measure_mixed(routes: list[Target], levels: list[int], rounds: int) -> list[MixedRow]:
    """Each route and direct run at the same time, half the level's streams each (one each at 1):
    the engine's state, which moves the sequential passes' figures by 10-20% at 64 and 256 streams
    on an H100, is then the same for both, and what is left between them is the route's."""
    import concurrent.futures

    direct = next(route for route in routes if route.name == DIRECT)
    rows = []
    for concurrency in levels:
        half = max(1, concurrency // 2)
        spread = reply_seconds(direct, concurrency)
        for route in (route for route in routes if route is not direct):
            row = MixedRow(route.name, concurrency)
            for _ in range(rounds):
                with concurrent.futures.ThreadPoolExecutor(2) as pool:
                    mine, base = (pool.submit(run_level, target, half, per_pass(concurrency), spread_seconds=spread)
                                  for target in (route, direct))
                    route_side, direct_side = Side(mine.result()), Side(base.result())
                row.shares.append(route_side.cycle_rate / direct_side.cycle_rate if direct_side.cycle_rate else 0.0)
                row.added_ttft_ms.append(route_side.result.ttft_ms(0.5) - direct_side.result.ttft_ms(0.5))
                row.route_rounds.append(route_side.result)
                row.direct_rounds.append(direct_side.result)
            rows.append(row)
            print(f"  mixed {route.name:<16} c{concurrency:<4} vs direct {statistics.median(row.shares):.1%}, "
                  f"added TTFT p50 {statistics.median(row.added_ttft_ms):+.1f} ms", flush=True)
    return rows


def mixed_table(rows: list[MixedRow]) -> str:
    lines = [("| concurrency | route (beside direct) | added TTFT p50 | vs direct | TTFT p50 route / direct "
              "| failed route / direct |"), "|---|---|---|---|---|---|"]
    for row in rows:
        mine, base = row.route_result, row.direct_result
        lines.append(
            f"| {row.concurrency} | {row.route} | {statistics.median(row.added_ttft_ms):+.1f} ms "
            f"({min(row.added_ttft_ms):+.1f}..{max(row.added_ttft_ms):+.1f}) | {statistics.median(row.shares):.1%} "
            f"({min(row.shares):.0%}-{max(row.shares):.0%}) | {mine.ttft_ms(0.5):.1f} / {base.ttft_ms(0.5):.1f} ms "
            f"| {mine.failures}/{len(mine.samples)} / {base.failures}/{len(base.samples)} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", type=Path, required=True, help="the stack directory (stack.yaml, .env)")
    parser.add_argument("--levels", default="1,16,64,256")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every route per level (paired with direct)")
    parser.add_argument("--routes", default=f"{DIRECT},{DIRECT_USAGE},{OPENAI},{ANTHROPIC}")
    parser.add_argument("--client-check", action="store_true")
    parser.add_argument("--mixed", action="store_true", help="each route beside direct at the same time (half "
                        "the streams each), in place of the sequential passes")
    parser.add_argument("--proxy-port", type=int, help="another filter-proxy in front of the same vLLM, with the "
                        "stack's keys (e.g. an older release, to compare in the same run)")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    levels = [int(level) for level in options.levels.split(",")]
    wanted = options.routes.split(",")
    access = stack_access(options.stack, options.proxy_port)
    routes = [route for route in targets(access, options.tokens) if route.name in wanted]
    report: dict = {"levels": levels, "tokens": options.tokens}
    if options.client_check:
        report["client_check"] = client_check(routes[0], max(levels))
    if options.mixed:
        rows = measure_mixed(routes, levels, options.rounds)
        report["mixed"] = [{"route": row.route, "concurrency": row.concurrency, "share_of_direct_by_round": row.shares,
                            "added_ttft_p50_ms_by_round": row.added_ttft_ms,
                            "failed": row.route_result.failures, "direct_failed": row.direct_result.failures}
                           for row in rows]
        report["table"] = mixed_table(rows)
    else:
        measured = measure(routes, levels, {"vllm": access.vllm_port, "proxy": access.proxy_port}, options.rounds)
        report["results"] = as_json(measured)
        report["table"] = table(measured, levels)
    print(report["table"])
    if options.json:
        options.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
