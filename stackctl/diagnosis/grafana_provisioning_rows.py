"""A row of Grafana's dashboard_provisioning table that points at a dashboard Grafana no longer has, read by its
signature and by the fallback alike.

File provisioning remembers each file it saved in the dashboard_provisioning table (the file's path, its provider,
the dashboard's id). Saving the file again reuses that id (Grafana's file reader sets it from the row and clears any
"id" the JSON carries), so when the dashboard itself is gone (deleted or moved in the UI, its folder deleted, a
database restored without it) every save fails with 'failed to save dashboard ... error="Dashboard not found"' and
the dashboard never comes back (grafana#46537 and grafana#31147, fixed by deleting the dashboard's row; grafana#13280,
rows left behind by a deleted folder, fixed by emptying the table). The same row makes the cleanup of a file that is
gone fail: 'failed to delete dashboard" id=N error="Dashboard not found"' (grafana#63723).

Delete the stale row (or every row of the provider: provisioning writes them again from the files), or start from a
fresh grafana.db. stackctl's Grafana keeps grafana.db in its data volume (grafana-data; natively under the stack's
data directory).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Only Grafana's bare "Dashboard not found", not "could not resolve dashboards:uid:X: Dashboard not found" (a
# duplicate dashboard uid or title among the files, suxess-it/kubriX#368).
STALE_ROW = re.compile(r"msg=\"?failed to (?P<action>save|delete) dashboard\"?[^\n]*?(?:\bid=(?P<id>\d+)[^\n]*?)?"
                       r"\berror=\"Dashboard not found\"")
_PROVIDER = re.compile(r"\bname=(?P<provider>\"[^\"]+\"|\S+)")
_FILE = re.compile(r"\bfile=(?P<file>\"[^\"]+\"|\S+)")
_SAVING = re.compile(r"msg=\"?saving new dashboard")


def stale_row(text: str) -> re.Match[str] | None:
    """The save or the delete that found no dashboard behind its provisioning row, or None."""
    return STALE_ROW.search(text)


def provisioned_file(lines: Sequence[str], index: int) -> str:
    """The dashboard file the failure at `index` is about: named on its own line (newer Grafana), else on the
    'saving new dashboard' line just above it; "" where the log names none."""
    own = _FILE.search(lines[index])
    if own:
        return own["file"].strip('"')
    for line in reversed(lines[max(0, index - 5):index]):
        if _SAVING.search(line) and (match := _FILE.search(line)):
            return match["file"].strip('"')
    return ""


def provider_named(text: str) -> str:
    match = _PROVIDER.search(text)
    return match["provider"].strip('"') if match else ""


def stale_row_fix(match: re.Match[str], file: str, provider: str) -> str:
    name = file.rsplit("/", 1)[-1]
    if match["action"] == "delete":
        what = (f"provisioning tried to delete dashboard {match['id'] or ''} because its file is gone, and the "
                "dashboard is already gone too: its row is stale")
        row = (f"`DELETE FROM dashboard_provisioning WHERE dashboard_id = {match['id']};`" if match["id"] else
               "`DELETE FROM dashboard_provisioning WHERE dashboard_id NOT IN (SELECT id FROM dashboard);`")
    else:
        what = (f"provisioning saves {file or 'the dashboard file'} over the dashboard id that row remembers, and "
                "fails on every start, so the dashboard never appears")
        row = (f"`DELETE FROM dashboard_provisioning WHERE external_id LIKE '%{name}';`" if name else
               "`DELETE FROM dashboard_provisioning WHERE dashboard_id NOT IN (SELECT id FROM dashboard);`")
    every = (f"`DELETE FROM dashboard_provisioning WHERE name = '{provider}';`" if provider else
             "`DELETE FROM dashboard_provisioning;`")
    return (f"a stale row of Grafana's dashboard_provisioning table points at a dashboard Grafana no longer has "
            f"(deleted or moved in the UI, its folder deleted, or the database restored without it): {what}. With "
            f"Grafana stopped and a copy of grafana.db kept, delete that row with sqlite3 (`sqlite3 grafana.db`): "
            f"{row} (or the provisioning table's rows of the whole provider, {every}: provisioning writes them again "
            "from the files), then start Grafana; or start from a fresh grafana.db. stackctl's Grafana keeps "
            "grafana.db in its data volume (grafana-data; natively under the stack's data directory): removing the "
            "volume gives it a fresh database, in which its datasource and dashboards are provisioned again (users "
            "and dashboards made by hand go with it); then `stackctl up`")
