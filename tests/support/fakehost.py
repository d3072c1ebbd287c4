"""Fabricated hosts for doctor tests: a tmp root holding recorded /proc files, and a tmp PATH
holding `nvidia-smi` / `docker` / `systemctl` executables that print recorded outputs.

The checks run their real code path against these (subprocesses, file reads, python-on-whales).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from stackctl.doctor.context import DoctorContext
from stackctl.host import GPU_QUERY_FIELDS, HostFacts
from stackctl.stack import Stack

DATA = Path(__file__).resolve().parents[1] / "data" / "doctor"
HOSTS = DATA / "hosts"
MODEL_CACHE = DATA / "hf_cache"

_NVIDIA_SMI = '''#!{python}
import sys
expected = ["--query-gpu={fields}", "--format=csv,noheader,nounits"]
if sys.argv[1:] != expected:
    print("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.")
    sys.exit(2)
sys.stdout.write(open({csv!r}).read())
sys.exit({code})
'''

_DOCKER = '''#!{python}
import json
import sys
args = sys.argv[1:]
if args[:2] == ["system", "info"] or args[:1] == ["info"]:
    if {info!r} is None:
        sys.stderr.write("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\\n")
        sys.exit(1)
    sys.stdout.write(open({info!r}).read())
    sys.exit(0)
if "compose" in args and args[-1] == "version":
    if {compose!r} is None:
        sys.stderr.write("docker: unknown command: docker compose\\n")
        sys.exit(1)
    print({compose!r})
    sys.exit(0)
if args[:1] == ["ps"]:
    print("\\n".join({containers!r}))
    sys.exit(0)
if args[:2] == ["image", "inspect"]:
    found = {images!r}.get(args[2])
    if found is None:
        sys.stderr.write("Error response from daemon: No such image: " + args[2] + "\\n")
        sys.exit(1)
    print(json.dumps([found]))
    sys.exit(0)
if args[:1] == ["run"] and "python3" in args:
    image = args[args.index("python3") + 1]
    version = {image_vllm!r}.get(image)
    if version is None:
        sys.stderr.write("ModuleNotFoundError: No module named 'vllm'\\n")
        sys.exit(1)
    print(version)
    sys.exit(0)
sys.stderr.write("fake docker: unexpected " + " ".join(args) + "\\n")
sys.exit(1)
'''


def executable(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def make_host(tmp_path: Path, host: str | None = None, *, docker: str | None = "absent",
              compose: str | None = "Docker Compose version v2.40.0", containers: tuple[str, ...] = (),
              images: dict[str, dict] | None = None, image_vllm: dict[str, str] | None = None) -> HostFacts:
    """host: a directory under tests/data/doctor/hosts (None: no NVIDIA driver at all).
    docker: "absent" (no client), None (client, daemon down) or an info JSON file name.
    images: what `docker image inspect IMAGE` shows for locally present images;
    image_vllm: what `import vllm; print(vllm.__version__)` prints inside them."""
    root = tmp_path / "host-root"
    bin_dir = tmp_path / "host-bin"
    root.mkdir(parents=True, exist_ok=True)
    bin_dir.mkdir(parents=True, exist_ok=True)
    if host is not None:
        sample = HOSTS / host
        shutil.copytree(sample / "proc", root / "proc", dirs_exist_ok=True)
        code_file = sample / "nvidia-smi.exit"
        code = int(code_file.read_text()) if code_file.exists() else 0
        executable(bin_dir, "nvidia-smi", _NVIDIA_SMI.format(
            python=sys.executable, fields=",".join(GPU_QUERY_FIELDS), csv=str(sample / "nvidia-smi.csv"), code=code))
    if docker != "absent":
        info = str(DATA / "docker" / docker) if docker else None
        executable(bin_dir, "docker", _DOCKER.format(python=sys.executable, info=info, compose=compose,
                                                     containers=list(containers), images=images or {},
                                                     image_vllm=image_vllm or {}))
    return HostFacts(root=root, path=str(bin_dir), environ={})


def context(stack: Stack, facts: HostFacts, engine_python: Path | None = None) -> DoctorContext:
    return DoctorContext(stack, facts, engine_python)


def by_name(results, name: str):
    matches = [result for result in (results if isinstance(results, list) else [results]) if result.name == name]
    assert matches, f"no result named {name} in {results}"
    return matches[0]


def write_index(hf_cache: Path, hf_id: str, total_size: int, config: dict | None = None) -> Path:
    """A cached model snapshot with config.json and a safetensors index claiming total_size."""
    snapshot = hf_cache / "hub" / ("models--" + hf_id.replace("/", "--")) / "snapshots" / "abc123"
    snapshot.mkdir(parents=True, exist_ok=True)
    source = MODEL_CACHE / "hub" / ("models--" + hf_id.replace("/", "--"))
    configs = list(source.glob("snapshots/*/config.json"))
    text = json.dumps(config) if config is not None else configs[0].read_text()
    (snapshot / "config.json").write_text(text)
    (snapshot / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total_size}, "weight_map": {}}))
    return snapshot
