"""supervisord's "can't find command 'X'" for a command given by name alone, read by the supervisor signatures and by
the fallback alike.

supervisord looks a relative command up on a PATH before it forks: its own environment's, the one its service
manager started it with, not the login shell's where the command works, so a program installed in a virtualenv, by
pyenv (supervisor#847: /usr/local/pyenv/shims/uwsgi) or nvm, or under ~/.local/bin is not found (supervisor#748,
the maintainer: "change the command to be absolute ... or add the directory ... to the PATH in supervisord's
environment"). A PATH set in the program's environment= was ignored for that lookup until supervisor 3.3.5 (its
changelog: "searching for a relative command ignored changes to PATH made in environment="; supervisor#787, #1169),
so every 4.x (4.0.0 and later) searches it and older packages (Ubuntu 16.04's 3.2, 18.04's 3.3.1) do not.

A command given by its full path that is not found (a virtualenv that lacks it) keeps the supervisor signature's own
reading.
"""

from __future__ import annotations

import re

CANT_FIND = re.compile(r"can't find command '(?P<command>[^'/\\]+)'")

# stackctl's own supervisord.conf starts every program by the full path of the stack's Python.
_STACKCTL_COMMANDS = ("stackctl's own native supervisord.conf starts each program by full path (the stack's Python "
                      "running stackctl's launcher): a command by name alone is from a configuration written by hand")


def bare_command(text: str) -> str | None:
    """The command `text` says supervisord could not find, where it is given by name alone (no path); else None."""
    match = CANT_FIND.search(text)
    return None if match is None else match["command"]


def not_on_path_fix(command: str) -> str:
    """What to do where supervisord finds no `command` on its PATH."""
    return (f"supervisord looks `{command}` up on its own PATH, the one its service manager started it with, not your "
            f"login shell's, so a command installed in a virtualenv, by pyenv or nvm, or under ~/.local/bin is not "
            f"found there: give command= its full path (`command -v {command}` in the shell where it runs, e.g. "
            f"/path/to/venv/bin/{command}), or put its directory in the program's "
            f"environment=PATH=\"/path/to/venv/bin:%(ENV_PATH)s\": supervisord searches that PATH for the command from "
            "supervisor 3.3.5 on, so every 4.x (4.0.0 and later); older ones (Ubuntu 16.04's and 18.04's packages, "
            "3.2 and 3.3.1) search only their own PATH, where only the full path works (`supervisord --version`). Then "
            f"`supervisorctl reread` and `supervisorctl update`. {_STACKCTL_COMMANDS}")
