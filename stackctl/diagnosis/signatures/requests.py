"""Failures of single requests in a running vLLM: a conversation longer than the window, more images
(or videos, audio) than --limit-mm-per-prompt allows, a system message the chat template refuses (or a
template with no system role at all), a tool call the parser cannot read, a model without a chat
template, and a 400 whose reason vLLM did not log. The engine keeps serving, so these are warnings;
each fix names the window, the filter-proxy's system placement, the parser or the tool flags, as
stackctl sets them."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.log_lines import error_lines
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_WINDOW_KEY = "vllm.max_model_len"
# A request longer than the window, in the words of vLLM (old and new), of the OpenAI-compatible
# servers and clients that relay its error (LiteLLM, Claude Code, cline, opencode), of llama.cpp and of
# hosted APIs: the window and the request's size, where the message states them.
_WINDOW = re.compile(r"maximum context length is (?P<window>\d+)|maximum model length of (?P<model>\d+)"
                     r"|too long and exceeds limit of (?P<limit>\d+)|context length is only (?P<only>\d+)"
                     r"|tokens > (?P<maximum>\d+) maximum|exceed context limit: \d+ \+ \d+ > (?P<sum>\d+)"
                     r"|available context size \((?P<available>\d+) tokens\)|\W?n_ctx\W+(?P<n_ctx>\d+)"
                     r"|context window of (?P<context_window>\d+)|maximum number of tokens allowed \((?P<allowed>\d+)\)"
                     r"|while limit is (?P<while_limit>\d+)|\(context length (?P<paren>\d+)\)"
                     r"|model's context length \((?P<model_context>\d+) tokens\)")
_REQUESTED = re.compile(r"requested (?P<requested>\d+) tokens \((?P<prompt>\d+) in the messages, "
                        r"(?P<completion>\d+) in the completion\)"
                        r"|You passed (?P<prompt2>\d+) input tokens and requested (?P<completion2>\d+) output tokens"
                        r"|exceed context limit: (?P<prompt3>\d+) \+ (?P<completion3>\d+) >")
_PROMPT = re.compile(r"your messages resulted in (?P<prompt>\d+) tokens|prompt is too long: (?P<prompt2>\d+) tokens"
                     r"|request \((?P<prompt3>\d+) tokens\) exceeds|input token count \((?P<prompt4>\d+)\)"
                     r"|Requested tokens \((?P<prompt5>\d+)\)|Current length is (?P<prompt6>\d+)"
                     r"|\Wn_prompt_tokens\W+(?P<prompt7>\d+)|prompt \(total length (?P<prompt8>\d+)\)"
                     r"|The input \((?P<prompt9>\d+) tokens\) is longer|you requested (?P<prompt10>\d+) tokens\. ")
# vLLM's "'max_tokens' or 'max_completion_tokens' is too large: N", OpenAI's (and gateways')
# "max_tokens is too large: N. This model supports at most M completion tokens".
_MAX_TOKENS = re.compile(r"max_(?:completion_)?tokens'? is too large: (?P<max_tokens>\d+)")
_OUTPUT_LIMIT = re.compile(r"supports at most (?P<limit>\d+) completion tokens")
_OVERFLOW = (r"maximum context length|max_(?:completion_)?tokens'? is too large: \d+"
             r"|is longer than the maximum model length of \d+|is too long and exceeds limit of \d+"
             r"|context length is only \d+ tokens|prompt is too long: \d+ tokens > \d+|exceed context limit: "
             r"|exceeds the available context size|Context size has been exceeded|exceeds? (?:the )?context window of \d+"
             r"|exceeds the maximum number of tokens allowed|context_length_exceeded"
             r"|reduce the length of the (?:messages|input prompt|prompt)|is too long to fit into the model"
             r"|is longer than the model's context length"
             # vLLM derives max_tokens as the window less the prompt when a request leaves it out: a prompt past
             # the window makes it negative (-1 alone is a client's own "no limit" value, not this).
             r"|max_tokens must be at least 1, got -(?!1\b)\d+")
_NEGATIVE_BUDGET = re.compile(r"max_tokens must be at least 1, got -(?P<over>\d+)")
# Where a request-time failure is a class of its own in counts (doctor's request-failures row).
REQUEST_CAUSES = frozenset({
    Cause.request_context_overflow, Cause.system_message_position, Cause.tool_parser_failure,
    Cause.chat_template_missing, Cause.auto_tool_choice_disabled, Cause.served_model_mismatch,
    Cause.tool_choice_without_tools, Cause.prompt_exceeds_batched_tokens, Cause.system_role_unsupported,
    Cause.roles_must_alternate,
})
# Not counted there: a refusal vLLM logs only as its access line's 400 (request_refused_unlogged),
# which every other refusal above also leaves behind.


# Clients that ask for their own default output budget whatever the served window, and how each caps
# it: Claude Code (32000, or 64000 for some models) and opencode (32000 unless the model's limit.output).
_CLIENT_OUTPUT_DEFAULTS = {32000: ("Claude Code", "opencode"), 64000: ("Claude Code",)}
_CLIENT_CAPS = {
    "Claude Code": "Claude Code: set CLAUDE_CODE_MAX_OUTPUT_TOKENS in its environment to {cap}",
    "opencode": ("opencode: set the model's limit.output in opencode.json to {cap} (`stackctl connect opencode` "
                 "writes it from the served window; OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX caps every model)"),
}
# vLLM releases that ignore --max-model-len for the tokenizer's model_max_length, and the release that
# fixed it (vllm#20241: two reporters' models, DeepSeek-R1 and InternVL3, capped at 16K and 12K).
_WINDOW_CAPPED_RELEASES = {"0.9.1": "0.9.2"}
_ENGINE_RELEASE = re.compile(r"(?:engine \(v|vLLM API server version )(?P<version>\d+\.\d+\.\d+)")
# vLLM 0.1x's wording of the prompt's size beside a max_tokens refusal.
_INPUT_TOKENS = re.compile(r"your request has (?P<input>\d+) input tokens")


def _request_context_overflow(evidence: Evidence) -> Diagnosis:
    window = _first(evidence.read(_WINDOW))
    found_request = evidence.read(_REQUESTED)
    prompt = _first({key: value for key, value in found_request.items() if key.startswith("prompt")}) or _first(
        evidence.read(_PROMPT))
    completion = _first({key: value for key, value in found_request.items() if key.startswith("completion")})
    too_many = evidence.read(_MAX_TOKENS).get("max_tokens")
    values: dict[str, str | int | float] = {"window": int(window)} if window else {}
    if prompt:
        values["prompt"] = int(prompt)
    if completion:
        values["completion"] = int(completion)
    size = f"the {window}-token window" if window else "the window"
    if too_many or (completion and window and int(completion) >= int(window)):
        asked = too_many or completion
        given = prompt or evidence.read(_INPUT_TOKENS).get("input")
        limit = evidence.read(_OUTPUT_LIMIT).get("limit")
        room = int(window) - int(given) if window and given and int(window) > int(given) else None
        cap = (f"at most {room}, the window less this prompt" if room else
               f"at most {limit}, the model's output limit" if limit else "well under the window")
        # A client's own default output budget, asked whatever the served window: a gateway in front
        # (cc-switch, a router) passes it on unchanged.
        clients = _CLIENT_OUTPUT_DEFAULTS.get(int(asked), ())
        caps = "; ".join(_CLIENT_CAPS[client].format(cap=cap) for client in clients)
        who = (f"{' or '.join(clients)}'s default output budget ({asked}): {caps}; other clients: cap max_tokens in "
               "their max output tokens setting" if clients else
               f"cap max_tokens in the client ({cap}; Claude Code: CLAUDE_CODE_MAX_OUTPUT_TOKENS, opencode: the "
               "model's limit.output, others: their max output tokens setting)")
        if limit:
            values["output_limit"] = int(limit)
        return found(evidence, Cause.request_context_overflow,
                     f"a client asked for {asked} output tokens, which do not fit "
                     + (f"the model's {limit}-token output limit" if limit and not window else size)
                     + (f" ({' or '.join(clients)}'s default)" if clients else ""),
                     Fix(f"{who}; the filter-proxy fits Anthropic clients' max_tokens to the window, so send them "
                         f"through it rather than to vLLM's port or another gateway; the window itself is "
                         f"{_WINDOW_KEY} in stack.yaml", key=_WINDOW_KEY, value=window),
                     severity=Severity.advisory, max_tokens=int(asked), **values)
    fixed_in = next((_WINDOW_CAPPED_RELEASES[version] for version in evidence.all_found(_ENGINE_RELEASE, "version")
                     if version in _WINDOW_CAPPED_RELEASES), None)
    if fixed_in:
        return found(evidence, Cause.request_context_overflow,
                     f"a prompt is longer than {size}, which this vLLM release set itself: it caps the window at the "
                     "tokenizer's model_max_length whatever --max-model-len asks",
                     Fix(f"use vLLM {fixed_in} or newer (a newer images.vllm in stack.yaml; native: `stackctl "
                         "install-engine` again), which applies the window asked ({_WINDOW_KEY}); on this release, "
                         "raise model_max_length in the model's tokenizer_config.json", key="images.vllm"),
                     severity=Severity.advisory, **values)
    fit = f"under {window} tokens" if window else "within the window"
    over = evidence.read(_NEGATIVE_BUDGET).get("over")
    if over:
        values["over"] = int(over)
    what = (f"a prompt is {over} tokens longer than {size}: vLLM derived max_tokens, the window less the prompt, "
            f"as -{over}" if over else f"a conversation{f' ({prompt} tokens)' if prompt else ''} is longer than {size}")
    return found(evidence, Cause.request_context_overflow, what,
                 Fix(f"reduce the length of the input so prompt plus max_tokens stay {fit}: an agent compacts or trims "
                     "the conversation (Claude Code: /compact; `stackctl connect claude-code` sets its auto-compact "
                     "window to the served one); a batch or evaluation client truncates each prompt (with the "
                     "model's tokenizer, to the window minus max_tokens) or sends truncate_prompt_tokens with the "
                     f"request; or raise {_WINDOW_KEY} in stack.yaml if the model allows more (`stackctl doctor`'s "
                     "model-window check says how far)", key=_WINDOW_KEY,
                     value=window), severity=Severity.advisory, **values)


_SCHEDULER_LIMIT = re.compile(r"Input prompt \((?P<prompt>\d+) tokens\) is too long and exceeds limit of (?P<limit>\d+)")


def _prompt_exceeds_batched_tokens(evidence: Evidence) -> Diagnosis:
    """vLLM's V0 scheduler refuses a prompt longer than min(max_model_len, max_num_batched_tokens)
    when prefill is not chunked: the window is one possible limit, the batch budget the other (its
    old default 2560, and 2048 where vLLM turns chunked prefill on by itself for long windows)."""
    values = evidence.read(_SCHEDULER_LIMIT)
    prompt, limit = int(values["prompt"]), int(values["limit"])
    window = evidence.settings.max_model_len
    if window is not None and window <= limit:
        return _request_context_overflow(evidence)
    budget = "--max-num-batched-tokens"
    raise_both = window is None
    text = (f"vLLM refuses a prompt longer than the lower of the window and the batch budget ({budget}) when "
            f"prefill is not chunked: raise {budget} to at least {prompt} (add `{budget} {prompt}` to vllm.extra_args "
            "in stack.yaml; --enable-chunked-prefill lifts the limit where the model supports it)")
    if raise_both:
        text += (f", and vllm.max_model_len (--max-model-len) too if the window is {limit}: the log does not say "
                 "which of the two the limit is")
    else:
        text += f"; the window itself ({window}) is large enough"
    return found(evidence, Cause.prompt_exceeds_batched_tokens,
                 f"a prompt of {prompt} tokens exceeds the engine's prompt limit of {limit} (its batch budget"
                 f"{', or the window' if raise_both else ''})",
                 Fix(text, key=_WINDOW_KEY if raise_both else "vllm.extra_args", flag=budget, value=str(prompt)),
                 severity=Severity.advisory, prompt=prompt, limit=limit)


def _first(found: dict[str, str]) -> str | None:
    """The one alternative of a pattern that matched (its groups are named per wording)."""
    return next(iter(found.values()), None)


# How far above its access line vLLM logs a refusal's reason when it logs one.
_REASON_LINES = 20
_REFUSED = re.compile(r"\"POST (?P<route>/v1/(?:chat/completions|responses|messages))\S* HTTP/[\d.]+\" 400\b")


def _request_refused_unlogged(evidence: Evidence) -> Diagnosis:
    """vLLM answered 400 and logged only the status: the reason went to the client in the reply's
    body. With agent clients the usual one is tools sent to an engine started without its tool flags."""
    above = list(evidence.lines[max(0, evidence.index - _REASON_LINES):evidence.index])
    if error_lines(above):
        # vLLM logged the reason just above its 400: that error record is the diagnosis (the fallback's).
        raise ValueError("the refusal's reason is logged")
    route = evidence.read(_REFUSED).get("route", "/v1/chat/completions")
    count = sum(bool(_REFUSED.search(line)) for line in evidence.lines)
    return found(evidence, Cause.request_refused_unlogged,
                 f"vLLM refused {count} request{'s' if count > 1 else ''} to {route} with 400 Bad Request and logged no "
                 "reason (it goes to the client in the reply's body)",
                 Fix("the reason is in the body the client got (the filter-proxy relays it; curl the request to see "
                     "it). With agent clients (tools on) it is most often automatic tool choice on an engine started "
                     "without --enable-auto-tool-choice and --tool-call-parser: stackctl adds both from the model "
                     "profile, so check that vllm.extra_args does not replace them and that the profile names a "
                     "parser for this model, then `stackctl up`; next come a request longer than the window "
                     "(vllm.max_model_len), a sampling value out of range (top_p=0), and a request field this vLLM "
                     "does not know (upgrade vLLM: a newer images.vllm; newer clients send fields older vLLM releases refuse)", key="vllm.extra_args", flag="--enable-auto-tool-choice"),
                 severity=Severity.advisory, route=route, refused=count)


def _system_message_position(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.system_message_position,
                 "a client sent a system message after the first one, which this model's chat template refuses",
                 Fix("fix the system message placement: Anthropic clients (Claude Code) through the filter-proxy never "
                     "send one, as the proxy places their inline system text where it stood as a <system-reminder> "
                     "(the proxy's --system-placement in-place); an OpenAI client (or the gateway in front of vLLM) "
                     "must merge system messages into a single leading system message (move the system message to the "
                     "beginning) or send later ones as user messages; or serve the model with a custom chat template "
                     "that accepts them (--chat-template in vllm.extra_args)"), severity=Severity.advisory)


def _system_role_unsupported(evidence: Evidence) -> Diagnosis:
    """The model's own chat template raises on any system message (Gemma 1 and 2, older Mistral
    instructs): no placement of the system text helps, only a template or a client that folds it
    into the first user turn."""
    return found(evidence, Cause.system_role_unsupported,
                 "a client sent a system message, and this model's chat template has no system role at all",
                 Fix("give vLLM a chat template that folds the system prompt into the first user turn (--chat-template "
                     "FILE in vllm.extra_args, a copy of the model's template without its raise_exception for the "
                     "system role), or serve a model whose template has one; clients can instead merge the system "
                     "message into the first user message. The filter-proxy's system placement (in-place or front) "
                     "still sends a system role, so it does not avoid this", key="vllm.extra_args",
                     flag="--chat-template"), severity=Severity.advisory)


_PARSER = re.compile(r"(?P<parser>[a-z0-9_]+?)_tool_parser\.py")


def _tool_parser_failure(evidence: Evidence) -> Diagnosis:
    parser = evidence.read(_PARSER).get("parser") or next(iter(evidence.all_found(_PARSER, "parser")), None)
    named = f" ({parser})" if parser else ""
    return found(evidence, Cause.tool_parser_failure,
                 f"vLLM's tool-call parser{named} could not read a tool call the model wrote",
                 Fix("the parser must match the model's family: stackctl's model profile sets --tool-call-parser "
                     "(Qwen3-Coder and Qwen3.6: qwen3_coder; gpt-oss: openai; Qwen3: hermes); check that "
                     "vllm.extra_args does not override it (`stackctl doctor`'s tool-parser check compares the parser with the "
                     "model's family)",
                     key="vllm.extra_args", flag="--tool-call-parser"),
                 severity=Severity.advisory, **({"parser": parser} if parser else {}))


def _tool_choice_without_tools(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.tool_choice_without_tools,
                 "a client sent tool_choice with no tools in the request, which vLLM (like OpenAI's API) refuses",
                 Fix("the client must leave tool_choice out when it sends no tools: a gateway in front of vLLM does "
                     "this when it forwards tool_choice on its own (LiteLLM did: upgrade it, or set drop_params: true "
                     "for the model); vLLM's flags cannot change it"), severity=Severity.advisory)


def _chat_template_missing(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.chat_template_missing,
                 "the model's tokenizer has no chat template, so vLLM cannot serve /v1/chat/completions for it",
                 Fix("give vLLM a template: add --chat-template /path/to/template.jinja to vllm.extra_args (the file "
                     "must be where vLLM runs: mount it under Compose), or serve the model's instruct/chat variant, "
                     "which ships one", key="vllm.extra_args", flag="--chat-template"), severity=Severity.advisory)


# "in one request" (vLLM 0.7), "in one prompt" (later releases, which add "Set `--limit-mm-per-prompt` to
# increase this limit").
_MM_LIMIT = re.compile(r"At most (?P<limit>\d+) (?P<modality>image|video|audio)\(s\) may be provided in one (?:request|prompt)"
                       r"|You set (?P<set_modality>image|video|audio)=(?P<set_limit>\d+) \(or defaulted to 1\) in "
                       r"`--limit-mm-per-prompt`, but passed (?P<passed>\d+)")


def _mm_limit_per_prompt(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_MM_LIMIT)
    modality = values.get("modality") or values.get("set_modality") or "image"
    limit = int(values.get("limit") or values.get("set_limit") or 1)
    passed = int(values.get("passed") or limit + 1)
    wanted = max(passed, limit + 1)
    return found(evidence, Cause.mm_limit_per_prompt,
                 f"a request carried more {modality}s than vLLM accepts per prompt ({limit}; the default is 1)",
                 Fix(f"raise the per-prompt limit: add --limit-mm-per-prompt '{{\"{modality}\": {wanted}}}' to "
                     f"vllm.extra_args in stack.yaml (vLLM before 0.10 writes it {modality}={wanted}); each extra "
                     f"{modality} reserves memory at start, so ask for what clients send, and only for a multimodal "
                     "model", key="vllm.extra_args", flag="--limit-mm-per-prompt", value=f"{modality}={wanted}"),
                 severity=Severity.advisory, modality=modality, limit=limit)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.mm_limit_per_prompt, r"At most \d+ (?:image|video|audio)\(s\) may be provided in one (?:request|prompt)"
              r"|\(or defaulted to 1\) in `--limit-mm-per-prompt`, but passed", _mm_limit_per_prompt),
    # Before the window wording below, which also matches it: the scheduler's limit may be the batch budget.
    signature(Cause.prompt_exceeds_batched_tokens, _SCHEDULER_LIMIT.pattern, _prompt_exceeds_batched_tokens),
    signature(Cause.request_context_overflow, _OVERFLOW, _request_context_overflow),
    signature(Cause.system_message_position, r"System message must be at the beginning", _system_message_position),
    # The template's raise_exception, as vLLM, jinja2 and the clients relaying it word it.
    signature(Cause.system_role_unsupported, r"System role not supported", _system_role_unsupported),
    # vLLM's wording, and OpenAI's (relayed by clients and gateways).
    signature(Cause.tool_choice_without_tools,
              r"When using `?tool_choice`?, `?tools`? must be set|'?tool_choice'? is only allowed when '?tools'? are specified",
              _tool_choice_without_tools),
    signature(Cause.tool_parser_failure,
              r"Error in extracting tool call from response|Error trying to handle streaming tool call"
              r"|_tool_parser\.py:\d+\]|_tool_parser\.py\", line \d+", _tool_parser_failure),
    # transformers' wordings: the tokenizer's (v4.44+), apply_chat_template's and a processor's (multimodal).
    signature(Cause.chat_template_missing,
              r"default chat template is no longer allowed|tokenizer\.chat_template is not set and no template argument"
              r"|No chat template is set for this processor", _chat_template_missing),
    # The access log's 400 alone: any reason the log states next to it weighs more.
    signature(Cause.request_refused_unlogged, _REFUSED.pattern, _request_refused_unlogged, ADVISORY),
)
