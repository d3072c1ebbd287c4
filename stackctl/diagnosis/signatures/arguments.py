"""The command line and what it asks for: refused flags and choices, the model's window, a tensor
parallel size the model's heads cannot be split by, a LoRA adapter above --max-lora-rank, unknown
VLLM_* variables, tool choice without its flags, a model name the server does not serve."""

from __future__ import annotations

import difflib
import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.removed_flags import removed_flag
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_EXTRA_ARGS = "vllm.extra_args"


def _context_window_exceeded(evidence: Evidence) -> Diagnosis:
    values = evidence.read(re.compile(
        r"User-specified max_model_len \((?P<asked>\d+)\) is greater than the derived max_model_len "
        r"\((?P<source>\w+)=(?P<window>\d+)"))
    asked, window = int(values["asked"]), int(values["window"])
    source = values["source"] if values["source"] != "None" else "config.json"
    return found(evidence, Cause.context_window_exceeded,
                 f"max_model_len {asked} is above the model's window of {window} tokens ({source})",
                 Fix(f"set vllm.max_model_len to {window} or less (--max-model-len)",
                     key="vllm.max_model_len", flag="--max-model-len", value=str(window)),
                 max_model_len=asked, window=window)


_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")

# argparse names its program before the error ("vllm: error:", "api_server.py: error:", "vllm bench
# <bench_type> [options] throughput: error:"), and its usage line names it too.
_ARGPARSE_PROGRAM = re.compile(r"(?P<program>\S[^:]*?): error: (?:unrecognized arguments?|argument --)")
_VLLM_PROGRAM = re.compile(r"\bvllm\b|api_server|vllm\.entrypoints", re.IGNORECASE)
_USAGE = re.compile(r"^\s*usage: (?P<program>\S.*)")


def _vllm_argparse(evidence: Evidence) -> None:
    """Only vLLM's own argparse errors are read as its flags: another program's (certbot's "certbot: error:
    unrecognized arguments", a plugin's) is that program's, whatever it refuses. Raises ValueError, so the
    error goes to the next signature or the fallback, where the program is not vLLM."""
    named = evidence.read(_ARGPARSE_PROGRAM).get("program")
    if named is None:
        usage = evidence.all_found(_USAGE, "program")
        named = usage[0] if usage and usage[0].strip() else None
    if named is not None and not _VLLM_PROGRAM.search(named):
        raise ValueError(f"{named} is not vLLM's argument parser")
    if named is None and evidence.context.service not in _VLLM_LOGS:
        raise ValueError(f"an argument error in {evidence.context.service}'s log names no program")


# The logs vLLM's own argparse errors reach: its own, and its container's start as Docker or Compose report it.
_VLLM_LOGS = frozenset({"vllm", "docker", "compose"})


def _refused_flag(evidence: Evidence) -> Diagnosis:
    _vllm_argparse(evidence)
    rest = evidence.read(re.compile(r"unrecognized arguments?: ?(?P<rest>.*)")).get("rest", "")
    flags = [flag for flag in _FLAG.findall(rest) if not flag[1:].isdigit()] or [rest.split()[0] if rest else "?"]
    first = flags[0]
    named = ", ".join(flags)
    removed = removed_flag(first, _value_after(rest, first))
    summary = f"vLLM does not know {named}" + (f" ({removed.why})" if removed else "")
    keyword = _PYTHON_KEYWORD.match(rest)
    if keyword:
        return _keyword_for_flag(evidence, keyword["name"], keyword["value"])
    if rest and (not rest.split()[0].startswith("-") or "vllm.entrypoints" in rest):
        return _refused_positional(evidence, rest.split()[0])
    context = evidence.context
    added_by_user = context.extra_args is not None and any(arg.split("=", 1)[0] == first for arg in context.extra_args)
    if not added_by_user and context.stackctl_flags is not None and first in context.stackctl_flags:
        text = (f"{first} is not in vllm.extra_args: stackctl's profile adds it, so this engine is older than the "
                "profile expects; use a newer vLLM: images.vllm (or reinstall the engine: `stackctl install-engine`)")
        return found(evidence, Cause.refused_flag, summary, Fix(text, key="images.vllm", flag=first), flags=named)
    # Not a flag stackctl's own command adds: the user's (vllm.extra_args, or a command typed by hand).
    if removed:
        return found(evidence, Cause.refused_flag, summary,
                     Fix(f"remove {first} from {_EXTRA_ARGS} in stack.yaml: {removed.instead}", key=_EXTRA_ARGS,
                         flag=removed.successor or first), flags=named)
    text = (f"remove {first} from {_EXTRA_ARGS} in stack.yaml: this vLLM has no such flag (removed, newer than "
            "this engine, or only in a patched build; `stackctl doctor` parses the flags with the installed engine "
            "venv's vLLM, where one is installed)")
    return found(evidence, Cause.refused_flag, summary, Fix(text, key=_EXTRA_ARGS, flag=first), flags=named)


def _value_after(rest: str, flag: str) -> str | None:
    """The value written after `flag` among the refused arguments (`--task embed`, `--task=embed`)."""
    match = re.search(rf"(?<![\w-]){re.escape(flag)}(?:=|\s+)(?P<value>[^\s-]\S*)", rest)
    return match["value"] if match else None


# A Python keyword argument written where the command line wants a flag ("trust_remote_code=True",
# copied from an `LLM(...)` call or an error that names the option in Python's words).
_PYTHON_KEYWORD = re.compile(r"(?P<name>[a-z][a-z0-9]*(?:_[a-z0-9]+)+)=(?P<value>\S+)")


def _keyword_for_flag(evidence: Evidence, name: str, value: str) -> Diagnosis:
    flag = "--" + name.replace("_", "-")
    # A boolean option is a bare flag on the command line; any other takes its value after it.
    written = flag if value.lower() in ("true", "1") else f"{flag} {value}"
    return found(evidence, Cause.refused_flag, f"{name}={value} is Python's spelling of the option, not a flag",
                 Fix(f"write it as the flag {written} in {_EXTRA_ARGS} in stack.yaml (and drop {name}={value})",
                     key=_EXTRA_ARGS, flag=flag), flags=f"{name}={value}")


def _refused_positional(evidence: Evidence, word: str) -> Diagnosis:
    """A word that is no flag: a command given to the wrong entrypoint (a model path after the
    api_server module, which wants --model; a whole command after an image's `vllm serve`)."""
    return found(evidence, Cause.refused_flag, f"vLLM's server takes no argument {word}",
                 Fix(f"the command went to an entrypoint that does not expect {word}: the image's own ENTRYPOINT "
                     "(`vllm serve` in vllm/vllm-openai) and the rendered command must start the server once; "
                     "stackctl renders the entrypoint for the image in images.vllm, and `stackctl doctor` checks "
                     "it against the image's own", key="images.vllm"), flags=word)


_ARGPARSE_CHOICE = re.compile(
    r"argument (?P<flag>--[\w-]+)(?:/[\w-]+)*: invalid choice: '(?P<value>[^']*)'(?: \(choose from (?P<choices>[^)]*)\))?")
_PARSER_CHOICE = re.compile(
    r"invalid (?P<kind>tool call|reasoning) parser: (?P<value>\S+) \(chose from \{(?P<choices>[^}]*)\}")


def _refused_choice(evidence: Evidence) -> Diagnosis:
    _vllm_argparse(evidence)
    values = evidence.read(_ARGPARSE_CHOICE)
    if not values:
        parser = evidence.read(_PARSER_CHOICE)
        values = {**parser, "flag": "--tool-call-parser" if parser.get("kind") == "tool call" else "--reasoning-parser"}
    flag, value = values["flag"], values.get("value", "?")
    choices = ", ".join(choice.strip(" '") for choice in values.get("choices", "").split(",") if choice.strip(" '"))
    summary = f"vLLM refuses {flag} {value}" + (f" (it accepts: {choices})" if choices else "")
    if flag == "--dtype":
        text = f"remove --dtype {value} from {_EXTRA_ARGS}: --dtype auto (stackctl's default) takes the checkpoint's dtype"
        if "fp8" in value.lower():
            text += (", an FP8 checkpoint carries its own quantization, and --kv-cache-dtype fp8 is how to get an "
                     "FP8 KV cache")
        return found(evidence, Cause.refused_choice, summary,
                     Fix(text, key=_EXTRA_ARGS, flag=flag, value="auto"), flag=flag, refused=value)
    if flag in ("--tool-call-parser", "--reasoning-parser"):
        listed = [choice.strip(" '") for choice in values.get("choices", "").split(",") if choice.strip(" '")]
        if difflib.get_close_matches(value, listed, n=1, cutoff=0.8):
            text = (f"this engine has no {flag} '{value}', but lists one close to it: correct the name in "
                    f"{_EXTRA_ARGS} to the one it lists")
        else:
            # A parser name the engine lists nothing like is one added in a later vLLM (kimi_k2, openai,
            # llama3_json each arrived in a release): the engine is older than the model's instructions.
            text = (f"this engine predates the {flag} '{value}' (a parser added in a later release): upgrade to a "
                    f"newer vLLM, images.vllm in stack.yaml (natively `stackctl install-engine` after upgrading; a "
                    f"parser newer than any release needs the next release or a build from source), or use one it "
                    f"lists in {_EXTRA_ARGS}")
        return found(evidence, Cause.refused_choice, summary, Fix(text, key=_EXTRA_ARGS, flag=flag),
                     flag=flag, refused=value)
    text = f"set {flag} to one of the accepted values in {_EXTRA_ARGS} (or remove it)"
    return found(evidence, Cause.refused_choice, summary, Fix(text, key=_EXTRA_ARGS, flag=flag),
                 flag=flag, refused=value)


_HEADS_VS_TP = re.compile(r"Total number of attention heads \((?P<heads>\d+)\) must be divisible by tensor "
                          r"parallel size \((?P<tp>\d+)\)")


def _tp_heads_not_divisible(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_HEADS_VS_TP)
    heads, tp = int(values["heads"]), int(values["tp"])
    divisors = [size for size in range(1, heads + 1) if heads % size == 0]
    # GPU counts and key-value head counts are powers of two, so the largest such divisor is the one
    # that also splits the KV heads and leaves no GPU of a pair idle.
    best = max(size for size in divisors if size <= tp and size & (size - 1) == 0)
    shown = ", ".join(str(size) for size in divisors if size <= max(tp, 8))
    return found(evidence, Cause.tp_heads_not_divisible,
                 f"--tensor-parallel-size {tp} cannot split the model's {heads} attention heads evenly",
                 Fix(f"set --tensor-parallel-size to a divisor of {heads}: {best} (it accepts {shown}, ...) in "
                     f"{_EXTRA_ARGS}, and make the GPUs vLLM sees match (CUDA_VISIBLE_DEVICES under vllm.environment); "
                     "or spread the rest by layers with --pipeline-parallel-size; on a multi-node stack the size comes "
                     "from the GPUs per node under hosts:", key=_EXTRA_ARGS, flag="--tensor-parallel-size",
                     value=str(best)), heads=heads, tensor_parallel_size=tp)


_UNKNOWN_ENV = re.compile(r"Unknown vLLM environment variable detected: (?P<name>VLLM_\w+)")


def _unknown_env_var(evidence: Evidence) -> Diagnosis:
    names = evidence.all_found(_UNKNOWN_ENV, "name")
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return found(evidence, Cause.unknown_env_var,
                 f"vLLM ignores {shown}: no such setting in this engine (a typo, a removed setting, or a "
                 "variable that only shares the VLLM_ prefix)",
                 Fix(f"unset {names[0]}{' and the others' if len(names) > 1 else ''} where vLLM gets its "
                     "environment: the shell that runs `stackctl up` (native runtime) or the vllm service's "
                     "environment (Compose)", env=names[0]),
                 severity=Severity.advisory, variables=", ".join(names))


def _auto_tool_choice_disabled(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.auto_tool_choice_disabled,
                 "a client asked for automatic tool choice, which this vLLM was started without",
                 Fix("start vLLM with --enable-auto-tool-choice and --tool-call-parser: stackctl adds both from the "
                     f"model profile, so check that {_EXTRA_ARGS} does not replace them and restart with `stackctl up`",
                     key=_EXTRA_ARGS, flag="--enable-auto-tool-choice"))


# --max-lora-rank takes only these values (vLLM's LoRAConfig; 1 since 0.11), and defaults to 16.
_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
# An adapter above the limit ("LoRA rank 64 is greater than max_lora_rank 16"), and a limit vLLM refuses
# (older: "max_lora_rank (48) must be one of (...)"; newer, pydantic's literal: "max_lora_rank / Input
# should be 1, 8, ... [type=literal_error, input_value=48").
_LORA_RANK = re.compile(r"LoRA rank (?P<rank>\d+) is greater than max_lora_rank (?P<limit>\d+)"
                        r"|max_lora_rank \((?P<refused>\d+)\) must be one of \((?P<choices>[\d, ]+)\)"
                        r"|Input should be (?P<literals>1, 8, 16, 32, [\d, or]+) \[type=literal_error, "
                        r"input_value=(?P<literal>\d+)")


def _lora_rank_too_large(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_LORA_RANK)
    if "rank" in values:
        rank, limit = int(values["rank"]), int(values["limit"])
        wanted = next((value for value in _LORA_RANKS if value >= rank), _LORA_RANKS[-1])
        return found(evidence, Cause.lora_rank_too_large,
                     f"a LoRA adapter of rank {rank} was loaded into a vLLM started with --max-lora-rank {limit} "
                     "(the default is 16)",
                     Fix(f"add --max-lora-rank {wanted} to {_EXTRA_ARGS} in stack.yaml (max_lora_rank must be at least "
                         f"the largest adapter's rank, {rank}; vLLM accepts only {', '.join(map(str, _LORA_RANKS))}, and "
                         "older releases stop at 64: a higher rank needs a newer vLLM: images.vllm); a higher limit reserves "
                         "more GPU memory, so ask for what the adapters need",
                         key=_EXTRA_ARGS, flag="--max-lora-rank", value=str(wanted)), rank=rank, limit=limit)
    refused = int(values.get("refused") or values.get("literal") or 0)
    # The values this vLLM lists (older ones lack 1).
    accepted = [int(number) for number in re.findall(r"\d+", values.get("choices") or values.get("literals") or "")]
    accepted = accepted or list(_LORA_RANKS)
    wanted = next((value for value in accepted if value >= refused), accepted[-1])
    return found(evidence, Cause.lora_rank_too_large,
                 f"vLLM refuses --max-lora-rank {refused or '(the value given)'}: it takes only "
                 f"{', '.join(map(str, accepted))}",
                 Fix(f"set --max-lora-rank in {_EXTRA_ARGS} to {wanted if refused else 'one of those values'} "
                     "(the adapter's rank rounded up to an accepted value); then `stackctl up`",
                     key=_EXTRA_ARGS, flag="--max-lora-rank", value=str(wanted) if refused else None),
                 **({"refused": refused} if refused else {}))


# vLLM's words, and Claude Code's when the endpoint answers that its model does not exist.
_ASKED_MODEL = re.compile(r"The model `(?P<name>[^`]*)` does not exist|issue with the selected model \((?P<claude>[^)]*)\)"
                          r"|^Model: (?P<client>.+)$")


def _served_model_mismatch(evidence: Evidence) -> Diagnosis:
    asked = evidence.read(_ASKED_MODEL)
    name = asked.get("name") or asked.get("claude") or next(iter(evidence.all_found(_ASKED_MODEL, "client")), "?")
    claude = " (Claude Code: the model ANTHROPIC_MODEL or /model names; `stackctl connect claude-code` sets it)"
    return found(evidence, Cause.served_model_mismatch,
                 f"a request asked for model `{name}`, which this vLLM does not serve",
                 Fix(f"clients must use the served name{claude if 'claude' in asked else ''} (served_model_name in "
                     f"stack.yaml, --served-model-name), or map `{name}` to it under `aliases:` so the filter-proxy "
                     "rewrites it", key="served_model_name", flag="--served-model-name"), model=name)


_BUDGET = re.compile(r"max_num_batched_tokens \((?P<budget>\d+)\) is smaller than max_model_len \((?P<window>\d+)\)")


def _batched_tokens_below_max_model_len(evidence: Evidence) -> Diagnosis:
    """Without chunked prefill a prompt must fit one batch, so vLLM refuses a batch budget below the
    window at start (turned off by hand, or by a backend without it: ARM and POWER CPUs)."""
    values = evidence.read(_BUDGET)
    budget, window = values.get("budget"), values.get("window")
    return found(evidence, Cause.batched_tokens_below_max_model_len,
                 f"the batch budget --max-num-batched-tokens{f' ({budget})' if budget else ''} is below the window "
                 f"max_model_len{f' ({window})' if window else ''}, which vLLM refuses when prefill is not chunked",
                 Fix(f"raise --max-num-batched-tokens to at least the window (add `--max-num-batched-tokens "
                     f"{window or 'N'}` to {_EXTRA_ARGS} in stack.yaml), or lower vllm.max_model_len to the budget; or "
                     "turn chunked prefill back on (--enable-chunked-prefill; the CPU engine on ARM or POWER has none, "
                     "so it needs one of the first two)", key=_EXTRA_ARGS, flag="--max-num-batched-tokens",
                     value=window), **({"budget": int(budget), "window": int(window)} if values else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.context_window_exceeded, r"User-specified max_model_len \(\d+\) is greater than the derived",
              _context_window_exceeded),
    signature(Cause.refused_flag, r"unrecognized arguments?:", _refused_flag),
    signature(Cause.refused_choice, r"argument --[\w-]+.*: invalid choice:|invalid (?:tool call|reasoning) parser:",
              _refused_choice),
    signature(Cause.tp_heads_not_divisible, r"Total number of attention heads \(\d+\) must be divisible by tensor",
              _tp_heads_not_divisible),
    signature(Cause.lora_rank_too_large, r"LoRA rank \d+ is greater than max_lora_rank|max_lora_rank \(\d+\) must be "
              r"one of|Input should be 1, 8, 16, 32, [\d, or]+ \[type=literal_error", _lora_rank_too_large),
    signature(Cause.batched_tokens_below_max_model_len, r"max_num_batched_tokens \(\d+\) is smaller than max_model_len",
              _batched_tokens_below_max_model_len),
    signature(Cause.unknown_env_var, _UNKNOWN_ENV.pattern, _unknown_env_var, ADVISORY),
    signature(Cause.auto_tool_choice_disabled, r"tool choice requires --enable-auto-tool-choice",
              _auto_tool_choice_disabled),
    # vLLM's words, Claude Code's, and an OpenAI-compatible client's report of the 404 (Continue:
    # "404 Model Not Found"; OpenAI's error code model_not_found).
    signature(Cause.served_model_mismatch, r"The model `[^`]*` does not exist|issue with the selected model \("
              r"|\b404 Model Not Found\b|[\"']code[\"']: ?[\"']model_not_found[\"']",
              _served_model_mismatch),
)
