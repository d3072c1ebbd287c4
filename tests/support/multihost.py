"""Multi-host demo stacks: one stack directory (stack.yaml + .env) shared by hosts that are
network namespaces (tests/support/netns.py), each running `stackctl up --host NAME` inside."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from stackctl.envfile import write_env_values
from tests.support.netns import Host
from tests.support.stacks import DemoStack, make_demo_stack

# An Anthropic client in a namespace of its own: one request per line of stdin-less argv, the
# outcome of each as one JSON line (the key comes from the environment, never argv).
CLIENT_SCRIPT = """
import json, os, sys, anthropic
client = anthropic.Anthropic(base_url=sys.argv[1], api_key=os.environ["CLIENT_KEY"], max_retries=0, timeout=120)
reply = client.messages.create(model="claude-sonnet-4-5", max_tokens=8,
                               messages=[{"role": "user", "content": "Say hi"}])
with client.messages.stream(model="claude-sonnet-4-5", max_tokens=8,
                            messages=[{"role": "user", "content": "Count to three"}]) as stream:
    streamed = "".join(stream.text_stream)
    final = stream.get_final_message()
print(json.dumps({"type": reply.type, "model": reply.model, "stop_reason": reply.stop_reason,
                  "text": "".join(block.text for block in reply.content if block.type == "text"),
                  "streamed_stop": final.stop_reason, "streamed_chars": len(streamed)}))
"""


# Each host is a namespace with a port space of its own, so stack.yaml's default ports serve. They
# lie below the ephemeral range, where vLLM's own sockets in the same namespace take theirs (a
# port picked free in the machine's namespace can be one of those).
HOST_PORTS = {"vllm": 8000, "proxy": 4000, "prometheus": 9090, "grafana": 3000, "node_exporter": 9100,
              "gpu_exporter": 9835, "http": 80, "https": 443}


def make_multihost_stack(root: Path, hosts: dict[str, dict], **overrides) -> DemoStack:
    """`stackctl init --demo` (CPU engine, tiny model, native), then `hosts:` as given."""
    settings = {"services": {"monitoring": True, "grafana": False}, **overrides}
    demo = make_demo_stack(root, hosts=hosts, ports=HOST_PORTS, **settings)
    return DemoStack(demo.root, dict(HOST_PORTS))


def set_client_keys(demo: DemoStack, names: list[str]) -> dict[str, str]:
    """Replace the client keys with fixed ones (name -> key), so a test knows every key's hash."""
    keys = {name: f"sk-test-{name}-0123456789abcdef" for name in names}
    write_env_values(demo.root / ".env", {"STACKCTL_PROXY_KEYS": ",".join(f"{name}={key}" for name, key in keys.items())})
    return keys


def host_services(demo: DemoStack, host: str) -> dict:
    rendered = yaml.safe_load((demo.root / "hosts" / host / "docker-compose.yml").read_text())
    return rendered["services"]


def prometheus_query(host: Host, port: int, query: str) -> list[dict]:
    """A PromQL instant query against the Prometheus inside `host` (on its loopback)."""
    code = (
        "import httpx, json, sys\n"
        f"r = httpx.get('http://127.0.0.1:{port}/api/v1/query', params={{'query': sys.argv[1]}}, timeout=10)\n"
        "print(json.dumps(r.json()['data']['result']))\n"
    )
    done = host.python(code, query, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def proxy_requests_by_key(host: Host, address: str, port: int) -> dict[str, float]:
    """Requests a replica's filter-proxy answered with 200, by key name (its /metrics)."""
    code = (
        "import httpx, json\n"
        f"text = httpx.get('http://{address}:{port}/metrics', timeout=10).text\n"
        "counts = {}\n"
        "for line in text.splitlines():\n"
        "    if line.startswith('stackctl_proxy_requests_total{') and 'status=\"200\"' in line:\n"
        "        key = line.split('key=\"', 1)[1].split('\"', 1)[0]\n"
        "        counts[key] = counts.get(key, 0) + float(line.rsplit(' ', 1)[1])\n"
        "print(json.dumps(counts))\n"
    )
    done = host.python(code, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)
