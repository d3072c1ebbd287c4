"""Round 41's misses, built by cause: the DNS-01 challenge answered by another TXT record, a Compose file that does
not parse (a web page saved in its place), an image without the `latest` tag a pull asks for, Grafana Live refusing a
browser's origin, nginx's workers out of connections, node-exporter's textfile collector denied a .prom file, and
vLLM's NVML module told apart from a container without the GPU; each beside the neighbours that keep their own
reading. The lines are real: quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, DiagnosisContext, Severity, diagnose_log
from stackctl.diagnosis.grafana_live_origins import default_port_written, refused_origin
from stackctl.diagnosis.nginx_worker_connections import suggested_connections
from stackctl.diagnosis.stated_surroundings import surroundings_stated
from stackctl.diagnosis.vllm_platform_detection import module_evidence
from tests.unit.diagnosis.reading import diagnosed, read_by_fallback
from tests.unit.diagnosis.real_logs import DATA, read_headers

ROUND41 = DATA / "heldout_round41"


def _round41(stem: str) -> list[str]:
    _headers, lines = read_headers(ROUND41 / f"{stem}.log")
    return lines


def _not_read_as(lines: list[str], service: str, cause: Cause) -> None:
    diagnosis = diagnose_log(lines, DiagnosisContext(service=service))
    assert diagnosis is None or diagnosis.cause is not cause, diagnosis


# --- the DNS-01 challenge answered by another TXT record --------------------------------------------------------

def test_a_txt_record_the_order_did_not_write_points_at_the_record_that_answers_instead():
    # helgeerbe/certbot-dns-ionos#8: a wildcard CNAME shadowed the TXT record the plugin wrote.
    diagnosis = diagnosed(_round41("certbot_dns01_wildcard_cname_shadows_txt__certbot-dns-ionos-issue-8"), "certbot")
    assert diagnosis.cause is Cause.certbot_dns_txt_mismatch and diagnosis.severity is Severity.fatal
    assert diagnosis.values["name"] == "_acme-challenge.mcraxford.co.uk"
    text = diagnosis.fix.text
    for said in ("dig +short TXT _acme-challenge.mcraxford.co.uk", "wildcard CNAME", "remove the CNAME",
                 "port 80 and the hostname's A record play no part"):
        assert said in text
    assert diagnosis.fix.key is None  # not the hostname's A record: the HTTP-01 reading's key


def test_a_txt_record_holding_a_host_name_was_meant_as_a_cname():
    # joohoi/acme-dns-certbot-joohoi#22: acme-dns's target written as a TXT value, the CA's line wrapped over three.
    lines = ["   Detail: Incorrect TXT record", '   "hash-hash-hash.auth.acme-dns.io." found at',
             "   _acme-challenge.subdomain.here"]
    diagnosis = diagnosed(lines, "certbot")
    assert diagnosis.cause is Cause.certbot_dns_txt_mismatch
    assert diagnosis.fix.text.startswith("The value found, hash-hash-hash.auth.acme-dns.io., is a host name")


def test_a_second_token_at_one_name_must_stand_beside_the_first():
    # certbot/certbot#7679: NAME and *.NAME in one order; certbot's manual prompt said so.
    lines = ["(This must be set up in addition to the previous challenges; do not remove,",
             "   Detail: Incorrect TXT record", '   "**-q8shkQajDXfUQGfUywK10EEATA74xO9bzSo0DPyny4**" found at',
             "   _acme-challenge.domain.com"]
    diagnosis = diagnosed(lines, "certbot")
    assert diagnosis.values["value"] == "-q8shkQajDXfUQGfUywK10EEATA74xO9bzSo0DPyny4"
    assert "both TXT values must be there at once" in diagnosis.fix.text


@pytest.mark.parametrize("line", [
    # acme-dns/acme-dns-client#12: no record at all, NXDOMAIN for the TXT lookup.
    ("  Detail: DNS problem: NXDOMAIN looking up TXT for _acme-challenge.my-domain.com - check that a DNS record exists "
     "for this domain"),
    # skoerfgen/ACMECert#60: no TXT record found (a CNAME to a zone that did not answer).
    ("[13-Apr-2025 19:20:53 UTC] ACME_Exception: Challenge validation failed: No TXT record found at "
     "_acme-challenge.clientdomain.tld (urn:ietf:params:acme:error:unauthorized)"),
])
def test_a_txt_record_missing_is_no_wrong_one(line):
    _not_read_as([line], "certbot", Cause.certbot_dns_txt_mismatch)


# --- a Compose file that does not parse ---------------------------------------------------------------------------

@pytest.mark.parametrize(("lines", "file", "line"), [
    # Ubiquiti-App/UCRM#2: the compose file's HTML page, saved by wget.
    (_round41("docker_compose_yaml_is_html_page__UCRM-issue-2"), "./docker-compose.yml", 7),
    # deepfence/ThreatMapper#31: fixed by downloading the whole file with wget.
    (['ERROR: yaml.scanner.ScannerError: mapping values are not allowed here', ('  in "././docker-compose.yml", line 119, '
      'column 73')], "././docker-compose.yml", 119),
    # elastic/stack-docker#41: Windows' path, on one line.
    ([('Windows 10 command docker-compose up returns "yaml.scanner.ScannerError: mapping values are not allowed here in '
      '".\\docker-compose.yml", line 509, column 24"')], ".\\docker-compose.yml", 509),
    # guardstrikelab/carla_apollo_bridge#167: a project's own compose file name.
    (["ERROR: yaml.scanner.ScannerError: mapping values are not allowed here", ('  in "./carla-compose.yml", line 7, '
      'column 21')], "./carla-compose.yml", 7),
])
def test_a_compose_file_that_does_not_parse_is_looked_at_first(lines, file, line):
    diagnosis = diagnosed(lines, "docker")
    assert diagnosis.cause is Cause.compose_file_invalid
    assert diagnosis.values["file"] == file and diagnosis.values["line"] == line
    for said in (f"head -n 5 {file}", "<!DOCTYPE html>", "raw.githubusercontent.com", "must be in quotes",
                 "docker compose config"):
        assert said in diagnosis.fix.text


def test_the_fallback_reads_the_compose_file_from_its_place_line():
    fix = read_by_fallback(_round41("docker_compose_yaml_is_html_page__UCRM-issue-2"), "docker", failed=True).fix
    assert fix.text.startswith("the error states its cause: ./docker-compose.yml does not parse as YAML at line 7")
    assert "raw.githubusercontent.com" in fix.text


@pytest.mark.parametrize(("lines", "service"), [
    # swar/Swar-Chia-Plot-Manager#250: another program's YAML file.
    (["yaml.scanner.ScannerError: mapping values are not allowed here",
      '  in "C:\\Users\\Pat\\Desktop\\Swar-Chia-Plot-Manager-main\\config.yaml", line 9, column 8'], "docker"),
    # Prometheus's own YAML parser (go-yaml): its configuration, not a Compose file.
    ([('level=error msg="Error loading config (--config.file=/etc/prometheus/prometheus.yml)" err="parsing YAML file '
      '/etc/prometheus/prometheus.yml: yaml: line 7: did not find expected key"')], "prometheus"),
])
def test_another_programs_yaml_file_is_no_compose_file(lines, service):
    _not_read_as(lines, service, Cause.compose_file_invalid)


# --- an image without the `latest` tag a pull asks for ----------------------------------------------------------------

@pytest.mark.parametrize(("lines", "image"), [
    (_round41("docker_manifest_unknown_no_latest_tag__watermark-remover-issue-18"), "whitelok/watermark-remover"),
    # docker.kitematic#5167 (a maintainer of Docker: "that repository does not have a `:latest` tag").
    (["1.  docker pull gocd/gocd-server", "Using default tag: latest",
      "Error response from daemon: manifest for gocd/gocd-server:latest not found: manifest unknown: manifest unknown"],
     "gocd/gocd-server"),
    # mgm3746/garbagecat#183: podman's words, on ghcr.io.
    (["Trying to pull ghcr.io/mgm3746/garbagecat:latest...",
      ("Error: initializing source docker://ghcr.io/mgm3746/garbagecat:latest: reading manifest latest in "
       "ghcr.io/mgm3746/garbagecat: manifest unknown")], "ghcr.io/mgm3746/garbagecat"),
])
def test_a_repository_without_the_latest_tag_is_pulled_by_a_version_tag(lines, image):
    diagnosis = diagnosed(lines, "docker")
    assert diagnosis.cause is Cause.image_pull_denied and diagnosis.values == {"image": image, "tag": "latest"}
    assert "has no `latest` tag" in diagnosis.fix.text and "specific version tag" in diagnosis.fix.text
    assert f"{image}:TAG" in diagnosis.fix.text


def test_the_tags_page_is_docker_hubs_for_a_hub_repository_only():
    text = diagnosed(_round41("docker_manifest_unknown_no_latest_tag__watermark-remover-issue-18"), "docker").fix.text
    assert "https://hub.docker.com/r/whitelok/watermark-remover/tags" in text
    podman = diagnosed(["reading manifest latest in ghcr.io/mgm3746/garbagecat: manifest unknown"], "docker").fix.text
    assert "hub.docker.com" not in podman and "its registry's page for ghcr.io/mgm3746/garbagecat" in podman


@pytest.mark.parametrize("line", [
    # docker/hub-feedback#1460: a tag other than latest that the repository lacks.
    "Error response from daemon: manifest for aaronngray/bpi-build:default not found",
    # edit-mind#113 (held-out round 4): a repository that does not exist.
    ("get errors during pull: \"pull access denied for edit-mind-web, repository does not exist or may require 'docker "
     "login': denied: requested access to the resource is denied\""),
])
def test_another_missing_tag_or_repository_keeps_the_name_reading(line):
    diagnosis = diagnosed([line], "docker")
    assert diagnosis.cause is Cause.image_pull_denied and "tag" not in diagnosis.values
    assert "has no `latest` tag" not in diagnosis.fix.text


# --- Grafana Live refusing a browser's origin ----------------------------------------------------------------------

def test_root_url_with_its_default_port_is_grafana_8_0s_comparison():
    # grafana/grafana#36822: root_url written with :443, fixed in 8.1.0.
    diagnosis = diagnosed(_round41("grafana_live_ws_origin_443_in_root_url__grafana-issue-36822"), "grafana")
    assert diagnosis.cause is Cause.grafana_live_origin_refused and diagnosis.severity is Severity.advisory
    assert diagnosis.fix.env == "GF_LIVE_ALLOWED_ORIGINS"
    for said in ("`root_url = https://www.zoomsoft.de/grafana/`", "8.1.0", "[live] allowed_origins = https://www.zoomsoft.de"):
        assert said in diagnosis.fix.text


@pytest.mark.parametrize(("line", "origin"), [
    # grafana/grafana#36614: Grafana opened by another name than root_url's (its default, localhost).
    (('t=2021-07-13T21:28:10+0000 lvl=warn msg="Request Origin is not authorized" logger=live '
      "origin=http://grafana.mydomain.io:3000 appUrl=http://localhost:3000/ allowedOrigins="),
     "http://grafana.mydomain.io:3000"),
    # grafana/grafana#36693: root_url's port is not the browser's ("By just removing the root_url it is solved").
    (("WARN[07-12|22:30:57] Request Origin is not authorized         logger=live origin=http://localhost:3000 "
     "appUrl=http://localhost:10080/ allowedOrigins="), "http://localhost:3000"),
])
def test_root_url_that_is_not_the_browsers_address_is_set_to_it_or_the_origin_allowed(line, origin):
    diagnosis = diagnosed([line], "grafana")
    assert diagnosis.cause is Cause.grafana_live_origin_refused and diagnosis.values["origin"] == origin
    assert not default_port_written(refused_origin(line))
    assert "not the address the browser uses" in diagnosis.fix.text
    assert f"allowed_origins = {origin}" in diagnosis.fix.text and "8.1.0" not in diagnosis.fix.text


def test_a_live_websocket_refused_with_another_status_is_no_origin_refusal():
    # grafana/grafana#36614: the request record beside the warning.
    line = ('t=2021-07-13T21:28:10+0000 lvl=info msg="Request Completed" logger=context userId=1 orgId=1 uname=admin '
            "method=GET path=/api/live/ws status=403 remote_addr=RedactedMyIP time_ms=0 size=10 referer=")
    _not_read_as([line], "grafana", Cause.grafana_live_origin_refused)


# --- nginx's workers out of connections -----------------------------------------------------------------------------

def test_workers_out_of_connections_raise_worker_connections_and_the_file_limit():
    diagnosis = diagnosed(_round41("nginx_worker_connections_exhausted__cht-core-issue-2076"), "nginx")
    assert diagnosis.cause is Cause.nginx_worker_connections_exhausted and diagnosis.severity is Severity.fatal
    assert diagnosis.values == {"connections": 1024, "during": "connecting to upstream"}
    for said in ("events { worker_connections 10240; }", "worker_rlimit_nofile 20480;", "keepalive_timeout",
                 "stackctl's native nginx.conf sets worker_connections 1024"):
        assert said in diagnosis.fix.text


def test_a_count_already_large_is_doubled():
    # slact/nchan#346: 8 workers of 32768 each, held by WebSocket subscribers.
    diagnosis = diagnosed(["2017/04/20 19:43:34 [alert] 9808#0: 32768 worker_connections are not enough"], "nginx")
    assert suggested_connections(32768) == 65536 and "worker_connections 65536;" in diagnosis.fix.text


def test_reusing_connections_is_the_warning_before_the_refusal():
    # NginxProxyManager/nginx-proxy-manager#1912: the warning, then the alert.
    warning = "2022/03/05 12:45:07 [warn] 415#415: 1024 worker_connections are not enough, reusing connections"
    alert = "2022/03/05 12:45:07 [alert] 415#415: 1024 worker_connections are not enough"
    assert diagnosed([warning], "nginx").severity is Severity.advisory
    both = diagnosed([warning, alert], "nginx")
    assert both.cause is Cause.nginx_worker_connections_exhausted and both.severity is Severity.fatal


def test_worker_connections_past_the_open_file_limit_is_another_warning():
    # alibaba/tengine#520: the open-file limit below worker_connections, at start.
    _not_read_as(["2014/10/07 03:47:36 [warn] 8360#0: 1024 worker_connections exceed open file resource limit: 256"],
                 "nginx", Cause.nginx_worker_connections_exhausted)


# --- node-exporter's textfile collector denied a .prom file ---------------------------------------------------------

def test_a_prom_file_its_producer_wrote_0600_is_made_world_readable():
    # NethServer/ns8-core#820: the record wrapped before the file's name.
    lines = _round41("node-exporter_textfile_prom_written_0600_unreadable__ns8-core-pr-820")
    diagnosis = diagnosed(lines, "node-exporter")
    assert diagnosis.cause is Cause.node_exporter_textfile_unreadable and diagnosis.severity is Severity.advisory
    assert diagnosis.values["path"] == "/host/run/node_exporter/backup.prom"
    for said in ("chmod 644 /host/run/node_exporter/backup.prom", "umask 022", "os.chmod(path, 0o644)",
                 "tempfile.mkstemp"):
        assert said in diagnosis.fix.text
    # The fallback reads it from the wrapped line's second half (its own permission remedy follows).
    fix = read_by_fallback(lines, "node-exporter", failed=True).fix
    assert fix.text.startswith("the error states its cause: node-exporter's textfile collector may not read")


@pytest.mark.parametrize("line", [
    # prometheus-community/node-exporter-textfile-collector-scripts#205: the directory is not there.
    ('ts=2024-02-11T18:01:53.246Z caller=textfile.go:209 level=error collector=textfile msg="failed to read textfile '
     'collector directory" path=/var/node-exporter err="open /var/node-exporter: no such file or directory"'),
    # lest/prometheus-rpm#2: a kernel file of /proc, which no chmod opens.
    "ERROR: sockstat collector failed after 0.000030s: couldn't get sockstats: open /proc/net/sockstat: permission denied",
])
def test_other_files_node_exporter_cannot_open_are_no_textfile(line):
    _not_read_as([line], "node-exporter", Cause.node_exporter_textfile_unreadable)


# --- vLLM's NVML module, told apart from a container without the GPU ---------------------------------------------------

def test_vllm_inside_another_programs_log_reads_its_nvml_module():
    # ai-dynamo/dynamo#391: `pip install pynvml==12.0.0`, `pip uninstall flash_attn`.
    diagnosis = diagnosed(_round41("vllm_failed_to_infer_device_type_pynvml__dynamo-issue-391"), "vllm")
    assert diagnosis.cause is Cause.nvml_module_unusable
    assert diagnosis.values["shown"] == "vLLM runs inside dynamo_llm's environment"
    for said in ("pip install -U 'pynvml>=12'", "pip uninstall flash_attn", "nvidia-ml-py", "VLLM_LOGGING_LEVEL=DEBUG",
                 "`gpus: all`"):
        assert said in diagnosis.fix.text


@pytest.mark.parametrize(("line", "shown"), [
    # vllm-project/vllm#12947's title: vLLM 0.7.2 ("Upgrading pynvml to 12+ will fix for now").
    ("[Bug]: Using vllm072 to start deepseek-r1-awq generates an error, RuntimeError：Failed to infer device type",
     "vLLM 0.7.1 or 0.7.2 (vllm072)"),
])
def test_what_tells_the_module_apart(line, shown):
    assert module_evidence([line]) == shown


@pytest.mark.parametrize("lines", [
    # vllm-project/vllm#13946 (held-out round 1): a container without the GPU, vLLM's own traceback.
    ['    raise RuntimeError("Failed to infer device type")', "RuntimeError: Failed to infer device type"],
    # vllm-project/vllm#23935: the debug lines name NVML's library missing.
    ["DEBUG 08-29 04:29:54 [__init__.py:82] Exception happens when checking CUDA platform: NVML Shared Library Not Found",
     "INFO 08-29 04:29:54 [__init__.py:245] No platform detected, vLLM is running on UnspecifiedPlatform"],
    # vllm-project/vllm-ascend#130: vLLM's own record of the failure.
    ["INFO 02-23 00:50:03 __init__.py:187] No platform detected, vLLM is running on UnspecifiedPlatform",
     "ERROR 02-23 00:50:05 engine.py:387] Failed to infer device type"],
])
def test_a_container_without_the_gpu_keeps_the_no_gpu_reading(lines):
    diagnosis = diagnosed(lines, "vllm")
    assert diagnosis.cause is Cause.no_gpu and "nvidia-ctk" in diagnosis.fix.text


# --- the readers shared with the fallback's stated causes ---------------------------------------------------------------

@pytest.mark.parametrize(("line", "name"), [
    (_round41("certbot_dns01_wildcard_cname_shadows_txt__certbot-dns-ionos-issue-8")[3],
     "DNS-01 TXT record: _acme-challenge.mcraxford.co.uk"),
    # PyYAML's place line, below its error.
    (_round41("docker_compose_yaml_is_html_page__UCRM-issue-2")[1], "Compose file YAML: ./docker-compose.yml"),
    (_round41("grafana_live_ws_origin_443_in_root_url__grafana-issue-36822")[0],
     "Grafana Live origin: https://www.zoomsoft.de"),
    (_round41("nginx_worker_connections_exhausted__cht-core-issue-2076")[0], "worker_connections 1024"),
    # The wrapped record's second half.
    (_round41("node-exporter_textfile_prom_written_0600_unreadable__ns8-core-pr-820")[1],
     "textfile collector: /host/run/node_exporter/backup.prom"),
    (_round41("vllm_failed_to_infer_device_type_pynvml__dynamo-issue-391")[2], "vLLM's NVML module"),
])
def test_each_reader_is_a_stated_cause_of_the_fallback(line, name):
    assert [cause.name for cause in surroundings_stated(line)] == [name]
