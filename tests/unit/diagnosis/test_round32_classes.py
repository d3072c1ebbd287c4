"""Round 32's misses, built by cause: nginx's "unknown directive" (a directive of a newer nginx apart from
a module's not loaded), Docker refusing a registry's certificate (a TLS-intercepting proxy's for a public
registry apart from a private registry's own CA) and supervisord's configuration it cannot parse; each
beside the neighbours that keep their own class, and read by the fallback too where the error line states
the cause. The lines are real: from tests/data, quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause
from stackctl.diagnosis.diagnose import context_for
from stackctl.diagnosis.fallback import fallback_diagnosis
from stackctl.diagnosis.remedy import named_remedies
from stackctl.diagnosis.stated_classes import classes_stated

_DEFAULTS = parse_stack_config({})


# --- nginx's unknown directive ------------------------------------------------------------------------

_HTTP2_TOO_NEW = (
    'nginx: [emerg] unknown directive "http2" in /etc/nginx/nginx.conf:39',  # Xray-install#7
    "2026/01/07 09:52:03 [emerg] 1380651#1380651: unknown directive \"http2\" in /etc/nginx/sites-enabled/opencloud:19",
)
_MODULE_NOT_LOADED = (
    'nginx: [emerg] unknown directive "more_set_headers" in /etc/nginx/sites-enabled/afterburner.conf:56',  # dotdeb#90
    ("2018/12/14 19:49:41 [emerg] 6238#6238: unknown directive \"more_clear_headers\" in "
     "/etc/nginx/sites-enabled/dashboard.nginx.conf:32"),  # GSA/data.gov#546
)
from tests.unit.diagnosis.reading import diagnosed


@pytest.mark.parametrize("line", _HTTP2_TOO_NEW)
def test_http2_on_is_a_directive_of_nginx_1_25_1_written_the_older_way_before_it(line):
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_directive_too_new and diagnosis.values["since"] == "1.25.1"
    assert "listen 443 ssl http2;" in diagnosis.fix.text and "upgrade nginx" in diagnosis.fix.text
    # stackctl's site writes `listen ... ssl http2`: the directive is from a configuration it did not render.
    assert "did not render" in diagnosis.fix.text


@pytest.mark.parametrize("line", _MODULE_NOT_LOADED)
def test_a_modules_directive_is_its_module_not_loaded_not_a_newer_nginx(line):
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_directive_unknown
    assert "headers-more" in diagnosis.fix.text and "load_module" in diagnosis.fix.text
    assert "1.25.1" not in diagnosis.fix.text


def test_nginx_directive_neighbours_keep_their_class():
    # matomo-nginx#85: the deprecation warning of 1.25.1 and later, the other way round.
    deprecated = ('nginx: [warn] the "listen ... http2" directive is deprecated, use the "http2" directive instead in '
                  "/etc/nginx/sites-enabled/matomo.conf:3")
    assert diagnosed([deprecated], "nginx").cause is Cause.nginx_directive_deprecated
    # open-ethereum-pool#203: a known directive in the wrong block.
    misplaced = 'nginx: [emerg] "location" directive is not allowed here in /etc/nginx/sites-enabled/default:93'
    assert diagnosed([misplaced], "nginx").cause is Cause.nginx_directive_misplaced


def test_the_fallback_reads_the_unknown_directive_by_its_cause_and_names_no_setting_of_it():
    for line in _HTTP2_TOO_NEW:
        (cause,) = classes_stated(line)
        assert "listen 443 ssl http2;" in cause.text
        # An unknown directive is the fault, not a remedy the log names.
        assert named_remedies([line]) == []
    (module,) = classes_stated(_MODULE_NOT_LOADED[0])
    assert "headers-more" in module.text
    diagnosis = fallback_diagnosis([_HTTP2_TOO_NEW[0]], context_for("nginx", _DEFAULTS))
    assert diagnosis is not None and diagnosis.cause is Cause.unrecognised
    assert "listen 443 ssl http2;" in diagnosis.fix.text and "nginx's `http2` setting" not in diagnosis.fix.text


# --- Docker refusing a registry's certificate -----------------------------------------------------------

_PROXIED = (
    "Error response from daemon: Get https://registry-1.docker.io/v2/: x509: certificate signed by unknown authority",
    ("docker: Error while pulling image: Get https://index.docker.io/v1/repositories/library/hello-world/images: x509: "
     "certificate signed by unknown authority."),  # docker/for-win#23
    "Download failed, retrying: x509: certificate signed by unknown authority",  # moby#20912
)
# docker-registry#1008: a registry of the reporter's own, with a self-signed certificate.
_PRIVATE = ("FATA[0004] Error response from daemon: v1 ping attempt failed with error: Get "
            "https://ec2-52-17-207-222.eu-west-1.compute.amazonaws.com:443/v1/_ping: x509: certificate signed by unknown "
            "authority. If this private registry supports only HTTP or HTTPS with an unknown CA certificate, please add "
            "`--insecure-registry ec2-52-17-207-222.eu-west-1.compute.amazonaws.com:443` to the daemon's arguments.")


@pytest.mark.parametrize("line", _PROXIED)
def test_a_public_registrys_refused_chain_is_a_tls_intercepting_proxys_ca(line):
    diagnosis = diagnosed([line], "docker")
    assert diagnosis.cause is Cause.docker_registry_certificate_untrusted and diagnosis.values["signer"] == "proxy"
    assert "TLS-intercepting proxy" in diagnosis.fix.text and "update-ca-certificates" in diagnosis.fix.text
    assert "Never list a public registry in insecure-registries" in diagnosis.fix.text


def test_a_private_registrys_refused_chain_is_its_own_ca_in_certs_d():
    diagnosis = diagnosed([_PRIVATE], "docker")
    assert diagnosis.cause is Cause.docker_registry_certificate_untrusted and diagnosis.values["signer"] == "registry"
    assert "/etc/docker/certs.d/ec2-52-17-207-222.eu-west-1.compute.amazonaws.com:443/ca.crt" in diagnosis.fix.text
    assert "TLS-intercepting proxy" not in diagnosis.fix.text


def test_registry_certificate_neighbours_keep_their_class():
    # A client of the endpoint (Node's and Python's words) is client-certificate-untrusted, not Docker's.
    assert diagnosed(["Failed to connect to api.anthropic.com: SELF_SIGNED_CERT_IN_CHAIN"],
                     "filter-proxy").cause is Cause.client_certificate_untrusted
    # Go's same words from a scrape (prometheus#911) or a probe (blackbox_exporter#964) are no registry's.
    for line in ("Get https://db1.xxxx.com:5458/metrics: x509: certificate signed by unknown authority",
                 ('ts=2022-09-05T12:33:58.904357154Z caller=main.go:130 module=http_2xx target=https://abc.example.com '
                  'level=error msg="Error for HTTP request" err="Get \\"https://xxx.yyy.zz.ww\\": x509: certificate '
                  'signed by unknown authority"')):
        assert classes_stated(line) == []
        assert diagnosed([line], "prometheus").cause is not Cause.docker_registry_certificate_untrusted


def test_the_fallback_names_the_proxys_ca_for_a_registry_refusal():
    (cause,) = classes_stated(_PROXIED[0])
    assert "CA certificate" in cause.text and "systemctl restart docker" in cause.text


# --- supervisord's configuration it cannot parse --------------------------------------------------------

_NO_HEADER = ["ERROR: CANT_REREAD: File contains no section headers.",  # supervisor#1566
              "file: '/etc/supervisor/conf.d/idle.conf', line: 1", "'command=/home/pi/idle.sh\\n'"]
_NOT_INI = ["Starting supervisord: Error: File contains no section headers.",  # kuoruan/shell-scripts#44
            "file: '/etc/supervisor/supervisord.conf', line: 1", "'Traceback (most recent call last):\\n'"]


def test_a_program_file_without_its_header_needs_its_program_section_line():
    diagnosis = diagnosed(_NO_HEADER, "supervisord")
    assert diagnosis.cause is Cause.supervisor_config_invalid
    assert "/etc/supervisor/conf.d/idle.conf" in diagnosis.fix.text and "[program:NAME]" in diagnosis.fix.text
    # A file that is no ini at all is written again, not given a header.
    other = diagnosed(_NOT_INI, "supervisord")
    assert "is no supervisord configuration" in other.fix.text and "[program:NAME]" not in other.fix.text


@pytest.mark.parametrize("line", [
    "Error: bad logging level name '\"WARN\"'",  # supervisor#566
    ("ERROR: CANT_REREAD: The directory named as part of the path \"/vagrant/storage/logs/laravel-worker.log\" does not "
     "exist. in section 'program:laravel-worker' (file: '/etc/supervisor/conf.d/laravel-worker.conf')"),  # #946
])
def test_quotation_marks_kept_in_a_value_are_to_remove(line):
    diagnosis = diagnosed([line], "supervisord")
    assert diagnosis.cause is Cause.supervisor_config_invalid and diagnosis.values["error"] == "quoted value"
    assert "remove the quotes" in diagnosis.fix.text


def test_supervisor_config_neighbours_keep_their_class():
    # A path without quotes whose directory is missing (supervisor#1229's words) is no parse error.
    plain = "Error: The directory named as part of the path /var/log/supervisor/supervisord.log does not exist"
    assert not [cause for cause in classes_stated(plain) if cause.name.startswith("supervisord config")]
    assert diagnosed([plain], "supervisord").cause is not Cause.supervisor_config_invalid
    # supervisorctl's config without its section (orf/simple#50) keeps its class.
    assert diagnosed(["Error: .ini file does not include supervisorctl section"],
                     "supervisord").cause is Cause.supervisorctl_section_missing


def test_the_fallback_reads_each_parse_error_by_what_it_names():
    (header,) = classes_stated(_NO_HEADER[0])
    assert "[program:NAME]" in header.text
    (quoted,) = classes_stated("Error: bad logging level name '\"WARN\"'")
    assert "remove the quotes" in quoted.text
    (boolean,) = classes_stated("Error: not a valid boolean value: ''")  # supervisor#113
    assert "true or false" in boolean.text
    (pairs,) = classes_stated("Error: Unexpected end of key/value pairs in value 'KEY=val,KEY2=val,KEY3' in section "
                              "'program:foo' (file: /Users/marca/dev/git-repos/supervisor/test_conf.d/foo.conf)")
    assert "/Users/marca/dev/git-repos/supervisor/test_conf.d/foo.conf" in pairs.text
