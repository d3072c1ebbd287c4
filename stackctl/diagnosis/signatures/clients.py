"""An agent client pointed at the wrong place: its requests reach a server with no such route (a
404 page where the Messages or Chat Completions API should be)."""

from __future__ import annotations

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix


def _client_base_url(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.client_base_url,
                 "the client's requests reach a server that has no such route (404): its base URL points at the "
                 "wrong port or path",
                 Fix("point the client at the filter-proxy without /v1 for Anthropic clients (Claude Code: "
                     "ANTHROPIC_BASE_URL=http://HOST:PORT, ports.proxy in stack.yaml) and with /v1 for OpenAI ones "
                     "(OPENAI_BASE_URL); `stackctl connect CLIENT` writes the right one", key="ports.proxy"))


SIGNATURES: tuple[Signature, ...] = (
    # Go's net/http answer to an unknown path (Ollama, Prometheus, Grafana, a Go gateway), and Claude
    # Code's and the SDKs' report of a 404.
    signature(Cause.client_base_url, r"\b404 page not found|API Error: 404\b|Error code: 404 - \{'detail': 'Not Found'\}",
              _client_base_url),
)
