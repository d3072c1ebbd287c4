"""`stackctl pull`: the model's weights staged in the HF cache vLLM mounts, before vLLM starts.

Downloads with huggingface_hub, the token from .env (HF_TOKEN; passed to the library, never in
argv or logs). Resumable by file: every completed shard stays in the cache and is not fetched
again, so an interrupted pull loses at most the shards in flight (huggingface_hub's HTTP path
writes each file to a process-unique temporary and drops it on failure; over Xet its chunk
cache keeps more). The space is checked before the first byte: a volume too small fails at
once with what to free or grow, not at shard 27 of 40.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stackctl.config import StackConfig
from stackctl.envfile import read_env
from stackctl.errors import StackError
from stackctl.host import HostFacts
from stackctl.layout import StackLayout

GB = 10**9


def size_text(count: int) -> str:
    """Bytes as people read them: 37.52 GB, 812.3 MB, 4.0 kB."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= scale:
            return f"{count / scale:.2f} {unit}" if unit == "GB" else f"{count / scale:.1f} {unit}"
    return f"{count} bytes"
# Room for the partial file being written and the filesystem's own overhead, beyond the files.
DISK_MARGIN = 1.05
POLL_S = 0.5
LVM_HINT = ("; Ubuntu's installer gives the root LV only 100 GB of an LVM disk: `sudo vgs` shows the free "
            "space, `sudo lvextend -r -l +100%FREE {device}` grows it")


@dataclass(frozen=True)
class PullProgress:
    repo_id: str
    done_bytes: int
    total_bytes: int


@dataclass(frozen=True)
class PullResult:
    repo_id: str
    snapshot: Path
    total_bytes: int
    downloaded_bytes: int  # by this pull (0: everything was there)
    skipped: bool  # nothing to do: the weights were complete in the cache


ProgressCallback = Callable[[PullProgress], None]


class PullError(StackError):
    """The weights could not be staged."""


def hub_cache(config: StackConfig) -> Path:
    """huggingface_hub's cache inside the stack's hf_cache (what vLLM's HF_HOME points at)."""
    return Path(config.hf_cache).expanduser() / "hub"


def repo_blobs(config: StackConfig, repo_id: str) -> Path:
    return hub_cache(config) / ("models--" + repo_id.replace("/", "--")) / "blobs"


def stage_weights(config: StackConfig, layout: StackLayout, on_progress: ProgressCallback | None = None, *,
                  facts: HostFacts | None = None) -> PullResult | None:
    """`up`'s weight stage: pull the model unless it is served from a local directory (None) or
    already complete in the cache (skipped)."""
    repo_id = config.model_profile.hf_id
    if repo_id is None or config.vllm.model_path:
        return None
    return pull_weights(config, layout, on_progress, facts=facts)


def weights_present(config: StackConfig, repo_id: str) -> Path | None:
    """The cached snapshot when every file of the repo is there (no network)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        snapshot = Path(snapshot_download(repo_id, cache_dir=hub_cache(config), local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError):
        return None
    except Exception as error:
        if "incomplete" in type(error).__name__.lower() or "incomplete" in str(error).lower():
            return None
        raise
    # Offline, huggingface_hub can only tell a snapshot is complete against the tree listing a
    # full snapshot download cached (trees/<commit>.json); a snapshot holding just config.json
    # (what `init` fetched) has none, and the Hub is asked.
    tree = snapshot.parent.parent / "trees" / f"{snapshot.name}.json"
    return snapshot if tree.is_file() else None


def pull_weights(config: StackConfig, layout: StackLayout, on_progress: ProgressCallback | None = None, *,
                 facts: HostFacts | None = None) -> PullResult:
    repo_id = config.model_profile.hf_id
    if repo_id is None:
        raise PullError(f"model '{config.model}' has no Hugging Face id: nothing to pull")
    progress = on_progress or (lambda _progress: None)
    present = weights_present(config, repo_id)
    if present is not None:
        size = _blob_bytes(repo_blobs(config, repo_id))
        progress(PullProgress(repo_id, size, size))
        return PullResult(repo_id, present, size, 0, skipped=True)
    token = _token(layout)
    files = _plan(config, repo_id, token)
    total = sum(info.file_size or 0 for info in files)
    blobs = repo_blobs(config, repo_id)
    _drop_stale_partials(config, repo_id)
    before = _blob_bytes(blobs)
    if files and not any(info.will_download for info in files):
        progress(PullProgress(repo_id, total, total))
        return PullResult(repo_id, Path(files[0].local_path).parent, total, 0, skipped=True)
    _check_space(config, repo_id, files, before, facts or HostFacts())
    snapshot = _download(config, repo_id, token, total, before, progress)
    downloaded = max(0, _blob_bytes(blobs) - before)
    progress(PullProgress(repo_id, total, total))
    return PullResult(repo_id, snapshot, total, downloaded, skipped=False)


def _token(layout: StackLayout) -> str | None:
    if not layout.env_file.exists():
        return None
    return read_env(layout.env_file).get("HF_TOKEN") or None


def _plan(config: StackConfig, repo_id: str, token: str | None) -> list:
    from huggingface_hub import snapshot_download
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()  # stackctl draws its own: one bar for the whole repo
    with _hub_errors(repo_id, token, config):
        return list(snapshot_download(repo_id, cache_dir=hub_cache(config), token=token, dry_run=True,
                                      endpoint=_endpoint()))


def _check_space(config: StackConfig, repo_id: str, files: list, on_disk: int, facts: HostFacts) -> None:
    missing = sum(info.file_size or 0 for info in files if info.will_download)
    needed = int(missing * DISK_MARGIN)
    where, free = facts.disk_free_bytes(hub_cache(config))
    if needed <= free:
        return
    raise PullError(
        f"{repo_id} needs {size_text(needed)} more on {where} ({size_text(missing)} of files still to download, "
        f"{size_text(on_disk)} already there), only {size_text(free)} free: nothing was downloaded; free "
        f"{size_text(needed - free)} there, or point hf_cache in stack.yaml at a larger disk"
        + _lvm_hint(facts, where))


def _download(config: StackConfig, repo_id: str, token: str | None, total: int, before: int,
              progress: ProgressCallback) -> Path:
    from huggingface_hub import snapshot_download

    blobs = repo_blobs(config, repo_id)
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(POLL_S):
            progress(PullProgress(repo_id, min(total, _blob_bytes(blobs)), total))

    watcher = threading.Thread(target=poll, daemon=True)
    progress(PullProgress(repo_id, before, total))
    watcher.start()
    try:
        with _hub_errors(repo_id, token, config):
            return Path(snapshot_download(repo_id, cache_dir=hub_cache(config), token=token, endpoint=_endpoint()))
    finally:
        stop.set()
        watcher.join()


class _hub_errors:
    """Turn huggingface_hub's and the OS's failures into one line that says what to do."""

    def __init__(self, repo_id: str, token: str | None, config: StackConfig) -> None:
        self.repo_id, self.token, self.config = repo_id, token, config

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, _traceback) -> bool:
        if error is None or isinstance(error, (KeyboardInterrupt, StackError)):
            return False
        from huggingface_hub.errors import (
            DryRunError,
            GatedRepoError,
            HfHubHTTPError,
            LocalEntryNotFoundError,
            RepositoryNotFoundError,
        )

        repo = self.repo_id
        kept = _blob_bytes(repo_blobs(self.config, repo))
        again = f"run `stackctl pull` again: it resumes ({size_text(kept)} kept)"
        gated = isinstance(error, GatedRepoError) or (isinstance(error, DryRunError)
                                                      and isinstance(error.__cause__, GatedRepoError))
        if gated:
            if self.token:
                raise PullError(f"{repo} is gated and the HF_TOKEN in .env has no access to it: accept its terms at "
                                f"https://huggingface.co/{repo} with that account, then run `stackctl pull` again") from None
            raise PullError(f"{repo} is gated: accept its terms at https://huggingface.co/{repo}, put HF_TOKEN=<your "
                            "token> in .env, then run `stackctl pull` again") from None
        cause = error.__cause__ if isinstance(error, DryRunError) else error
        if isinstance(cause, RepositoryNotFoundError):
            raise PullError(f"no model {repo} on the Hub (or it is private: put HF_TOKEN=<your token> in .env)") from None
        if isinstance(error, OSError) and error.errno == errno.ENOSPC:
            facts = HostFacts()
            where, free = facts.disk_free_bytes(hub_cache(self.config))
            raise PullError(f"the disk holding {where} filled up while pulling {repo} ({size_text(free)} free now); "
                            f"free space or point hf_cache in stack.yaml at a larger disk, then {again}"
                            + _lvm_hint(facts, where)) from None
        if isinstance(cause, (LocalEntryNotFoundError, HfHubHTTPError, OSError, DryRunError)):
            detail = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
            raise PullError(f"pulling {repo} stopped: {detail}; check the network (or HF_ENDPOINT), then {again}") from None
        if type(error).__module__.startswith(("httpx", "httpcore", "huggingface_hub")):
            raise PullError(f"pulling {repo} stopped: {type(error).__name__}: {error}; {again}") from None
        return False


def _endpoint() -> str | None:
    """HF_ENDPOINT as it is now (huggingface_hub reads it once, at import): a mirror or a proxy."""
    return os.environ.get("HF_ENDPOINT", "").strip() or None


def _lvm_hint(facts: HostFacts, where: Path) -> str:
    mount = facts.mount_source(where)
    return LVM_HINT.format(device=mount[0]) if mount and mount[0].startswith("/dev/mapper/") else ""


def _blob_bytes(blobs: Path) -> int:
    try:
        return sum(path.stat().st_size for path in blobs.iterdir() if path.is_file())
    except OSError:
        return 0


def _drop_stale_partials(config: StackConfig, repo_id: str) -> None:
    """Remove the temporaries of downloads that died (killed, rebooted): huggingface_hub never
    reuses them, and on a tight disk they hold the space the next pull needs. A live download
    holds its file's lock (<hub>/.locks/<repo>/<etag>.lock); a dead one's is free."""
    from filelock import FileLock, Timeout

    locks = hub_cache(config) / ".locks" / ("models--" + repo_id.replace("/", "--"))
    for partial in repo_blobs(config, repo_id).glob("*.incomplete"):
        etag = partial.name.split(".")[0]
        lock = FileLock(str(locks / f"{etag}.lock"))
        try:
            with lock.acquire(timeout=0):
                partial.unlink(missing_ok=True)
        except (Timeout, OSError):
            continue
