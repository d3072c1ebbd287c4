"""Round 38's misses, built by cause: a container on host networking that also publishes ports, Docker's own disk full
while it writes a build's files (the VM's virtual disk on Docker Desktop), a stale row of Grafana's
dashboard_provisioning table, grafana-cli's plugin the catalogue lacks, nginx's upstream closing early (a forced
`Connection: upgrade` among the causes), nginx's server-name hash that does not fit, and nginx's ports taken by an
nginx already running; each beside the neighbours that keep their own reading, and read by the fallback too where
the error line states the cause. The lines are real: quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, DiagnosisContext, Severity, diagnose_log
from stackctl.diagnosis.nginx_bound_ports import held_by_nginx, holders
from stackctl.diagnosis.nginx_name_hash import next_power_of_two
from tests.unit.diagnosis.reading import diagnosed, read_by_fallback

# tinkerbell/playground#53 (Compose 1's refusal, container and service).
_REFUSED = ['ERROR: for 17fbb5905e81_deploy_boots_1  "host" network_mode is incompatible with port_bindings',
            'ERROR: for boots  "host" network_mode is incompatible with port_bindings']
# kirshiyin89/springboot-monitoring-demo#2 (Compose 2's warning).
_DISCARDED = [" ⠋ prometheus Published ports are discarded when using host network mode",
              " ⠋ grafana Published ports are discarded when using host network mode"]


def test_a_host_network_service_with_ports_is_told_to_drop_its_ports():
    refused = diagnosed(_REFUSED, "docker")
    assert refused.cause is Cause.docker_host_network_ports and refused.severity is Severity.fatal
    assert refused.values["services"] == "boots" and "Remove the ports section" in refused.fix.text
    assert "stackctl renders `network_mode: host` for every service" in refused.fix.text
    assert "ports section" in read_by_fallback(_REFUSED, "docker").fix.text
    # Compose 2 drops the ports and starts the containers; stackctl's own services name their port keys.
    discarded = diagnosed(_DISCARDED, "docker")
    assert discarded.cause is Cause.docker_host_network_ports and discarded.severity is Severity.advisory
    assert "ports.prometheus for prometheus, ports.grafana for grafana" in discarded.fix.text


def test_a_port_another_container_holds_is_no_host_network():
    # maxandersen/internet-monitoring#13: a published port that is taken keeps the port-in-use reading.
    line = ("ERROR: for internet-monitoring_prometheus_1  Cannot start service prometheus: driver failed programming "
            "external connectivity on endpoint internet-monitoring_prometheus_1 (168c33d054b9eab138038538c19dbc5a31047fd7e"
            "dc821a436a33047a7d7057f): Bind for 0.0.0.0:9090 failed: port is already allocated")
    assert diagnosed([line], "docker").cause is Cause.port_in_use


def test_dockers_disk_full_writing_a_build_names_the_vms_virtual_disk():
    # data61/gnaf#5 (a build's layer); docker/for-win#1042 (Docker Desktop's VM disk).
    for line in ("Error processing tar file(exit status 1): write /root/gnaf.mv.db: no space left on device",
                 ("Error response from daemon: Error processing tar file(exit status 1): write /file2.dat: no space left "
                 "on device")):
        diagnosis = diagnosed([line], "docker")
        assert diagnosis.cause is Cause.docker_disk_full and diagnosis.fix.key is None
        assert "writing a build's files" in diagnosis.summary
        for said in ("docker system df", "data-root", "virtual disk", "Disk image size", "docker-machine"):
            assert said in diagnosis.fix.text
    # huggingface/diffusers#4957: the weights' download keeps hf_cache.
    assert diagnosed(["OSError: [Errno 28] No space left on device"], "vllm").fix.key == "hf_cache"


# grafana#46537: the dashboard file is named on the line before the refusal.
_STALE_SAVE = [
    ('t=2022-03-14T13:47:07+0000 lvl=dbug msg="saving new dashboard" logger=provisioning.dashboard type=file '
     'name=default provisioner=default file=/var/lib/grafana/dashboards/some-dashboard-name.json folderId=0'),
    't=2022-03-14T13:47:07+0000 lvl=dbug msg="Extracted alerts from dashboard" logger=alerting.extractor alertCount=0',
    ('t=2022-03-14T13:47:07+0000 lvl=eror msg="failed to save dashboard" logger=provisioning.dashboard type=file '
     'name=default error="Dashboard not found"'),
]


def test_a_stale_provisioning_row_is_deleted_by_the_dashboards_file():
    diagnosis = diagnosed(_STALE_SAVE, "grafana")
    assert diagnosis.cause is Cause.grafana_provisioning_stale_row and diagnosis.severity is Severity.advisory
    assert diagnosis.values == {"file": "/var/lib/grafana/dashboards/some-dashboard-name.json", "provider": "default"}
    assert "DELETE FROM dashboard_provisioning WHERE external_id LIKE '%some-dashboard-name.json';" in diagnosis.fix.text
    assert "DELETE FROM dashboard_provisioning WHERE name = 'default';" in diagnosis.fix.text
    assert "dashboard_provisioning" in read_by_fallback(_STALE_SAVE, "grafana").fix.text


def test_a_stale_row_whose_file_is_gone_fails_the_cleanup():
    # grafana#63723: provisioning deletes the dashboard of a file that is gone, and the dashboard is gone too.
    line = ('logger=provisioning.dashboard type=file name=sidecarProvider t=2023-02-24T12:24:51.176681552Z level=error '
            'msg="failed to delete dashboard" id=7887 error="Dashboard not found"')
    diagnosis = diagnosed([line], "grafana")
    assert diagnosis.cause is Cause.grafana_provisioning_stale_row
    assert "DELETE FROM dashboard_provisioning WHERE dashboard_id = 7887;" in diagnosis.fix.text


def test_a_uid_grafana_cannot_resolve_is_no_stale_row():
    # grafana#73043: "could not resolve dashboards:uid:X" (a duplicate uid or title among the files, kubriX#368).
    line = ('msg="failed to save dashboard" file=/tmp/dashboards/service-proxy/service-proxy.json error="could not '
            'resolve dashboards:uid:IQhiINgzoNZWEhUB: Dashboard not found"')
    diagnosis = diagnose_log([line], DiagnosisContext(service="grafana"))
    assert diagnosis is None or diagnosis.cause is not Cause.grafana_provisioning_stale_row


@pytest.mark.parametrize(("line", "version"), [
    ("Error: ✗ Plugin not found (Grafana v8.3.5 linux-amd64)", "8.3.5"),  # grafana#50280
    ("Error: ? Plugin not found (Grafana v9.0.3 linux-amd64)", "9.0.3"),  # nforgeio/neonKUBE#1658, the mark mangled
    ("Error: ✗ Failed to find requested plugin, check if the plugin_id is correct: 404 not found error", None),  # #28732
])
def test_grafana_clis_plugin_the_catalogue_lacks_is_in_gf_install_plugins(line, version):
    diagnosis = diagnosed([line], "grafana")
    assert diagnosis.cause is Cause.grafana_plugin_install_failed and diagnosis.fix.env == "GF_INSTALL_PLUGINS"
    assert diagnosis.values.get("grafana") == version
    assert "remove the plugin from GF_INSTALL_PLUGINS" in diagnosis.fix.text
    assert read_by_fallback([line], "grafana").fix.env == "GF_INSTALL_PLUGINS"


def test_grafana_12s_installer_keeps_its_asynchronous_preinstall():
    # quentinmarolleau/labmon#186: Grafana 12 installs the list itself, synchronously: GF_PLUGINS_PREINSTALL.
    line = "Error: ✗ invalid service state: Failed … failed to install plugin: 404: Plugin not found"
    assert diagnosed([line], "grafana").fix.env == "GF_PLUGINS_PREINSTALL"


# iv-org/invidious#604: a site that sent `Connection: upgrade` on every request.
_CLOSED = [
    ('2019/06/21 17:08:06 [error] 9702#9702: *7369891 upstream prematurely closed connection while reading upstream, '
     'client: xx.xx.xx.xx, server: domain.com, request: "GET /sb/EXcQy-LeRS0/storyboard3_L2/M3.jpg?sqp=ovOX_wMGCMqC-uYF'
     '&sigh=rs%24AOn4CLD1GZFpBEplcmpALSKb-i12wWdmlQ HTTP/2.0", upstream: "http://123.456.789.10:3000/sb/EXcQy-LeRS0/'
     'storyboard3_L2/M3.jpg?sqp=ovOX_wMGCMqC-uYF&sigh=rs%24AOn4CLD1GZFpBEplcmpALSKb-i12wWdmlQ", host: "domain.com"'),
]


def test_an_upstream_that_closes_early_names_the_forced_upgrade_among_its_causes():
    diagnosis = diagnosed(_CLOSED, "nginx")
    assert diagnosis.cause is Cause.nginx_upstream_closed and diagnosis.severity is Severity.advisory
    assert diagnosis.values["upstream"] == "http://123.456.789.10:3000" and "partway through" in diagnosis.fix.text
    for said in ("its own log", "proxy_set_header Connection $http_connection;", "$connection_upgrade", "keepalive"):
        assert said in diagnosis.fix.text
    assert "$http_connection" in read_by_fallback(_CLOSED, "nginx").fix.text
    # A stack.yaml whose filter-proxy listens on that port: its own log is `stackctl logs filter-proxy`.
    proxied = diagnose_log(_CLOSED, DiagnosisContext(service="nginx", port_keys={3000: "ports.proxy"}))
    assert proxied is not None and "`stackctl logs filter-proxy`" in proxied.fix.text


def test_an_upstream_on_a_tls_port_proxied_as_http_comes_first():
    # nginx/kubernetes-ingress#2046: port 9443 serves TLS; kubernetes-retired/contrib#2363: port 80, no such hint.
    tls = ('2021/10/06 08:09:19 [error] 28#28: *36 upstream prematurely closed connection while reading response header '
           'from upstream, client: 172.29.16.1, server: openliberty2.mic.co.at, request: "GET / HTTP/1.1", upstream: '
           '"http://10.42.0.57:9443/", host: "openliberty2.mic.co.at"')
    plain = ('2017/02/02 13:44:36 [error] 159#159: *63 upstream prematurely closed connection while reading response '
             'header from upstream, client: xx.xx.xx.xx, server: _, request: "GET /test.html HTTP/1.1", upstream: '
             '"http://10.123.45.11:80/test.html", host: "mydomain.com"')
    assert "(1) http://10.42.0.57:9443 is a TLS port proxied as http://" in diagnosed([tls], "nginx").fix.text
    closed = diagnosed([plain], "nginx")
    assert "TLS port" not in closed.fix.text and "before it sent its response header" in closed.fix.text


def test_an_upstream_that_timed_out_is_no_early_close():
    # fossar/selfoss#1427: nginx gave up waiting; the upstream did not close.
    line = ('[error] 1046#1046: *2094 upstream timed out (110: Connection timed out) while reading response header from '
            'upstream, client: 192.168.17.1, server: localhost, request: "GET /update HTTP/1.1", upstream: '
            '"fastcgi://127.0.0.1:9000", host: "192.168.17.128"')
    assert diagnosed([line], "nginx").cause is Cause.nginx_upstream_timeout


@pytest.mark.parametrize(("line", "said"), [
    # A-Zuro/Secret-Sing-Box#39; certbot#922, older nginx's "the server_names_hash".
    ("nginx: [emerg] could not build server_names_hash, you should increase server_names_hash_bucket_size: 32",
     "`server_names_hash_bucket_size 64;`"),
    ("nginx: [emerg] could not build the server_names_hash, you should increase server_names_hash_bucket_size: 64",
     "`server_names_hash_bucket_size 128;`"),
    # GSA/data.gov#423: many names, the hash's size first.
    (("2018/09/25 18:51:39 [emerg] 27885#0: could not build the server_names_hash, you should increase either "
     "server_names_hash_max_size: 512 or server_names_hash_bucket_size: 64"), "`server_names_hash_max_size 1024;`"),
])
def test_a_server_name_hash_that_does_not_fit_names_the_next_size(line, said):
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_server_names_hash and diagnosis.severity is Severity.fatal
    assert said in diagnosis.fix.text and "in the http block" in diagnosis.fix.text
    assert said in read_by_fallback([line], "nginx").fix.text


def test_the_next_bucket_size_is_a_power_of_two():
    assert [next_power_of_two(size) for size in (32, 48, 64, 128)] == [64, 64, 128, 256]


@pytest.mark.parametrize("line", [
    # pulibrary/princeton_ansible#3578: a warning, nginx starts; geerlingguy/ansible-role-nginx#28: another hash.
    ("nginx: [warn] could not build optimal server_names_hash, you should increase either server_names_hash_max_size: "
     "512 or server_names_hash_bucket_size: 64; ignoring server_names_hash_bucket_size"),
    ("nginx: [emerg] could not build the types_hash, you should increase either types_hash_max_size: 1024 or "
     "types_hash_bucket_size: 32"),
])
def test_other_hashes_and_warnings_are_no_server_name_hash_refusal(line):
    diagnosis = diagnose_log([line], DiagnosisContext(service="nginx"))
    assert diagnosis is None or diagnosis.cause is not Cause.nginx_server_names_hash


def _bind(port: str) -> str:
    return f"nginx: [emerg] bind() to 0.0.0.0:{port} failed (98: Address already in use)"


def test_several_ports_taken_at_once_is_most_often_nginx_already_running():
    # WWBN/AVideo#989: "that means NGINX is already running".
    lines = [*[_bind(port) for _ in range(5) for port in ("1935", "8080")], "nginx: [emerg] still could not bind()"]
    diagnosis = diagnosed(lines, "nginx")
    assert diagnosis.cause is Cause.port_in_use and diagnosis.values["ports"] == "1935, 8080"
    for said in ("nginx is already running", "sudo nginx -s stop", "systemctl stop nginx", "nginx -s reload"):
        assert said in diagnosis.fix.text


def test_a_listener_list_naming_nginx_decides_for_one_port():
    # nginx/docker-nginx#308: nginx run again in a container whose nginx (pid 1) holds 443.
    lines = ["2019/02/04 16:43:29 [emerg] 15#15: bind() to 0.0.0.0:443 failed (98: Address in use)",
             "tcp        0      0 0.0.0.0:443             0.0.0.0:*               LISTEN      1/nginx: master pro"]
    diagnosis = diagnosed(lines, "nginx")
    assert diagnosis.cause is Cause.port_in_use and "listener list shows nginx holding it" in diagnosis.fix.text
    assert diagnosis.fix.key == "ports.https"


def test_one_port_or_another_holder_keeps_the_port_in_use_reading():
    # atyenoria/janus-webrtc-gateway-docker#42: one port, nothing says who holds it.
    janus = [*[_bind("80")] * 5, "nginx: [emerg] still could not bind()"]
    assert "already running" not in diagnosed(janus, "nginx").fix.text
    # StreisandEffect/streisand#91: lsof names apache2 on port 80.
    streisand = ["2014/11/12 12:17:26 [emerg] 26659#0: bind() to 0.0.0.0:80 failed (98: Address already in use)",
                 "2014/11/12 12:17:26 [emerg] 26659#0: still could not bind()",
                 "apache2 25997     root    4u  IPv6  34568      0t0  TCP *:http (LISTEN)"]
    assert holders(streisand, ["80"]) == {"apache2"} and held_by_nginx(streisand) is None
    diagnosis = diagnosed(streisand, "nginx")
    assert diagnosis.cause is Cause.port_in_use and "already running" not in diagnosis.fix.text
