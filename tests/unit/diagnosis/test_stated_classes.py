"""Causes an error line states that a failure class's shared reader also knows, read by the fallback
alone (as where the class's signature misses a wording): Docker's flushed iptables chains, a Prometheus
rule file that did not load, supervisord's log file it cannot open, its program's working directory and
exit status 127, nginx's resolver naming no address, and a script's CRLF line endings; each beside the
neighbours that state no such cause. The lines are real: from tests/data, or quoted from the public
report named beside them."""

from __future__ import annotations

from stackctl.diagnosis.stated_classes import classes_stated
from tests.unit.diagnosis.reading import read_by_fallback


def _names(line: str) -> list[str]:
    return [cause.name for cause in classes_stated(line)]


def test_a_flushed_docker_chain_is_stated_by_the_refusal_alone():
    # docker/cli#6691 (held-out round 29).
    line = ("Error response from daemon: add inter-network communication rule:  (iptables failed: iptables --wait -t "
            "filter -A DOCKER-ISOLATION-STAGE-1 -i br-1de12d53dc0b ! -o br-1de12d53dc0b -j DOCKER-ISOLATION-STAGE-2: "
            "iptables v1.8.10 (nf_tables): Chain 'DOCKER-ISOLATION-STAGE-2' does not exist")
    fix = read_by_fallback([line], "docker", failed=True).fix
    assert fix.text.startswith("the error states its cause: the iptables chains Docker creates")
    assert "DOCKER-ISOLATION-STAGE-2 among them" in fix.text and "sudo systemctl restart docker" in fix.text
    # docker-library/docker#467: the backends mixed, no Docker chain named.
    assert _names("iptables: RULE_APPEND failed (No such file or directory): rule in chain INPUT") == []


def test_a_rule_file_that_did_not_load_is_stated_by_prometheus_own_words():
    # prometheus#2014: a 1.x rule file under 2.x's rulefmt.
    line = ("ERRO[0000] yaml: unmarshal errors:  line 1: cannot unmarshal !!str `ALERT s...` into rulefmt.RuleGroups  "
            'source="manager.go:484"')
    [cause] = classes_stated(line)
    assert cause.name == "prometheus rules" and "`promtool update rules FILE`" in cause.text
    # A YAML error alone may be any file's (prometheus.yml's own): no rule file is stated.
    assert _names("yaml: line 3: mapping values are not allowed in this context") == []


def test_a_log_file_supervisord_cannot_open_is_stated_where_its_loggers_raised_it():
    # supervisor#1260's dispatchers line, and daac#7's traceback through supervisor/loggers.py.
    [cause] = classes_stated("2019-08-14 10:00:00,000 INFO spawnerr: unknown error making dispatchers for 'app': EISDIR")
    assert "the path is a directory, not a file (EISDIR)" in cause.text
    frames = ['  File "/usr/lib/python2.7/site-packages/supervisor/loggers.py", line 98, in __init__',
              "    self.stream = open(filename, mode)"]
    refused = "IOError: [Errno 13] Permission denied: '/supervisord.log'"
    [cause] = classes_stated(refused, frames)
    assert "its log file /supervisord.log" in cause.text and "may not write there" in cause.text
    # The same refusal raised by another program's code is no log file of supervisord's.
    assert _names(refused) == []
    fix = read_by_fallback([*frames, refused], "supervisord", failed=True).fix
    assert fix.text.startswith("the error states its cause: supervisord could not open its log file /supervisord.log")
    assert "the log also names: give supervisord access" not in fix.text


def test_nginxs_resolver_naming_no_address_is_stated_by_nginx():
    # modsecurity-crs-docker#365: a placeholder left unreplaced.
    line = '2025/07/23 05:59:24 [emerg] 1#1: host not found in resolver "RESOLVER" in /etc/nginx/nginx.conf:18'
    fix = read_by_fallback([line], "nginx", failed=True).fix
    assert "template placeholder left unreplaced" in fix.text and "resolver 127.0.0.11" in fix.text
    # An upstream name that does not resolve keeps its own cause.
    assert _names('host not found in upstream "app:8000" in /etc/nginx/conf.d/default.conf:2') == []


def test_supervisords_child_states_the_working_directory_and_exit_status_127():
    # mrq#68 (held-out round 30), AzuraCast#1701; firecrest-v2#29 (held-out round 30).
    fix = read_by_fallback(["supervisor: couldn't chdir to /app: ENOENT", "supervisor: child process was not spawned"],
                    "supervisord", failed=True).fix
    assert "/app (its directory= line) does not exist" in fix.text and "remove the directory= line" in fix.text
    [denied] = classes_stated("supervisor: couldn't chdir to /var/azuracast/stations/rush/config: EACCES")
    assert "not open to the user it runs as" in denied.text
    [exited] = classes_stated("2025-03-14 15:10:30,625 WARN exited: slurmrestd (exit status 127; not expected)")
    assert "`dos2unix SCRIPT`" in exited.text and "`stackctl logs slurmrestd --explain`" in exited.text
    # Another status says nothing of a command or directory not found (supervisor#578).
    assert _names("2015-02-13 01:32:27,665 INFO exited: shadowsocks (exit status 1; not expected)") == []


def test_an_interpreter_read_with_a_carriage_return_states_crlf_line_endings():
    for line, interpreter in (
            # osintbuddy#17 and cookiecutter-django-vue#51 (docker logs, exit code 127).
            ("/usr/bin/env: ‘bash\\r’: No such file or directory", "bash"),
            # codeql-container#6.
            ("/usr/bin/env: ‘python3\\r’: No such file or directory", "python3"),
            # csgo-server-launcher#32, pwnagotchi#65: bash's own words.
            ("bash: ./csgo-server-launcher.sh: /bin/bash^M: bad interpreter: No such file or directory", "/bin/bash"),
            # docker-oxid6#1, docker-mods#375: the carriage return folded the message over its own start.
            (": No such file or directory/env: bash", None),
            (": No such file or directory unable to exec bash", None)):
        [cause] = classes_stated(line)
        assert cause.name == "CRLF line endings"
        assert "`dos2unix FILE`" in cause.text and "eol=lf" in cause.text
        if interpreter:
            assert f"`{interpreter}\\r`" in cause.text
    fix = read_by_fallback(["/usr/bin/env: ‘bash\\r’: No such file or directory"], "docker", failed=True).fix
    assert fix.text.startswith("the error states its cause: a script has Windows (CRLF) line endings")


def test_an_interpreter_that_is_missing_without_a_carriage_return_is_no_crlf():
    # phantomas#246: node not installed; changedetection.io#3878's bare exec error names no interpreter.
    for line in ("/usr/bin/env: node: No such file or directory",
                 "exec docker-entrypoint.sh: no such file or directory",
                 "/bin/sh: 1: gunicorn: not found",
                 "bash: /usr/local/bin/start.sh: No such file or directory"):
        assert _names(line) == [], line
