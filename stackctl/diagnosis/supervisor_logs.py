"""supervisord's log files it cannot open: read by the supervisor-logfile-unusable signature and by
the fallback alike.

supervisord opens its own log (`logfile=` in [supervisord]) when it starts and each program's
(`stdout_logfile=`, `stderr_logfile=`) when it spawns the program; a path that is a directory
("EISDIR", "[Errno 21] Is a directory") or one the user it runs as may not write ("EACCES", "[Errno 13]
Permission denied") stops supervisord, or that program, from starting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# A program's log files, opened as its dispatchers are made ("Unknown Error making dispatchers for
# 'x' : EISDIR"; "spawnerr: unknown error making dispatchers for 'x': EACCES").
DISPATCHERS = re.compile(r"error making dispatchers for '(?P<program>[^']+)'\s*:\s*(?P<errno>EISDIR|EACCES|EPERM|EROFS)",
                         re.IGNORECASE)
# supervisord's own log, opened by its loggers module (the traceback's last line).
OPEN_REFUSED = re.compile(r"(?:IOError|PermissionError|IsADirectoryError|OSError): \[Errno (?P<number>13|21|30)\] "
                          r"(?:Permission denied|Is a directory|Read-only file system): '(?P<path>[^']+)'?")
# The frames that say the refused open() was supervisord opening a log file.
_LOGGERS = re.compile(r"supervisor/loggers\.py|make_logger|make_dispatchers")
_DIRECTORY = frozenset({"EISDIR", "21"})
_STACKCTL = ("stackctl's native supervisord.conf writes its logfile and each program's stdout_logfile under the stack's "
             ".stackctl/logs, owned by the user that runs `stackctl up`")


def logfile_refused(lines: Sequence[str], index: int) -> tuple[str, str | None, str | None] | None:
    """(errno, program, path) where lines[index] is supervisord refused a log file; None otherwise."""
    line = lines[index]
    dispatchers = DISPATCHERS.search(line)
    if dispatchers:
        return dispatchers["errno"].upper(), dispatchers["program"], None
    refused = OPEN_REFUSED.search(line)
    if refused and any(_LOGGERS.search(above) for above in lines[max(0, index - 30):index]):
        return refused["number"], None, refused["path"]
    return None


def logfile_fix(errno: str, program: str | None, path: str | None) -> str:
    which = (f"program {program}'s log file (its stdout_logfile= or stderr_logfile=)" if program
             else f"its log file {path}" if path else "a log file")
    if errno in _DIRECTORY:
        problem = (f"supervisord could not open {which}: the path is a directory, not a file (EISDIR): a logfile must be "
                   "a regular file: give the file's name after the directory (stderr_logfile=/var/log/x/err.log, not "
                   "/var/log/x/), or leave the option out and childlogdir= holds an automatic one")
    else:
        problem = (f"supervisord could not open {which}: the user it runs as may not write there (permission denied): a "
                   "logfile must be a regular file in a directory that user can write (and create files in): `ls -ld` "
                   "the file and its directory, `sudo chown` them to that user, or point the logfile at a writable "
                   "directory (in a container run as a random uid, as OpenShift does, a directory the image makes "
                   "group-writable, or /dev/stdout with its *_maxbytes=0)")
    return f"{problem}. {_STACKCTL}"
