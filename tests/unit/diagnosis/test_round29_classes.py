"""Round 29's misses, built by cause: Docker's iptables chains flushed from under it, Prometheus rule files
that do not load, supervisord's log files it cannot open, nginx's resolver naming no address, Grafana 12's
refused Angular plugins and nvcr.io's login; each beside the neighbours that keep their own class. The
lines are real: from tests/data, or quoted from the public report named beside them."""

from __future__ import annotations

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, diagnose_log
from stackctl.diagnosis.diagnose import context_for
from tests.unit.diagnosis.reading import diagnosed

_DEFAULTS = parse_stack_config({})


# --- Docker's iptables chains ------------------------------------------------------------------------

def test_a_rule_refused_for_a_missing_docker_chain_restarts_the_daemon_and_names_docker_28():
    # docker/cli#6691 (Docker 29.1.1) and websoft9#342: the words differ, the cause is one.
    for line in (("Error response from daemon: add inter-network communication rule:  (iptables failed: iptables --wait -t "
                 "filter -A DOCKER-ISOLATION-STAGE-1 -i br-1de12d53dc0b ! -o br-1de12d53dc0b -j DOCKER-ISOLATION-STAGE-2: "
                 "iptables v1.8.10 (nf_tables): Chain 'DOCKER-ISOLATION-STAGE-2' does not exist"),
                 ("Error response from daemon: Failed to Setup IP tables: Unable to enable SKIP DNAT rule:  (iptables "
                 "failed: iptables --wait -t nat -I DOCKER -i br-75f3817a8fe1 -j RETURN: iptables: No chain/target/match "
                 "by that name.")):
        diagnosis = diagnosed([line], "docker")
        assert diagnosis.cause is Cause.docker_iptables_chain_missing
        assert "sudo systemctl restart docker" in diagnosis.fix.text
        assert "downgrade to Docker Engine 28" in diagnosis.fix.text
    assert diagnosed([line], "docker").values["chain"] == "DOCKER"


def test_iptables_refusals_that_are_no_flushed_docker_chain_keep_out_of_the_class():
    neighbours = (
        # docker-library/docker#467: the legacy and nf_tables backends mixed in one host, not a flush.
        ("failed to start daemon: Error initializing network controller: error obtaining controller instance: unable to "
        "add return rule in DOCKER-ISOLATION-STAGE-1 chain:  (iptables failed: iptables --wait -A "
        "DOCKER-ISOLATION-STAGE-1 -j RETURN: iptables v1.8.10 (nf_tables):  RULE_APPEND failed (No such file or "
        "directory): rule in chain DOCKER-ISOLATION-STAGE-1"),
        # zfl9/ss-tproxy#103: another program's own chain.
        ("iptables -t nat -A SSTP_RULE -p tcp -m multiport --dports 1:65535 --syn -j REDIRECT --to-ports 60080: "
        "iptables: No chain/target/match by that name."),
    )
    for line in neighbours:
        diagnosis = diagnose_log([line], context_for("docker", _DEFAULTS, failed=True))
        assert diagnosis is not None and diagnosis.cause is not Cause.docker_iptables_chain_missing


# --- Prometheus's rule files ---------------------------------------------------------------------

def test_a_rule_file_in_the_1x_syntax_is_converted_with_promtool_update_rules():
    # danguita/prometheus-monitoring-stack#5.
    diagnosis = diagnosed([('level=error caller=manager.go:904 component="rule manager" msg="loading groups failed" '
                           'err="/etc/prometheus/alert.rules: yaml: unmarshal errors:\\n  line 2: cannot unmarshal !!str '
                           '`ALERT I...` into rulefmt.RuleGroups"')], "prometheus")
    assert diagnosis.cause is Cause.prometheus_rules_invalid
    assert "`promtool update rules /etc/prometheus/alert.rules`" in diagnosis.fix.text
    assert "`promtool check rules /etc/prometheus/alert.rules`" in diagnosis.fix.text


def test_promtools_yaml_error_on_a_rule_file_names_quoting_and_the_rule_format():
    # RisingStack/example-prometheus-nodejs#6: the YAML error alone, the rule file named above it.
    diagnosis = diagnosed(["promtool test  rules alert.rules", "Unit Testing:  alert.rules", "  FAILED:",
                           "yaml: line 7: mapping values are not allowed in this context"], "prometheus")
    assert diagnosis.cause is Cause.prometheus_rules_invalid
    assert "put the value in quotes" in diagnosis.fix.text and "`groups:`" in diagnosis.fix.text
    assert "`promtool check rules alert.rules`" in diagnosis.fix.text


def test_a_yaml_error_with_no_rule_file_in_sight_is_not_a_rule_files():
    # prometheus.yml's own parse error keeps its class; a YAML error of another program's file is no rule file's.
    config = ('level=error msg="Error loading config (--config.file=/etc/prometheus/prometheus.yml)" err="parsing YAML '
              'file /etc/prometheus/prometheus.yml: yaml: line 30: mapping values are not allowed in this context"')
    assert diagnosed([config], "prometheus").cause is Cause.prometheus_config_invalid
    other = diagnose_log(["yaml: line 7: mapping values are not allowed in this context"], context_for("compose", _DEFAULTS))
    assert other is None or other.cause is not Cause.prometheus_rules_invalid


# --- supervisord's log files ---------------------------------------------------------------------

def test_a_log_path_that_is_a_directory_must_be_a_regular_file():
    # Supervisor/supervisor#1260.
    diagnosis = diagnosed(["Unknown Error making dispatchers for 'taxaihoagent' : EISDIR"], "supervisord")
    assert diagnosis.cause is Cause.supervisor_logfile_unusable
    assert "regular file" in diagnosis.fix.text and "stderr_logfile" in diagnosis.fix.text
    assert diagnosis.values["program"] == "taxaihoagent"


def test_a_log_file_supervisord_may_not_write_names_its_directory_and_user():
    # Supervisor/supervisor#1648's frames, cut to the open() refused.
    lines = ['   File "/usr/lib/python3/dist-packages/supervisor/loggers.py", line 213, in __init__',
             "     FileHandler.__init__(self, filename, mode)",
             "PermissionError: [Errno 13] Permission denied: '/var/log/supervisor/supervisord.log'"]
    diagnosis = diagnosed(lines, "supervisord")
    assert diagnosis.cause is Cause.supervisor_logfile_unusable
    assert "/var/log/supervisor/supervisord.log" in diagnosis.fix.text and "that user can write" in diagnosis.fix.text


def test_a_permission_error_outside_supervisords_loggers_is_not_a_log_file():
    lines = ['  File "/usr/lib/python3/dist-packages/huggingface_hub/file_download.py", line 1, in hf_hub_download',
             "PermissionError: [Errno 13] Permission denied: '/root/.cache/huggingface/hub'"]
    diagnosis = diagnose_log(lines, context_for("vllm", _DEFAULTS))
    assert diagnosis is not None and diagnosis.cause is not Cause.supervisor_logfile_unusable


# --- nginx's resolver ----------------------------------------------------------------------------

def test_a_resolver_that_names_no_address_says_what_it_takes():
    # blacklabelops-legacy/nginx#36: a name where the address belongs.
    diagnosis = diagnosed(['nginx: [emerg] host not found in resolver "run" in /etc/nginx/nginx.conf'], "nginx")
    assert diagnosis.cause is Cause.nginx_resolver_invalid
    assert "IP address of a DNS server" in diagnosis.fix.text and "\"run\" is a name" in diagnosis.fix.text


def test_nginxs_other_name_failures_keep_their_classes():
    assert diagnosed(['nginx: [emerg] host not found in upstream "nofx" in /etc/nginx/conf.d/default.conf:31'],
                     "nginx").cause is Cause.nginx_upstream_host_unknown
    assert diagnosed(['[error] 7#7: *1 no resolver defined to resolve api.example.com'],
                     "nginx").cause is Cause.nginx_no_resolver


# --- Grafana 12's Angular plugins and nvcr.io's login ----------------------------------------------

def test_grafana_12s_validation_error_alone_names_the_plugins_to_remove():
    # stackhpc-kayobe-config#1388: Grafana 12 logs no "Refusing to initialize" line.
    diagnosis = diagnosed([('logger=plugins.validation t=2024-11-27T15:55:24.742127289+02:00 level=error msg="Plugin '
                           'validation failed" pluginId=grafana-piechart-panel error="angular plugins are not supported"')],
                          "grafana")
    assert diagnosis.cause is Cause.grafana_angular_plugin_disabled
    assert "remove the Angular plugins (grafana-piechart-panel)" in diagnosis.fix.text
    assert "Grafana 12 has no such setting" in diagnosis.fix.text


def test_nvcr_asking_for_credentials_leads_with_the_ngc_login():
    lines = ["Error response from daemon: pull access denied for nvcr.io/nvidia/vllm",
             "unauthorized: authentication required"]
    fix = diagnosed(lines, "docker").fix
    assert fix.text.startswith("log in first: `docker login nvcr.io` with the user name `$oauthtoken`")
    # Docker Hub says "unauthorized" for a repository that does not exist too: the name comes first there.
    hub = diagnosed([("Error response from daemon: pull access denied for vllm/vllm-openai-typo, repository does not "
                     "exist or may require 'docker login': denied: requested access to the resource is denied")], "docker")
    assert hub.cause is Cause.image_pull_denied and hub.fix.text.startswith("check the image name and tag")
