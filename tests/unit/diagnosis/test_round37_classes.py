"""Round 37's misses, built by cause: supervisord's program that would not stay up (read by what the log shows of it,
else the usual causes in order) and its command by name alone that is not on its PATH, node-exporter's collectors
denied a kernel file only root may read, an exporter's web configuration with a key at the wrong level, vLLM's own
reservation of its API port refused right after a crash, nginx's upstream named by a domain name, Grafana's data
directory where chown does not take, and an endpoint refusing the shape of Claude Code's request body; each beside the
neighbours that keep their own reading, and read by the fallback too where the error line states the cause. The lines
are real: quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, Severity
from tests.unit.diagnosis.reading import diagnosed, read_by_fallback

# supervisor#891 (the state line, and the command of its [program:gearmand] section), #578, #1671, ojs#29, gunicorn#3099.
_EXITED = "Exited too quickly (process log may have details)"
_GEARMAND = ("command=/usr/local/sbin/gearmand -q mysql --mysql-host localhost --mysql-user root --mysql-password pass "
             "--mysql-db gearman -d")
_SSSERVER = "command=/usr/bin/python /usr/local/bin/ssserver -c /mithril/etc/shadowsocks.json -d start"
_RUN_SH = [
    "command=/bin/sh /data/service/st-logplatform-service/run.sh start",
    "2025-01-06 14:53:22,624 INFO spawned: 'logplatform_service' with pid 923739",
    "2025-01-06 14:53:24,500 INFO exited: logplatform_service (exit status 0; not expected)",
]
_ONE_SHOT = ["INFO exited: checkstart (exit status 0; not expected)",
             "INFO gave up: checkstart entered FATAL state, too many start retries too quickly"]
_NOT_FOUND_127 = ["2023-11-28 20:58:23,171 INFO exited: homework-tracker (exit status 127; not expected)",
                  ("2023-11-28 20:58:23,172 INFO gave up: homework-tracker entered FATAL state, too many start retries "
                  "too quickly")]


def test_a_program_that_would_not_stay_up_names_the_usual_causes_in_order():
    diagnosis = diagnosed([_EXITED], "supervisord")
    assert diagnosis.cause is Cause.supervisor_gave_up
    text = diagnosis.fix.text
    # Daemonizing first, then the program's own log, then startsecs for a program that ends normally.
    assert text.index("daemonizes") < text.index("supervisorctl tail NAME stderr") < text.index("startsecs=0")
    assert "`daemon off;`" in text and "stderr_logfile" in text
    # The fallback reads it from supervisorctl's status line (supervisor#1126), whose FATAL marks it an error.
    status = "gulp                             FATAL     Exited too quickly (process log may have details)"
    assert "daemonizes" in read_by_fallback([status], "supervisord").fix.text


@pytest.mark.parametrize(("lines", "option"), [([_GEARMAND, _EXITED], "-d"), ([_SSSERVER, _EXITED], "-d"),
                                               (_RUN_SH, "start")])
def test_a_command_that_goes_to_the_background_is_named(lines, option):
    diagnosis = diagnosed(lines, "supervisord")
    assert diagnosis.cause is Cause.supervisor_gave_up and diagnosis.values["background"] == option
    assert "goes to the background" in diagnosis.fix.text and "run in the foreground" in diagnosis.fix.text


def test_an_exit_status_0_is_a_daemon_or_a_one_shot_task():
    diagnosis = diagnosed(_ONE_SHOT, "supervisord")
    assert diagnosis.cause is Cause.supervisor_gave_up and diagnosis.values["exit_status"] == 0
    assert "one-shot task" in diagnosis.fix.text and "startsecs=0" in diagnosis.fix.text
    assert "stackctl logs checkstart --explain" in diagnosis.fix.text


def test_a_program_that_exits_127_keeps_its_not_found_reading():
    diagnosis = diagnosed(_NOT_FOUND_127, "supervisord")
    assert diagnosis.values["exit_status"] == 127 and "couldn't chdir to DIR" in diagnosis.fix.text
    assert "usual causes" not in diagnosis.fix.text and "background" not in diagnosis.values


@pytest.mark.parametrize("line", [  # supervisor#787, #847, #748
    "can't find command 'gunicorn'",
    "2016-11-08 19:15:59,253 INFO spawnerr: can't find command 'uwsgi'",
    "FATAL  can't find command 'ssserver'",
])
def test_a_command_by_name_alone_is_looked_up_on_supervisords_own_path(line):
    diagnosis = diagnosed([line], "supervisord")
    assert diagnosis.cause is Cause.supervisor_command_missing
    command = diagnosis.values["command"]
    assert f"/path/to/venv/bin/{command}" in diagnosis.fix.text and "environment=PATH=" in diagnosis.fix.text
    assert "3.3.5" in diagnosis.fix.text and "4.0.0" in diagnosis.fix.text
    if " INFO " not in line:  # supervisord logs its spawn error at INFO: no error line for the fallback
        assert "environment=PATH=" in read_by_fallback([line], "supervisord", failed=True).fix.text


def test_a_full_path_not_found_keeps_its_install_reading():
    # code_snippets#82: the virtualenv named in command= lacks gunicorn; no PATH is searched for a full path.
    line = "app                              FATAL     can't find command '/home/MY_USER/site/venv/bin/gunicorn'"
    diagnosis = diagnosed([line], "supervisord")
    assert diagnosis.cause is Cause.supervisor_command_missing and "environment=PATH=" not in diagnosis.fix.text


_KERNEL_FILES = [  # lest/prometheus-rpm#2 (node_exporter 0.x), intel/thermal_daemon#296 (1.x)
    ["ERROR: sockstat collector failed after 0.000030s: couldn't get sockstats: open /proc/net/sockstat: permission denied",
     "ERROR: netstat collector failed after 0.000100s: couldn't get netstats: open /proc/net/netstat: permission denied",
     "ERROR: hwmon collector failed after 0.000022s: open /sys/class/hwmon: permission denied"],
    [('level=error ts=2021-03-26T20:40:54.822Z caller=collector.go:161 msg="collector failed" name=rapl duration_seconds='
     '0.000386188 err="open /sys/class/powercap/intel-rapl:0:2/energy_uj: permission denied",')],
]


@pytest.mark.parametrize("lines", _KERNEL_FILES)
def test_a_kernel_file_only_root_may_read_is_no_directory_to_chown(lines):
    diagnosis = diagnosed(lines, "node-exporter")
    assert diagnosis.cause is Cause.node_exporter_kernel_file_denied and diagnosis.severity is Severity.advisory
    assert "User=root" in diagnosis.fix.text and "chown or chmod does not apply" in diagnosis.fix.text
    assert "65534" not in diagnosis.fix.text
    for collector in diagnosis.values["collectors"].split(", "):
        assert f"--no-collector.{collector}" in diagnosis.fix.text
    assert "User=root" in read_by_fallback(lines, "node-exporter", failed=True).fix.text


@pytest.mark.parametrize("line", [
    # poseidon/typhoon#1198: PID 1's mounts, a PID namespace and SELinux label, not a user.
    ('caller=collector.go:169 level=error msg="collector failed" name=filesystem duration_seconds=0.000666766 err="open '
    '/host/proc/1/mounts: permission denied"'),
    # node_exporter#426: a kernel without hwmon, nothing denied.
    ('ERRO[0002] ERROR: hwmon collector failed after 0.000976s: open /sys/class/hwmon: no such file or directory  '
    'source="node_exporter.go:92"'),
])
def test_a_missing_file_or_pid_1s_mounts_is_no_kernel_file_denied(line):
    diagnosis = diagnosed([line], "node-exporter")
    assert diagnosis.cause is not Cause.node_exporter_kernel_file_denied


def test_a_web_config_key_with_invisible_whitespace_belongs_under_its_section():
    # node_exporter#2938: client_ca_file at the top level, its indentation copy-pasted with characters YAML kept.
    line = 'level=error err="yaml: unmarshal errors:\\n  line 5: field   client_ca_file not found in type web.Config'
    diagnosis = diagnosed([line], "node-exporter")
    assert diagnosis.cause is Cause.web_config_field_unknown and diagnosis.values["fields"] == "client_ca_file"
    assert "invisible whitespace" in diagnosis.fix.text and "belongs under tls_server_config" in diagnosis.fix.text
    assert "indentation" in read_by_fallback([line], "node-exporter", failed=True).fix.text


def test_the_exporters_own_configuration_given_as_its_web_configuration():
    # ClusterLabs/ha_cluster_exporter#239: the exporter's own file, whose web: section is no web configuration key.
    line = ('caller=ha_cluster_exporter.go:359 level=error msg="Error starting HTTP server" err="yaml: unmarshal errors:'
            '\\n  line 2: field web not found in type web.Config\\n  line 7: field log not found')
    diagnosis = diagnosed([line], "node-exporter")
    assert diagnosis.cause is Cause.web_config_field_unknown
    assert "`web` is no key of a web configuration file" in diagnosis.fix.text
    assert "invisible" not in diagnosis.fix.text and "belongs under" not in diagnosis.fix.text


def test_a_prometheus_yml_field_is_no_web_configuration():
    line = ('msg="Error loading config (--config.file=/etc/prometheus/prometheus.yml)" err="parsing YAML file p.yml: '
            'yaml: unmarshal errors:\\n  line 3: field scrape_intervall not found in type config.plain"')
    assert diagnosed([line], "prometheus").cause is Cause.prometheus_config_invalid


_RESERVATION = [  # vllm#9737 (0.6.3), vllm#7514 (0.6.1's development build)
    [('  File "/home/user/code/debug/.venv/lib/python3.10/site-packages/vllm/entrypoints/openai/api_server.py", line 544, '
     'in run_server'), '    sock.bind(("", args.port))', "OSError: [Errno 98] Address already in use"],
    ['  File "/home/users/zoobab/mnt/vllm/entrypoints/openai/api_server.py", line 530, in run_server',
     '    temp_socket.bind(("", args.port))', "OSError: [Errno 98] Address already in use"],
]


@pytest.mark.parametrize("lines", _RESERVATION)
def test_vllms_own_port_reservation_right_after_a_crash(lines):
    diagnosis = diagnosed(lines, "vllm")
    assert diagnosis.cause is Cause.port_in_use and diagnosis.fix.key == "ports.vllm"
    assert "SO_REUSEADDR" in diagnosis.fix.text and "vLLM 0.6.4" in diagnosis.fix.text
    assert "LISTENING" in diagnosis.fix.text  # told apart from another process that really listens
    assert "SO_REUSEADDR" in read_by_fallback(lines, "vllm", failed=True).fix.text


def test_a_port_vllm_picks_for_its_workers_is_no_reservation():
    lines = ['  File "/miniforge3/envs/vllm/lib/python3.10/site-packages/vllm/utils.py", line 572, in get_open_port',
             '    s.bind(("", 0))', "OSError: [Errno 98] Address already in use"]  # vllm#11617
    diagnosis = diagnosed(lines, "vllm")
    assert diagnosis.cause is Cause.port_in_use and "SO_REUSEADDR" not in diagnosis.fix.text


def test_an_upstream_named_by_a_domain_name_is_reached_on_loopback():
    # wmnnd/nginx-certbot#98: this host's own dyndns name, with an IPv6 address only, in proxy_pass.
    line = "[emerg] 1#1: host not found in upstream hostname.example.com in /etc/nginx/conf.d/app.conf:26"
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_upstream_host_unknown and diagnosis.values["upstream"] == "hostname.example.com"
    assert "upstream hostname.example.com { server localhost:PORT; }" in diagnosis.fix.text
    assert "proxy_pass http://127.0.0.1:PORT;" in diagnosis.fix.text and diagnosis.fix.key == "hosts"
    assert "server localhost" in read_by_fallback([line], "nginx", failed=True).fix.text


@pytest.mark.parametrize("line", [  # a Compose service name (nginx-proxy's php-fpm), an address
    'nginx: [emerg] host not found in upstream "php-fpm:9000" in /etc/nginx/conf.d/default.conf:2',
])
def test_a_container_name_keeps_its_compose_reading(line):
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_upstream_host_unknown and "depends_on:" in diagnosis.fix.text
    assert "server localhost" not in diagnosis.fix.text


def test_grafanas_data_directory_chown_first_chmod_where_it_does_not_take():
    lines = ["GF_PATHS_DATA='/var/lib/grafana' is not writable.",  # HStep20/Ultimate-Unraid-Dashboard-Guide#1
             "mkdir: can't create directory '/var/lib/grafana/plugins': Permission denied"]
    text = diagnosed(lines, "grafana").fix.text
    assert text.index("chown -R 472:472") < text.index("chmod -R 777")
    # SQLite's read-only database needs the file's owner changed: no chmod for it (grafana#12594).
    readonly = ('grafana_1     | t=2020-05-25T14:56:22+0000 lvl=eror msg="Executing migration failed" logger=migrator '
                'id="Add is_disabled column to user" error="attempt to write a readonly database"')
    assert "chmod" not in diagnosed([readonly], "grafana").fix.text


@pytest.mark.parametrize(("line", "refused"), [
    ("API Error: 400 Request body format invalid", "body"),  # anthropics/claude-code#63471
    ("API Error: 400 messages[1].role must be either 'user' or 'assistant', but got 'system'",  # claude-code#63469
     "system role"),
    ("使用默认配置时，接口提示：API Error: 400 message[1].role must be 'user' or 'assistant' ", "system role"),  # one-api#350
])
def test_an_endpoint_refusing_the_shape_of_claude_codes_request(line, refused):
    diagnosis = diagnosed([line], "filter-proxy")
    assert diagnosis.cause is Cause.client_request_body_refused and diagnosis.values["refused"] == refused
    assert "claude --bare" in diagnosis.fix.text and "claude --debug" in diagnosis.fix.text
    assert (diagnosis.fix.env == "CLAUDE_CODE_SIMPLE") is (refused == "system role")
    assert "claude --bare" in read_by_fallback([line], "filter-proxy", failed=True).fix.text


@pytest.mark.parametrize("line", [
    # anthropics/claude-code#2663: an empty message, Claude Code's own; no plugin's shape.
    ('API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.5: all messages must '
     'have non-empty content except for the optional final assistant message"}}'),
    # A body that is no JSON at all (a lone surrogate in Claude Code's own text).
    ('API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"The request body is not valid '
     'JSON: no low surrogate in string: line 1 column 54841 (char'),
])
def test_claude_codes_other_400s_are_no_refused_shape(line):
    diagnosis = diagnosed([line], "filter-proxy")
    assert diagnosis.cause is not Cause.client_request_body_refused and "claude --bare" not in diagnosis.fix.text


def test_vllms_own_refusal_of_a_system_message_keeps_its_class():
    # vllm#44000: vLLM's Messages route before 0.23, behind no gateway: an upgrade of vLLM.
    line = ("    \"message\": \"1 validation error:\\n  {'type': 'literal_error', 'loc': ('body', 'messages', 1, 'role'), "
            "'msg': \\\"Input should be 'user' or 'assistant'\\\", 'input': 'system', 'ctx': {'expected': \\\"'user' "
            "or 'assistant'\\\"}}\",")
    assert diagnosed([line], "filter-proxy").cause is Cause.anthropic_system_role_refused
