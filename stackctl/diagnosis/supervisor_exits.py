"""supervisord's program that would not stay up: "Exited too quickly (process log may have details)", the state
supervisorctl shows for a program supervisord gave up on after its start retries, read by cause where the log shows
one, by the supervisor signatures and the fallback alike.

A program counts as started once it has run for startsecs (1 s by default); one that exits sooner is restarted
startretries times, then left FATAL. By what the log shows:

- a command that sends the program to the background: a daemon option (gearmand -d in supervisor#891, ssserver's
  `-d start` in supervisor#578, redis's `daemonize yes` in ochinchina/supervisord#208, nginx without `daemon off;`),
  a control script's `start` verb (supervisor#1671), a trailing `&` (supervisor#1126): the program forks, its parent
  exits, and supervisord sees the parent's exit; supervisord must run it in the foreground;
- exit status 0 with no such command: a program that daemonizes (its parent exits 0) or a one-shot task that ends
  normally (lucasdiedrich/ojs#29: startsecs=0 and exitcodes=0);
- any other status: the program fails at start, and its own log (stdout_logfile/stderr_logfile) says why;
- nothing at all (the bare state line): the usual causes in order, daemonizing first, since it is the most common
  (the Supervisor maintainers' first answer in supervisor#891 and #1338).

Exit status 127 has its own reading (supervisor_spawn.not_run_fix).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# The state's description, as supervisorctl prints it (supervisor#1338 wrote a space before the parenthesis).
EXITED_TOO_QUICKLY = re.compile(r"Exited too quickly \(process log may have details ?\)")
# A command line the log shows (a pasted [program:x] section, or a ps line), and what in it sends the program to the
# background: a daemon option (not sshd's -D, which keeps it in the foreground), redis's `daemonize yes`, a control
# script's start verb, a trailing `&`.
_COMMAND = re.compile(r"^\W*command\s*=\s*(?P<command>.+)$")
# A control script's start verb only (`run.sh start`, `/etc/init.d/x start`, `service x start`, `xctl start`):
# `npm start` runs in the foreground.
_BACKGROUND = re.compile(r"(?:^|\s)(?P<option>-d|--daemon(?:ize)?(?:[= ](?:yes|true))?|daemonize\s+yes|&)\s*$"
                         r"|(?:\.sh|/init\.d/\S+|\bservice\s+\S+|ctl)\s+(?P<verb>start)\s*$"
                         r"|(?:^|\s)(?P<inner>-d|--daemon(?:ize)?)\s+(?:start|-)")

# How the common servers stay in the foreground.
_FOREGROUND = ("remove the option that daemonizes it (-d, --daemon, --daemonize) or a trailing `&`; nginx: `daemon off;` "
               "(or `nginx -g 'daemon off;'`), redis: `daemonize no`, php-fpm: --nodaemonize (-F), gunicorn: no "
               "--daemon, a control script's `start` verb: run the program itself instead of the script")
_ONE_SHOT = ("a one-shot task (a setup or migration script that ends by design) needs startsecs=0 and autorestart=false "
             "(or exitcodes=0 with autorestart=unexpected) so supervisord does not restart it")


def background_option(lines: Sequence[str]) -> str:
    """What in a command line the log shows sends the program to the background ("" where none does)."""
    for line in lines:
        command = _COMMAND.search(line)
        if command is None:
            continue
        found = _BACKGROUND.search(command["command"].strip())
        if found:
            return found["option"] or found["verb"] or found["inner"]
    return ""


def own_log(program: str) -> str:
    """Where a supervised program's own output is read."""
    name = program or "NAME"
    return (f"`stackctl logs {name} --explain`; under another supervisord the stdout_logfile/stderr_logfile of its "
            f"[program:{name}] section, or `supervisorctl tail {name} stderr`")


def daemonizing_fix(program: str, option: str) -> str:
    """The program's command sends it to the background (`option`)."""
    shown = f"`{option}`" if option != "start" else "a control script's `start` verb"
    return (f"{program or 'the program'} goes to the background ({shown} in its command): it forks, its parent exits "
            "at once, and supervisord takes that exit for the program's and restarts it (the forked copy, unwatched, "
            f"may hold its port). Under supervisord a program must run in the foreground: {_FOREGROUND}; then "
            "`supervisorctl reread` and `supervisorctl update`. Its own log says more: " + own_log(program))


def exited_quickly_fix(program: str, status: str | None) -> str:
    """What to do where a program would not stay up, by the exit status the log shows (None: none shown)."""
    if status == "0":
        return (f"{program or 'the program'} exits with status 0 right after it starts: a program that daemonizes "
                "(forks into the background; its parent returns 0) or a one-shot task that ends normally. A server "
                f"must run in the foreground under supervisord: {_FOREGROUND}; {_ONE_SHOT}. Its own log says which: "
                f"{own_log(program)}; then `stackctl up` (stackctl's own programs run in the foreground with "
                "startsecs 1 s)")
    if status is not None:
        return (f"{program or 'the program'} fails at start (exit status {status}): its own log says why: "
                f"{own_log(program)}; fix that and `stackctl up` (supervisord restarts it). A program under "
                f"supervisord must also run in the foreground ({_FOREGROUND}) and stay up for startsecs (stackctl's "
                "programs: 1 s)")
    named = "" if program else " (`stackctl status` or `supervisorctl status` names it)"
    return (f"supervisord started the program{named} and it exited before startsecs, on every retry; the usual causes, in "
            "order: (1) it daemonizes, forking into the background while its parent exits, which supervisord counts "
            f"as an exit: run it in the foreground: {_FOREGROUND}; (2) it exits at once with an error: its own log "
            f"says why: {own_log(program)}; (3) it runs normally but ends or stays up for less than startsecs (1 s "
            f"by default): {_ONE_SHOT}, and a program that exits normally before startsecs needs a shorter startsecs. "
            "Then `supervisorctl reread` and `supervisorctl update` (stackctl's own programs: `stackctl up`)")
