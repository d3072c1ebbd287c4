"""A running vLLM refusing requests for reasons of its own setup: a chat template that wants each
message's content as a string while the request sends OpenAI's list of parts, one that wants user
and assistant turns strictly alternating, and an API key the client did not send."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_EXTRA_ARGS = "vllm.extra_args"


def _chat_template_content_format(evidence: Evidence) -> Diagnosis:
    """The template concatenates `message['content']` as a string; the request (or a forced
    `--chat-template-content-format openai`) hands it a list of content parts."""
    return found(evidence, Cause.chat_template_content_format,
                 "the model's chat template joins each message's content as a string, but got OpenAI's list of "
                 "content parts (`[{\"type\": \"text\", ...}]`), so the request fails",
                 Fix("let vLLM pass the content in the format the template reads: remove "
                     "--chat-template-content-format openai from vllm.extra_args (the default auto detects it), or "
                     f"set --chat-template-content-format string in {_EXTRA_ARGS} for a template that reads strings; "
                     "a client can also send plain string content", key=_EXTRA_ARGS,
                     flag="--chat-template-content-format"), severity=Severity.advisory)


_ROUTE = re.compile(r"\"(?P<method>GET|POST) (?P<route>/v1/[\w/.-]+)")


def _vllm_unauthorized(evidence: Evidence) -> Diagnosis:
    """vLLM started with an API key (VLLM_API_KEY or --api-key) answers 401 to a request without
    `Authorization: Bearer KEY`: a client that called vLLM directly, or a key exported by mistake."""
    route = evidence.read(_ROUTE).get("route", "")
    return found(evidence, Cause.vllm_unauthorized,
                 f"vLLM refused a request{' to ' + route if route else ''} with 401 Unauthorized: it was started with "
                 "an API key and the request did not carry it",
                 Fix("vLLM checks every /v1 request against the API key set in the environment (VLLM_API_KEY) or by "
                     "--api-key: send the API key (`Authorization: Bearer $VLLM_API_KEY`, the value in stackctl's .env) "
                     "or, better, call the filter-proxy (ports.proxy), which adds it (`stackctl connect` sets a client "
                     "up); outside stackctl, unset VLLM_API_KEY where vLLM starts (a shell profile that "
                     "exports it) if no key was meant", env="VLLM_API_KEY"),
                 severity=Severity.advisory, **({"route": route} if route else {}))


def _roles_must_alternate(evidence: Evidence) -> Diagnosis:
    """Mistral's, Gemma's and Llama 2's templates raise on two user (or two assistant) messages in a
    row, and on a system message anywhere but first: a client's shape of conversation, not a
    system message's place alone."""
    return found(evidence, Cause.roles_must_alternate,
                 "a client sent messages this model's chat template refuses: after at most one system message first, "
                 "it wants user and assistant turns strictly alternating, and got two of one role in a row",
                 Fix("the client (or a gateway in front of vLLM) must send one system message first and merge "
                     "consecutive messages of one role into one (two user messages in a row become one); the "
                     "filter-proxy merges no turns for it: an OpenAI client's messages pass as sent, and an Anthropic "
                     "client's inline system text after an assistant turn becomes a user message of its own "
                     "(STACKCTL_PROXY_SYSTEM_PLACEMENT=front on the filter-proxy moves it into the leading system "
                     "message instead). Or give vLLM a chat template that accepts consecutive roles (--chat-template "
                     f"FILE in {_EXTRA_ARGS}: the model's template without its raise_exception on alternation), or "
                     "serve a model whose template has no such rule (Qwen3's)", key=_EXTRA_ARGS, flag="--chat-template"),
                 severity=Severity.advisory)


SIGNATURES: tuple[Signature, ...] = (
    # The template's own message, as vLLM, jinja2, llama.cpp and clients relay it; never the
    # template source llama.cpp quotes beside it (`raise_exception('Conversation roles ...`), which
    # the message itself follows.
    signature(Cause.roles_must_alternate,
              r"(?<!raise_exception\(')(?<!raise_exception\(\")(?<!raise_exception\(\\\")"
              r"Conversation roles must alternate user/assistant", _roles_must_alternate),
    # Python's words when a template adds a list to a string, as vLLM (and transformers) relay them.
    signature(Cause.chat_template_content_format, r"can only concatenate str \(not \\?\"list\\?\"\) to str",
              _chat_template_content_format),
    # vLLM's (uvicorn's) access log line for a refused key.
    signature(Cause.vllm_unauthorized, r"\"(?:GET|POST) /v1/\S* HTTP/[\d.]+\" 401\b", _vllm_unauthorized, ADVISORY + 1),
)
