"""Round 40's misses, built by cause: a container name another container holds, a healthcheck running a command its
image lacks, a certificate file whose PEM blocks do not decode (text outside the markers), an upstream's too large
headers read by the upstream's module (FastCGI, uwsgi), samples Prometheus drops for their timestamps, a
scrape_config_files file without its `scrape_configs:` key, and the HTTP-01 challenge answered by a cache or proxy in
front of nginx; each beside the neighbours that keep their own reading. The lines are real: quoted from the public
report named beside them."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, DiagnosisContext, Severity, diagnose_log
from stackctl.diagnosis.docker_name_conflicts import name_taken_fix, stackctl_service
from tests.unit.diagnosis.reading import diagnosed
from tests.unit.diagnosis.real_logs import DATA, read_headers

ROUND40 = DATA / "heldout_round40"


def _round40(stem: str) -> list[str]:
    _headers, lines = read_headers(ROUND40 / f"{stem}.log")
    return lines


# --- a container name another container holds ------------------------------------------------------------------

@pytest.mark.parametrize(("line", "name", "container"), [
    # docker.kitematic#3737 (Docker Toolbox's client, today's wording).
    (_round40("docker_container_name_conflict__docker.kitematic-issue-3737")[0], "composer-playground",
     "79aae4ff070ef1208e4857cd50c9468461269df07faf7694099edbe3aa7351a7"),
    # yongjhih/docker-parse-server#32: Compose 1 before Docker 1.13 ("The name", the id unquoted).
    (('ERROR: for git  Conflict. The name "/katopz_git_1" is already in use by container '
     "408a1f842001b60eb64e0e8e3408dd57588bab8ebbe6570a02675a84029b157c. You have to remove (or rename) that container "
     "to be able to reuse that name."), "katopz_git_1", "408a1f842001b60eb64e0e8e3408dd57588bab8ebbe6570a02675a84029b157c"),
    # sameersbn/docker-gitlab#95: before Docker 1.5, the id redacted.
    (("'Error response from daemon: Conflict, The name gitlab is already assigned to xxxxxxxxx. You have to delete (or "
     "rename) that container to be able to assign gitlab to a container again.'"), "gitlab", None),
])
def test_a_name_another_container_holds_is_freed_by_removing_the_old_container(line, name, container):
    diagnosis = diagnosed([line], "docker")
    assert diagnosis.cause is Cause.docker_container_name_conflict and diagnosis.severity is Severity.fatal
    assert diagnosis.values["name"] == name and diagnosis.values.get("container") == container
    for said in (f"docker rm {name}", "docker container prune", "docker compose down", f"docker rename {name}"):
        assert said in diagnosis.fix.text


def test_stackctls_own_container_name_points_at_the_project_key():
    assert stackctl_service("stackctl-vllm-1") == "vllm"
    assert stackctl_service("lab_prometheus_1") == "prometheus"  # Compose 1's separator
    assert stackctl_service("katopz_git_1") is None and stackctl_service("composer-playground") is None
    own = name_taken_fix("stackctl-grafana-1", None)
    assert "stackctl gives its grafana service" in own and "`stackctl down` in that stack" in own
    assert "another program's container" in name_taken_fix("database", "746674f120fa")
    # docker/for-mac#3882's refusal with one of stackctl's container names in place of the reporter's (adapted).
    line = ("ERROR: for control-center  Cannot create container for service control-center: Conflict. The container name "
            "\"/stackctl-grafana-1\" is already in use by container \"da0f38dca271a224fc4df9643fd7630d7cea9f5f8011aec611a42d619c1"
            "c3aa1\". You have to remove (or rename) that container to be able to reuse that name.")
    assert diagnosed([line], "docker").fix.key == "project"


@pytest.mark.parametrize("line", [
    # maxandersen/internet-monitoring#13: a published port that is taken.
    ("ERROR: for internet-monitoring_prometheus_1  Cannot start service prometheus: driver failed programming external "
     "connectivity on endpoint internet-monitoring_prometheus_1 (168c33d054b9eab138038538c19dbc5a31047fd7edc821a436a3304"
     "7a7d7057f): Bind for 0.0.0.0:9090 failed: port is already allocated"),
    # moby#23371: a removal still under way, before the conflict it leads to.
    "\tError response from daemon: removal of container mongodb is already in progress",
])
def test_other_things_already_in_use_are_no_name_conflict(line):
    diagnosis = diagnose_log([line], DiagnosisContext(service="docker"))
    assert diagnosis is None or diagnosis.cause is not Cause.docker_container_name_conflict


# --- a healthcheck running a command its image lacks -------------------------------------------------------------

@pytest.mark.parametrize("lines", [
    # DanielWinks/pwrstat_docker#9: the reason wrapped onto the next line of the paste.
    _round40("docker_healthcheck_curl_missing_in_image__pwrstat_docker-issue-9"),
    # chrisns/docker-node-sonos-http-api#22: a shell-form check, as json_pp prints `docker inspect`.
    ['   "FailingStreak" : 4,', '   "Log" : [', "      {", '         "Output" : "/bin/sh: curl: not found\\n",'],
    # BerriAI/litellm#9479: runc's refusal alone.
    [('OCI runtime exec failed: exec failed: unable to start container process: exec: "curl": executable file not found '
     "in $PATH: unknown")],
])
def test_a_healthcheck_command_the_image_lacks_is_installed_or_replaced(lines):
    diagnosis = diagnosed(lines, "docker")
    assert diagnosis.cause is Cause.docker_healthcheck_command_missing and diagnosis.values == {"command": "curl"}
    for said in ("healthcheck runs `curl`", "apt-get install -y --no-install-recommends curl", "apk add --no-cache curl",
                 "wget -q --spider", "stackctl renders no Docker healthcheck"):
        assert said in diagnosis.fix.text


@pytest.mark.parametrize(("line", "cause"), [
    # google-deepmind/alphafold#374: nvidia-smi missing as the container's own command is the runtime's failure.
    (('docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container process '
     'caused: exec: "nvidia-smi": executable file not found in $PATH: unknown.'), Cause.container_runtime_missing),
    # NVIDIA/nvidia-docker#600: a container's own command (create, not exec) is no healthcheck.
    (('docker: Error response from daemon: OCI runtime create failed: container_linux.go:296: starting container process '
     'caused "exec: \\"sh\\": executable file not found in $PATH": unknown.'), None),
])
def test_a_containers_own_command_is_no_healthcheck(line, cause):
    diagnosis = diagnose_log([line], DiagnosisContext(service="docker"))
    assert diagnosis is None or diagnosis.cause is not Cause.docker_healthcheck_command_missing
    if cause is not None:
        assert diagnosis is not None and diagnosis.cause is cause


# --- a certificate file whose PEM blocks do not decode ----------------------------------------------------------

def test_a_certificate_with_text_beside_its_blocks_keeps_only_the_pem_blocks():
    # guardian/frontend#2560: a line of text after the blocks.
    diagnosis = diagnosed(_round40("nginx_cert_file_trailing_text_wrong_tag__frontend-pr-2560"), "nginx")
    assert diagnosis.cause is Cause.nginx_certificate_invalid and diagnosis.fix.key == "letsencrypt_dir"
    assert diagnosis.values == {"path": "/usr/local/etc/nginx/frontend.crt"}
    for said in ("extra text", "trailing text after an -----END CERTIFICATE----- line",
                 "openssl x509 -in /usr/local/etc/nginx/frontend.crt -noout", "nginx -t"):
        assert said in diagnosis.fix.text


def test_an_empty_certificate_keeps_its_own_reading():
    # nginx-le/nginx-le#21: "no start line" (a directory given for the file) is not text beside the blocks.
    _headers, lines = read_headers(DATA / "service_failures" / "nginx_certificate_invalid__nginx-le-issue-21.log")
    diagnosis = diagnosed(lines, "nginx")
    assert diagnosis.cause is Cause.nginx_certificate_invalid and "empty certificate file" in diagnosis.fix.text
    assert "extra text" not in diagnosis.fix.text


# --- an upstream's too large headers, by the upstream's module ---------------------------------------------------

def test_a_fastcgi_upstreams_headers_raise_fastcgi_buffers():
    # Varying-Vagrant-Vagrants/VVV#135.
    line = ('2013/08/23 13:58:52 [error] 18860#0: *1 upstream sent too big header while reading response header from '
            'upstream, client: 192.168.50.1, server: local.pencil.dev, request: "GET /wp-admin/admin-ajax.php HTTP/1.1", '
            'upstream: "fastcgi://unix:/var/run/php5-fpm.sock:"')
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_header_too_big and diagnosis.severity is Severity.advisory
    assert "fastcgi_buffer_size 32k; fastcgi_buffers 8 32k;" in diagnosis.fix.text
    assert "not proxy_buffer_size" in diagnosis.fix.text


def test_a_uwsgi_upstreams_headers_raise_uwsgi_buffers():
    # webcompat/webcompat.com#1009.
    _headers, lines = read_headers(DATA / "heldout_round30" / "nginx_upstream_header_too_big__webcompat-issue-1009.log")
    text = diagnosed(lines, "nginx").fix.text
    assert "uwsgi_buffer_size 32k; uwsgi_buffers 8 32k;" in text and "fastcgi" not in text


def test_a_line_without_its_upstream_names_each_modules_buffer():
    # ewanleith/Wordpress-Server-Configuration-Files#2: the bare line.
    text = diagnosed(_round40("nginx_too_big_header_fastcgi_wordpress__Wordpress-Server-Configuration-Files-pr-2"),
                     "nginx").fix.text
    for said in ("proxy_buffer_size", "fastcgi_buffer_size and fastcgi_buffers", "uwsgi_buffer_size"):
        assert said in text


def test_an_http_upstreams_headers_keep_proxy_buffers():
    # deis/router#293.
    line = ('2016/11/29 18:10:10 [error] 64#0: *59606 upstream sent too big header while reading response header from '
            'upstream, client: 100.96.2.1, server: ~^subdomain\\.(?<domain>.+)$, request: "GET / HTTP/1.1", upstream: '
            '"http://101.69.46.220:80/", host: "subdomain.example.com"')
    text = diagnosed([line], "nginx").fix.text
    assert text.startswith("raise proxy_buffer_size") and "fastcgi" not in text


# --- samples Prometheus drops for their timestamps ---------------------------------------------------------------

def test_samples_with_the_exporters_own_old_timestamps_drop_them_or_widen_the_window():
    # thegreenwebfoundation/grid-intensity-go#86: hourly data behind a ServiceMonitor.
    diagnosis = diagnosed(_round40("prometheus_samples_too_old_exporter_timestamps__grid-intensity-go-issue-86"),
                          "prometheus")
    assert diagnosis.cause is Cause.prometheus_samples_out_of_bounds and diagnosis.severity is Severity.advisory
    assert diagnosis.values == {"job": "serviceMonitor/prometheus/grid-intensity-exporter/0",
                                "target": "http://10.0.2.142:8000/metrics", "dropped": 1}
    for said in ("`honor_timestamps: false` in the scrape job serviceMonitor/prometheus/grid-intensity-exporter/0",
                 "out_of_order_time_window", "outOfOrderTimeWindow", "timedatectl"):
        assert said in diagnosis.fix.text


def test_a_clock_moved_back_reads_the_same_refusal():
    # prometheus#10028: after a reboot's time synchronisation.
    line = ('Dec 16 10:03:09 scalability-test-monit01 prometheus[1436]: ts=2021-12-16T08:03:09.449Z caller=scrape.go:1563 '
            'level=warn component="scrape manager" scrape_pool="Scalability test servers" '
            'target=http://scalability-test-es03:9100/metrics msg="Error on ingesting samples that are too old or are too '
            'far into the future" num_dropped=499')
    diagnosis = diagnosed([line], "prometheus")
    assert diagnosis.cause is Cause.prometheus_samples_out_of_bounds and diagnosis.values["dropped"] == 499
    assert "a clock is off" in diagnosis.fix.text


def test_samples_of_one_timestamp_with_two_values_are_not_out_of_bounds():
    # prometheus#2493: duplicate samples, another refusal.
    line = ('time="2017-03-12T20:17:56Z" level=warning msg="Error on ingesting samples with different value but same '
            'timestamp" numDropped=1084 source="scrape.go:520"')
    diagnosis = diagnose_log([line], DiagnosisContext(service="prometheus"))
    assert diagnosis is None or diagnosis.cause is not Cause.prometheus_samples_out_of_bounds


# --- a scrape_config_files file without its key -----------------------------------------------------------------

def test_a_scrape_config_file_of_bare_jobs_needs_its_scrape_configs_key():
    # siutsin/otaru#2709.
    diagnosis = diagnosed(_round40("prometheus_scrape_config_file_missing_top_key__otaru-pr-2709"), "prometheus")
    assert diagnosis.cause is Cause.prometheus_config_invalid
    for said in ("scrape_config_files", "top-level key", "`scrape_configs:` on its first line", "promtool check config"):
        assert said in diagnosis.fix.text


@pytest.mark.parametrize(("path", "cause"), [
    # grafana/oncall#2326: a list where prometheus.yml's authorization takes fields.
    ("heldout_round2/prometheus_config_invalid__oncall-issue-2326.log", Cause.prometheus_config_invalid),
    # prometheus#3670: a rule file, not a scrape file.
    ("service_failures/prometheus_rules_invalid__prometheus-issue-3670.log", Cause.prometheus_rules_invalid),
])
def test_other_lists_where_fields_belong_keep_their_reading(path, cause):
    _headers, lines = read_headers(DATA / path)
    diagnosis = diagnosed(lines, "prometheus")
    assert diagnosis.cause is cause and "scrape_config_files" not in diagnosis.fix.text


# --- the HTTP-01 challenge answered in front of nginx ------------------------------------------------------------

def test_a_cache_that_forces_https_answering_the_challenge_leads():
    # s55ma.radioamater.si's renewal: Varnish's own 403 page, the site forcing SSL.
    diagnosis = diagnosed(_round40("certbot_http01_403_forced_https_redirect_varnish__s55ma-certbot-renew-permission-"
                                   "denied"), "certbot")
    assert diagnosis.cause is Cause.certbot_challenge_wrong_answer and diagnosis.values["front"] == "Varnish"
    assert diagnosis.fix.text.startswith("Varnish answered the challenge")
    for said in ("redirect to https", "pass that path to nginx", "Where nginx itself answers port 80", "nginx -T"):
        assert said in diagnosis.fix.text


@pytest.mark.parametrize("path", [
    # certbot#6529: nginx's own 404 (a Varnish in front redirecting, said only in the thread).
    "service_failures/certbot_challenge_wrong_answer__certbot-issue-6529.log",
    # wmnnd/nginx-certbot#117: another host's page (a parked domain), no cache named.
    "heldout_round5/certbot_challenge_unreachable__nginx-certbot-issue-117.log",
])
def test_a_page_naming_no_cache_leads_with_nginx_and_names_the_proxy_after(path):
    _headers, lines = read_headers(DATA / path)
    diagnosis = diagnosed(lines, "certbot")
    assert "front" not in diagnosis.values
    assert diagnosis.fix.text.startswith("the port-80 server for hostname")
    for said in ("Varnish, a CDN such as Cloudflare", "\"force SSL\" setting", "DNS record points elsewhere"):
        assert said in diagnosis.fix.text
