"""Where clients reach a stack from this machine: the base URL (loopback or HTTPS), the model
name and its window, where the key is. `connect` turns it into a LAN address for other machines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stackctl.stack import Stack


@dataclass(frozen=True)
class Endpoint:
    base_url: str  # without /v1
    model: str
    key_file: Path  # client keys: STACKCTL_PROXY_KEYS in this .env
    context_tokens: int  # the served window (max_model_len)

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"


def endpoint_of(stack: Stack) -> Endpoint:
    config = stack.config
    # On one box, loopback; on a multi-host stack, the edge's (else the gpu host's) intranet IP.
    base = f"http://{stack.plan.endpoint_address}:{config.ports.http}"
    if config.hostname and config.services.tls:
        base = f"https://{config.hostname}"
    return Endpoint(base, config.served_name, stack.layout.env_file, stack.vllm.max_model_len)
