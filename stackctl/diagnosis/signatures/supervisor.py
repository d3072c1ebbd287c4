"""supervisord, which runs the native stack's processes: a program that exits when it should run
(and after its retries, the supervisor giving up on it, "Exited too quickly": read by what the log shows of
it, a command that goes to the background or an exit status, else the usual causes in order, supervisor_exits;
at once with status 127, by what its own log tells apart: its directory=, its script's interpreter or line
endings, a command not found), a command that is not there (by name alone: not on supervisord's PATH,
supervisor_commands; or a script whose #! interpreter is not), a program it cannot spawn (its working
directory, its executable, its user), the socket of its HTTP server refused,
supervisorctl finding no supervisord (at its socket or its http:// serverurl) or another HTTP server
or supervisord there (its XML-RPC refused: 404, 401), a second supervisord refused the port or
socket the first one holds, and a log file it cannot open (supervisor_logs)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, CONSEQUENCE, Signature, found, signature, unnamed
from stackctl.diagnosis.supervisor_commands import bare_command, not_on_path_fix
from stackctl.diagnosis.supervisor_exits import (
    EXITED_TOO_QUICKLY,
    background_option,
    daemonizing_fix,
    exited_quickly_fix,
)
from stackctl.diagnosis.supervisor_logs import (
    DISPATCHERS,
    OPEN_REFUSED,
    logfile_fix,
    logfile_refused,
)
from stackctl.diagnosis.supervisor_spawn import NOT_RUN, directory_fix, not_run_fix
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_GAVE_UP = re.compile(r"gave up: (?P<program>[\w.-]+) entered FATAL state|^\s*(?P<status>[\w.:-]+)\s+FATAL\s+Exited too "
                      r"quickly")
_EXIT = re.compile(r"exited: (?P<program>[\w.-]+) \(exit status (?P<status>\d+); not expected\)")
_SPAWN = re.compile(r"couldn't (?P<what>exec|chdir to|setuid to) (?P<target>\S+): (?P<errno>E[A-Z]+)"
                    # supervisord's own check before it forks: the command's file lacks the execute bit.
                    r"|command at '(?P<file>[^']+)' is not executable")
_MISSING = re.compile(r"can't find command '(?P<command>[^']+)'|couldn't exec (?P<exec>\S+): ENOENT")


def _supervisor_gave_up(evidence: Evidence) -> Diagnosis:
    gave = evidence.read(_GAVE_UP)
    program = gave.get("program") or gave.get("status") or evidence.read(_EXIT).get("program", "")
    gave_up = bool(evidence.read(_GAVE_UP)) or bool(EXITED_TOO_QUICKLY.search(evidence.line))
    statuses = [match.group("status") for line in evidence.lines for match in _EXIT.finditer(line)
                if not program or match.group("program") == program]
    status = statuses[-1] if statuses else None
    if status == NOT_RUN:
        return found(evidence, Cause.supervisor_gave_up,
                     f"{program} exits at once with status 127 (the shell's \"command not found\"): it, or the "
                     "directory or interpreter it needs, could not be found",
                     Fix(not_run_fix(program)), program=program, exit_status=127)
    shown = f" (exit status {status})" if status else ""
    what = (f"supervisord gave up on {program or 'a program'}: it kept exiting right after start{shown}" if gave_up
            else f"{program} exited when it should keep running{shown}")
    option = background_option(evidence.lines)
    if option:
        return found(evidence, Cause.supervisor_gave_up, f"{what}: its command sends it to the background",
                     Fix(daemonizing_fix(program, option)), **({"program": program} if program else {}),
                     **({"exit_status": int(status)} if status else {}), background=option)
    return found(evidence, Cause.supervisor_gave_up, what, Fix(exited_quickly_fix(program, status)),
                 **({"program": program} if program else {}), **({"exit_status": int(status)} if status else {}))


def _supervisor_command_missing(evidence: Evidence) -> Diagnosis:
    missing = evidence.read(_MISSING)
    command = missing.get("command") or missing.get("exec") or ""
    if missing.get("exec"):
        # supervisord found the file before it forked ("can't find command" otherwise): what exec did not
        # find is the interpreter the file's #! line names.
        return found(evidence, Cause.supervisor_command_missing,
                     f"supervisord found {command} but could not run it (ENOENT): the interpreter its first line "
                     "names is not there",
                     Fix(f"{command} is a script whose `#!` line names an interpreter that is missing (install it, or "
                         "correct the line: `head -1` shows it), or the script has Windows (CRLF) line endings, so the "
                         f"kernel looks for `/bin/bash\\r` (`head -1 {command} | cat -A` ends in ^M$): convert it with "
                         f"`dos2unix {command}` (or `sed -i 's/\\r$//' {command}`), then `supervisorctl restart` it. A binary "
                         "that is not found this way lacks its loader (a glibc build on Alpine's musl)"),
                     command=command)
    if command and bare_command(evidence.text) == command:
        return found(evidence, Cause.supervisor_command_missing,
                     f"supervisord cannot find the command {command} on its PATH",
                     Fix(not_on_path_fix(command)), command=command)
    return found(evidence, Cause.supervisor_command_missing,
                 f"supervisord cannot find the command {command or 'of a program'}",
                 Fix("install what the program runs: for vLLM the engine venv (`stackctl install-engine`; "
                     "`stackctl doctor` says which engine the stack needs), for nginx/prometheus/node-exporter their "
                     "Debian packages (scripts/setup); then `stackctl up`"), **({"command": command} if command else {}))


def _supervisor_not_running(evidence: Evidence) -> Diagnosis:
    url = evidence.read(re.compile(r"(?P<url>https?://[\w.-]+:\d+) refused connection")).get("url")
    if url:
        return found(evidence, Cause.supervisor_not_running,
                     f"supervisorctl finds no supervisord at {url}: supervisord is not running, or listens on another "
                     "port or socket than the serverurl supervisorctl read",
                     Fix("start supervisord (natively stackctl's own: `stackctl up`, which starts it with the stack's "
                         "configuration under .stackctl/), and run supervisorctl with the same configuration file "
                         "(`supervisorctl -c FILE`; without -c it reads ./supervisord.conf or /etc/supervisord.conf): "
                         "its [supervisorctl] serverurl must name the port of supervisord.conf's [inet_http_server] "
                         "(or its unix socket)"), url=url)
    socket = evidence.read(re.compile(r"unix://(?P<socket>\S+?\.sock)")).get("socket", "")
    at = f" at {socket}" if socket else ""
    pid = _running_supervisord(evidence)
    if pid:
        return found(evidence, Cause.supervisor_not_running,
                     f"supervisorctl finds no supervisord{at}, but one runs (pid {pid}): it was started with another "
                     "configuration file, whose socket is elsewhere",
                     Fix(f"{_SAME_CONFIGURATION}. For the native stack, `stackctl status` and `stackctl down` talk to "
                         "its supervisord for you"), pid=int(pid), **({"socket": socket} if socket else {}))
    refused = "refused" in evidence.line.lower() or "Errno 111" in evidence.line
    what = ("its socket file is there but nothing answers on it: supervisord stopped (crashed or was killed) and left "
            "it" if refused else
            f"its socket{at or ''} does not exist: supervisord is not running, runs with another configuration, or "
            "the configuration has no [unix_http_server] section to create the socket")
    return found(evidence, Cause.supervisor_not_running, f"supervisorctl finds no supervisord{at}: {what}",
                 Fix("start supervisord: for the native stack, `stackctl up` starts it with the stack's own "
                     "configuration and socket, under .stackctl/ (`stackctl status` and `stackctl down` talk to that "
                     "one); a system-wide one starts with `sudo systemctl start supervisor` (or `service supervisor "
                     "start`), and if it will not, `supervisord -n -c FILE` prints why (a log directory missing, a "
                     "port taken). If one runs (`pgrep -a supervisord`), "
                     f"{_SAME_CONFIGURATION}. Touching the socket file does not start it"),
                 **({"socket": socket} if socket else {}))


# supervisorctl and supervisord must read one configuration: supervisorctl without -c reads the first
# supervisord.conf it finds, and finds supervisord only through that file's [supervisorctl] serverurl.
_SAME_CONFIGURATION = (
    "run supervisorctl with the configuration file it was started with (`supervisorctl -c FILE`, the -c of its "
    "command line; without -c supervisorctl reads the first of ./supervisord.conf, /etc/supervisord.conf and "
    "/etc/supervisor/supervisord.conf): that file's [supervisorctl] serverurl (unix:///PATH.sock) must name the "
    "socket its [unix_http_server] file= creates; a file without those sections needs them added, with "
    "[rpcinterface:supervisor] (supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface), "
    "and supervisord restarted")


# A supervisord the log shows running: a `ps`/`pgrep -a` line of its process (not grep's own line).
_RUNNING = re.compile(r"^\s*(?:\S+\s+)?(?P<pid>\d+)\s+(?!.*\bgrep\b).*\bsupervisord\b")
_KILLED = re.compile(r"\bkill(?:\s+-\S+)*\s+(?P<pid>\d+)")
# Where supervisord's unix socket is: stackctl's native stack, pip's default, Debian's package.
_SOCKET_PATHS = ("stackctl's native stack: .stackctl/supervisor/supervisor.sock in the stack directory (a "
                 "/tmp/stackctl-supervisor-*.sock where that path is too long); pip's default /tmp/supervisor.sock; "
                 "Debian's package /var/run/supervisor.sock")
_ONE_PER_CONFIGURATION = ("one supervisord per configuration: talk to the one that runs with `supervisorctl -c "
                          "THE_SAME_FILE` instead of starting another (natively `stackctl status`/`down` do), or stop it "
                          "(`supervisorctl -c THE_SAME_FILE shutdown`; natively `stackctl down`). A second supervisord "
                          "needs its own port and socket file in its supervisord.conf (the file= of [unix_http_server], "
                          "a sock file path no other supervisord uses). Package installs read "
                          "/etc/supervisor/supervisord.conf, pip's /etc/supervisord.conf: pass -c (or symlink one to the "
                          "other) so both commands read one configuration file")


def _running_supervisord(evidence: Evidence) -> str:
    """The pid of a supervisord the log shows running and not killed since; "" where none."""
    killed = set(evidence.all_found(_KILLED, "pid"))
    return next((pid for pid in evidence.all_found(_RUNNING, "pid") if pid not in killed), "")


def _supervisor_port_taken(evidence: Evidence) -> Diagnosis:
    """supervisord refuses to start when its HTTP server's port or unix socket is taken: another
    supervisord, or a socket file a crashed or killed one left behind. supervisord 4 unlinks a socket
    nothing answers on by itself ("Unlinking stale socket"), so on it the refusal usually means one
    still runs: hence the check before the unlink."""
    pid = _running_supervisord(evidence)
    if pid:
        return found(evidence, Cause.supervisor_port_taken,
                     f"supervisord will not start: a supervisord already runs (pid {pid}) and holds the port or socket "
                     "its configuration names",
                     Fix(f"{_ONE_PER_CONFIGURATION}. Do not remove its socket file: that leaves the running one "
                         "unreachable and a second one started beside it"), pid=int(pid))
    return found(evidence, Cause.supervisor_port_taken,
                 "supervisord will not start: another program, usually a supervisord already running, holds the port "
                 "or socket its configuration names, or a stale socket file a crashed supervisord left is in the way",
                 Fix("first check whether a supervisord runs (`pgrep -a supervisord`); if one does, "
                     f"{_ONE_PER_CONFIGURATION}. Only if none runs, remove the stale socket file (`unlink` the file= of "
                     f"[unix_http_server]; {_SOCKET_PATHS}) and start again; a port of [inet_http_server] held by "
                     "another program is named by `ss -ltnp`"))


_HTTP_SOCKET = re.compile(r"Cannot open an HTTP server: socket\.error reported (?:errno\.)?(?P<errno>E[A-Z]+)")


def _supervisor_http_socket(evidence: Evidence) -> Diagnosis:
    """supervisord creates the unix socket of [unix_http_server] file= at start; the OS refusing it
    stops supervisord (an address in use is supervisor_port_taken, its own message)."""
    errno = evidence.read(_HTTP_SOCKET).get("errno", "")
    why = {"EACCES": "its user may not create the socket file there (the directory is not writable by it, or a "
                     "supervisor.sock another user left in a shared /tmp is in the way)",
           "EINVAL": "the socket path is refused (longer than the 107 bytes a unix socket path may have, or on a "
                     "filesystem that holds no unix sockets: a bind mount from macOS or Windows, NFS, SMB)"}.get(
        errno, "the OS refused the socket file")
    return found(evidence, Cause.supervisor_http_socket,
                 f"supervisord cannot create the unix socket of its HTTP server{f' ({errno})' if errno else ''}: {why}",
                 Fix("point the socket at a short path in a local directory supervisord's user can write: "
                     "[unix_http_server] file= in supervisord.conf (with the same path in [supervisorctl] serverurl=unix://"
                     "...), e.g. file=/tmp/supervisor.sock, or a directory of its own; remove a stale supervisor.sock "
                     "no running supervisord owns. stackctl's native stack keeps its socket under .stackctl/supervisor/ "
                     "(a /tmp path when that one is too long): run `stackctl up` as the user who owns the stack directory, "
                     "on a local filesystem"), **({"errno": errno} if errno else {}))


def _supervisor_spawn_failed(evidence: Evidence) -> Diagnosis:
    spawn = evidence.read(_SPAWN)
    what, target, errno = spawn.get("what", "exec"), spawn.get("target") or spawn.get("file", "?"), spawn.get("errno", "")
    if what == "chdir to":
        summary = f"supervisord could not enter the program's working directory {target} ({errno})"
        text = directory_fix(target, errno)
    elif what == "setuid to":
        summary = f"supervisord could not switch to the user {target} ({errno})"
        text = "run `stackctl up` as the user who owns the stack directory (supervisord runs as you, without user=)"
    else:
        summary = (f"supervisord could not run {target}{f' ({errno})' if errno else ''}: it is not executable by the "
                   "program's user")
        text = (f"make {target} executable and readable by you (`ls -l`, `chmod +x`), and the directories above it "
                "open to you; for vLLM it is the engine venv's interpreter: `stackctl install-engine` rebuilds it")
    return found(evidence, Cause.supervisor_spawn_failed, summary, Fix(text),
                 **({"target": target} if target != "?" else {}), **({"errno": errno} if errno else {}))


def _supervisorctl_section_missing(evidence: Evidence) -> Diagnosis:
    """supervisorctl reads the first supervisord.conf it finds unless given -c: often not the file the
    running supervisord was started with, or one written with [program:x] sections only."""
    return found(evidence, Cause.supervisorctl_section_missing,
                 "supervisorctl read a configuration file without a [supervisorctl] section, so it does not know "
                 "where supervisord listens",
                 Fix("run supervisorctl with the file supervisord was started with (`supervisorctl -c FILE`; without "
                     "-c it takes the first supervisord.conf it finds: ./supervisord.conf, ./etc/supervisord.conf, "
                     "/etc/supervisord.conf, /etc/supervisor/supervisord.conf), or add a [supervisorctl] section to "
                     "that file (serverurl=unix:///PATH/supervisor.sock), with the [unix_http_server] (file=the same "
                     "socket) and [rpcinterface:supervisor] (supervisor.rpcinterface_factory = supervisor.rpcinterface:"
                     "make_main_rpcinterface) sections supervisord needs to answer it, then restart supervisord. For "
                     "the native stack, `stackctl status` and `stackctl logs` (with a service's name) talk to its supervisord for "
                     "you; "
                     "by hand: `supervisorctl -c .stackctl/supervisor/supervisord.conf status` (the file `stackctl "
                     "up` renders has all three sections)"))


# supervisorctl's unhandled XML-RPC refusal: the HTTP status of whatever answered at its serverurl's /RPC2.
_PROTOCOL_ERROR = re.compile(r"<ProtocolError for (?P<server>[^\s>]+?)/RPC2: (?P<status>4\d\d)(?: (?P<reason>[\w ]+))?>")


def _supervisorctl_wrong_server(evidence: Evidence) -> Diagnosis:
    """supervisorctl reached an HTTP server at its serverurl that refused its XML-RPC call: a password it
    does not send (401), or no supervisord at all there (404, 405, 400: another program on the port, a
    supervisord started with another file whose [inet_http_server] is elsewhere or off)."""
    said = evidence.read(_PROTOCOL_ERROR)
    server, status = said.get("server", "127.0.0.1"), said.get("status", "")
    shown = f"{status} {said.get('reason', '').strip()}".strip()
    if status == "401":
        return found(evidence, Cause.supervisorctl_wrong_server,
                     f"supervisorctl reached a supervisord at {server} that asks for a username and password it did "
                     f"not send (HTTP {shown})",
                     Fix("give supervisorctl the credentials of the supervisord it talks to: the username= and "
                         "password= of that supervisord's [inet_http_server] or [unix_http_server] section go in the "
                         "[supervisorctl] section of the same file (run `supervisorctl -c FILE`, the -c supervisord was "
                         "started with; without -c it reads the first of ./supervisord.conf, /etc/supervisord.conf and "
                         "/etc/supervisor/supervisord.conf), or `supervisorctl -u USER -p PASSWORD`. If that file sets "
                         "no password, the supervisord answering is another one, started with another configuration "
                         "(`pgrep -a supervisord` shows its -c). stackctl's native stack: `stackctl status` and "
                         "`stackctl down` talk to its supervisord for you"),
                     status=int(status), server=server)
    return found(evidence, Cause.supervisorctl_wrong_server,
                 f"supervisorctl's serverurl ({server}) reached an HTTP server that is not the supervisord it meant "
                 f"(HTTP {shown or 'error'} for /RPC2): another program holds that port, or supervisord runs with "
                 "another configuration file",
                 Fix("run supervisorctl with the configuration file supervisord was started with (`supervisorctl -c "
                     "FILE`, the -c of supervisord's command line, `pgrep -a supervisord` shows it; without -c "
                     "supervisorctl reads the first of ./supervisord.conf, /etc/supervisord.conf and "
                     "/etc/supervisor/supervisord.conf): its [supervisorctl] serverurl must name the port of that "
                     "file's [inet_http_server] (or its unix socket, serverurl=unix:///PATH.sock, the file= of "
                     "[unix_http_server]). If another program holds the port (`ss -ltnp` names it), give "
                     "[inet_http_server] port= and serverurl another port, or use the unix socket; then restart "
                     "supervisord. stackctl's native stack: `stackctl status` and `stackctl down` talk to its "
                     "supervisord for you"),
                 **({"status": int(status)} if status else {}), server=server)


def _supervisor_logfile_unusable(evidence: Evidence) -> Diagnosis:
    refused = logfile_refused(evidence.lines, evidence.index)
    if refused is None:
        # A refused open() that is not supervisord opening a log file.
        raise ValueError("not a log file")
    errno, program, path = refused
    whose = f"program {program}'s log file" if program else f"its log file {path}" if path else "a log file"
    return found(evidence, Cause.supervisor_logfile_unusable,
                 f"supervisord cannot open {whose} ({errno if errno.startswith('E') else 'Errno ' + errno}), so " + ("that program does not start" if program
                                                                      else "supervisord does not start"),
                 Fix(logfile_fix(errno, program, path)), **({"program": program} if program else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.supervisor_logfile_unusable, unnamed(DISPATCHERS, OPEN_REFUSED),
              _supervisor_logfile_unusable),
    signature(Cause.supervisorctl_section_missing, r"\.ini file does not include supervisorctl section",
              _supervisorctl_section_missing),
    signature(Cause.supervisor_spawn_failed,
              r"couldn't (?:chdir to|setuid to) \S+: E[A-Z]+|couldn't exec \S+: E(?!NOENT)[A-Z]+"
              r"|spawnerr: command at '[^']+' is not executable",
              _supervisor_spawn_failed),
    signature(Cause.supervisor_command_missing, r"can't find command '|couldn't exec \S+: ENOENT",
              _supervisor_command_missing),
    # supervisord's own record, and the state supervisorctl shows (with its FATAL column, or the description alone).
    signature(Cause.supervisor_gave_up, r"gave up: [\w.-]+ entered FATAL state|\bFATAL\s+Exited too quickly"
              r"|Exited too quickly \(process log may have details", _supervisor_gave_up, CONSEQUENCE),
    signature(Cause.supervisor_not_running, r"unix://\S+\.sock no such file|unix://\S+\.sock refused connection"
              r"|https?://[\w.-]+:\d+ refused connection"
              # supervisorctl's unhandled socket error: Python 2's socket.error, Python 3's OSError subclasses.
              r"|error: <class '(?:socket\.error|FileNotFoundError|ConnectionRefusedError)'>, \[Errno (?:2|111)\]",
              _supervisor_not_running, CONSEQUENCE),
    # A status of the 4xx family only: a 500 is a supervisord that answered and failed (its own log says why).
    signature(Cause.supervisorctl_wrong_server, r"error: <class 'xmlrpc(?:lib|\.client)\.ProtocolError'>, "
              r"<ProtocolError for \S+/RPC2: 4\d\d\b", _supervisorctl_wrong_server),
    signature(Cause.supervisor_http_socket, r"Cannot open an HTTP server: socket\.error reported (?!errno\.EADDRINUSE)",
              _supervisor_http_socket),
    # The message read even where a terminal cut it after "HTTP".
    signature(Cause.supervisor_port_taken, r"(?:An)?other program is already listening on a port that one of our\b",
              _supervisor_port_taken),
    signature(Cause.supervisor_gave_up, r"exited: [\w.-]+ \(exit status \d+; not expected\)", _supervisor_gave_up,
              ADVISORY + 1),
)
