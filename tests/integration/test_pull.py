"""`stackctl init --model hf:...` and `stackctl pull` through the real CLI and the real
huggingface_hub client, against a stand-in Hub on loopback (HF_ENDPOINT): derivation, download,
resume after an interruption, a gated repo without a token, and a disk that is or gets full."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from stackctl.config import parse_stack_config
from stackctl.envfile import write_env_values
from stackctl.errors import StackError
from stackctl.host import HostFacts
from stackctl.layout import StackLayout
from stackctl.pull import pull_weights, stage_weights
from tests.support.cli import run_cli
from tests.support.fake_hub import FakeHub, running_hub, tiny_repo
from tests.support.processes import eventually

pytestmark = pytest.mark.integration

CONFIG = json.loads((Path(__file__).resolve().parents[1] / "data" / "models" / "Qwen--Qwen3-8B" / "config.json").read_text())
TOKEN = "hf_" + "s3cr3t" * 6
SHARD = 256 * 1024
# huggingface_hub writes a download in 10 MB chunks: a shard bigger than that is seen half-written.
BIG = 12 * 1024 * 1024


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    repos = {
        "acme/qwen-tiny": tiny_repo(CONFIG, shards=2, shard_bytes=SHARD),
        "acme/gated-tiny": tiny_repo(CONFIG, shards=1, shard_bytes=SHARD, gated=True, seed=1),
        "acme/slow-tiny": tiny_repo(CONFIG, shards=4, shard_bytes=SHARD, seed=2),
    }
    with running_hub(FakeHub(repos, token=TOKEN)) as running:
        yield running


def env_for(hub: FakeHub, hf_home: Path) -> dict[str, str]:
    return {"HF_ENDPOINT": hub.url, "HF_HOME": str(hf_home), "HF_TOKEN": "", "HF_HUB_DISABLE_TELEMETRY": "1"}


def init_stack(tmp_path: Path, hub: FakeHub, repo: str, hf_home: Path) -> Path:
    root = tmp_path / "stack"
    done = run_cli("-C", str(root), "init", "--hardware", "rtx-pro-6000", "--model", f"hf:{repo}",
                   cwd=tmp_path, env=env_for(hub, hf_home))
    assert done.returncode == 0, done.stderr
    return root


def snapshot_files(hf_home: Path, repo: str) -> set[str]:
    snapshots = list((hf_home / "hub" / ("models--" + repo.replace("/", "--")) / "snapshots").glob("*"))
    return {path.name for path in snapshots[0].iterdir()} if snapshots else set()


def test_init_derives_a_profile_from_the_hubs_config_and_pull_stages_every_file(tmp_path, hub):
    hf_home = tmp_path / "hf"
    root = init_stack(tmp_path, hub, "acme/qwen-tiny", hf_home)
    document = yaml.safe_load((root / "stack.yaml").read_text())
    assert document["model"] == "qwen-tiny" and document["hf_cache"] == str(hf_home)
    profile = document["models"]["qwen-tiny"]
    assert profile["hf_id"] == "acme/qwen-tiny" and profile["architecture"] == "Qwen3ForCausalLM"
    assert profile["tool_call_parser"] == "hermes" and profile["reasoning_parser"] == "qwen3"

    done = run_cli("-C", str(root), "pull", cwd=tmp_path, env=env_for(hub, hf_home))
    assert done.returncode == 0, done.stderr
    assert "acme/qwen-tiny: 5" in done.stdout and "downloaded" in done.stdout
    assert snapshot_files(hf_home, "acme/qwen-tiny") == set(hub.repos["acme/qwen-tiny"].files)
    again = run_cli("-C", str(root), "pull", cwd=tmp_path, env=env_for(hub, hf_home))
    assert again.returncode == 0 and "already in" in again.stdout


def test_init_prints_every_choice_and_asks_for_a_parser_when_the_family_is_unknown(tmp_path, hub):
    granite = {**CONFIG, "architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid"}
    hub.repos["ibm/granite-tiny"] = tiny_repo(granite, shards=1, seed=3)
    root = tmp_path / "stack"
    done = run_cli("-C", str(root), "init", "--hardware", "rtx-pro-6000", "--model", "hf:ibm/granite-tiny",
                   cwd=tmp_path, env=env_for(hub, tmp_path / "hf"))
    assert done.returncode == 0, done.stderr
    for setting in ("engine", "quantization", "kv_cache_dtype", "max_model_len", "max_num_seqs", "reasoning_parser"):
        assert f"\n  {setting}: " in done.stdout
    assert "choose a parser" in done.stdout and "models.granite-tiny.tool_call_parser" in done.stdout
    assert "GraniteMoeHybridForCausalLM is not in stackctl's compatibility table" in done.stdout


def test_an_unknown_repo_and_a_bad_reference_are_one_line(tmp_path, hub):
    missing = run_cli("-C", str(tmp_path / "a"), "init", "--model", "hf:acme/nope", cwd=tmp_path,
                      env=env_for(hub, tmp_path / "hf"))
    assert missing.returncode != 0 and "no model acme/nope on the Hub" in missing.stderr
    assert "Traceback" not in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    bad = run_cli("-C", str(tmp_path / "b"), "init", "--model", "hf:justaname", cwd=tmp_path,
                  env=env_for(hub, tmp_path / "hf"))
    assert bad.returncode != 0 and "expected hf:ORG/NAME" in bad.stderr and "Traceback" not in bad.stderr


def test_a_gated_repo_without_a_token_is_one_clear_line_and_with_the_token_from_env_it_pulls(tmp_path, hub):
    hf_home = tmp_path / "hf"
    # init reads the public config of a twin repo, then the stack is pointed at the gated one.
    root = init_stack(tmp_path, hub, "acme/qwen-tiny", hf_home)
    document = yaml.safe_load((root / "stack.yaml").read_text())
    document["models"]["qwen-tiny"]["hf_id"] = "acme/gated-tiny"
    (root / "stack.yaml").write_text(yaml.safe_dump(document))

    denied = run_cli("-C", str(root), "pull", cwd=tmp_path, env=env_for(hub, hf_home))
    assert denied.returncode == 1
    lines = denied.stderr.strip().splitlines()
    assert len(lines) == 1 and "acme/gated-tiny is gated: accept its terms" in lines[0] and "HF_TOKEN" in lines[0]

    write_env_values(root / ".env", {"HF_TOKEN": TOKEN})
    hub.requests.clear()
    allowed = run_cli("-C", str(root), "pull", cwd=tmp_path, env=env_for(hub, hf_home))
    assert allowed.returncode == 0, allowed.stderr
    assert snapshot_files(hf_home, "acme/gated-tiny") == set(hub.repos["acme/gated-tiny"].files)
    # The token travels only in the Authorization header: never in a URL, argv or output.
    assert all(TOKEN not in line for line in hub.requests)
    assert any(headers.get("authorization") == f"Bearer {TOKEN}" for headers in hub.headers_seen)
    assert TOKEN not in allowed.stdout + allowed.stderr + denied.stdout + denied.stderr


def blob_bytes(hf_home: Path, repo: str) -> int:
    blobs = hf_home / "hub" / ("models--" + repo.replace("/", "--")) / "blobs"
    return sum(path.stat().st_size for path in blobs.glob("*") if path.is_file()) if blobs.exists() else 0


def start_pull(root: Path, env: dict[str, str]) -> subprocess.Popen:
    environment = {**os.environ, "COLUMNS": "200", **env}
    environment.pop("STACKCTL_DIR", None)
    return subprocess.Popen([sys.executable, "-m", "stackctl", "-C", str(root), "pull"], env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def shard_blobs(hf_home: Path, repo: str) -> list[Path]:
    """Completed shard blobs (LFS blobs are named by their sha256: 64 hex characters)."""
    blobs = hf_home / "hub" / ("models--" + repo.replace("/", "--")) / "blobs"
    return [path for path in blobs.glob("*") if len(path.name) == 64] if blobs.exists() else []


def test_an_interrupted_pull_keeps_every_finished_shard_and_fetches_only_the_rest(tmp_path, hub):
    hf_home = tmp_path / "hf"
    hub.repos["acme/big-tiny"] = tiny_repo(CONFIG, shard_bytes=[64 * 1024, BIG, BIG], seed=4)
    root = init_stack(tmp_path, hub, "acme/big-tiny", hf_home)
    hub.throttle_s = 0.02  # ~3 MiB/s per file: the small shard lands at once, the big ones take seconds
    process = start_pull(root, env_for(hub, hf_home))
    assert eventually(lambda: len(shard_blobs(hf_home, "acme/big-tiny")) >= 1, timeout_s=60.0), "timed out"
    # What a reboot, `systemctl stop` or a lost SSH session does: the process ends mid-download.
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGTERM
    kept = shard_blobs(hf_home, "acme/big-tiny")
    assert 1 <= len(kept) < 3

    repo = hub.repos["acme/big-tiny"]
    kept_files = {name for name in repo.files if repo.etag(name) in {path.name for path in kept}}
    assert len(kept_files) == len(kept)
    # (A server thread of the killed download may still count a chunk it wrote before the
    # connection closed, so what the resume fetched is judged per file.)
    hub.throttle_s = 0.0
    hub.requests.clear()
    resumed = run_cli("-C", str(root), "pull", cwd=tmp_path, env=env_for(hub, hf_home))
    assert resumed.returncode == 0, resumed.stderr
    assert snapshot_files(hf_home, "acme/big-tiny") == set(repo.files)
    downloads = {request.split("/resolve/", 1)[1].split("/", 1)[1] for request in hub.requests
                 if request.startswith("GET ") and "/resolve/" in request}
    assert not downloads & kept_files  # kept shards not fetched again
    assert {name for name in repo.files if name.endswith(".safetensors")} - kept_files <= downloads
    # The killed download's temporary is gone: the cache holds exactly the files.
    assert not list((hf_home / "hub" / "models--acme--big-tiny" / "blobs").glob("*.incomplete"))


@pytest.fixture
def small_disk(tmp_path) -> Iterator[Path]:
    """A real filesystem of 40 MiB (tmpfs), for a disk that is, or gets, full."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", str(mount)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, f"mounting a tmpfs needs root: {done.stderr}"
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_disk_too_small_fails_before_the_first_byte(tmp_path, hub, small_disk):
    hf_home = small_disk / "hf"
    hub.repos["acme/huge-tiny"] = tiny_repo(CONFIG, shard_bytes=[BIG] * 4, seed=5)  # 48 MiB > 40 MiB
    root = init_stack(tmp_path, hub, "acme/huge-tiny", hf_home)
    hub.bytes_served = 0
    done = run_cli("-C", str(root), "pull", cwd=tmp_path, env=env_for(hub, hf_home))
    assert done.returncode == 1
    line = done.stderr.strip()
    assert "acme/huge-tiny needs 52.8 MB more" in line and "nothing was downloaded" in line and "hf_cache" in line
    assert hub.bytes_served == 0 and "Traceback" not in done.stderr


def test_a_disk_that_fills_up_mid_pull_stops_with_one_line_and_resumes_after(tmp_path, hub, small_disk):
    hf_home = small_disk / "hf"
    hub.repos["acme/fill-tiny"] = tiny_repo(CONFIG, shard_bytes=[BIG] * 2, seed=6)  # 24 MiB fit in 40 MiB
    root = init_stack(tmp_path, hub, "acme/fill-tiny", hf_home)
    hub.throttle_s = 0.02
    process = start_pull(root, env_for(hub, hf_home))
    assert eventually(lambda: blob_bytes(hf_home, "acme/fill-tiny") > 1024 * 1024, timeout_s=60.0), "timed out"
    filler = small_disk / "another-download"
    try:  # something else takes the rest of the disk meanwhile
        with open(filler, "wb") as handle:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
    except OSError:
        pass
    assert process.poll() is None, "the pull finished before the disk filled"
    hub.throttle_s = 0.0
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, (out, err)
    assert "filled up while pulling acme/fill-tiny" in err and "it resumes" in err and "Traceback" not in err
    filler.unlink(missing_ok=True)
    resumed = run_cli("-C", str(root), "pull", cwd=tmp_path, env=env_for(hub, hf_home))
    assert resumed.returncode == 0, resumed.stderr
    assert snapshot_files(hf_home, "acme/fill-tiny") == set(hub.repos["acme/fill-tiny"].files)


def test_the_lvm_hint_names_the_volume_when_the_cache_is_on_lvm(tmp_path, hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    config = parse_stack_config({"hardware": "rtx-pro-6000", "model": "q", "hf_cache": str(tmp_path / "hf"),
                                 "models": {"q": {"hf_id": "acme/qwen-tiny", "served_name": "q",
                                                  "max_model_len": 4096, "max_num_seqs": 1}}})

    class FullLvmDisk(HostFacts):
        def disk_free_bytes(self, path):
            return Path("/"), 1024

    root = tmp_path / "host"
    (root / "proc" / "self").mkdir(parents=True)
    (root / "proc" / "self" / "mounts").write_text("/dev/mapper/ubuntu--vg-ubuntu--lv / ext4 rw 0 0\n")
    with pytest.raises(StackError) as caught:
        pull_weights(config, StackLayout(tmp_path), facts=FullLvmDisk(root=root))
    assert "sudo lvextend -r -l +100%FREE /dev/mapper/ubuntu--vg-ubuntu--lv" in str(caught.value)


def test_up_stage_skips_local_models_and_pulls_hub_models(tmp_path, hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    demo = parse_stack_config({"hardware": "cpu", "model": "tiny"})
    assert stage_weights(demo, StackLayout(tmp_path)) is None
    config = parse_stack_config({"hardware": "rtx-pro-6000", "model": "q", "hf_cache": str(tmp_path / "hf"),
                                 "models": {"q": {"hf_id": "acme/qwen-tiny", "served_name": "q",
                                                  "max_model_len": 4096, "max_num_seqs": 1}}})
    seen = []
    first = stage_weights(config, StackLayout(tmp_path), seen.append)
    assert first is not None and not first.skipped and first.downloaded_bytes >= 2 * SHARD
    assert seen[-1].done_bytes == seen[-1].total_bytes == first.total_bytes
    second = stage_weights(config, StackLayout(tmp_path))
    assert second is not None and second.skipped
