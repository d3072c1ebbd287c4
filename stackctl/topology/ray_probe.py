"""The Ray cluster gate: does the cluster at ADDRESS report the nodes and GPUs it should?

`ray_probe_argv()` is run by the *engine's* interpreter (the one with the vLLM image's own Ray),
so the script below imports nothing from stackctl. It prints one JSON line and exits 0 when
the cluster has at least NODES alive nodes and GPUS GPUs (and, given NODE_IP, that node in it).
"""

from __future__ import annotations

_SCRIPT = """
import json, sys
address, nodes, gpus = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
node_ip = sys.argv[4] if len(sys.argv) > 4 else None
try:
    import ray
    ray.init(address=address, logging_level="ERROR", log_to_driver=False, configure_logging=False)
    alive = [node for node in ray.nodes() if node.get("Alive")]
    ray.shutdown()
except Exception as error:
    print(json.dumps({"ok": False, "detail": f"no Ray cluster at {address}: {type(error).__name__}: {error}"[:300]}))
    sys.exit(1)
found_gpus = sum(node.get("Resources", {}).get("GPU", 0) for node in alive)
addresses = sorted(node.get("NodeManagerAddress", "?") for node in alive)
ok = len(alive) >= nodes and found_gpus >= gpus and (node_ip is None or node_ip in addresses)
detail = f"{len(alive)}/{nodes} nodes ({', '.join(addresses)}), {found_gpus:g}/{gpus:g} GPUs"
if node_ip is not None and node_ip not in addresses:
    detail += f"; {node_ip} has not joined"
print(json.dumps({"ok": ok, "detail": detail}))
sys.exit(0 if ok else 1)
"""


def ray_probe_argv() -> list[str]:
    """Arguments after the engine's `python`; append ADDRESS NODES GPUS [NODE_IP]."""
    return ["-c", _SCRIPT]
