"""Causes vLLM's error line states about the model it serves, for the fallback to name the fix of:

- an architecture this vLLM does not know ("Model architectures ['Qwen3ForCausalLM'] are not supported
  for now. Supported architectures: [...]"): a newer images.vllm, unless the list names it (a broken
  install);
- a tokenizer without a chat template ("you must provide a chat template if the tokenizer does not
  define one"): --chat-template, or the model's instruct variant;
- a chat template that refuses the conversation's roles ("Conversation roles must alternate
  user/assistant/user/assistant/..."): the system message first and turns alternating, or a template
  without the rule;
- a chat template that refuses the system message, whichever server or client relays its
  raise_exception (jinja2's TemplateError, llama.cpp's "Jinja Exception: ...", vLLM's "Error in applying
  chat template from request: ...", or the message alone): "System message must be at the beginning.",
  "System role not supported": what the client sends, or a template that takes it.
"""

from __future__ import annotations

import re

from stackctl.diagnosis.stated_cause import StatedCause

_EXTRA_ARGS = "vllm.extra_args"
_ARCHITECTURES = re.compile(r"Model architectures \[(?P<archs>[^\]]*)\] are not supported for now"
                            r"(?:\. Supported architectures: \[(?P<known>[^\]]*))?")
_NO_TEMPLATE = re.compile(r"you must provide a chat template if the tokenizer does not define one"
                          r"|tokenizer\.chat_template is not set and no template argument was passed", re.IGNORECASE)
_ALTERNATE = re.compile(r"Conversation roles must alternate user/assistant")


_SYSTEM_FIRST = re.compile(r"System message must be at the beginning", re.IGNORECASE)
_NO_SYSTEM_ROLE = re.compile(r"System role not supported", re.IGNORECASE)
_TEMPLATE_FILE = f"--chat-template FILE in {_EXTRA_ARGS}"


def engine_stated(line: str) -> list[StatedCause]:
    return [*_architecture(line), *_no_template(line), *_roles_alternate(line), *_template_refusal(line)]


def _architecture(line: str) -> list[StatedCause]:
    match = _ARCHITECTURES.search(line)
    if match is None:
        return []
    archs = [name.strip(" '\"") for name in match["archs"].split(",") if name.strip(" '\"")]
    named = ", ".join(archs) or "the model's"
    known = {name.strip(" '\"") for name in (match["known"] or "").split(",")}
    if archs and archs[0] in known:
        return [StatedCause(f"architecture: {named}", (
            f"this vLLM lists {named} among its supported architectures but could not load its code: the engine "
            "install is broken or mismatched (the traceback above names the missing piece): pull images.vllm again, "
            "or natively `stackctl install-engine`"), "images.vllm")]
    return [StatedCause(f"architecture: {named}", (
        f"this vLLM does not know the model's architecture {named}: support for a model comes with the vLLM release "
        "that adds it, so upgrade vLLM: set images.vllm to a newer vLLM image that lists it among its supported "
        "models (natively `stackctl install-engine` with a newer vLLM; a model newer than any release needs vLLM's "
        "nightly or a source build), or serve a model this engine knows (`stackctl profiles`)"), "images.vllm")]


def _no_template(line: str) -> list[StatedCause]:
    if not _NO_TEMPLATE.search(line):
        return []
    return [StatedCause("no chat template", (
        "the model's tokenizer defines no chat template, which /v1/chat/completions needs (transformers 4.44 dropped "
        f"the default one): give vLLM one with --chat-template FILE in {_EXTRA_ARGS} (the file where vLLM runs: "
        "mounted under Compose), or serve the model's instruct/chat variant, which ships one; a base model serves "
        "/v1/completions without a template"), _EXTRA_ARGS, flag="--chat-template")]


def _roles_alternate(line: str) -> list[StatedCause]:
    if not _ALTERNATE.search(line):
        return []
    return [StatedCause("roles must alternate", (
        "the model's chat template refuses this conversation: it takes at most one system message, first, then user "
        "and assistant turns strictly alternating: the client must send the system message first and merge two "
        "messages of one role in a row (STACKCTL_PROXY_SYSTEM_PLACEMENT=front on the filter-proxy moves an Anthropic "
        "client's later system text into the leading system message), or give vLLM a template without that rule "
        f"(--chat-template FILE in {_EXTRA_ARGS}), or serve a model whose template has none"), _EXTRA_ARGS,
        flag="--chat-template")]


def _template_refusal(line: str) -> list[StatedCause]:
    """The model's chat template raising on a request's system message: sent after the first message, or
    sent at all to a template without a system role."""
    if _SYSTEM_FIRST.search(line):
        text = ("the model's chat template takes one system message, at the beginning, and this request sent one "
                "later: the client must move the system message to the beginning (merge later ones into it, or send "
                "them as user messages; STACKCTL_PROXY_SYSTEM_PLACEMENT=front on the filter-proxy moves an Anthropic "
                f"client's later system text into the leading system message), or give vLLM a template that accepts "
                f"them ({_TEMPLATE_FILE})")
        return [StatedCause("system message not first", text, _EXTRA_ARGS, flag="--chat-template")]
    if _NO_SYSTEM_ROLE.search(line):
        text = ("the model's chat template has no system role and this request sent a system message: the client "
                "must merge the system message into the first user message, or give vLLM a template that folds it "
                f"into the first user turn ({_TEMPLATE_FILE}), or serve a model whose template has a system role")
        return [StatedCause("no system role", text, _EXTRA_ARGS, flag="--chat-template")]
    return []
