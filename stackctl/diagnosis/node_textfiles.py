"""node-exporter's textfile collector denied a .prom file (or its directory), read by its signature and by the fallback
alike.

The textfile collector reads every *.prom file of --collector.textfile.directory on each scrape, as the user
node-exporter runs as (nobody, uid 65534, in its image; node_exporter or prometheus in the distributions' packages).
A file its producer wrote mode 0600, or 0640 for a group node-exporter is not in, is refused: '"failed to collect
textfile data" collector=textfile file=backup.prom err="failed to open textfile data file
\\"/host/run/node_exporter/backup.prom\\": open /host/run/node_exporter/backup.prom: permission denied"'
(NethServer/ns8-core#820, fixed by writing the file world-readable, `os.chmod(..., 0o644)`). A producer that writes a
temporary file and renames it (Python's tempfile.mkstemp, Go's os.CreateTemp: both 0600) gives every version that
mode, so a chmod by hand lasts until the next write: the producer must set the mode. The directory itself is another
record, "failed to read textfile collector directory" (most often "no such file or directory": not read here).
"""

from __future__ import annotations

import re

# The collector's record for a file (joined where a paste wraps it); Go's %q escapes the quotes.
TEXTFILE_DENIED = re.compile(r"failed to open textfile data file \\*\"?(?P<file>/[^\"\\\s]+)\\*\"?: open \S+: permission "
                             r"denied")
# The error's second half alone, where a paste wrapped the record before the file's name: a .prom file denied.
PROM_FILE_DENIED = re.compile(r"open (?P<file>/\S+\.prom): permission denied")
TEXTFILE_ERROR = re.compile(r"failed to open textfile data file")


def textfile_denied(text: str) -> str | None:
    """The .prom file the collector may not read, or None."""
    match = TEXTFILE_DENIED.search(text) or PROM_FILE_DENIED.search(text)
    return match["file"] if match else None


def textfile_fix(path: str) -> str:
    return (f"node-exporter's textfile collector may not read {path}: node-exporter's image runs as nobody (uid 65534), a "
            "package's service as node_exporter or prometheus, and the file is readable by its producer alone (written "
            f"mode 0600, or 0640 for another group). Make it world-readable: `chmod 644 {path}` (the host file mounted "
            "there, under Compose; `ls -l` shows the mode; ownership by one producer does not help the others), and "
            "have the program that writes it keep that mode on every write, or the next one undoes it: a script's "
            "`umask 022`, and a file written to a temporary file and renamed (Python's tempfile.mkstemp, Go's "
            "os.CreateTemp: both 0600) given mode 644 before the rename (`os.chmod(path, 0o644)`, `f.Chmod(0o644)`). The "
            "collector skips that file and serves the rest (node_textfile_scrape_error is 1 until it reads it); "
            "stackctl's own node-exporter reads no textfile directory, so this is one added to its flags")
