"""Round 39's misses, built by cause: Let's Encrypt's limits told apart by their words (failed validations reset
within the hour), certbot's standalone server refused port 443 by the tls-sni-01 challenge it performs, a
container's entrypoint without its execute bit, a client refused while the model server still loads, a DCGM
client without its host engine, Grafana's Bad Gateway for a datasource, nginx's certificate path that is the
host's and not the container's, nginx's second upstream block of one name, and the sampler's warm-up OOM in the
flag's own words; each beside the neighbours that keep their own reading, and read by the fallback too where
the error line states the cause. The lines are real: quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, Severity
from stackctl.diagnosis.nginx_upstream_blocks import duplicate_upstream_fix
from tests.unit.diagnosis.reading import diagnosed, read_by_fallback

_FAILED_VALIDATIONS = [
    # community.letsencrypt.org 81207 (round 39), elabftw#3183
    ("There were too many requests of a given type :: Error creating new order :: too many failed authorizations "
     "recently: see"),
    ("There were too many requests of a given type :: Error creating new order :: too many failed authorizations "
     "recently: see https://letsencrypt.org/docs/rate-limits/"),
    # acme.sh#1355 (its new-authz in ACME v1), acme-dns-certbot-joohoi#30 (certbot's debug log)
    ('[Tue Mar 13 02:50:52 UTC 2018] new-authz error: {"type":"urn:acme:error:rateLimited","detail":"Error creating '
     'new authz :: too many failed authorizations recently: see https://letsencrypt.org/docs/rate-limits/","status": '
     '429}'),
    ('  "detail": "Error creating new order :: too many failed authorizations recently: see https://letsencrypt.org/'
     'docs/failed-validation-limit/",'),
]


@pytest.mark.parametrize("line", _FAILED_VALIDATIONS)
def test_the_failed_validation_limit_resets_within_the_hour(line):
    diagnosis = diagnosed([line], "certbot")
    assert diagnosis.cause is Cause.certbot_rate_limited and diagnosis.values["limit"] == "failed validations"
    assert diagnosis.fix.key == "letsencrypt_dir"
    for said in ("per hour", "wait an hour", "--staging", "fix what failed the challenge first"):
        assert said in diagnosis.fix.text
    assert "week" not in diagnosis.fix.text
    fallback = read_by_fallback([line], "certbot", failed=True)
    assert "wait an hour" in fallback.fix.text and "within a week" not in fallback.fix.text


@pytest.mark.parametrize(("line", "said"), [
    # The Duplicate Certificate limit with its retry time (test_general_remedies), and the registered domain's
    # (sslip.io, service_failures): a week's limits keep their reading.
    (("acme.messages.Error: urn:ietf:params:acme:error:rateLimited :: There were too many requests of a given type :: "
      "too many certificates (5) already issued for this exact set of domains in the last 168h0m0s, retry after "
      "2024-10-20 03:25:33 UTC: see https://letsencrypt.org/docs/rate-limits/#new-certificates-per-exact-set-of-"
      "hostnames"), "retry after 2024-10-20 03:25:33 UTC"),
    (("There were too many requests of a given type :: Error creating new cert :: too many certificates already issued "
      "for: sslip.io: see https://letsencrypt.org/docs/rate-limits/"), "within a week"),
])
def test_the_weekly_certificate_limits_keep_their_reading(line, said):
    diagnosis = diagnosed([line], "certbot")
    assert diagnosis.cause is Cause.certbot_rate_limited and said in diagnosis.fix.text
    assert "per hour" not in diagnosis.fix.text


_TLS_SNI_RENEWAL = [  # certbot#6527 (round 39): a standalone renewal repeating tls-sni-01 binds 443
    "2018-11-21 11:52:47,095:INFO:certbot.auth_handler:Performing the following challenges:",
    "2018-11-21 11:52:47,096:INFO:certbot.auth_handler:tls-sni-01 challenge for krsaar.live.promato.de",
    "2018-11-21 11:52:47,098:DEBUG:acme.standalone:Failed to bind to :443 using IPv6",
    "2018-11-21 11:52:47,098:DEBUG:acme.standalone:Failed to bind to :443 using IPv4",
    "2018-11-21 11:52:47,099:DEBUG:certbot.error_handler:Encountered exception:",
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3/dist-packages/acme/standalone.py", line 147, in __init__',
    "    BaseDualNetworkedServers.__init__(self, TLSSNI01Server, *args, **kwargs)",
    '  File "/usr/lib/python3/dist-packages/acme/standalone.py", line 108, in __init__',
    '    raise socket.error("Could not bind to IPv4 or IPv6.")',
    "OSError: Could not bind to IPv4 or IPv6.",
]
# jmutai/tomcat-letsencrypt#2: the same renewal in certbot-auto's own words.
_TLS_SNI_SUMMARY = [
    "> Performing the following challenges:",
    "> tls-sni-01 challenge for mydomain.org",
    "> Cleaning up challenges",
    ("> **Attempting to renew cert (mydomain.org) from /etc/letsencrypt/renewal/mydomain.org.conf produced an unexpected "
     "error: Problem binding to port 443: Could not bind to IPv4 or IPv6.. Skipping."),
]


@pytest.mark.parametrize("lines", [_TLS_SNI_RENEWAL, _TLS_SNI_SUMMARY])
def test_a_standalone_renewal_on_tls_sni_binds_443_and_moves_to_http_01(lines):
    diagnosis = diagnosed(lines, "certbot")
    assert diagnosis.cause is Cause.certbot_port_80_busy and diagnosis.values["port"] == 443
    assert diagnosis.fix.key == "ports.https"
    for said in ("--preferred-challenges http", "pref_challs = http-01,", "tls-sni-01"):
        assert said in diagnosis.fix.text


def test_the_fallback_reads_tls_sni_from_the_standalone_servers_traceback():
    # Its frames name TLSSNI01Server; certbot-auto's summary line alone does not say which challenge.
    assert "pref_challs = http-01," in read_by_fallback(_TLS_SNI_RENEWAL, "certbot", failed=True).fix.text


def test_a_port_80_bind_failure_of_http_01_keeps_its_reading():
    # letsencrypt-wildfly#1 (round 8): http-01 binds port 80; no challenge to change.
    diagnosis = diagnosed(["Problem binding to port 80: Could not bind to IPv4 or IPv6."], "certbot")
    assert diagnosis.cause is Cause.certbot_port_80_busy and diagnosis.values["port"] == 80
    assert "pref_challs" not in diagnosis.fix.text and "--webroot" in diagnosis.fix.text


@pytest.mark.parametrize(("line", "path"), [
    # trakydeng.ca (round 39), docker-ocserv#52, odoo/docker#177 (escaped inside the older runc message)
    (('ERROR: Cannot start service xxxxx: failed to create task for container: failed to create shim task: OCI runtime '
      'create failed: runc create failed: unable to start container process: exec: "/docker-entrypoint.sh": permission '
      'denied: unknown.'), "/docker-entrypoint.sh"),
    (('docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime '
      'create failed: runc create failed: unable to start container process: exec: "/entrypoint.sh": permission '
      'denied: unknown.'), "/entrypoint.sh"),
    (('docker: Error response from daemon: OCI runtime create failed: container_linux.go:296: starting container '
      'process caused "exec: \\"/entrypoint.sh\\": permission denied": unknown.'), "/entrypoint.sh"),
    # appleboy/scp-action#164: newer runc, unquoted
    (("docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: "
      "unable to start container process: exec /bin/entrypoint.sh: permission denied: unknown."), "/bin/entrypoint.sh"),
])
def test_an_entrypoint_the_runtime_may_not_execute_lacks_its_execute_bit(line, path):
    diagnosis = diagnosed([line], "docker")
    assert diagnosis.cause is Cause.entrypoint_not_executable and diagnosis.values["path"] == path
    for said in (f"chmod +x {path}", f"RUN chmod +x {path}", "noexec", "chown does not help"):
        assert said in diagnosis.fix.text


@pytest.mark.parametrize(("line", "cause"), [
    # An image for another CPU (service_failures) and a program not in the image (nvidia-docker): their own classes.
    ("exec /docker-entrypoint.sh: exec format error", Cause.wrong_architecture),
    (('docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime '
      'create failed: runc create failed: unable to start container process: exec: "nvidia-smi": executable file not '
      'found in $PATH: unknown.'), Cause.container_runtime_missing),
])
def test_the_entrypoints_neighbours_keep_their_class(line, cause):
    assert diagnosed([line], "docker").cause is cause


_NOT_READY = ("Send Result: {'run_id': '71d6c236-fe7a-961f-9548-120375ac8377', 'result': {'error': "
              "\"HTTPConnectionPool(host='127.0.0.1', port=5000): Max retries exceeded with url: /v1/models (Caused by "
              "NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7fc7730c5490>: Failed to establish a "
              "new connection: [Errno 111] Connection refused'))\"}, 'run_time_ms': 7026.292324066162}")


def test_a_client_refused_at_the_model_servers_route_waits_for_it_to_load():
    # CerebriumAI/examples#39 (round 39): the example now polls /v1/models until it answers.
    diagnosis = diagnosed([_NOT_READY], "filter-proxy")
    assert diagnosis.cause is Cause.engine_not_ready
    assert (diagnosis.values["port"], diagnosis.values["path"]) == (5000, "/v1/models")
    for said in ("still loading", "poll until GET /health", "stackctl status", "ss -ltnp"):
        assert said in diagnosis.fix.text
    assert "still loading" in read_by_fallback([_NOT_READY], "filter-proxy", failed=True).fix.text


def test_a_refusal_at_another_route_keeps_its_reading():
    # acon96/home-llm#79: Ollama's own route, where nothing listened; not a model server's OpenAI route.
    line = ("> Sorry, there was a problem talking to the backend: HTTPConnectionPool(host='192.168.11.57', port=11434): "
            "Max retries exceeded with url: /api/generate (Caused by NewConnectionError('<urllib3.connection."
            "HTTPConnection object at 0x8ab31990>: Failed to establish a new connection: [Errno 111] Connection "
            "refused'))")
    diagnosis = diagnosed([line], "filter-proxy")
    assert diagnosis.cause is not Cause.engine_not_ready and "still loading" not in diagnosis.fix.text


@pytest.mark.parametrize("lines", [
    ["Error: Unable to connect to host engine. Host engine connection invalid/disconnected."],  # DCGM#43 (round 39)
    ['"Error: unable to establish a connection to the specified host: localhost"',  # DCGM#57
     '"Error: Unable to connect to host engine. Host engine connection invalid/disconnected."'],
    ["ERROR     : dcgm_sampler dcgmConnect() failed: Host engine connection invalid/disconnected(-21)"],  # ldms#1636
])
def test_a_dcgm_client_without_its_host_engine(lines):
    diagnosis = diagnosed(lines, "gpu-exporter")
    assert diagnosis.cause is Cause.dcgm_hostengine_unreachable and diagnosis.fix.key == "images.gpu-exporter"
    for said in ("nvidia-smi", "no NVIDIA GPU", "g4ad", "systemctl --now enable nvidia-dcgm", "embedded"):
        assert said in diagnosis.fix.text
    assert "nv-hostengine" in read_by_fallback(lines, "gpu-exporter", failed=True).fix.text


def test_dcgm_without_sys_admin_keeps_its_class():
    # dcgm-exporter's embedded engine without CAP_SYS_ADMIN (service_failures): its engine runs, as non-root.
    line = "FATA[0000] Failed to watch metrics: Error watching fields: Host engine is running as non-root."
    assert diagnosed([line], "gpu-exporter").cause is Cause.gpu_exporter_needs_sys_admin


@pytest.mark.parametrize("line", [
    "HTTP Error Bad Gateway",  # tutorials#90 (round 39), dockprom#213
    "HTTP Error - Bad Gateway",  # vegasbrianc/prometheus#28, older Grafana
])
def test_grafanas_bad_gateway_is_the_datasource_url_as_grafana_sees_it(line):
    diagnosis = diagnosed([line], "grafana")
    assert diagnosis.cause is Cause.grafana_datasource_unreachable and diagnosis.severity is Severity.advisory
    assert diagnosis.fix.key == "ports.prometheus"
    for said in ("datasource URL", "http://localhost:9090", "http://prometheus:9090", "host network"):
        assert said in diagnosis.fix.text
    assert "datasource URL" in read_by_fallback([line], "grafana", failed=True).fix.text


def test_a_clients_http_502_is_not_grafanas_datasource():
    # Python's urllib relaying some server's 502.
    diagnosis = diagnosed(["urllib.error.HTTPError: HTTP Error 502: Bad Gateway"], "filter-proxy")
    assert diagnosis.cause is not Cause.grafana_datasource_unreachable


def test_a_certificate_path_under_another_root_is_the_containers_mount():
    # hardware/mailserver#112 (round 39): certbot's live/ directory mounted under /etc/nginx/conf/certs.
    line = ("2017/05/16 14:35:54 [emerg] 9#9: BIO_new_file(\"/etc/nginx/conf/certs/live/mail.ledomaine.fr/key.pem\") "
            "failed (SSL: error:02000002:system library:OPENSSL_internal:No such file or directory:fopen('/etc/nginx/conf"
            "/certs/live/mail.ledomaine.fr/key.pem','r') error:1100006e:BIO routines:OPENSSL_internal:NO_SUCH_FILE)")
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_certificate_missing and diagnosis.fix.key == "letsencrypt_dir"
    for said in ("inside the container", "mount point", "-v HOST:CONTAINER", "/etc/nginx/conf/certs"):
        assert said in diagnosis.fix.text
    assert "inside the container" in read_by_fallback([line], "nginx", failed=True).fix.text


@pytest.mark.parametrize("line", [
    # landchad#121 (round 8): certbot's own directory, the certificate not issued; overleaf-toolkit#361 (round 10).
    ("nginx: [emerg] BIO_new_file(\"/etc/letsencrypt/live/example.org/cert.pem\") failed (SSL: error:02001002:system "
     "library:fopen:No such file or directory:fopen('/etc/letsencrypt/live/example.org/cert.pem','r') error:2006D080:BIO "
     "routines:BIO_new_file:no such file)"),
    ("nginx       | nginx: [emerg] cannot load certificate \"/certs/overleaf_certificate.pem\": BIO_new_file() failed "
     "(SSL: error:02001002:system library:fopen:No such file or directory:fopen('/certs/overleaf_certificate.pem','r') "
     "error:2006D080:BIO routines:BIO_new_file:no such file)"),
])
def test_a_certificate_not_issued_keeps_its_reading(line):
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_certificate_missing and "sudo certbot certificates" in diagnosis.fix.text
    assert "-v HOST:CONTAINER" not in diagnosis.fix.text


@pytest.mark.parametrize(("line", "name"), [
    # ngx_http_google_filter_module#61 (round 39), capistrano-3-rails-template#29, bunkerweb#466 (its typo kept)
    ("Stoping nginx... nginx: [emerg] duplicate upstream \"google\" in /usr/local/nginx/conf/vhost/gg.0l0.pw.conf:9",
     "google"),
    ("nginx: [emerg] duplicate upstream \"unicorn_iso_production\" in /etc/nginx/sites-enabled/nginx.conf:1",
     "unicorn_iso_production"),
    ("mybunker_1 | nginx: [emerge] duplicate upstream \"app\" in /etc/bunkerweb/configs/http/upstream.conf.conf:2", "app"),
])
def test_a_second_upstream_block_of_one_name(line, name):
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_duplicate_upstream and diagnosis.values["upstream"] == name
    for said in ("rename the upstream", "different upstream name", "include the file that defines it once",
                 f"upstream {name}"):
        assert said in diagnosis.fix.text
    assert diagnosis.fix.key is None


def test_the_fallback_reads_a_duplicate_upstream_in_nginxs_words():
    # capistrano-3-rails-template#29 (bunkerweb's "[emerge]" is no level the fallback knows).
    line = "nginx: [emerg] duplicate upstream \"unicorn_iso_production\" in /etc/nginx/sites-enabled/nginx.conf:1"
    assert "rename the upstream" in read_by_fallback([line], "nginx", failed=True).fix.text


def test_stackctls_own_upstream_twice_is_two_stackctl_sites():
    text = duplicate_upstream_fix("stackctl_filter_proxy_4000", "/etc/nginx/conf.d/stackctl-site.conf")
    assert "two stackctl sites" in text and "ports.proxy" in text


@pytest.mark.parametrize(("line", "cause"), [
    ("nginx: [emerg] duplicate listen options for 0.0.0.0:443 in /usr/local/nginx/conf/nginx.conf:155",
     Cause.nginx_duplicate_listen),  # service_failures
])
def test_nginxs_other_duplicates_keep_their_class(line, cause):
    assert diagnosed([line], "nginx").cause is cause


def test_the_sampler_warmup_oom_names_the_flag_below_1():
    # vllm#17939 (round 39): --gpu-memory-utilization 1; the fix in the flag's own words.
    line = ("(VllmWorker rank=0 pid=2445155) ERROR 05-10 16:00:15 [multiproc_executor.py:470] RuntimeError: CUDA out of "
            "memory occurred when warming up sampler with 256 dummy requests. Please try lowering `max_num_seqs` or "
            "`gpu_memory_utilization` when initializing the engine.")
    diagnosis = diagnosed([line], "vllm")
    assert diagnosis.cause is Cause.sampler_warmup_oom and diagnosis.fix.flag == "--max-num-seqs"
    for said in ("--gpu-memory-utilization below 1", "0.9", "vllm.gpu_memory_utilization", "--max-num-seqs"):
        assert said in diagnosis.fix.text
