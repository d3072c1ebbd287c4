"""Round 34's misses, built by cause: another program's argparse error is not vLLM's refused flag; a certbot
plugin the certbot that ran does not load, a domain's CAA records, Docker's chains refused by nf_tables, Grafana's
unsigned plugin, supervisord's user= as non-root; each beside the neighbours that keep their own class, and read
by the fallback too where the error line states the cause. The lines are real: from tests/data, quoted from the
public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, diagnose_log
from stackctl.diagnosis.diagnose import context_for
from tests.unit.diagnosis.reading import diagnosed, read_by_fallback

_DEFAULTS = parse_stack_config({})


# --- only vLLM's own argparse errors are vLLM's flags ------------------------------------------------------

_CERTBOT_USAGE = [  # hsmade/certbot-dns-transip#16
    "usage: ",
    "  certbot [SUBCOMMAND] [options] [-d DOMAIN] [-d DOMAIN] ...",
    ("certbot: error: unrecognized arguments: --certbot-dns-transip:dns-transip-credentials /etc/letsencrypt/transip.ini "
     "--certbot-dns-transip:dns-transip-propagation-seconds 240"),
]


@pytest.mark.parametrize("service", ["certbot", "vllm", "docker"])
def test_certbots_unrecognized_arguments_are_never_a_vllm_flag_to_remove(service):
    diagnosis = diagnosed(_CERTBOT_USAGE, service)
    assert diagnosis.cause is not Cause.refused_flag
    assert "vllm.extra_args" not in diagnosis.fix.text and diagnosis.fix.key != "vllm.extra_args"


@pytest.mark.parametrize("lines", [
    ["vllm: error: unrecognized arguments: --enable-reasoning"],  # vllm#18538
    ["api_server.py: error: unrecognized arguments: /root/models/Qwen3-8B"],  # vllm#27389
    ["usage: vllm [-h] [-v]", "vllm: error: unrecognized arguments: --temperature 0.8"],  # ramalama#2635
    ["unrecognized arguments: --enable-prompt-tokens-details"],  # deepseek-v4-flash-dspark#17: no program named
])
def test_vllms_own_argparse_errors_stay_refused_flags(lines):
    assert diagnosed(lines, "vllm").cause is Cause.refused_flag


def test_a_bare_unrecognized_arguments_line_is_vllms_only_in_a_vllm_or_container_log():
    line = ["unrecognized arguments: --enable-prompt-tokens-details"]
    assert diagnosed(line, "docker").cause is Cause.refused_flag
    assert diagnosed(line, "prometheus").cause is not Cause.refused_flag


def test_another_programs_invalid_choice_is_not_vllms_refused_choice():
    # vLLM's own (tpu-inference#1136) keeps its class; the same argparse words from another program do not.
    ours = ("vllm bench <bench_type> [options] throughput: error: argument --kv-cache-dtype: invalid choice: 'fp8_5m2' "
            "(choose from auto, bfloat16, fp8, fp8_ds_mla, fp8_e4m3, fp8_e5m2, fp8_inc)")
    assert diagnosed([ours], "vllm").cause is Cause.refused_choice
    theirs = ours.replace("vllm bench <bench_type> [options] throughput", "certbot")
    assert diagnosed([theirs], "certbot").cause is not Cause.refused_choice


# --- a certbot plugin the certbot that ran does not load ------------------------------------------------

_PLUGIN_OPTIONS = (
    "certbot: error: unrecognized arguments: --certbot-dns-cpanel:cpanel-credentials cpanel-credentials.ini",  # cpanel#5
    ("certbot: error: unrecognized arguments: --dns-domeneshop-credentials /path/to/domeneshop.ini "
     "--dns-domeneshop-propagation-seconds 120"),  # certbot-dns-domeneshop#12
)
_ENTRY_POINT = ["PluginEntryPoint#dns-transip does not provide IPluginFactory, skipping",  # certbot-dns-transip#57
                "PluginEntryPoint#certbot-dns-transip:dns-transip does not provide IPluginFactory, skipping"]


@pytest.mark.parametrize("line", _PLUGIN_OPTIONS)
def test_refused_plugin_options_are_a_plugin_installed_for_another_certbot(line):
    diagnosis = diagnosed([line], "certbot")
    assert diagnosis.cause is Cause.certbot_plugin_not_loaded and diagnosis.values["kind"] == "options"
    assert "same environment" in diagnosis.fix.text and "sudo pip3 install" in diagnosis.fix.text
    assert "certbot plugins" in read_by_fallback([line], "certbot").fix.text


def test_cpanels_prefixed_options_name_their_plugin():
    assert diagnosed([_PLUGIN_OPTIONS[0]], "certbot").values["plugin"] == "certbot-dns-cpanel"
    assert diagnosed([_PLUGIN_OPTIONS[1]], "certbot").values["plugin"] == "dns-domeneshop"


def test_a_skipped_entry_point_is_a_certbot_older_than_the_plugin():
    diagnosis = diagnosed(_ENTRY_POINT, "certbot")
    assert diagnosis.cause is Cause.certbot_plugin_not_loaded and diagnosis.values["kind"] == "entry point"
    assert "Upgrade certbot" in diagnosis.fix.text and "1.12.0" in diagnosis.fix.text


def test_certbots_own_option_refused_is_not_a_plugin():
    # A certbot option of its own (no plugin prefix) is not read as a plugin that did not load.
    said = diagnose_log(["certbot: error: unrecognized arguments: --quiett"], context_for("certbot", _DEFAULTS))
    assert said is None or said.cause is not Cause.certbot_plugin_not_loaded


def test_the_nginx_plugin_missing_keeps_its_class():
    line = "The requested nginx plugin does not appear to be installed"  # certbot#6114
    assert diagnosed([line], "certbot").cause is Cause.certbot_nginx_plugin_missing


# --- CAA ------------------------------------------------------------------------------------------------

_CAA = ["Type:   caa", "Detail: While processing CAA for cc2.kvin.wang: CAA record for cc2.kvin.wang prevents issuance"]


def test_caa_refusal_names_letsencrypt_and_the_account_uri():
    diagnosis = diagnosed(_CAA, "certbot")  # dstack-examples#109
    assert diagnosis.cause is Cause.certbot_caa_refused and diagnosis.values["domain"] == "cc2.kvin.wang"
    assert "0 issue \"letsencrypt.org\"" in diagnosis.fix.text and "accounturi" in diagnosis.fix.text
    assert diagnosis.fix.key == "hostname"


def test_a_caa_lookup_that_fails_is_not_a_refusal():
    # Let's Encrypt staging's NXDOMAIN on CAA (boulder#6915) is a DNS failure, not CAA records that refuse.
    line = ("400 urn:ietf:params:acme:error:dns: DNS problem: NXDOMAIN looking up CAA for some.domain - check that a "
            "DNS record exists for this domain")
    said = diagnose_log([line], context_for("certbot", _DEFAULTS))
    assert said is None or said.cause is not Cause.certbot_caa_refused


# --- Docker's chains refused by nf_tables -----------------------------------------------------------------

_CHAIN_ADD = "  iptables v1.8.11 (nf_tables): CHAIN_ADD failed (No such file or directory)"  # kamal#1762
_CHAIN_EXISTS = ("1月 08 07:43:05 localhost dockerd[18260]: Error starting daemon: Error initializing network controller: "
                 "error obtaining controller instance: failed to create FILTER chain DOCKER: iptables failed: iptables "
                 "-t filter -N DOCKER: iptables v1.8.2 (nf_tables): Chain already exists")  # jumpserver#5396


def test_nf_tables_chain_add_failing_is_legacy_iptables_where_dockerd_runs():
    diagnosis = diagnosed([_CHAIN_ADD], "docker")
    assert diagnosis.cause is Cause.docker_nftables_refused and diagnosis.values["kind"] == "backend unusable"
    assert "update-alternatives --set iptables /usr/sbin/iptables-legacy" in diagnosis.fix.text
    assert "iptables-legacy" in read_by_fallback([_CHAIN_ADD], "docker").fix.text


def test_a_chain_already_there_is_stale_rules_and_the_docker0_bridge():
    diagnosis = diagnosed([_CHAIN_EXISTS], "docker")
    assert diagnosis.cause is Cause.docker_nftables_refused and diagnosis.values["chain"] == "DOCKER"
    assert "ip link delete docker0" in diagnosis.fix.text and "restart nftables" in diagnosis.fix.text


def test_neighbours_keep_their_class():
    # A rule's insert failing the same way is a match module missing (docker/for-linux#1521: xt_set).
    insert = ("iptables v1.8.10 (nf_tables):  RULE_INSERT failed (No such file or directory): rule in chain FORWARD")
    assert diagnosed([insert], "docker").cause is not Cause.docker_nftables_refused
    # Docker's warning about a DOCKER-USER chain the user made (moby#46147) is no failure of this class.
    warning = ('time="2023-12-27T01:05:46.780516480+01:00" level=warning msg="Failed to create DOCKER-USER IPV4 chain" '
               'error="iptables failed: iptables -t filter -N DOCKER-USER: iptables: Chain already exists.\\n (exit '
               'status 1)"')
    said = diagnose_log([warning], context_for("docker", _DEFAULTS))
    assert said is None or said.cause is not Cause.docker_nftables_refused


# --- Grafana's unsigned plugin ----------------------------------------------------------------------------

_UNSIGNED = ('t=2020-07-16T16:44:18+0000 lvl=eror msg="Failed to load plugin" logger=plugins error="plugin '
             '\\"vertamedia-clickhouse-datasource\\" is unsigned" pluginPath=/var/lib/grafana/plugins/'
             'vertamedia-clickhouse-datasource/dist')  # clickhouse-grafana#212
_SKIPPED = ('logger=plugins.signature.validation t=2024-07-01T12:10:13.396552752+03:00 level=warn msg="Skipping loading '
            'plugin due to problem with signature" pluginId=mahendrapaipuri-dashboardreporter-app status=unsigned')


@pytest.mark.parametrize(("line", "plugin"), [(_UNSIGNED, "vertamedia-clickhouse-datasource"),
                                              (_SKIPPED, "mahendrapaipuri-dashboardreporter-app")])
def test_an_unsigned_plugin_is_allowed_by_its_id(line, plugin):
    diagnosis = diagnosed([line], "grafana")
    assert diagnosis.cause is Cause.grafana_plugin_unsigned and diagnosis.values["plugin"] == plugin
    assert f"GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS={plugin}" in diagnosis.fix.text
    assert diagnosis.fix.env == "GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS"


def test_the_fallback_reads_an_unsigned_plugin_from_grafanas_error_line():
    # The fallback leads with an error line, never a warning, so only the lvl=eror record is its.
    assert "allow_loading_unsigned_plugins" in read_by_fallback([_UNSIGNED], "grafana").fix.text


def test_grafanas_plugin_download_failure_keeps_its_class():
    line = ('logger=plugin.installer t=2023-11-20T10:01:24.437+00:00 level=error msg="Failed to install plugin" '
            'pluginId=grafana-clock-panel error="Get \\"https://grafana.com/api/plugins/grafana-clock-panel/versions\\": '
            'dial tcp: lookup grafana.com: no such host"')
    assert diagnosed([line], "grafana").cause is not Cause.grafana_plugin_unsigned


# --- supervisord's user= as non-root ----------------------------------------------------------------------

def test_user_root_as_non_root_is_remove_user():
    lines = ["Error: Can't drop privilege as nonroot user", "For help, use /usr/local/bin/supervisord -h"]  # ascender#575
    diagnosis = diagnosed(lines, "supervisord")
    assert diagnosis.cause is Cause.supervisor_user_not_root and "remove user=" in diagnosis.fix.text
    assert "user=root" in read_by_fallback(lines, "supervisord").fix.text


def test_a_programs_user_names_its_uid():
    line = "supervisor: couldn't setuid to 620: Can't drop privilege as nonroot user"  # supervisor#1405
    diagnosis = diagnosed([line], "supervisord")
    assert diagnosis.cause is Cause.supervisor_user_not_root and diagnosis.values["uid"] == "620"
    assert "[program:x]" in diagnosis.fix.text


# --- a Prometheus older than its configuration, vLLM's load format, node-exporter's privileges -------------

def test_a_relabel_config_without_regex_is_a_prometheus_older_than_0_17():
    line = ('time="2016-03-03T19:21:53Z" level=error msg="Couldn\'t load configuration (-config.file=/etc/prometheus/'
            'prometheus.yml): relabel configuration requires a regular expression" source="main.go:208"')  # prometheus#1458
    diagnosis = diagnosed([line], "prometheus")
    assert diagnosis.cause is Cause.prometheus_config_field_newer and diagnosis.fix.key == "images.prometheus"
    assert "0.17.0" in diagnosis.fix.text and "promtool and Prometheus versions" in diagnosis.fix.text
    # Any other error loading the file keeps its class (prometheus#1149: a YAML error).
    other = ("ERRO[843257] Couldn't load configuration (-config.file=prometheus.yml): yaml: line 359: did not find "
             "expected '-' indicator  source=main.go:208")
    assert diagnosed([other], "prometheus").cause is Cause.prometheus_config_invalid


def test_no_weights_of_the_loaded_format_is_the_load_format_flag():
    line = ("RuntimeError: Cannot find any model weights with `/home/huggingface_models/models--lmsys--vicuna-13b-v1.5/"
            "snapshots/3deb0106f72a3a433f0c6ea0cb978bdf14bcd3a6`")  # vllm#3329
    diagnosis = diagnosed([line], "vllm")
    assert diagnosis.cause is Cause.model_weights_not_found and diagnosis.fix.flag == "--load-format"
    assert "remove --load-format" in diagnosis.fix.text and ".safetensors files" in diagnosis.fix.text


def test_a_safetensors_file_cut_short_keeps_its_class():
    line = "safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer"  # Qwen3-VL#264
    assert diagnosed([line], "vllm").cause is Cause.model_weights_corrupt


def test_apparmors_ptrace_denial_is_the_exporter_unconfined():
    line = ('audit: type=1400 audit(1769757582.095:122939): apparmor="DENIED" operation="ptrace" class="ptrace" '
            'profile="cri-containerd.apparmor.d" pid=3673482 comm="node_exporter" requested_mask="read" '
            'denied_mask="read" peer="unconfined"')  # atmosphere#3493
    diagnosis = diagnosed([line], "node-exporter")
    assert diagnosis.cause is Cause.apparmor_ptrace_denied and diagnosis.values["profile"] == "cri-containerd.apparmor.d"
    assert "apparmor:unconfined" in diagnosis.fix.text and "AppArmor profile" in diagnosis.fix.text


def test_systemds_private_socket_needs_root():
    lines = [("Jan 30 20:07:25 xenial systemd[1]: Incoming private connection from unprivileged client, refusing: "
             "Operation not permitted"),
             ('Jan 30 20:07:25 xenial prometheus-node-exporter[2047]: time="2019-01-30T20:07:25Z" level=error '
              'msg="ERROR: systemd collector failed after 0.000298s: couldn\'t get units: couldn\'t get dbus '
              'connection: read unix @->/run/systemd/private: read: connection reset by peer" source="collector.go:132"')]
    diagnosis = diagnosed(lines, "node-exporter")  # node_exporter#1246
    assert diagnosis.cause is Cause.systemd_private_socket_refused
    assert "run node_exporter as root" in diagnosis.fix.text and "--no-collector.systemd" in diagnosis.fix.text
    # Each side alone says it: the collector's line is the one a node-exporter log holds.
    assert diagnosed(lines[1:], "node-exporter").cause is Cause.systemd_private_socket_refused


def test_no_systemd_at_all_is_not_a_socket_that_needs_root():
    # stackctl's own native stack in a container (Debian's node-exporter, as root, no systemd running): the
    # socket is missing, not refusing; nothing here needs root.
    missing = ('ts=2026-11-25T01:00:21.692Z caller=collector.go:169 level=error msg="collector failed" name=systemd '
               'duration_seconds=8.1401e-05 err="couldn\'t get dbus connection: dial unix /run/systemd/private: '
               'connect: no such file or directory"')
    assert diagnosed([missing], "node-exporter").cause is not Cause.systemd_private_socket_refused
