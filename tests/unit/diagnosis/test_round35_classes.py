"""Round 35's misses, built by cause: nginx's TLS files it finds but cannot use (an encrypted private key, an empty
or malformed dhparam file) and a Grafana provisioning file of the wrong shape; each beside the neighbours that keep
their own class, and read by the fallback too, since the error line states the cause. The lines are real: from
tests/data, quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, diagnose_log
from stackctl.diagnosis.diagnose import context_for
from tests.unit.diagnosis.reading import DEFAULTS, diagnosed, read_by_fallback

_KEY_PROMPT = "Enter PEM pass phrase:"
_ENCRYPTED_KEY = [  # jumpserver#14463 (docker's nginx), mailcow-dockerized#3361 (its error log's record)
    ('nginx: [emerg] cannot load certificate key "/etc/nginx/cert/server.key": PEM_read_bio_PrivateKey() failed (SSL: '
     "error:2807106B:UI routines:UI_process:processing error:while reading strings error:0906406D:PEM "
     "routines:PEM_def_callback:problems getting password error:0907B068:PEM routines:PEM_read_bio_PrivateKey:bad "
     "password read)"),
    ('2020/02/25 21:32:58 [emerg] 13#13: cannot load certificate key "/etc/ssl/mail/key.pem": PEM_read_bio_PrivateKey() '
     "failed (SSL: error:2807106B:UI routines:UI_process:processing error:while reading strings error:0906406D:PEM "
     "routines:PEM_def_callback:problems getting password error:0907B068:PEM routines:PEM_read_bio_PrivateKey:bad "
     "password read)"),
]
_EMPTY_DHPARAM = [  # boa#1627 (OpenSSL 1.1's wording), boa#1330 (1.0's), dokku-letsencrypt#182
    ('Starting Nginx Server...:nginx: [emerg] PEM_read_bio_DHparams("/etc/ssl/private/nginx-wild-ssl.dhp") failed (SSL: '
     "error:0909006C:PEM routines:get_name:no start line:Expecting: DH PARAMETERS)"),
    ('Starting Nginx Server...:nginx: [emerg] PEM_read_bio_DHparams("/etc/ssl/private/4096.dhp") failed (SSL: '
     "error:0906D06C:PEM routines:PEM_read_bio:no start line:Expecting: DH PARAMETERS)"),
    ('nginx: [emerg] PEM_read_bio_DHparams("/etc/nginx/dhparam.pem") failed (SSL: error:0909006C:PEM '
     "routines:get_name:no start line:Expecting: DH PARAMETERS)"),
]
_PROVIDER_FILE = (  # hyperledger-caliper/caliper-benchmarks#26: a dashboard's JSON under a .yaml name
    't=2019-10-21T09:31:54+0000 lvl=eror msg="Server shutdown" logger=server reason="Service init failed: Failed to '
    "create provisioner: Failed to read dashboards config: could not parse provisioning config file: "
    'docker-and-system.yaml error: yaml: unmarshal errors:\\n  line 1: cannot unmarshal !!map into '
    '[]*dashboards.DashboardsAsConfigV0"')


@pytest.mark.parametrize("line", _ENCRYPTED_KEY)
def test_an_encrypted_private_key_nginx_cannot_ask_the_passphrase_for(line):
    diagnosis = diagnosed([_KEY_PROMPT, line], "nginx")
    assert diagnosis.cause is Cause.nginx_key_encrypted and diagnosis.fix.key == "letsencrypt_dir"
    path = diagnosis.values["key_file"]
    assert f"openssl rsa -in {path} -out {path}.unencrypted" in diagnosis.fix.text
    assert "ssl_password_file" in diagnosis.fix.text and "live/HOSTNAME/privkey.pem" in diagnosis.fix.text
    fallback = read_by_fallback([_KEY_PROMPT, line], "nginx")
    assert f"openssl rsa -in {path}" in fallback.fix.text and fallback.fix.key == "letsencrypt_dir"


@pytest.mark.parametrize("line", _EMPTY_DHPARAM)
def test_an_empty_or_malformed_dhparam_file(line):
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_dhparam_invalid
    path = diagnosis.values["dhparam"]
    assert f"openssl dhparam -out {path} 2048" in diagnosis.fix.text and "drop the ssl_dhparam line" in diagnosis.fix.text
    assert "stackctl's own HTTPS server sets no ssl_dhparam" in diagnosis.fix.text
    assert f"openssl dhparam -out {path}" in read_by_fallback([line], "nginx").fix.text


def test_a_dashboard_json_where_a_provider_file_belongs():
    diagnosis = diagnosed([_PROVIDER_FILE], "grafana")
    assert diagnosis.cause is Cause.grafana_provisioning_not_provisioning
    assert diagnosis.values == {"kind": "dashboards", "file": "docker-and-system.yaml"}
    for words in ("apiVersion: 1", "options.path", "rename the file to .json", "grafana/dashboards/"):
        assert words in diagnosis.fix.text
    assert "rename the file to .json" in read_by_fallback([_PROVIDER_FILE], "grafana").fix.text


def test_the_missing_notifiers_directory_before_it_is_not_what_stopped_grafana():
    # The round's log: Grafana names the missing notifiers directory first (an error it survives), then stops on
    # the provider file.
    survived = ('t=2019-10-21T09:31:54+0000 lvl=eror msg="Can\'t read alert notification provisioning files from '
                'directory" logger=provisioning.notifiers path=/etc/grafana/provisioning/notifiers error="open '
                '/etc/grafana/provisioning/notifiers: no such file or directory"')
    assert diagnosed([survived, _PROVIDER_FILE], "grafana").cause is Cause.grafana_provisioning_not_provisioning


@pytest.mark.parametrize(("service", "line", "cause"), [
    # A certificate (not a key) that is not PEM: an empty cert.pem (mailcow-dockerized#2563).
    ("nginx", ('nginx: [emerg] cannot load certificate "/etc/ssl/mail/cert.pem": PEM_read_bio_X509_AUX() failed (SSL: '
              "error:0909006C:PEM routines:get_name:no start line:Expecting: TRUSTED CERTIFICATE)"),
     Cause.nginx_certificate_invalid),
    # A key nginx's user may not read (bitnami-docker-nginx#164).
    ("nginx", ('2021/10/08 09:56:58 [emerg] 1#1: cannot load certificate key "/certs/server.key": BIO_new_file() failed '
              "(SSL: error:0200100D:system library:fopen:Permission denied:fopen('/certs/server.key','r') "
              "error:2006D002:BIO routines:BIO_new_file:system lib)"), Cause.nginx_certificate_unreadable),
    # A provisioning file that is a directory (Teslamate-CustomGrafanaDashboards#11): Docker's bind mount.
    ("grafana", ('logger=provisioning t=2023-01-15T21:34:33.72+0000 lvl=eror msg="Failed to provision dashboard" '
                'error="Failed to create provisioner: Failed to read dashboards config: could not parse provisioning '
                "config file: customdashboards.yml error: read /etc/grafana/provisioning/dashboards/customdashboards.yml:"
                ' is a directory"'), Cause.bind_mount_type_mismatch),
    # A datasource file's value of the wrong type (cloudalchemy/ansible-grafana#93): the datasource class's.
    ("grafana", ('lvl=eror msg="Server shutdown" logger=server reason="Service init failed: Datasource provisioning '
                'error: yaml: unmarshal errors:\\n  line 7: cannot unmarshal !!str `{\\"tlsAu...` into '
                'map[string]interface {}"'), Cause.grafana_datasource_provisioning),
])
def test_neighbours_keep_their_class(service, line, cause):
    assert diagnosed([line], service).cause is cause


def test_another_programs_bad_password_read_is_not_nginxs_key():
    # xen-orchestra#2962: a Node server's own encrypted key; the nginx fix would be wrong there.
    line = "[Warn] Web server could not listen: error:0906A068:PEM routines:PEM_do_header:bad password read"
    diagnosis = diagnose_log([line], context_for("xo-server", DEFAULTS, failed=True))
    assert diagnosis is not None and diagnosis.cause is Cause.unrecognised
    assert "ssl_password_file" not in diagnosis.fix.text
