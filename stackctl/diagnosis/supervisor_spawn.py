"""supervisord's child that could not start a program: read by the supervisor signatures and by the
fallback alike.

supervisord checks that a program's command exists and is executable before it forks; its child then
enters the program's working directory (`directory=`) and execs the command, and where either fails
it writes "couldn't chdir to DIR: ERRNO" or "couldn't exec X: ERRNO" to the program's stderr log and
exits 127, which supervisord's own log shows as "exited: NAME (exit status 127; not expected)", as it
does for a script whose command is not found.
"""

from __future__ import annotations

import re

CHDIR_REFUSED = re.compile(r"couldn't chdir to (?P<directory>\S+): (?P<errno>ENOENT|EACCES|EPERM)")
EXITED_127 = re.compile(r"exited: (?P<program>[\w.-]+) \(exit status 127; not expected\)")


# stackctl's native supervisord.conf gives its programs no directory= ([supervisord]'s is its own
# .stackctl state directory, which `stackctl up` creates): a program's chdir refused is from a
# configuration written by hand or another supervisord's.
_STACKCTL_DIRECTORY = ("stackctl's own native supervisord.conf (.stackctl/supervisor/, rewritten by each `stackctl up`) "
                       "gives its programs no directory=: the line is in a configuration written by hand or another "
                       "supervisord's")


def directory_fix(directory: str, errno: str) -> str:
    """What to do where supervisord's child could not chdir to a program's `directory=` (ENOENT: it
    does not exist; EACCES: the program's user may not enter it)."""
    if errno in ("EACCES", "EPERM"):
        why = (f"the program's working directory {directory} (its directory= line) is not open to the user it runs as "
               f"(user=): every directory on the path must be enterable (x) by that user (`sudo -u USER ls {directory}`, "
               "`namei -l` on the path shows the one that refuses): `chmod o+x` (or g+x) the directory that refuses, "
               "`chown` the directory to that user, or run the program as the directory's owner (user=)")
    else:
        why = (f"the program's working directory {directory} (its directory= line) does not exist: create it (`mkdir -p "
               f"{directory}`, owned by the program's user=), correct the path (it is case-sensitive, and supervisord "
               "keeps quotes as part of the value: write it unquoted), or remove the directory= line where the "
               "program needs no working directory of its own (a path from another machine or a container)")
    return (f"{why}; then `supervisorctl reread` and `supervisorctl update` (or restart supervisord). "
            f"{_STACKCTL_DIRECTORY}")


# supervisord's child exits 127 where it could not chdir to directory= or exec the command (a script
# whose #! interpreter is missing, or reads `/bin/bash\r` from Windows line endings), as a shell does
# for "command not found": the program's own log says which.
NOT_RUN = "127"


def not_run_fix(program: str) -> str:
    """What to read and do where a program exits 127 at once, by the causes its own log tells apart."""
    return (f"the program's own log says which (`stackctl logs {program} --explain`; under another supervisord its "
            f"stderr_logfile=, or `supervisorctl tail {program} stderr`): \"couldn't chdir to DIR\": the program's "
            "directory= names a working directory that does not exist (create it or fix the directory= line); "
            "\"couldn't exec SCRIPT: ENOENT\", \"bad interpreter\" or \"bash\\r\": the interpreter the script's first "
            "line (`#!`) names is missing, or the script has Windows (CRLF) line endings, so `/bin/bash\\r` is not "
            "found: convert it with `dos2unix SCRIPT` (or `sed -i 's/\\r$//' SCRIPT`; a `*.sh text eol=lf` line in "
            ".gitattributes keeps git on Windows from bringing them back), then rebuild the image that copies it; "
            "\"X: command not found\" or \"X: not found\": a command the program's script runs is not installed or "
            "not on supervisord's PATH (not your login shell's: use its full path, or environment=PATH=...). For "
            "stackctl's own programs: vLLM's command is the engine venv (`stackctl install-engine`); for the others "
            "`stackctl up` names the program that is not installed and its package")
