"""supervisord told to switch user while it runs as a user who cannot: read by the supervisor-user-not-root
signature and by the fallback alike.

"Error: Can't drop privilege as nonroot user" (supervisord exits; 3.3.4 and later, before it logged CRIT and ran
on, supervisor#1218), or "couldn't setuid to N: Can't drop privilege as nonroot user" for a program: `user=` in
[supervisord] or in a [program:x] section asks a supervisord started by a non-root user (a container's USER, a
login shell) to switch users, which only root may do. `user=` under [supervisord] is for a supervisord started as
root; remove it where it runs as whatever user launched it (supervisor#695: comment out user=; ascender#575), or
start it as root.
"""

from __future__ import annotations

import re

CANNOT_DROP = re.compile(r"(?:couldn't setuid to (?P<uid>\d+): )?Can't drop privilege as nonroot user")


def cannot_drop(text: str) -> re.Match[str] | None:
    return CANNOT_DROP.search(text)


def cannot_drop_fix(uid: str | None) -> str:
    if uid:
        where = (f"a [program:x] section's user= (uid {uid}) asks supervisord to start the program as another user, "
                 "which only a supervisord running as root may do")
    else:
        where = ("user= asks supervisord to switch users (user=root under [supervisord] included), which only a "
                 "supervisord started as root may do")
    return (f"supervisord runs as a non-root user (a container's USER, the user who launched it) and {where}: remove "
            "user= (user=root too) from the [supervisord] section and the program sections, since supervisord and its "
            "programs run as whatever user launched it; or start supervisord as root. stackctl's own supervisord.conf "
            "(native runtime) sets no user=, so this is a configuration of an image's or the host's own")
