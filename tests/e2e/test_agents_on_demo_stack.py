"""Real coding agents against the demo stack's real vLLM engine (CPU, the tiny demo model), the
way a user points them at it: the lines `up` prints, run as printed (`stackctl launch CLIENT`
for Claude Code, Codex, opencode and OpenClaw: nothing written into their files), and the
configuration `stackctl connect --write` puts in their own files.

Claude Code's first request is ~35k tokens of the demo tokenizer with max_tokens 32000: the
request that used to fail ("max_tokens=32000 cannot be greater than max_model_len=2048", then
"prompt too long"). A session of five turns shows what vLLM's prefix cache keeps of each turn;
`stackctl cache-report` follows the sessions of Claude Code and opencode, and names where a client
whose system prompt carries the time breaks its own prefix.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import anthropic
import httpx
import pytest

from tests.support.cli import run_cli
from tests.support.npm_clients import InstalledClient
from tests.support.stacks import DemoStack, make_demo_stack

pytestmark = [pytest.mark.e2e, pytest.mark.vllm]

# Two time zones 26 hours apart: a session continued under the second has changed date, as one
# resumed the next morning (Claude Code then appends "The date has changed..." as a system message).
YESTERDAY, TODAY = "Etc/GMT+12", "Etc/GMT-14"


@pytest.fixture(scope="module")
def started(tmp_path_factory):  # type: ignore[no-untyped-def]
    demo = make_demo_stack(tmp_path_factory.mktemp("agents") / "stack")
    with demo.running() as output:
        yield demo, output


LAUNCHED = {"Claude Code": "claude", "Codex": "codex", "opencode": "opencode", "OpenClaw": "openclaw"}
# What `connect --write` would write: `launch` must leave each of these alone.
CLIENT_FILES = {"claude": ".claude/settings.json", "codex": ".codex/config.toml",
                "opencode": ".config/opencode/opencode.json", "openclaw": ".openclaw/openclaw.json"}


def printed_lines(output: str) -> dict[str, str]:
    """`up`'s client lines by their label ("key:", "curl:", "Claude Code:", "Codex:", ...)."""
    lines = {}
    for line in output.splitlines():
        label, _, rest = line.partition(": ")
        if label in ("key", "curl", *LAUNCHED):
            lines[label] = rest.strip()
    assert set(lines) == {"key", "curl", *LAUNCHED}, output
    return lines


def client_env(home: Path, *extra_path: Path, **variables: str) -> dict[str, str]:
    """Nothing from the developer's environment but PATH: only what the test sets."""
    path = os.pathsep.join([*(str(p) for p in extra_path), os.environ["PATH"]])
    return {"PATH": path, "HOME": str(home), **variables}


def connect_write(stack: DemoStack, client: str, home: Path) -> None:
    result = run_cli("connect", client, "--write", "--host", "127.0.0.1", cwd=stack.root, env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert stack.client_key not in result.stdout + result.stderr


def connected(stack: DemoStack, client: str, tmp_path: Path) -> tuple[Path, Path]:
    """A HOME whose client configuration `connect --write` made, and a folder to work in."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    connect_write(stack, client, home)
    return home, work


def claude_turn(claude: InstalledClient, home: Path, work: Path, prompt: str, *flags: str,
                **variables: str) -> dict:
    done = subprocess.run(
        [str(claude.executable), "-p", prompt, "--output-format", "json", *flags],
        env=client_env(home, **variables), cwd=work, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{claude.label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    reply = json.loads(done.stdout)
    assert reply["is_error"] is False, f"{claude.label}: {reply}"
    return reply


def run_printed(started, title: str, args: str, client: InstalledClient, home: Path,
                **variables: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    """`up`'s line for a client, run as printed in a shell (KEY set by the printed key line
    first) with `args` added, the client's folder on PATH and a HOME of its own, whose client
    files `launch` must leave alone."""
    stack, output = started
    lines = printed_lines(output)
    home.mkdir(exist_ok=True)
    done = subprocess.run(["bash", "-c", f"{lines['key']}; {lines[title]} {args}"], cwd=stack.root,
                          env=client_env(home, *client.path, **variables), capture_output=True, text=True,
                          timeout=600, check=False, stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 0, f"{client.label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    assert stack.client_key not in done.stdout + done.stderr, client.label
    written = home / CLIENT_FILES[LAUNCHED[title]]
    assert not written.exists(), f"{client.label}: launch wrote {written}"
    return done


def test_the_curl_line_up_prints_works_as_printed(started, tmp_path: Path) -> None:
    stack, output = started
    lines = printed_lines(output)
    curl = subprocess.run(["bash", "-c", f"{lines['key']}; {lines['curl']}"], cwd=stack.root,
                          env=client_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
    assert curl.returncode == 0, curl.stderr
    assert json.loads(curl.stdout)["choices"][0]["message"]["role"] == "assistant", curl.stdout


def test_launch_claude_as_up_prints_it(started, claude_code: InstalledClient, tmp_path: Path) -> None:
    done = run_printed(started, "Claude Code", "-p 'say hi' --output-format json", claude_code, tmp_path / "home")
    reply = json.loads(done.stdout)
    assert reply["is_error"] is False, f"{claude_code.label}: {reply}"
    # Claude Code's whole prompt reached the model (it asked max_tokens 32000 on top of it).
    assert reply["usage"]["input_tokens"] > 30_000, reply["usage"]


def test_launch_codex_as_up_prints_it(started, codex: InstalledClient, tmp_path: Path) -> None:
    done = run_printed(started, "Codex", "exec --json --skip-git-repo-check 'say hi'", codex, tmp_path / "home")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    finished = [event for event in events if event.get("type") == "turn.completed"]
    assert finished and finished[-1]["usage"]["input_tokens"] > 1000, f"{codex.label}: {events}"


def test_launch_opencode_as_up_prints_it(started, opencode: InstalledClient, tmp_path: Path) -> None:
    done = run_printed(started, "opencode", "run 'say hi' --format json --title demo", opencode, tmp_path / "home",
                       OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert not [event for event in events if event["type"] == "error"], f"{opencode.label}: {events}"
    finished = [event["part"] for event in events if event["type"] == "step_finish"]
    assert finished and finished[-1]["tokens"]["input"] > 1000, f"{opencode.label}: {events}"


def test_launch_openclaw_as_up_prints_it(started, openclaw: InstalledClient, tmp_path: Path) -> None:
    done = run_printed(started, "OpenClaw", "agent --local --message 'say hi' --json", openclaw, tmp_path / "home")
    reply = json.loads(done.stdout)
    assert reply["meta"]["agentMeta"]["provider"] == "stackctl", f"{openclaw.label}: {reply['meta']}"
    assert reply["meta"]["agentMeta"]["contextTokens"] == 131072, f"{openclaw.label}: {reply['meta']}"


def test_codex_with_the_configuration_connect_wrote(started, codex: InstalledClient, tmp_path: Path) -> None:
    stack, _ = started
    home, work = connected(stack, "codex", tmp_path)

    def turn(*command: str) -> dict:
        done = subprocess.run(
            [str(codex.executable), "exec", "--json", "--skip-git-repo-check", *command],
            env=client_env(home, STACKCTL_API_KEY=stack.client_key), cwd=work, capture_output=True, text=True,
            timeout=600, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == 0, f"{codex.label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert not [e for e in events if e.get("type") in ("error", "turn.failed")], f"{codex.label}: {events}"
        finished = [event for event in events if event.get("type") == "turn.completed"]
        assert finished and finished[-1]["usage"]["input_tokens"] > 1000, f"{codex.label}: {events}"
        return finished[-1]["usage"]

    turn("say hi")
    # The session resumed: its next request extends the last, so vLLM's prefix cache serves it.
    before = prefix_cache(stack)
    turn("resume", "--last", "say more")
    hits, queries = (after - earlier for after, earlier in zip(prefix_cache(stack), before, strict=True))
    print(f"{codex.label}: resumed turn served {hits:.0f} of {queries:.0f} prompt tokens from the prefix cache")
    assert hits / queries > 0.95, f"{codex.label}: the resumed turn reused only {hits:.0f} of {queries:.0f}"


def test_openclaw_with_the_entry_connect_wrote(started, openclaw: InstalledClient, tmp_path: Path) -> None:
    stack, _ = started
    home, work = connected(stack, "openclaw", tmp_path)
    done = subprocess.run(
        [str(openclaw.executable), "agent", "--local", "--message", "say hi", "--json"],
        env=client_env(home, *openclaw.path), cwd=work, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{openclaw.label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    meta = json.loads(done.stdout)["meta"]["agentMeta"]
    assert (meta["provider"], meta["model"]) == ("stackctl", "tiny"), f"{openclaw.label}: {meta}"
    assert meta["usage"]["input"] > 1000, f"{openclaw.label}: {meta}"


def test_claude_code_with_the_configuration_connect_wrote(started, claude_code: InstalledClient,
                                                           tmp_path: Path) -> None:
    stack, _ = started
    home, work = connected(stack, "claude-code", tmp_path)
    reply = claude_turn(claude_code, home, work, "say hi")
    assert list(reply["modelUsage"]) == ["tiny"], reply["modelUsage"]


def test_opencode_with_the_configuration_connect_wrote(started, opencode: InstalledClient, tmp_path: Path) -> None:
    stack, _ = started
    home, work = connected(stack, "opencode", tmp_path)
    done = subprocess.run(
        [str(opencode.executable), "run", "say hi", "--format", "json", "--title", "demo"],
        env=client_env(home, OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1"),
        cwd=work, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    label = opencode.label
    assert done.returncode == 0, f"{label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert not [event for event in events if event["type"] == "error"], f"{label}: {events}"
    finished = [event["part"] for event in events if event["type"] == "step_finish"]
    assert finished and finished[-1]["tokens"]["input"] > 1000, f"{label}: {events}"


def prefix_cache(stack: DemoStack) -> tuple[float, float]:
    """vLLM's (prefix_cache_hits, prefix_cache_queries) counters, in tokens."""
    text = httpx.get(f"http://127.0.0.1:{stack.ports['vllm']}/metrics", timeout=10).text
    values = {}
    for line in text.splitlines():
        for name in ("hits", "queries"):
            if line.startswith(f"vllm:prefix_cache_{name}_total"):
                values[name] = float(line.split()[-1])
    return values["hits"], values["queries"]


def test_the_prefix_cache_survives_a_five_turn_session_resumed_the_next_day(
    started, claude_code: InstalledClient, tmp_path: Path
) -> None:
    stack, _ = started
    home, work = connected(stack, "claude-code", tmp_path)
    turns, replies = [], []
    for turn in range(1, 6):
        before = prefix_cache(stack)
        flags = ("--continue",) if turn > 1 else ()
        replies.append(claude_turn(claude_code, home, work, f"turn {turn}: say hi", *flags,
                                   TZ=YESTERDAY if turn == 1 else TODAY))
        after = prefix_cache(stack)
        turns.append((after[0] - before[0], after[1] - before[1]))
    figures = ", ".join(f"turn {n}: {hits:.0f}/{queries:.0f}" for n, (hits, queries) in enumerate(turns, 1))
    print(f"{claude_code.label}: prefix cache hits/queries (tokens) {figures}")
    # From turn 2 on, the turn before is cached whole: only what is new is prefilled, the date
    # change at turn 2 included (its system message lands at the end, not at the front).
    for number, (hits, queries) in enumerate(turns[1:], 2):
        assert hits / queries > 0.95, f"{claude_code.label}: turn {number} reused only {hits:.0f} of {queries:.0f}"
    session_hits, session_queries = (sum(column) for column in zip(*turns, strict=True))
    assert session_hits / session_queries > 0.75, figures
    # Claude Code itself saw it: the proxy's cache_read_input_tokens in the usage it reports, with
    # input_tokens the uncached rest (Anthropic's definition), as vLLM counted it.
    usage = [reply["usage"] for reply in replies]
    print(f"{claude_code.label}: its usage (input + cache read) " + ", ".join(
        f"turn {n}: {u['input_tokens']} + {u['cache_read_input_tokens']}" for n, u in enumerate(usage, 1)))
    for number, (reported, (hits, _)) in enumerate(zip(usage[1:], turns[1:], strict=True), 2):
        prompt = reported["input_tokens"] + reported["cache_read_input_tokens"]
        assert reported["cache_read_input_tokens"] > 0.95 * prompt, f"{claude_code.label}: turn {number}: {reported}"
        assert reported["cache_read_input_tokens"] == hits, f"{claude_code.label}: turn {number}: {reported}, vLLM {hits}"
    # And the proxy followed the conversation (Claude Code's session header, kept by --continue):
    # five turns, each extending the one before, as much from cache as vLLM said.
    shown = replies[0]["session_id"][:12]  # the report shortens it
    session = next(s for s in cache_report(stack) if (s["client_session"] or "").startswith(shown))
    assert [t["outcome"] for t in session["turns"]] == ["first"] + ["kept"] * 4, session["turns"]
    assert [t["cached_tokens"] for t in session["turns"][1:]] == [hits for hits, _ in turns[1:]], session["turns"]


def cache_report(stack: DemoStack, *args: str) -> list[dict]:
    """`stackctl cache-report --json`: the default key's sessions, most recent first."""
    done = stack.cli("cache-report", "--json", "--key", "default", "-n", "50", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    (proxy,) = json.loads(done.stdout)
    return next((entry["sessions"] for entry in proxy["keys"] if entry["key"] == "default"), [])


def opencode_turn(opencode: InstalledClient, home: Path, work: Path, prompt: str, *flags: str,
                  **variables: str) -> dict:
    done = subprocess.run(
        [str(opencode.executable), "run", prompt, "--format", "json", *flags],
        env=client_env(home, OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1", **variables),
        cwd=work, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{opencode.label}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert not [event for event in events if event["type"] == "error"], f"{opencode.label}: {events}"
    finished = [event["part"] for event in events if event["type"] == "step_finish"]
    assert finished, f"{opencode.label}: {events}"
    return finished[-1]


def test_opencode_sees_its_second_turn_served_from_cache_and_the_report_a_kept_prefix(
    started, opencode: InstalledClient, tmp_path: Path
) -> None:
    stack, _ = started
    home, work = connected(stack, "opencode", tmp_path)
    opencode_turn(opencode, home, work, "first: say hi", "--title", "cache")
    second = opencode_turn(opencode, home, work, "second: say hi again", "--continue")
    # vLLM's cached_tokens reached opencode through the proxy: the first turn's prompt, reused.
    assert second["tokens"]["cache"]["read"] > 0.9 * second["tokens"]["input"], second["tokens"]
    session = next(s for s in cache_report(stack) if s["turns_total"] >= 2
                   and (s["client_session"] or "").startswith("ses_"))  # opencode's session id
    turns = session["turns"]
    assert [turn["outcome"] for turn in turns] == ["first", "kept"], turns
    assert turns[1]["kept_messages"] == turns[0]["messages"] and turns[1]["route"] == "/v1/chat/completions"
    assert turns[1]["cached_tokens"] > 0.9 * turns[1]["prompt_tokens"], turns[1]


def test_opencode_resumed_the_next_day_breaks_its_prefix_at_the_date(
    started, opencode: InstalledClient, tmp_path: Path
) -> None:
    """opencode writes today's date into its system prompt ("Today's date: Tue Nov 24 2026"),
    ahead of its tools: a session continued the next day changes the prompt there, and vLLM
    prefills the tools and the whole conversation again. With a capture the report gives the very
    byte (checked against the captured prompt) and the diff; without one, the date at its first
    byte."""
    stack, _ = started
    home, work = connected(stack, "opencode", tmp_path)
    assert stack.cli("cache-report", "--capture", "--minutes", "10").returncode == 0
    opencode_turn(opencode, home, work, "yesterday: say hi", "--title", "dated", TZ=YESTERDAY)
    opencode_turn(opencode, home, work, "today: say hi", "--continue", TZ=TODAY)
    session = next(s for s in cache_report(stack, "--capture") if s["turns_total"] >= 2
                   and (s["client_session"] or "").startswith("ses_"))
    broken = session["turns"][-1]
    label = "messages[0] (system).content"
    assert broken["outcome"] == "broken" and broken["change"].startswith(f"{label} changed at byte "), broken
    exact = int(broken["change"].split(" at byte ")[1].split(":")[0])
    assert broken["change"].endswith(": a date"), broken["change"]
    capture = json.loads(stack.cli("cache-report", "--json").stdout)[0]["capture"]
    folder = Path(capture["directory"]) / session["id"]
    before, after = (captured_part(folder / f"{turn}.jsonl", label) for turn in (broken["turn"] - 1, broken["turn"]))
    date = before.index("Today's date: ") + len("Today's date: ")
    common = len(os.path.commonprefix([before[date:], after[date:]]))
    assert exact == len(before[:date + common].encode()), (broken["change"], before[date:date + 20], after[date:date + 20])
    assert f"-  Today's date: {before[date:].splitlines()[0]}" in broken["diff"], broken["diff"]
    # What the break cost: the tools and the conversation after the date are prefilled again.
    print(f"{opencode.label} resumed the next day: {broken['change']}; kept {broken['kept_bytes']} of "
          f"{broken['previous_bytes']} bytes; {broken['cached_tokens']} of {broken['prompt_tokens']} prompt tokens "
          "from cache")
    assert broken["kept_bytes"] < 0.5 * broken["previous_bytes"], broken
    # Without the capture (stopped: the prompts are deleted), the date at its first byte.
    assert stack.cli("cache-report", "--stop-capture").returncode == 0
    assert not folder.exists()
    again = next(s for s in cache_report(stack) if s["id"] == session["id"])
    change = next(t for t in again["turns"] if t["turn"] == broken["turn"])["change"]
    assert change == f"{label} changed at byte {len(before[:date].encode())}: a date"


def captured_part(path: Path, label: str) -> str:
    return next(part["text"] for part in map(json.loads, path.read_text().splitlines()) if part["label"] == label)


def test_a_client_with_the_time_in_its_system_prompt_is_named_at_the_right_byte(started) -> None:
    """A deliberately broken client: the Anthropic SDK, the time in its system prompt, two turns."""
    stack, _ = started
    client = anthropic.Anthropic(base_url=f"http://127.0.0.1:{stack.ports['proxy']}", api_key=stack.client_key,
                                 max_retries=0, timeout=300)
    system = "You are a terse assistant working in /srv/app.\nCurrent time: {now}\nAnswer in one line."
    messages: list[dict] = [{"role": "user", "content": f"{uuid.uuid4().hex}: list three colours"}]
    for now in ("2026-11-24T10:15:03Z", "2026-11-24T10:16:41Z"):
        reply = client.messages.create(model="tiny", max_tokens=8, system=system.format(now=now), messages=messages)
        messages += [{"role": "assistant", "content": reply.content[0].text or "ok"},
                     {"role": "user", "content": "and three more"}]
    session = next(s for s in cache_report(stack) if s["turns_total"] == 2 and s["client_session"] is None)
    turns = session["turns"]
    assert [t["outcome"] for t in turns] == ["first", "broken"], turns
    assert turns[1]["change"] == f"messages[0] (system).content changed at byte {system.index('{now}')}: a timestamp"
