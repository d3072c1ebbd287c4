"""An agent client pointed at the wrong place or speaking the wrong dialect: a base URL with no such
route (404; Continue's missing /v1), nothing listening (connection refused; Codex's "error sending
request for url"; the OpenAI SDK's "Connection error.") or no scheme at all, a context window the
client sets below the agent's minimum (OpenClaw's contextWindow), an exporter asked off /metrics,
Codex on the Chat Completions wire where only the Responses API is left, LiteLLM without a provider
prefix or without the model a client asks for (Claude Code's haiku), a thinking budget not
below max_tokens, a gateway refusing the anthropic-beta values Claude Code sends or the shape of its request body (a
system message inside messages, what a plugin adds: client_request_bodies), a model that
does not support tools (Ollama's refusal), OpenAI's own 401 for a key (a placeholder) meant for another server, and
a client calling a path the engine does not serve (`/generate` or `/` on vLLM's OpenAI-compatible server)."""

from __future__ import annotations

import re

from stackctl.diagnosis.client_request_bodies import (
    BODY_REFUSED,
    SYSTEM_ROLE,
    body_fix,
    refused_body,
    system_role_fix,
)
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature, unnamed
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_BASE_URLS = ("point the client at the filter-proxy without /v1 for Anthropic clients (Claude Code: "
              "ANTHROPIC_BASE_URL=http://HOST:PORT, ports.proxy in stack.yaml) and with /v1 for OpenAI ones "
              "(OPENAI_BASE_URL); `stackctl connect CLIENT` writes the right one")


# Services whose HTTP endpoint is a Prometheus exporter: a 404 there is a path, not a client's base URL.
_EXPORTERS = ("gpu-exporter", "node-exporter", "prometheus")


def _metrics_path_not_found(evidence: Evidence) -> Diagnosis:
    service = evidence.context.service
    return found(evidence, Cause.metrics_path_not_found,
                 f"{service} answered 404: it serves its metrics only on /metrics, and the request asked another path",
                 Fix("ask for the metrics path: `curl http://HOST:PORT/metrics` (the exporter's root answers 404 "
                     "page not found); a Prometheus scrape job's metrics_path must be /metrics (stackctl renders its "
                     "jobs with the default) and a Grafana datasource points at Prometheus, not at the exporter"),
                 severity=Severity.advisory)


# Which client's variable sets the base URL, by what the log shows: Claude Code's own words ("API Error:",
# "Unable to connect to API", its /model command, its bundled cli.js) or an Anthropic route; the OpenAI
# SDK (its "Connection error.") or an OpenAI route.
_CLAUDE_CODE_SAYS = re.compile(r"(?-i:API Error:)|Unable to connect to API")
_ANTHROPIC_CLIENT = re.compile(r"/v1/messages\b|\bRun /model\b|/\$bunfs/root/src/entrypoints/cli\.js")
_OPENAI_CLIENT = re.compile(r"openai|/v1/(?:chat/)?completions\b|APIConnectionError|\bConnection error\.", re.IGNORECASE)


def _base_url_variable(evidence: Evidence) -> str | None:
    """The variable the fix names for this client's base URL; None where the log shows no such client
    (Continue's apiBase and Codex's base_url live in their config files)."""
    if _CLAUDE_CODE_SAYS.search(evidence.text) or any(_ANTHROPIC_CLIENT.search(line) for line in evidence.lines):
        return "ANTHROPIC_BASE_URL"
    return "OPENAI_BASE_URL" if any(_OPENAI_CLIENT.search(line) for line in evidence.lines) else None


def _scrape_not_found(evidence: Evidence) -> Diagnosis:
    """Prometheus's scrape error for a target (its targets page and its debug log)."""
    return found(evidence, Cause.metrics_path_not_found,
                 "Prometheus's scrape got 404 from a target: nothing serves metrics at the job's metrics_path there "
                 "(a wrong path, the wrong target endpoint or port, or a target whose metrics endpoint is off)",
                 Fix("ask the target the way Prometheus does, `curl http://HOST:PORT/PATH` with PATH the scrape "
                     "config's metrics_path (default /metrics), and set metrics_path in the scrape config to where it "
                     "serves metrics, the target to the port that serves them, or turn its metrics endpoint on; "
                     "stackctl renders its own jobs (the engine, the filter-proxy and the exporters on /metrics), so "
                     "a 404 on one of them means another process answers on that port (`ss -ltnp` shows which)"),
                 severity=Severity.advisory)


def _client_base_url(evidence: Evidence) -> Diagnosis:
    if evidence.context.service in _EXPORTERS and "404 page not found" in evidence.line:
        return _metrics_path_not_found(evidence)
    variable = _base_url_variable(evidence)
    if "No connection adapters were found" in evidence.line:
        url = evidence.read(_NO_SCHEME).get("url", "")
        return found(evidence, Cause.client_base_url,
                     f"the client's base URL {url or ''} has no scheme, so the HTTP library cannot use it".replace("  ", " "),
                     Fix("write the base URL whole, with its scheme: http://HOST:PORT/v1 (not HOST:PORT/v1, nor "
                         "http//HOST): api_base / base_url / OPENAI_BASE_URL of the client; " + _BASE_URLS,
                         key="ports.proxy", env=variable), **({"url": url} if url else {}))
    if "Connection error" in evidence.line:
        return found(evidence, Cause.client_base_url,
                     "the OpenAI SDK in the client could not connect to its base URL (Connection error): the URL is "
                     "malformed, points at the wrong endpoint, or nothing listens there",
                     Fix("check the client's base_url (OPENAI_BASE_URL): it must be the running filter-proxy, whole, "
                         "http://HOST:PORT/v1 with PORT = ports.proxy in stack.yaml (a missing ':' as in http//HOST, a "
                         "missing /v1, or api.openai.com left in place are the usual slips; `stackctl status` says "
                         "whether it runs); " + _BASE_URLS, key="ports.proxy", env=variable))
    if "ConnectionRefused" in evidence.text or "Connection refused" in evidence.text:
        return found(evidence, Cause.client_base_url,
                     "nothing listens where the client's base URL points (connection refused): the URL names a port "
                     "where no server runs, or the server is down",
                     Fix(f"check where ANTHROPIC_BASE_URL (or OPENAI_BASE_URL) points, in the shell and in the "
                         "client's settings: it must be the running filter-proxy, http://HOST:PORT with PORT = "
                         "ports.proxy in stack.yaml (`stackctl status` says whether it runs; a stale variable left in "
                         f"the environment wins over a login); {_BASE_URLS}", key="ports.proxy", env=variable))
    return found(evidence, Cause.client_base_url,
                 "the client's requests reach a server that has no such route (404): its base URL points at the "
                 "wrong port or path", Fix(_BASE_URLS, key="ports.proxy", env=variable))


_NO_SCHEME = re.compile(r"No connection adapters were found for '(?P<url>[^']+)'")
_CONTEXT_FLOOR = re.compile(r"context window too small \((?P<window>\d+) tokens\)\. Minimum is (?P<minimum>\d+)")


def _client_context_window_too_small(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_CONTEXT_FLOOR)
    window, minimum = values.get("window", ""), values.get("minimum", "")
    return found(evidence, Cause.client_context_window_too_small,
                 f"the agent refuses a model whose context window is {window or 'below its minimum'} tokens"
                 + (f" (it needs at least {minimum})" if minimum else "") + ": the window is the client's setting "
                 "for the model, not the server's",
                 Fix(f"set the model's contextWindow in the client's config (OpenClaw: openclaw.json, "
                     f"models.providers.NAME.models[].contextWindow; a custom provider defaults to 4096) to the "
                     f"server's real window, at least {minimum or 'the minimum'}: stackctl's is vllm.max_model_len in "
                     "stack.yaml (`stackctl connect openclaw` writes it); if that is smaller, raise vllm.max_model_len "
                     "first (a larger context needs the KV cache for it)", key="vllm.max_model_len",
                     value=minimum or None),
                 severity=Severity.advisory, **({"window": int(window)} if window else {}),
                 **({"minimum": int(minimum)} if minimum else {}))


_REQUEST_URL = re.compile(r"error sending request for url \((?P<url>[^)\s]+)\)")
# Ollama's port: where `codex --oss` sends when CODEX_OSS_BASE_URL is not set.
_OLLAMA_PORT = ":11434/"


def _client_url_unreachable(evidence: Evidence) -> Diagnosis:
    """Codex (Rust's reqwest) could not send to its provider's URL: nothing listens there, or the URL
    is not the one configured (`codex --oss` ignores config.toml's base_url)."""
    url = evidence.read(_REQUEST_URL).get("url", "")
    oss = _OLLAMA_PORT in url
    return found(evidence, Cause.client_base_url,
                 f"the client could not connect to {url or 'its base URL'}: nothing listens there"
                 + (" (Ollama's default port: `codex --oss` sends there unless CODEX_OSS_BASE_URL says otherwise)"
                    if oss else ""),
                 Fix("Codex sends to its model_provider's base_url in ~/.codex/config.toml, except `codex --oss`, "
                     "which ignores it and uses CODEX_OSS_BASE_URL (default http://localhost:11434/v1, Ollama's): "
                     "point it at the running filter-proxy, http://HOST:PORT/v1 with PORT = ports.proxy in stack.yaml "
                     "(`stackctl connect codex` writes that model_provider; with --oss export "
                     "CODEX_OSS_BASE_URL=http://HOST:PORT/v1), and check that it runs (`stackctl status`); "
                     f"{_BASE_URLS}", key="ports.proxy", env="CODEX_OSS_BASE_URL" if oss else None),
                 **({"url": url} if url else {}))


def _codex_wire_api(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.codex_wire_api,
                 "the client (Codex) speaks only the Responses API (/v1/responses) now, but its provider is set to "
                 "(or its server only offers) Chat Completions",
                 Fix("in ~/.codex/config.toml set the provider's wire_api = \"responses\" and its base_url to the "
                     "filter-proxy's /v1 (http://HOST:PORT/v1, ports.proxy), which serves /v1/responses for vLLM; "
                     "`stackctl connect codex` writes that provider; a gateway without /v1/responses cannot serve "
                     "Codex", key="ports.proxy"), severity=Severity.advisory)


def _litellm_provider_prefix(evidence: Evidence) -> Diagnosis:
    model = evidence.read(re.compile(r"You passed model=(?P<model>[^\s\\]+)")).get("model", "")
    return found(evidence, Cause.litellm_provider_prefix,
                 f"LiteLLM cannot tell which provider serves {model or 'the model'}: the model name has no provider "
                 "prefix it knows",
                 Fix("LiteLLM (and the tools built on it: aider, OpenHands, LiteLLM's proxy) needs the provider prefix "
                     "in front of the model name, `PROVIDER/MODEL`, and a made-up prefix (`local/`) is none: for "
                     "stackctl's endpoint `hosted_vllm/SERVED_NAME` (or `openai/SERVED_NAME`) with api_base "
                     "http://HOST:PORT/v1 (PORT = ports.proxy, SERVED_NAME = served_model_name in stack.yaml); for a "
                     "model on Ollama `ollama_chat/NAME` with OLLAMA_API_BASE=http://HOST:11434 (no /v1); a model "
                     "metadata file's litellm_provider must name the same provider", key="served_model_name"),
                 severity=Severity.advisory, **({"model": model} if model else {}))


_GATEWAY_MODEL = re.compile(r"Invalid model name passed in model=(?P<invalid>[^'\"\s]+)|You passed in model=(?P<passed>[^.\s]+"
                            r"(?:\.[^.\s]+)*)\. There is no 'model_name'")


def _gateway_model_unknown(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_GATEWAY_MODEL)
    model = values.get("invalid") or values.get("passed") or ""
    claude = model.startswith("claude")
    haiku = "haiku" in model
    text = (f"the gateway (LiteLLM) has no model_name `{model or 'MODEL'}` in its model_list: add one for it there "
            "(for stackctl's endpoint `hosted_vllm/SERVED_NAME` with api_base http://HOST:PORT/v1), or let the "
            "client ask for a name it lists; behind stackctl's own filter-proxy, map the name under aliases: in "
            "stack.yaml (the proxy rewrites it to served_model_name)")
    if claude:
        text = ("Claude Code asks for more than its main model: a small, fast one (haiku) for titles, summaries and "
                "background work, whatever ANTHROPIC_MODEL says; set ANTHROPIC_DEFAULT_HAIKU_MODEL (older Claude "
                "Code: ANTHROPIC_SMALL_FAST_MODEL) and ANTHROPIC_DEFAULT_SONNET_MODEL/OPUS to a name the gateway "
                "serves (`stackctl connect claude-code` sets them all to the served name), or " + text)
    return found(evidence, Cause.gateway_model_unknown,
                 f"a client asked the gateway for model `{model or '?'}`, which it does not list"
                 + (": Claude Code's small/fast (haiku) model" if haiku else ""),
                 Fix(text, key="aliases"), severity=Severity.advisory, **({"model": model} if model else {}))


def _thinking_budget(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.thinking_budget,
                 "a request asked for a thinking budget (thinking.budget_tokens) not below its max_tokens, which "
                 "Anthropic's Messages API refuses",
                 Fix("the client must send budget_tokens below max_tokens: Claude Code takes the budget from "
                     "MAX_THINKING_TOKENS and max_tokens from CLAUDE_CODE_MAX_OUTPUT_TOKENS, so lower the first or "
                     "raise the second (a gateway that caps max_tokens must cap budget_tokens with it)",
                     env="MAX_THINKING_TOKENS"), severity=Severity.advisory)


_BETAS = re.compile(r"Unexpected value\(s\) (?P<betas>`[^`]+`(?:, `[^`]+`)*) for the `anthropic-beta` header")


def _client_anthropic_beta_header_rejected(evidence: Evidence) -> Diagnosis:
    """Claude Code and the Agent SDK send anthropic-beta values that Anthropic's API knows and
    Bedrock, Vertex or a gateway in front of them may not; stackctl's filter-proxy translates to
    OpenAI and does not forward the header, so this comes from another gateway on the way."""
    betas = evidence.read(_BETAS).get("betas", "").replace("`", "")
    named = f" ({betas})" if betas else ""
    return found(evidence, Cause.client_anthropic_beta_header_rejected,
                 f"the API behind the client's gateway refuses the anthropic-beta header values{named} that Claude "
                 "Code sends",
                 Fix("set CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS=1 in Claude Code's environment (settings.json's env) "
                     "to stop the experimental anthropic-beta values (some Claude Code releases still send a value or "
                     "two: then the gateway must strip the beta header it cannot forward); pointed at stackctl's filter-proxy (`stackctl connect claude-code`), which does "
                     "not forward the header, the request needs neither", env="CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS"),
                 **({"betas": betas} if betas else {}))


def _client_request_body_refused(evidence: Evidence) -> Diagnosis:
    refused = refused_body(evidence.text)
    if refused is None:
        raise ValueError("no refusal on this line")
    if refused == "system role":
        return found(evidence, Cause.client_request_body_refused,
                     "the endpoint refused Claude Code's request: a message with role system inside messages, which "
                     "it accepts only at the top level (400, a client-side error)",
                     Fix(system_role_fix(), env="CLAUDE_CODE_SIMPLE"), refused=refused)
    return found(evidence, Cause.client_request_body_refused,
                 "the gateway refused the shape of Claude Code's request body (400, a client-side error): most often "
                 "what a plugin, hook or MCP server adds to it",
                 Fix(body_fix()), refused=refused)


_CURL_REFUSED = re.compile(r"curl: \(7\) Failed (?:to )?connect to (?P<host>[\w.:-]+?)(?::| port )(?P<port>\d+)\b")


def _listen_address_refused(evidence: Evidence) -> Diagnosis:
    """curl refused at an address and port: nothing listens there. For an exporter, where it listens
    is its --web.listen-address; a typo there (or in the address asked) is the usual cause."""
    values = evidence.read(_CURL_REFUSED)
    host, port = values.get("host", ""), values.get("port", "")
    at = f"{host}:{port}" if host and port else "that address"
    exporter = (" An exporter listens only on the address its --web.listen-address names (stackctl's node-exporter: "
                "127.0.0.1:ports.node_exporter, loopback only, where Prometheus scrapes it): curl that listen address, "
                "and if you set it by hand check it for a typo, an address this host does not have (`ip -br addr`)"
                if evidence.context.service in _EXPORTERS else "")
    return found(evidence, Cause.listen_address_refused,
                 f"the connection to {at} was refused: nothing listens on that address and port",
                 Fix(f"compare where the service listens with what was asked: `ss -ltnp | grep {port or 'PORT'}` shows the "
                     f"listen address (127.0.0.1 answers only on the host itself, 0.0.0.0 on all interfaces), and "
                     f"`stackctl status` whether the service runs.{exporter}"), severity=Severity.advisory,
                 **({"address": at} if host and port else {}))


_NO_TOOLS = re.compile(r"(?P<model>[\w./:-]+) does not support tools")


def _model_tools_unsupported(evidence: Evidence) -> Diagnosis:
    """Ollama's refusal of a request carrying tools for a model whose template declares none; a
    client relays it (OpenClaw, cline, the OpenAI SDK). vLLM's own refusal of tools is
    auto_tool_choice_disabled."""
    model = evidence.read(_NO_TOOLS).get("model", "")
    return found(evidence, Cause.model_tools_unsupported,
                 f"the server refused a request with tools: the model {model or 'asked for'} does not support tools "
                 "(its chat template declares no tool calling), and agent clients always send them",
                 Fix("pick a model that supports tools (tool calling) for an agent client, or disable tools in the "
                     "client where it allows (a plain chat). This refusal is Ollama's: a client still pointed at "
                     "Ollama; for stackctl's endpoint run `stackctl connect CLIENT`. On stackctl's vLLM the served "
                     "model calls tools once vLLM runs with --enable-auto-tool-choice and the model's "
                     "--tool-call-parser (stackctl adds both for the models it knows; others: vllm.extra_args in "
                     "stack.yaml)"), severity=Severity.advisory, **({"model": model} if model else {}))


_WRONG_KEY = re.compile(r"Incorrect API key provided: (?P<key>[^.\s]+)")


def _client_key_rejected(evidence: Evidence) -> Diagnosis:
    """OpenAI's own 401: a client sends its key, often a placeholder meant for a local server
    ("ollama", "EMPTY"), to api.openai.com, or a wrong key to a server that checks keys."""
    shown = evidence.read(_WRONG_KEY).get("key", "")
    # A key shown whole is not a secret OpenAI would mask (it masks real keys with *): a placeholder.
    placeholder = bool(shown) and "*" not in shown
    return found(evidence, Cause.client_key_rejected,
                 "the client's API key was refused with OpenAI's \"Incorrect API key provided\""
                 + (": a placeholder key for a local server was sent to OpenAI's own API" if placeholder else ""),
                 Fix("this 401 is api.openai.com's answer: the client is not talking to the stack. Set its base URL to "
                     "the filter-proxy (OPENAI_BASE_URL=http://HOST:PORT/v1, ports.proxy in stack.yaml) and its "
                     "OPENAI_API_KEY to the stack's API key (the value in stackctl's .env), not a placeholder; "
                     "`stackctl connect CLIENT` writes both. A wrong key sent to the stack itself gets the "
                     "filter-proxy's own 401: use the key from .env", env="OPENAI_API_KEY"),
                 severity=Severity.advisory)


# The paths vLLM's OpenAI-compatible server (and the filter-proxy) serve: a 404 there is another
# cause (an unknown model, a base URL doubled), not a path the engine lacks.
_SERVED_PATHS = (r"/v1/(?:chat/completions|completions|models|embeddings|responses|messages|audio/[\w.]+|rerank|score"
                 r"|tokenize|detokenize)|/(?:health|metrics|ping|version|tokenize|detokenize|pooling|score|rerank"
                 r"|invocations|docs|openapi\.json|favicon\.ico)\b")
# An access log's 404 (uvicorn: `"POST /generate HTTP/1.1" 404 Not Found`) on any other path.
_UNSERVED_TRIGGER = r"\b(?:GET|POST|PUT) (?!(?:" + _SERVED_PATHS + r")[\s?])/[^\s\"]* HTTP/[\d.]+\"? 404\b"
_UNSERVED_PATH = re.compile(r"\b(?:GET|POST|PUT) (?!(?:" + _SERVED_PATHS + r")[\s?])(?P<path>/[^\s\"?]*)[^\s\"]* HTTP/[\d.]+\"? "
                            r"404\b")


def _endpoint_path_unknown(evidence: Evidence) -> Diagnosis:
    paths = evidence.all_found(_UNSERVED_PATH, "path")
    return found(evidence, Cause.endpoint_path_unknown,
                 f"a client asked {', '.join(paths)}, a path the server does not serve (404): vLLM's server is "
                 "OpenAI-compatible, and /generate belongs to its old demo server (vllm.entrypoints.api_server)",
                 Fix("send the client to the OpenAI-compatible endpoint: POST /v1/chat/completions (chat), "
                     "/v1/completions (a bare prompt), GET /v1/models (the served names), on the filter-proxy "
                     "(http://HOST:PORT/v1, ports.proxy in stack.yaml) or on vLLM; an OpenAI SDK or a client with an "
                     "OpenAI provider does this given the base URL; " + _BASE_URLS, key="ports.proxy"),
                 severity=Severity.advisory, paths=", ".join(paths))


SIGNATURES: tuple[Signature, ...] = (
    # Go's net/http answer to an unknown path (Ollama, Prometheus, Grafana, a Go gateway), and Claude
    # Code's and the SDKs' report of a 404.
    signature(Cause.client_base_url, r"\b404 page not found|API Error: 404\b|Error code: 404 - \{'detail': 'Not Found'\}"
              r"|forgot to add '/v1' to the end of your 'apiBase'", _client_base_url),
    # The OpenAI Python SDK's APIConnectionError (its message is only "Connection error."), and
    # requests' refusal of a URL without a scheme.
    signature(Cause.client_base_url, r"\bAPI ?(?:Connection)?Error:? Connection error\.|No connection adapters were found "
              r"for '", _client_base_url),
    signature(Cause.client_context_window_too_small, r"context window too small \(\d+ tokens\)\. Minimum is \d+",
              _client_context_window_too_small),
    # Claude Code's words when nothing listens at ANTHROPIC_BASE_URL.
    signature(Cause.client_base_url, r"(?:Unable to connect to API|API Error: Connection refused)[^\n]*\(ConnectionRefused\)",
              _client_base_url),
    # Codex's own refusal of the chat wire, its deprecation notice, and a server without the Responses route.
    signature(Cause.codex_wire_api,
              r"only supported in v1/responses and not in v1/chat/completions|wire_api = \"chat\"`? is no longer "
              r"supported|Support for the \"chat\" wire API is deprecated|Invalid URL \(GET /v1/responses\)"
              # A server's access log refusing the Responses route (no such route, or no WebSocket on it).
              r"|\"(?:POST /v1/responses HTTP/[\d.]+\" 404|WebSocket /v1/responses\" 403)",
              _codex_wire_api),
    signature(Cause.litellm_provider_prefix, r"LLM Provider NOT provided", _litellm_provider_prefix),
    # LiteLLM's router and proxy, for a model name its model_list lacks.
    signature(Cause.gateway_model_unknown,
              r"Invalid model name passed in model=|There is no 'model_name' with this string", _gateway_model_unknown),
    # Codex's (Rust reqwest's) words when the connection to its provider's URL fails.
    signature(Cause.client_base_url, _REQUEST_URL.pattern, _client_url_unreachable),
    signature(Cause.listen_address_refused, _CURL_REFUSED.pattern + r".*Connection refused", _listen_address_refused),
    signature(Cause.model_tools_unsupported, r"does not support tools\b", _model_tools_unsupported),
    signature(Cause.client_key_rejected, r"Incorrect API key provided: ", _client_key_rejected),
    signature(Cause.endpoint_path_unknown, _UNSERVED_TRIGGER, _endpoint_path_unknown),
    signature(Cause.metrics_path_not_found, r"server returned HTTP status 404 Not Found", _scrape_not_found),
    signature(Cause.thinking_budget, r"`?max_tokens`? must be greater than `?thinking\.budget_tokens`?", _thinking_budget),
    signature(Cause.client_anthropic_beta_header_rejected, r"Unexpected value\(s\) `[^`]+`.* for the `anthropic-beta`",
              _client_anthropic_beta_header_rejected),
    signature(Cause.client_request_body_refused, unnamed(SYSTEM_ROLE, BODY_REFUSED), _client_request_body_refused),
)
