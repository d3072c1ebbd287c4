"""A client refused at a model server's own path (/v1/models, /v1/chat/completions, /health) while the
server is still starting.

A model server opens its port only once it can serve: vLLM loads the weights (downloading them first on a
cold cache), profiles memory and captures CUDA graphs before uvicorn listens, minutes for a large model.
A client started beside it (a script that starts the server and sends at once, a compose service without a
health condition) is refused at that address until then: urllib3's "Max retries exceeded with url:
/v1/models (Caused by NewConnectionError(... [Errno 111] Connection refused))". The fix is to wait for the
server to answer, polling /health or /v1/models (CerebriumAI/examples#39: the example now retries
/v1/models until it answers 200). A refusal at another path keeps the reading of nothing listening there.
"""

from __future__ import annotations

import re

# urllib3's refusal (requests relays it) at an OpenAI-compatible route or a model server's health route.
REFUSED_AT_MODEL_PATH = re.compile(
    r"HTTPS?ConnectionPool\(host='(?P<host>[^']+)', port=(?P<port>\d+)\): Max retries exceeded with url: "
    r"(?P<path>/(?:v1/(?:models|chat/completions|completions|embeddings|responses|messages)|health|ping|version)\b"
    r"[^\s()]*) \(Caused by NewConnectionError\(.*?(?:Connection refused|Errno 111|actively refused)")


def refused_at_model_path(text: str) -> re.Match[str] | None:
    return REFUSED_AT_MODEL_PATH.search(text)


def not_ready_fix(address: str, key: str | None) -> str:
    """Wait until the server answers; if it never does, it is not running or not at that port."""
    where = key or "ports.vllm (or the filter-proxy's ports.proxy)"
    return (f"nothing listened at {address} yet: a model server opens its port only once the model is loaded (vLLM "
            "loads and warms up the weights before it listens, minutes for a large model, longer while it downloads "
            "them), so a client that sends right after starting it is refused while it is still loading. Wait for "
            "the server to be ready before the first request: poll until GET /health (or /v1/models) answers 200, "
            "retrying refused connections for a while rather than failing at once (`stackctl up` waits for it; "
            "`stackctl status` shows whether vllm is healthy). If it never answers, the engine is not running "
            f"(`stackctl logs vllm --explain` says why) or the client's URL names another port than it listens on "
            f"({where} in stack.yaml; `ss -ltnp` shows what listens)")
