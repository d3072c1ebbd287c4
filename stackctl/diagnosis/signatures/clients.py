"""An agent client pointed at the wrong place or speaking the wrong dialect: a base URL with no such
route (404) or nothing listening (connection refused), Codex on the Chat Completions wire where
only the Responses API is left, LiteLLM without a provider prefix, and a thinking budget not
below max_tokens."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_BASE_URLS = ("point the client at the filter-proxy without /v1 for Anthropic clients (Claude Code: "
              "ANTHROPIC_BASE_URL=http://HOST:PORT, ports.proxy in stack.yaml) and with /v1 for OpenAI ones "
              "(OPENAI_BASE_URL); `stackctl connect CLIENT` writes the right one")


def _client_base_url(evidence: Evidence) -> Diagnosis:
    if "ConnectionRefused" in evidence.text or "Connection refused" in evidence.text:
        return found(evidence, Cause.client_base_url,
                     "nothing listens where the client's base URL points (connection refused): the URL names a port "
                     "where no server runs, or the server is down",
                     Fix(f"check where ANTHROPIC_BASE_URL (or OPENAI_BASE_URL) points, in the shell and in the "
                         "client's settings: it must be the running filter-proxy, http://HOST:PORT with PORT = "
                         "ports.proxy in stack.yaml (`stackctl status` says whether it runs; a stale variable left in "
                         f"the environment wins over a login); {_BASE_URLS}", key="ports.proxy"))
    return found(evidence, Cause.client_base_url,
                 "the client's requests reach a server that has no such route (404): its base URL points at the "
                 "wrong port or path", Fix(_BASE_URLS, key="ports.proxy"))


def _codex_wire_api(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.codex_wire_api,
                 "Codex speaks only the Responses API now, but its provider is set to (or its server only offers) "
                 "Chat Completions",
                 Fix("in ~/.codex/config.toml set the provider's wire_api = \"responses\" and its base_url to the "
                     "filter-proxy's /v1 (http://HOST:PORT/v1, ports.proxy), which serves /v1/responses for vLLM; "
                     "`stackctl connect codex` writes that provider; a gateway without /v1/responses cannot serve "
                     "Codex", key="ports.proxy"), severity=Severity.advisory)


def _litellm_provider_prefix(evidence: Evidence) -> Diagnosis:
    model = evidence.read(re.compile(r"You passed model=(?P<model>\S+)")).get("model", "")
    return found(evidence, Cause.litellm_provider_prefix,
                 f"LiteLLM cannot tell which provider serves {model or 'the model'}: the model name has no provider "
                 "prefix",
                 Fix("name the model with its provider: for stackctl's endpoint `hosted_vllm/SERVED_NAME` (or "
                     "`openai/SERVED_NAME`) with api_base http://HOST:PORT/v1 (PORT = ports.proxy, SERVED_NAME = "
                     "served_model_name in stack.yaml)", key="served_model_name"),
                 severity=Severity.advisory, **({"model": model} if model else {}))


def _thinking_budget(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.thinking_budget,
                 "a request asked for a thinking budget (thinking.budget_tokens) not below its max_tokens, which "
                 "Anthropic's Messages API refuses",
                 Fix("the client must send budget_tokens below max_tokens: Claude Code takes the budget from "
                     "MAX_THINKING_TOKENS and max_tokens from CLAUDE_CODE_MAX_OUTPUT_TOKENS, so lower the first or "
                     "raise the second (a gateway that caps max_tokens must cap budget_tokens with it)",
                     env="MAX_THINKING_TOKENS"), severity=Severity.advisory)


SIGNATURES: tuple[Signature, ...] = (
    # Go's net/http answer to an unknown path (Ollama, Prometheus, Grafana, a Go gateway), and Claude
    # Code's and the SDKs' report of a 404.
    signature(Cause.client_base_url, r"\b404 page not found|API Error: 404\b|Error code: 404 - \{'detail': 'Not Found'\}",
              _client_base_url),
    # Claude Code's words when nothing listens at ANTHROPIC_BASE_URL.
    signature(Cause.client_base_url, r"(?:Unable to connect to API|API Error: Connection refused)[^\n]*\(ConnectionRefused\)",
              _client_base_url),
    # Codex's own refusal of the chat wire, its deprecation notice, and a server without the Responses route.
    signature(Cause.codex_wire_api,
              r"only supported in v1/responses and not in v1/chat/completions|wire_api = \"chat\"`? is no longer "
              r"supported|Support for the \"chat\" wire API is deprecated|Invalid URL \(GET /v1/responses\)",
              _codex_wire_api),
    signature(Cause.litellm_provider_prefix, r"LLM Provider NOT provided", _litellm_provider_prefix),
    signature(Cause.thinking_budget, r"`?max_tokens`? must be greater than `?thinking\.budget_tokens`?", _thinking_budget),
)
