"""A container's entrypoint or command that the runtime may not execute: runc's
`exec: "/docker-entrypoint.sh": permission denied` (runc 1.1 and later: `exec /entrypoint.sh: permission denied`).

The file is there (a missing one is "no such file or directory") but lacks its execute bit: a script
COPY'd from a build context where it was never made executable, or whose bit a checkout lost (Windows,
a zip, a umask), or one bind-mounted from the host without it; more rarely a mount with `noexec`. The
fix is the mode, `chmod +x` (odoo/docker#177: "I solved it adding a chmod +x to the Dockerfile";
docker-ocserv#52: "may have a custom umask ... which has made docker-entrypoint.sh file non-executable"),
not the owner: runc runs it as the image's user after it checked the mode, so chown does not help.
"""

from __future__ import annotations

import re

# runc's words (quoted, backslash-escaped inside a Compose or Docker message, or bare in newer runc),
# where the path is followed directly by the refusal.
EXEC_DENIED = re.compile(r"\bexec:? \\*\"?(?P<path>[\w./-]*\w)\\*\"?: permission denied")


def exec_denied(text: str) -> str | None:
    """The path the runtime was refused to execute, or None."""
    match = EXEC_DENIED.search(text)
    return match["path"] if match else None


def not_executable_fix(path: str) -> str:
    named = path or "the entrypoint script"
    return (f"the container's entrypoint {named} is there but not executable: it lacks its execute bit (a script copied "
            "from a build context where it was never made executable, or whose bit a checkout lost). Make it "
            f"executable: `chmod +x {path or 'FILE'}` in the build context and rebuild (git keeps the bit: `git "
            f"update-index --chmod=+x FILE`), or in the Dockerfile after the COPY, `RUN chmod +x {named}` (or `COPY "
            "--chmod=755`); a script bind-mounted from the host needs the bit on the host's file (`ls -l` shows it), "
            "and a filesystem mounted `noexec` (`findmnt -no OPTIONS DIR`) refuses every program on it: mount it "
            "without noexec. This is the file's mode, not its owner: chown does not help. For an image you did not "
            f"build, `docker run --rm --entrypoint ls IMAGE -l {named}` shows the mode: use a tag whose script is "
            "executable and tell its maintainer")
