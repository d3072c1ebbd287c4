"""Round 30's misses, built by cause: supervisord's child that cannot enter a program's working directory
(directory=), and a program that exits at once with status 127, whose own log tells the directory, the
script's interpreter or line endings, and a command not found apart; each beside the neighbours that keep
their own class. The lines are real: from tests/data, quoted from the public report named beside them, or
(where said) what supervisord 4 wrote here for the configuration described."""

from __future__ import annotations

from stackctl.diagnosis import Cause
from tests.unit.diagnosis.reading import diagnosed

_NOT_SPAWNED = "supervisor: child process was not spawned"


# --- a program's working directory ---------------------------------------------------------------------

def test_a_working_directory_that_does_not_exist_names_the_directory_line_to_create_fix_or_remove():
    # mrq#68 (a template's directory=/app from a container), supervisor#788, littlelemon's README (the
    # path's case): one cause, the directory= line.
    for line, directory in (("supervisor: couldn't chdir to /app: ENOENT", "/app"),
                            ("supervisor: couldn't chdir to /home/mtime/mx.common.sms.task/mx.common.sms.task: ENOENT",
                             "/home/mtime/mx.common.sms.task/mx.common.sms.task"),
                            ("supervisor: couldn't chdir to /home/ubuntu/littleLemon: ENOENT",
                             "/home/ubuntu/littleLemon")):
        diagnosis = diagnosed([line, _NOT_SPAWNED], "supervisord")
        assert diagnosis.cause is Cause.supervisor_spawn_failed
        text = diagnosis.fix.text
        assert f"working directory {directory} (its directory= line) does not exist" in text
        assert f"`mkdir -p {directory}`" in text and "remove the directory= line" in text
        assert "case-sensitive" in text and "unquoted" in text
        assert diagnosis.values == {"target": directory, "errno": "ENOENT"}


def test_a_working_directory_its_user_may_not_enter_names_the_user_and_the_directory_that_refuses():
    # AzuraCast#1701 and allianceauth#553 (fixed by running the program as the directory's owner).
    for line in ("supervisor: couldn't chdir to /var/azuracast/stations/rush/config: EACCES",
                 "supervisor: couldn't chdir to /home/allianceserver/production/allianceauth: EACCES"):
        text = diagnosed([line, _NOT_SPAWNED], "supervisord").fix.text
        assert "is not open to the user it runs as (user=)" in text
        assert "namei -l" in text and "run the program as the directory's owner (user=)" in text
        assert "does not exist" not in text


def test_stackctls_own_programs_are_given_no_directory_so_the_fix_says_whose_configuration_it_is():
    # stackctl/runtime/supervisor.py writes no directory= into its [program:x] sections.
    text = diagnosed(["supervisor: couldn't chdir to /app: ENOENT"], "supervisord").fix.text
    assert "gives its programs no directory=" in text
    assert "stackctl points it at the stack directory" not in text


def test_the_other_spawn_refusals_keep_their_own_fixes():
    # supervisor#1383: exec refused (EACCES); mlflow-easyauth#1: supervisord's own execute-bit check.
    execute = diagnosed(["supervisor: couldn't exec mytool: EACCES", _NOT_SPAWNED], "supervisord")
    assert execute.cause is Cause.supervisor_spawn_failed and "chmod +x" in execute.fix.text
    assert "directory=" not in execute.fix.text
    check = diagnosed(["2020-03-27 07:11:55,663 INFO spawnerr: command at '/app/webserver.sh' is not executable"], "supervisord")
    assert check.cause is Cause.supervisor_spawn_failed and "chmod +x" in check.fix.text


# --- exit status 127 ------------------------------------------------------------------------------------

def test_exit_status_127_names_what_the_programs_own_log_tells_apart():
    # firecrest-v2#29 (scripts with CRLF line endings), memex-explorer#773 (a command not installed),
    # gunicorn#3099: supervisord's main log shows the status only.
    for lines, program in (
            (["2025-03-14 16:10:30 2025-03-14 15:10:30,599 WARN exited: mariadb (exit status 127; not expected)",
              "2025-03-14 16:10:30 2025-03-14 15:10:30,625 WARN exited: slurmrestd (exit status 127; not expected)"],
             "slurmrestd"),
            (["2016-09-04 19:12:16,252 INFO exited: nutch (exit status 127; not expected)",
              "2016-09-04 19:12:16,252 INFO gave up: nutch entered FATAL state, too many start retries too quickly"],
             "nutch"),
            (["2023-11-28 20:58:23,171 INFO exited: homework-tracker (exit status 127; not expected)",
              ("2023-11-28 20:58:23,172 INFO gave up: homework-tracker entered FATAL state, too many start retries "
               "too quickly")], "homework-tracker")):
        diagnosis = diagnosed(lines, "supervisord")
        assert diagnosis.cause is Cause.supervisor_gave_up
        assert diagnosis.values == {"program": program, "exit_status": 127}
        text = diagnosis.fix.text
        assert f"`stackctl logs {program} --explain`" in text and f"`supervisorctl tail {program} stderr`" in text
        assert "directory=" in text
        assert "(`#!`)" in text and "Windows (CRLF) line endings" in text and "`dos2unix SCRIPT`" in text
        assert "command not found" in text and "supervisord's PATH" in text
        assert "`stackctl install-engine`" in text


def test_other_exit_statuses_keep_the_programs_own_log_as_their_fix():
    # supervisor#578 (status 1), seat#33 (status 0: a program that forks into the background).
    for line in ("2015-02-13 01:32:27,665 INFO exited: shadowsocks (exit status 1; not expected)",
                 "2014-04-22 13:51:33,469 INFO exited: seat3 (exit status 0; not expected)"):
        text = diagnosed([line], "supervisord").fix.text
        assert "dos2unix" not in text and "--explain" in text


def test_an_exec_that_finds_no_interpreter_names_the_scripts_first_line_and_its_line_endings():
    # What supervisord 4 wrote here for a script with CRLF line endings and for one whose #! names a
    # missing interpreter: the same line (supervisord had found the script itself before it forked).
    diagnosis = diagnosed(["supervisor: couldn't exec /tmp/sv/crlf.sh: ENOENT", _NOT_SPAWNED], "supervisord")
    assert diagnosis.cause is Cause.supervisor_command_missing
    assert "`dos2unix /tmp/sv/crlf.sh`" in diagnosis.fix.text and "`#!` line" in diagnosis.fix.text
    # A command supervisord finds nowhere is no interpreter: by name alone it is one not on supervisord's PATH
    # (supervisor#748: the maintainer's fix, its full path or the directory on that PATH), by full path one to install.
    missing = diagnosed(["FATAL  can't find command 'ssserver'"], "supervisord")
    assert missing.cause is Cause.supervisor_command_missing and "dos2unix" not in missing.fix.text
    assert "full path" in missing.fix.text and "environment=PATH=" in missing.fix.text
    absent = diagnosed(["app   FATAL     can't find command '/home/MY_USER/site/venv/bin/gunicorn'"], "supervisord")
    assert absent.cause is Cause.supervisor_command_missing and "install what the program runs" in absent.fix.text
