"""What the filter-proxy costs in front of a real engine: one table, measured in one run on a running
stack, for each concurrency level:

- direct: streamed chat completions straight to vLLM (its own port and key);
- direct+usage: the same, asking vLLM for usage on every chunk (`continuous_usage_stats`, as the
  proxy's Anthropic route does so that message_start carries the prompt's size): what that costs
  vLLM's own server;
- openai: the same requests through the filter-proxy's OpenAI route (a client key);
- anthropic: the same prompt as Anthropic Messages through the proxy's translation.

TTFT p50/p99, aggregate text tokens/s and failed streams (a stream that ends without its closing
event, or an error status), and what each route adds to direct. Where the CPU went, per route: the
cores used by vLLM's server (the process on its port and its engine processes), by the proxy (its
parent and workers) and by the client, read from /proc around each pass (benchmarks/process_cpu.py). Every reply asks for --tokens
tokens (`ignore_eos` where the API has it; the GPU check's model never ends a turn by itself, so
the Anthropic route runs to the same length). The client (benchmarks/stream_client.py) is sharded
over worker processes; `--client-check` first measures it alone against vLLM with one worker and
with several, so a ceiling of the client is not read as one of the proxy.

    .venv/bin/python benchmarks/engine_routes.py --stack DIR [--levels 1,16,64,256] [--tokens 256]
        [--client-check] [--proxy-port PORT] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
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


def requests_each(concurrency: int) -> int:
    """Enough streams per level for a p99 that means something, a few rounds at most."""
    return 16 if concurrency == 1 else max(2, 64 // concurrency)


@dataclass
class ServerCpu:
    """CPU seconds each server used while one route ran at one level (both passes)."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, used: dict[str, float]) -> None:
        for name, seconds in used.items():
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def cores(self, name: str, wall_seconds: float) -> float:
        return self.seconds.get(name, 0.0) / wall_seconds if wall_seconds else float("nan")


def measure(routes: list[Target], levels: list[int], servers: dict[str, int],
            processes: int | None = None) -> tuple[list[LevelResult], dict[tuple[str, int], ServerCpu]]:
    """Each level: one untimed round learns how long a reply takes (the agents' first requests are
    then spread over it, the same for every route), then every route twice, in one order and in
    the reverse one, so no route is favoured by going first (a cold cache, a warming GPU).
    `servers` (name -> port): whose CPU to read around each pass."""
    results = []
    cpu: dict[tuple[str, int], ServerCpu] = {}
    for concurrency in levels:
        probe = run_level(routes[0], concurrency, 1, processes=processes)
        durations = sorted(sample.stream_seconds for sample in probe.ok) or [0.0]
        spread = durations[len(durations) // 2]
        passes = []
        for route in [*routes, *reversed(routes)]:
            meter = PortCpu(servers)
            passes.append(run_level(route, concurrency, max(1, requests_each(concurrency) // 2),
                                    spread_seconds=spread, processes=processes))
            cpu.setdefault((route.name, concurrency), ServerCpu()).add(meter.used())
        for route in routes:
            merged = merge([result for result in passes if result.target == route.name])
            results.append(merged)
            print(f"  {route.name:<16} c{concurrency:<4} {summary(merged)}; "
                  f"{cores_text(cpu[(route.name, concurrency)], merged)}", flush=True)
    return results, cpu


def cores_text(cpu: ServerCpu, result: LevelResult) -> str:
    return ", ".join(f"{name} {cpu.cores(name, result.wall_seconds):.2f} cores" for name in cpu.seconds)


def merge(parts: list[LevelResult]) -> LevelResult:
    """Two passes of one route as one result: their samples, their walls and CPU added."""
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
    single = run_level(direct, concurrency, requests_each(concurrency), processes=1)
    sharded = run_level(direct, concurrency, requests_each(concurrency))
    tokens = sum(sample.tokens for sample in single.ok) or 1
    check = {"concurrency": concurrency, "one_worker_tokens_per_s": single.aggregate_rate,
             "sharded_tokens_per_s": sharded.aggregate_rate, "sharded_workers": sharded.client_processes,
             "client_cpu_us_per_token": single.client_cpu_seconds / tokens * 1e6,
             "one_worker_cores": single.client_cores}
    print(f"client check at c{concurrency}: one worker {single.aggregate_rate:.0f} tok/s "
          f"({single.client_cores:.2f} cores, {check['client_cpu_us_per_token']:.1f} us CPU/token), "
          f"{sharded.client_processes} workers {sharded.aggregate_rate:.0f} tok/s", flush=True)
    return check


def table(results: list[LevelResult], levels: list[int], cpu: dict[tuple[str, int], ServerCpu]) -> str:
    lines = [("| concurrency | route | TTFT p50 | TTFT p99 | added p50 | text deltas/s | tokens/s | vs direct | tok/stream "
             "| failed | vLLM cores | proxy cores | client cores |"), "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for concurrency in levels:
        level = [result for result in results if result.concurrency == concurrency]
        direct = next(result for result in level if result.target == DIRECT)
        for result in level:
            used = cpu.get((result.target, concurrency), ServerCpu())
            added = result.ttft_ms(0.5) - direct.ttft_ms(0.5)
            share = result.usage_rate / direct.usage_rate if direct.usage_rate else float("nan")
            lines.append(f"| {concurrency} | {result.target} | {result.ttft_ms(0.5):.1f} ms | {result.ttft_ms(0.99):.1f} ms "
                         f"| {'-' if result is direct else f'{added:+.1f} ms'} | {result.aggregate_rate:.0f} "
                         f"| {result.usage_rate:.0f} | {share:.1%} | {result.mean_usage_tokens:.0f} "
                         f"| {result.failures}/{len(result.samples)} "
                         f"| {used.cores('vllm', result.wall_seconds):.2f} | {used.cores('proxy', result.wall_seconds):.2f} "
                         f"| {result.client_cores:.2f} |")
    return "\n".join(lines)


def as_json(results: list[LevelResult], cpu: dict[tuple[str, int], ServerCpu]) -> list[dict]:
    return [{"route": result.target, "concurrency": result.concurrency, "streams": len(result.samples),
             "failed": result.failures, "errors": sorted({sample.error for sample in result.samples if sample.error})[:5],
             "ttft_p50_ms": result.ttft_ms(0.5), "ttft_p99_ms": result.ttft_ms(0.99),
             "text_deltas_per_s": result.aggregate_rate, "tokens_per_s": result.usage_rate,
             "tokens_per_stream": result.mean_usage_tokens, "deltas_per_stream": result.mean_tokens,
             "client_cores": result.client_cores, "client_processes": result.client_processes,
             "server_cores": {name: cpu[(result.target, result.concurrency)].cores(name, result.wall_seconds)
                              for name in cpu.get((result.target, result.concurrency), ServerCpu()).seconds}}
            for result in results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", type=Path, required=True, help="the stack directory (stack.yaml, .env)")
    parser.add_argument("--levels", default="1,16,64,256")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--routes", default=f"{DIRECT},{DIRECT_USAGE},{OPENAI},{ANTHROPIC}")
    parser.add_argument("--client-check", action="store_true")
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
    results, cpu = measure(routes, levels, {"vllm": access.vllm_port, "proxy": access.proxy_port})
    report["results"] = as_json(results, cpu)
    report["table"] = table(results, levels, cpu)
    print(report["table"])
    if options.json:
        options.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
