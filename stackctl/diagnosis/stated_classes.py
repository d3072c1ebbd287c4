"""Causes an error line states that a failure class's shared reader also knows, for the fallback to
name the fix of where the class's signature misses the line (a wording a little off its trigger, a
log read with signatures that do not apply):

- Docker's iptables chains flushed from under it ("No chain/target/match by that name" for a DOCKER
  chain, nf_tables' "Chain 'DOCKER-...' does not exist"): docker_chains;
- a Prometheus rule file that did not load ("loading groups failed", "error loading rules", rulefmt's
  refusals): prometheus_rules;
- supervisord's log file it cannot open ("error making dispatchers for 'x': EISDIR", an open() refused
  under its loggers): supervisor_logs;
- nginx's resolver naming no address ('host not found in resolver "X"'): nginx_resolver;
- supervisord's child that cannot enter a program's working directory ("couldn't chdir to DIR:
  ENOENT") or a program that exits 127: supervisor_spawn;
- a script with Windows (CRLF) line endings: its #! interpreter read with the carriage return
  ("/usr/bin/env: 'bash\\r': No such file or directory", "/bin/bash^M: bad interpreter", or the
  message the carriage return folded over: ": No such file or directory").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stackctl.diagnosis.docker_chains import CHAIN_MISSING, chains_fix, missing_chain
from stackctl.diagnosis.nginx_resolver import resolver_fix, resolver_value
from stackctl.diagnosis.prometheus_rules import RULES_FAILED, rules_fix
from stackctl.diagnosis.stated_cause import StatedCause
from stackctl.diagnosis.supervisor_logs import logfile_fix, logfile_refused
from stackctl.diagnosis.supervisor_spawn import (
    CHDIR_REFUSED,
    EXITED_127,
    directory_fix,
    not_run_fix,
)


def classes_stated(line: str, traceback: Sequence[str] = ()) -> list[StatedCause]:
    """The causes `line` states that a class's reader knows; `traceback`: the error's own frames (an
    open() refused is supervisord's log file only where its loggers raised it)."""
    return [*_docker_chain(line), *_rule_file(line), *_log_file(line, traceback), *_resolver(line),
            *_supervisor_spawn(line), *_line_endings(line)]


def _docker_chain(line: str) -> list[StatedCause]:
    if not CHAIN_MISSING.search(line):
        return []
    chain = missing_chain(line)
    return [StatedCause(f"docker chain: {chain}", chains_fix(chain))]


def _rule_file(line: str) -> list[StatedCause]:
    return [StatedCause("prometheus rules", rules_fix([line]))] if RULES_FAILED.search(line) else []


def _log_file(line: str, traceback: Sequence[str]) -> list[StatedCause]:
    frames = [*traceback, line]
    refused = logfile_refused(frames, len(frames) - 1)
    if refused is None:
        return []
    errno, program, path = refused
    return [StatedCause(f"supervisord log file: {program or path or errno}", logfile_fix(errno, program, path))]


def _resolver(line: str) -> list[StatedCause]:
    value = resolver_value(line)
    return [] if value is None else [StatedCause(f"nginx resolver: {value.strip()}", resolver_fix(value))]


def _supervisor_spawn(line: str) -> list[StatedCause]:
    chdir = CHDIR_REFUSED.search(line)
    if chdir:
        return [StatedCause(f"working directory: {chdir['directory']}",
                            directory_fix(chdir["directory"], chdir["errno"]))]
    exited = EXITED_127.search(line)
    if exited:
        return [StatedCause(f"exit status 127: {exited['program']}", not_run_fix(exited["program"]))]
    return []


# An interpreter's name with the carriage return a CRLF line ending leaves after it, as the kernel or
# env looked it up ('bash\r', "python3\r", /bin/sh^M), or the message that carriage return folded
# back over its own start (": No such file or directory" first, the interpreter's name after it).
_CARRIAGE_RETURN = re.compile(r"(?P<interpreter>[\w/.-]*\b(?:bash|sh|zsh|dash|ash|python[\d.]*|node|perl|ruby|env))"
                              r"(?:\\r|\^M|\r)(?=['\"’:\s]|$)"
                              r"|^\s*: (?:No such file or directory|not found)\b")


def _line_endings(line: str) -> list[StatedCause]:
    match = _CARRIAGE_RETURN.search(line)
    if match is None:
        return []
    interpreter = match["interpreter"]
    named = f"`{interpreter}\\r`" if interpreter else "its interpreter with a carriage return after it"
    return [StatedCause("CRLF line endings", (
        f"a script has Windows (CRLF) line endings: its `#!` line makes the system look for {named}, which does not "
        "exist: convert the script to Unix (LF) line endings with `dos2unix FILE` (or `sed -i 's/\\r$//' FILE`; "
        "`file FILE` says \"with CRLF line terminators\"), then rebuild the image that copies it; keep git on "
        "Windows from converting it again with a `*.sh text eol=lf` line in .gitattributes (or `git config "
        "core.autocrlf input`, and check the files out again)"))]
