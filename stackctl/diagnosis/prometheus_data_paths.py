"""Prometheus's data directory given as a relative path it may not create: "Error opening memory series storage:
mkdir data: permission denied" (1.x), 'Opening storage failed" err="mkdir data/: permission denied"' (2.x).

The default data path (data/) and any relative --storage.tsdb.path (1.x: -storage.local.path) resolve against the
working directory Prometheus was started in: a systemd unit without WorkingDirectory= runs it in /, where its user may
not create the directory (prometheus#2264: "I made a mistake setting up my unit file's working directory"), and a
container whose command override drops the image's absolute --storage.tsdb.path does the same. The cure is an absolute
path or the unit's WorkingDirectory=, not a chown of "data". Grafana's relative data/plugins is its own reading.
"""

from __future__ import annotations

import re

RELATIVE_DATA_PATH = re.compile(
    r"(?:memory series storage|[Oo]pening storage failed|Error opening query log file|Unable to create data directory)"
    r".*?(?:mkdir|open) (?P<path>(?![/\\])[\w.][\w./-]*?)/?: (?P<reason>permission denied|read-only file system)")


def relative_data_path(text: str) -> re.Match[str] | None:
    """Prometheus's refusal to create or open its data directory at a relative path, or None."""
    return RELATIVE_DATA_PATH.search(text)


def relative_data_path_fix(path: str) -> str:
    return (f"Prometheus's data path `{path}` is relative, so it resolves against the working directory Prometheus was "
            f"started in, not its install directory: a systemd unit without WorkingDirectory= runs it in /, where its "
            f"user may not create {path} (a container's command override that drops the image's "
            "--storage.tsdb.path=/prometheus does the same). Give it an absolute path: `--storage.tsdb.path="
            "/var/lib/prometheus` (Prometheus 1.x: `-storage.local.path=/var/lib/prometheus`), a directory owned by the "
            "user the unit runs as (`sudo chown -R prometheus:prometheus /var/lib/prometheus`), or set "
            "WorkingDirectory= in the unit file to a directory that user owns; then `sudo systemctl daemon-reload` and "
            "restart the unit. A chown of a `data` directory elsewhere does not help: the path is read from the "
            "working directory")
