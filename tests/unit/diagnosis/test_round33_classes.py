"""Round 33's misses, built by cause: a process's open-file limit (reached, supervisord's minfds, systemd's
LimitNOFILE refused), nginx refused by SELinux on its upstream and a variable nothing defines, IPv6 off under a
[::] listen, a client refusing a certificate that does not name the host, a safetensors file cut short,
node_exporter's renamed flag beside its old name, supervisord's unescaped %; each beside the neighbours that
keep their own class, and read by the fallback too where the error line states the cause. The lines are real:
from tests/data, quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, diagnose_log
from stackctl.diagnosis.diagnose import context_for

_DEFAULTS = parse_stack_config({})


# --- open-file limits ----------------------------------------------------------------------------------

_EXHAUSTED = (
    "dial tcp 127.0.0.1:9093: socket: too many open files",  # ansible-prometheus#105
    ('time="2017-02-28T14:57:44-08:00" level=error msg="Could not open file /var/lib/prometheus/metrics/31/9286a11209929d'
     '.db: open /var/lib/prometheus/metrics/31/9286a11209929d.db: too many open files" source="crashrecovery.go:223"'),
)
from tests.unit.diagnosis.reading import diagnosed, read_by_fallback

_MINFDS = ('Error: The minimum number of file descriptors required to run this process is 10240 as per the "minfds" '
           "command-line argument or config file setting. The current environment will only allow you to open 10240 "
           "file descriptors. Either raise the number of usable file descriptors in your environment (see README.rst) "
           "or lower the minfds setting in the config file to allow the process to start.")  # CodeAnalysis#1149
_LIMITS = [  # cloudalchemy/ansible-prometheus#190
    ("mars 08 12:53:01 ip-172-31-28-36 systemd[8512]: prometheus.service: Failed to adjust resource limit LimitNOFILE: "
    "Operation not permitted"),
    ("mars 08 12:53:01 ip-172-31-28-36 systemd[8512]: prometheus.service: Failed at step LIMITS spawning "
    "/usr/local/bin/prometheus: Operation not permitted"),
]


@pytest.mark.parametrize("line", _EXHAUSTED)
def test_too_many_open_files_is_the_services_limit_to_raise(line):
    diagnosis = diagnosed([line], "prometheus")
    assert diagnosis.cause is Cause.open_files_exhausted
    assert "LimitNOFILE=65535" in diagnosis.fix.text and "--ulimit nofile=65535:65535" in diagnosis.fix.text
    assert "ulimits: nofile:" in diagnosis.fix.text  # the Compose runtime's override
    assert "too many open files" in read_by_fallback([line], "prometheus").summary.lower()
    assert "LimitNOFILE=65535" in read_by_fallback([line], "prometheus").fix.text


def test_vllms_start_up_warning_that_the_limit_could_cause_it_is_no_failure():
    # vLLM 0.2x at every start where it cannot raise the soft limit to its wish (seen in a healthy
    # native stack's log): it names the error it foresees, and what follows is a serving engine.
    warning = ("(APIServer pid=6687) WARNING 11-25 01:01:02 [system_utils.py:255] Found ulimit of 20000 and failed to "
               "automatically increase with error current limit exceeds maximum limit. This can cause fd limit errors "
               "like `OSError: [Errno 24] Too many open files`. Consider increasing with ulimit -n")
    serving = "(APIServer pid=6687) INFO 11-25 01:01:12 [launcher.py:46] Route: /v1/chat/completions, Methods: POST"
    said = diagnosed([warning, serving], "vllm")  # a warning the log reports, not a class
    assert said.cause is Cause.unrecognised and "LimitNOFILE" not in said.fix.text
    # The error itself, later in the same log, is the failure.
    failed = "OSError: [Errno 24] Too many open files: '/tmp/tmpa1b2c3'"
    assert diagnosed([warning, serving, failed], "vllm").cause is Cause.open_files_exhausted


def test_supervisords_minfds_names_the_containers_ulimit_and_the_count():
    diagnosis = diagnosed([_MINFDS], "supervisord")
    assert diagnosis.cause is Cause.supervisor_minfds_above_limit and diagnosis.values["minfds"] == 10240
    assert "--ulimit nofile=10240:10240" in diagnosis.fix.text and "lower minfds=" in diagnosis.fix.text
    assert "--ulimit nofile=10240:10240" in read_by_fallback([_MINFDS], "supervisord").fix.text


def test_systemds_refused_limit_is_a_number_instead_of_infinity_not_a_path_permission():
    diagnosis = diagnosed(_LIMITS, "prometheus")
    assert diagnosis.cause is Cause.systemd_limit_refused and diagnosis.values["limit"] == "LimitNOFILE"
    assert "instead of infinity" in diagnosis.fix.text and "LimitNOFILE=65535" in diagnosis.fix.text
    # The fallback read "Operation not permitted" on the program's path as a permission to grant: no longer.
    fallback = read_by_fallback(_LIMITS, "prometheus")
    assert "LimitNOFILE=65535" in fallback.fix.text and "chown" not in fallback.fix.text


def test_nginxs_own_setrlimit_alert_is_not_systemds_refusal():
    # fabiocicerchia/nginx-lua#38: worker_rlimit_nofile refused in a container, an [alert] nginx survives.
    alert = "2022/02/01 12:51:56 [alert] 27#27: setrlimit(RLIMIT_NOFILE, 40000) failed (1: Operation not permitted)"
    said = diagnose_log([alert], context_for("nginx", _DEFAULTS))
    assert said is None or said.cause not in (Cause.systemd_limit_refused, Cause.open_files_exhausted)


# --- nginx: SELinux on the upstream, variables nothing defines, IPv6 off --------------------------------

_SELINUX = ('2023/03/16 15:22:30 [crit] 18009#18009: *18 connect() to 127.0.0.1:8082 failed (13: Permission denied) '
            'while connecting to upstream, client: 192.168.xxx.yyy, server: test, request: "GET /ui/ HTTP/2.0", '
            'upstream: "http://127.0.0.1:8082/ui/", host: "alma1"')  # JFrog-Cloud-Installers#268


def test_an_upstream_connect_refused_with_13_is_selinuxs_boolean():
    diagnosis = diagnosed([_SELINUX], "nginx")
    assert diagnosis.cause is Cause.nginx_upstream_connect_denied and diagnosis.values["address"] == "127.0.0.1:8082"
    assert "setsebool -P httpd_can_network_connect 1" in diagnosis.fix.text
    assert "httpd_can_network_connect" in read_by_fallback([_SELINUX], "nginx").fix.text


def test_a_bind_refused_with_13_is_not_the_upstream_boolean():
    # ben1234560/k8s_PaaS#38: nginx's own listen refused, a port label, not a connection to an upstream.
    bind = "Oct 02 00:51:40 hdss7-11.host.com nginx[121227]: nginx: [emerg] bind() to 0.0.0.0:7443 failed (13: Permission denied)"
    assert diagnosed([bind], "nginx").cause is not Cause.nginx_upstream_connect_denied


def test_connection_upgrade_without_its_map_names_the_map_block():
    lines = ['[emerg] 144499#144499: unknown "connection_upgrade" variable',  # nginxconfig.io#491
             "nginx: configuration file /etc/nginx/nginx.conf test failed"]
    diagnosis = diagnosed(lines, "nginx")
    assert diagnosis.cause is Cause.nginx_variable_unknown and diagnosis.values["variable"] == "connection_upgrade"
    assert "map $http_upgrade $connection_upgrade" in diagnosis.fix.text
    assert "map $http_upgrade $connection_upgrade" in read_by_fallback(lines, "nginx").fix.text


def test_an_unknown_directive_keeps_its_own_class():
    line = 'nginx: [emerg] unknown directive "http2" in /etc/nginx/nginx.conf:39'  # Xray-install#7
    assert diagnosed([line], "nginx").cause is Cause.nginx_directive_too_new


def test_a_listen_on_ipv6_without_ipv6_beats_supervisords_exit_line():
    lines = ["2024/04/23 21:05:03 [emerg] 44#44: socket() [::]:80 failed (97: Address family not supported by protocol)",
             "nginx: [emerg] socket() [::]:80 failed (97: Address family not supported by protocol)",
             "2024-04-23 21:05:03,270 WARN exited: nginx (exit status 1; not expected)"]  # humhub-docker#348
    diagnosis = diagnosed(lines, "nginx")
    assert diagnosis.cause is Cause.ipv6_unavailable and diagnosis.values["address"] == "[::]:80"
    assert "listen 80;" in diagnosis.fix.text and "disable_ipv6" in diagnosis.fix.text


def test_an_address_the_host_lacks_stays_its_own_class():
    line = "Jan 18 02:36:12 www nginx[1305]: nginx: [emerg] bind() to #ipv4-address#:80 failed (99: Cannot assign requested address)"
    assert diagnosed([line], "nginx").cause is Cause.listen_address_not_on_host


# --- clients: a certificate that does not name the host ------------------------------------------------

_ALTNAME_IP = ("[2021-05-17 14:20:53] [ERROR] Connect fail, MQTT.js onError trigger, Error [ERR_TLS_CERT_ALTNAME_INVALID]: "
               "Hostname/IP does not match certificate's altnames: IP: 10.0.1.6 is not in the cert's list: ")  # MQTTX#573
_ALTNAME_HOST = ("Error [ERR_TLS_CERT_ALTNAME_INVALID]: Hostname/IP does not match certificate's altnames: "
                 "Host:da1.domain.net. is not in the cert's altnames: DNS:da1.domain.net")  # node-directadmin#3


def test_a_certificate_without_the_ip_in_its_san_names_the_hostname_not_a_ca():
    diagnosis = diagnosed([_ALTNAME_IP], "filter-proxy")
    assert diagnosis.cause is Cause.client_certificate_name_mismatch and diagnosis.values["target"] == "10.0.1.6"
    assert diagnosis.fix.key == "hostname" and "an IP address (10.0.1.6)" in diagnosis.fix.text
    assert "subjectAltName" in diagnosis.fix.text and "NODE_EXTRA_CA_CERTS" not in diagnosis.fix.text
    assert "subjectAltName" in read_by_fallback([_ALTNAME_IP], "filter-proxy").fix.text


def test_a_host_name_mismatch_reads_the_name():
    diagnosis = diagnosed([_ALTNAME_HOST], "filter-proxy")
    assert diagnosis.values["target"] == "da1.domain.net" and "a name (da1.domain.net)" in diagnosis.fix.text


def test_an_untrusted_chain_stays_its_own_class():
    line = "Failed to connect to console.anthropic.com: SELF_SIGNED_CERT_IN_CHAIN"
    assert diagnosed([line], "filter-proxy").cause is Cause.client_certificate_untrusted


# --- vLLM: a safetensors file cut short -----------------------------------------------------------------

def test_a_safetensors_header_cut_short_is_a_download_to_repeat():
    lines = [('File "/workspace/vllm/vllm-venv/lib/python3.10/site-packages/vllm/model_executor/model_loader/'
             'weight_utils.py", line 406, in safetensors_weights_iterator'),
             '    with safe_open(st_file, framework="pt") as f:',
             "safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer"]  # Qwen3-VL#264
    diagnosis = diagnosed(lines, "vllm")
    assert diagnosis.cause is Cause.model_weights_corrupt and diagnosis.values["error"] == "MetadataIncompleteBuffer"
    assert "download the model again" in diagnosis.fix.text and "--force-download" in diagnosis.fix.text
    assert "download the model again" in read_by_fallback(lines, "vllm").fix.text


# --- node_exporter's renamed flag beside its old name ---------------------------------------------------

def test_the_old_flag_beside_its_renamed_successor_keeps_the_new_one():
    line = ("panic: Couldn't create metrics handler: couldn't create collector: --collector.systemd.unit-whitelist and "
            "--collector.systemd.unit-include are mutually exclusive")  # m-lab/k8s-support#551
    diagnosis = diagnosed([line], "node-exporter")
    assert diagnosis.cause is Cause.service_flags_exclusive
    assert diagnosis.values["deprecated"] == "--collector.systemd.unit-whitelist"
    assert diagnosis.fix.flag == "--collector.systemd.unit-include" and "pin the version" in diagnosis.fix.text


def test_a_deprecation_warning_stays_advisory():
    line = ('level=warn ts=2021-07-16T15:15:08.861Z caller=filesystem_common.go:93 collector=filesystem '
            'msg="--collector.filesystem.ignored-mount-points is DEPRECATED and will be removed in 2.0.0, use '
            '--collector.filesystem.mount-points-exclude"')  # dockprom#235
    assert diagnosed([line], "node-exporter").cause is Cause.service_flag_deprecated


# --- supervisord's unescaped % --------------------------------------------------------------------------

def test_a_percent_in_a_command_must_be_doubled():
    line = ("Error: Format string 'java -Xloggc:/tmp/jvm_gc_%t_%p.log hello.java' for 'program:java.command' is badly "
            "formatted: unsupported format character 't' (0x74) at index 26 in section 'program:java' (file: "
            "'supervisord.conf')")  # supervisor#980
    diagnosis = diagnosed([line], "supervisord")
    assert diagnosis.cause is Cause.supervisor_config_invalid and diagnosis.values["error"] == "percent"
    assert "%%" in diagnosis.fix.text and "program:java.command" in diagnosis.fix.text
    assert "%%" in read_by_fallback([line], "supervisord").fix.text


def test_an_unset_env_expansion_is_not_a_percent_to_escape():
    line = ("Error: Format string '%(ENV_SD_USER)s' for 'supervisord.user' contains names ('ENV_SD_USER') which "
            "cannot be expanded. Available names: ENV_HOME, here")
    said = diagnose_log([line], context_for("supervisord", _DEFAULTS))
    assert said is not None and said.values.get("error") != "percent"
