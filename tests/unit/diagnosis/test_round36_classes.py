"""Round 36's misses, built by cause: nginx's handshake with an https:// upstream (a plain-HTTP upstream, one that
refuses it for want of SNI), Prometheus refusing a query over its sample limit and a reload without the lifecycle
API, CUDA error 803 and the NVIDIA runtime's driver RPC timing out, supervisord's path left as a template's
placeholder and a provisioned Grafana dashboard whose datasource is a template variable; each beside the neighbours
that keep their own class, and read by the fallback too where the error line states the cause. The lines are real:
quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, Severity
from tests.unit.diagnosis.reading import diagnosed, read_by_fallback

_PLAIN_UPSTREAM = [  # nginx-proxy#1879, vesta#2010, apisix#8126 (no upstream named)
    ('2022/01/29 16:03:43 [error] 418#418: *36 SSL_do_handshake() failed (SSL: error:1408F10B:SSL routines:ssl3_get_'
     'record:wrong version number) while SSL handshaking to upstream, client: 172.17.0.1, server: dev.local, request: '
     '"GET /favicon.ico HTTP/1.1", upstream: "https://172.22.0.5:80/favicon.ico", host: "dev.local"'),
    ('2020/06/10 11:32:51 [error] 8164#8164: *4825 SSL_do_handshake() failed (SSL: error:1408F10B:SSL routines:ssl3_get_'
     'record:wrong version number) while SSL handshaking to upstream, client: 151.xxx.xxx.227, server: domain.fr, '
     'request: "GET / HTTP/2.0", upstream: "https://51.yyy.yyy.37:8443/", host: "domain.fr"'),
    ("60380#60380: *3539468988 SSL_do_handshake() failed (SSL: error:1408F10B:SSL routines:ssl3_get_record:wrong version "
     "number) while SSL handshaking to upstream"),
]
_REFUSED = [  # matrix-docker-ansible-deploy#3055 (alert 40), ethpandaops/ansible-collection-general#281 (alert 112)
    ('*10 SSL_do_handshake() failed (SSL: error:0A000410:SSL routines::sslv3 alert handshake failure:SSL alert number 40) '
     'while SSL handshaking to upstream, client: 172.19.0.1, server: example.host, request: "GET /.well-known/matrix/'
     'client HTTP/2.0", upstream: "https://<ip>/.well-known/matrix/client", host: "<domain>"'),
    ('2024/10/21 08:41:45 [crit] 165#165: *18127 SSL_do_handshake() failed (SSL: error:0A000458:SSL routines::tlsv1 '
     'unrecognized name:SSL alert number 112) while SSL handshaking to upstream, client: 185.71.112.107, server: '
     'config.pectra-devnet-4.ethpandaops.io, request: "GET /api/v1/nodes/validator-ranges HTTP/1.1", upstream: '
     '"https://209.38.212.82:443/meta/api/v1/validator-ranges.json", host: "config.pectra-devnet-4.ethpandaops.io"'),
]
# VirtuBox/ubuntu-nginx-web-server#11: a client's handshake with nginx, not nginx's with an upstream.
_CLIENT_HANDSHAKE = ("2018/06/24 22:41:22 [crit] 61481#61481: *1228609 SSL_do_handshake() failed (SSL: error:14209102:SSL "
                     "routines:tls_early_post_process_client_hello:unsupported protocol) while SSL handshaking, client: "
                     "54.208.42.136, server: 0.0.0.0:443")


@pytest.mark.parametrize("line", _PLAIN_UPSTREAM)
def test_an_https_upstream_that_answers_in_plain_http(line):
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_upstream_not_tls and diagnosis.severity is Severity.advisory
    assert "plain HTTP" in diagnosis.fix.text and "http://127.0.0.1:PORT" in diagnosis.fix.text
    if "upstream:" in line:
        host = diagnosis.values["upstream"].split("/")[2]
        assert f"proxy_pass http://{host};" in diagnosis.fix.text
    assert "proxy_pass http://" in read_by_fallback([line], "nginx").fix.text


@pytest.mark.parametrize("line", _REFUSED)
def test_an_https_upstream_that_refuses_the_handshake_wants_its_server_name(line):
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_upstream_tls_refused
    assert "proxy_ssl_server_name on;" in diagnosis.fix.text and "proxy_ssl_name" in diagnosis.fix.text
    # Alert 40 is also a client certificate the upstream asks for; 112 names the server name alone.
    assert ("proxy_ssl_certificate" in diagnosis.fix.text) is (diagnosis.values["alert"] == 40)
    assert "proxy_ssl_server_name on;" in read_by_fallback([line], "nginx").fix.text


def test_a_clients_handshake_with_nginx_is_no_upstreams():
    diagnosis = diagnosed([_CLIENT_HANDSHAKE], "nginx")
    assert diagnosis.cause not in (Cause.nginx_upstream_not_tls, Cause.nginx_upstream_tls_refused)
    assert "proxy_ssl" not in diagnosis.fix.text


@pytest.mark.parametrize("line", [  # scylla-monitoring#1367, lokomotive#801 (a rule), prometheus#7281 (the UI)
    "query processing would load too many samples into memory in query execution",
    ('level=warn ts=2020-08-13T10:08:46.814Z caller=manager.go:577 component="rule manager" group=kube-apiserver-'
     'availability.rules msg="Evaluating rule failed" err="query processing would load too many samples into memory in '
     'query execution"'),
    "Error executing query: query processing would load too many samples into memory in query execution",
])
def test_a_query_over_prometheus_sample_limit(line):
    diagnosis = diagnosed([line], "prometheus")
    assert diagnosis.cause is Cause.prometheus_query_too_many_samples and diagnosis.fix.flag == "--query.max-samples"
    assert diagnosis.severity is Severity.advisory and "shorter range" in diagnosis.fix.text
    # A rule's failure is logged as a warning: the fallback reads it where Prometheus is known to have failed.
    assert read_by_fallback([line], "prometheus", failed=True).fix.flag == "--query.max-samples"


def test_a_reload_without_the_lifecycle_api():
    # dockprom#45, openshift-ansible#8080: the reply to POST /-/reload, in no error's words, so the fallback does not
    # take it for a failure (a stated class only names the fix of a line the fallback reads as one).
    diagnosis = diagnosed(["Lifecycle APIs are not enabled"], "prometheus")
    assert diagnosis.cause is Cause.prometheus_lifecycle_disabled and diagnosis.fix.flag == "--web.enable-lifecycle"
    assert "SIGHUP" in diagnosis.fix.text and diagnosis.severity is Severity.advisory


_ERROR_803 = [  # gpustack#4678 (vLLM's image under the NVIDIA runtime), CompVis/stable-diffusion#439
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda "
     "driver combination"),
    # NVIDIA/nvidia-docker#1256 (Caffe's wording)
    "CUDA: Check failed: e == cudaSuccess (803 vs. 0) : system has unsupported display driver / cuda driver combination",
]


@pytest.mark.parametrize("line", _ERROR_803)
def test_cuda_error_803_names_the_compat_libraries_and_the_host_driver(line):
    diagnosis = diagnosed([line], "vllm")
    assert diagnosis.cause is Cause.cuda_driver_combination
    assert (diagnosis.fix.key, diagnosis.fix.env) == ("vllm.environment", "LD_LIBRARY_PATH")
    for said in ("LD_LIBRARY_PATH=/usr/local/nvidia/lib64", "ld.so.conf", "`gpus: all`", "reboot"):
        assert said in diagnosis.fix.text
    assert read_by_fallback([line], "vllm").fix.env == "LD_LIBRARY_PATH"


@pytest.mark.parametrize(("line", "cause"), [
    # vllm#5510: forward compatibility on a GPU without it (Error 804) stays the driver's age.
    (("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
     "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non "
     "supported HW"), Cause.driver_too_old),
    # mozilla/translations#1167: NVML's own mismatch stays the reboot.
    (("[task 2025-07-01T05:06:30.005+00:00] [train] [nvidia-smi(stdout)] Failed to initialize NVML: Driver/library version "
     "mismatch"), Cause.driver_library_mismatch),
])
def test_the_driver_neighbours_of_error_803_keep_their_class(line, cause):
    assert diagnosed([line], "vllm").cause is cause


_RPC_TIMEOUT = [  # nvidia-container-toolkit#202; nvidia-docker#723 (older toolkits: "driver error: timed out")
    ("docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: "
     "unable to start container process: error during container init: error running hook #0: error running hook: exit "
     "status 1, stdout: , stderr: Auto-detected mode as 'legacy'"),
    "nvidia-container-cli: initialization error: driver rpc error: timed out: unknown.",
]


def test_the_runtimes_driver_rpc_timeout_is_persistence_mode():
    diagnosis = diagnosed(_RPC_TIMEOUT, "docker")
    assert diagnosis.cause is Cause.nvidia_driver_rpc_timeout
    assert "nvidia-persistenced" in diagnosis.fix.text and "nvidia-smi -pm 1" in diagnosis.fix.text
    assert "nvidia-smi -pm 1" in read_by_fallback(_RPC_TIMEOUT, "docker").fix.text
    # nvidia-docker#1629: the driver not loaded at all keeps its class.
    not_loaded = ("docker: Error response from daemon: failed to create shim: OCI runtime create failed: container_linux"
                  ".go:380: starting container process caused: process_linux.go:545: container init caused: Running hook "
                  "#0:: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: "
                  "nvml error: driver not loaded: unknown.")
    assert diagnosed([not_loaded], "docker").cause is Cause.gpu_driver_not_loaded


def test_a_supervisord_path_left_as_a_templates_placeholder():
    # supervisor#634: a Jinja placeholder in logfile=.
    line = ("Error: The directory named as part of the path {{ settings.SUPERVISOR.logs_directory }}/supervisord.log "
            "does not exist.")
    diagnosis = diagnosed([line], "supervisord")
    assert diagnosis.cause is Cause.supervisor_config_invalid and diagnosis.values["error"] == "template"
    assert "{{ settings.SUPERVISOR.logs_directory }}/supervisord.log" in diagnosis.fix.text
    assert "placeholder" in diagnosis.fix.text and "real path" in diagnosis.fix.text
    assert "placeholder" in read_by_fallback([line], "supervisord").fix.text
    # supervisor#1644: a real directory that is gone is no template; supervisor#946: a quoted path keeps its kind.
    gone = "Error: The directory named as part of the path /var/log/supervisor/supervisord.log does not exist"
    assert "placeholder" not in diagnosed([gone], "supervisord").fix.text
    quoted = ("ERROR: CANT_REREAD: The directory named as part of the path \"/vagrant/storage/logs/laravel-worker.log\" does "
              "not exist. in section 'program:laravel-worker' (file: '/etc/supervisor/conf.d/laravel-worker.conf')")
    assert diagnosed([quoted], "supervisord").values["error"] == "quoted value"


@pytest.mark.parametrize(("line", "variable"), [
    # kube-prometheus#115: an alert rule's datasource is the dashboard's variable.
    (('t=2019-06-06T13:51:25+0000 lvl=eror msg="failed to save dashboard" logger=provisioning.dashboard type=file name=0 '
     'error="Alert validation error: Data source used by alert rule not found, alertName=Outstanding Requests alert, '
     'datasource=${datasource}"'), "${datasource}"),
    # dcgm-exporter#90: an exported dashboard's import input.
    ("Failed to upgrade legacy queries Datasource named ${DS_PROMETHEUS} was not found", "${DS_PROMETHEUS}"),
])
def test_a_provisioned_dashboards_datasource_variable(line, variable):
    diagnosis = diagnosed([line], "grafana")
    assert diagnosis.cause is Cause.grafana_datasource_variable_unresolved and diagnosis.values["datasource"] == variable
    name = variable.strip("${}")
    assert '"uid": "stackctl-prometheus"' in diagnosis.fix.text and f'"name": "{name}", "type": "datasource"' \
        in diagnosis.fix.text
    assert ("only an explicit datasource works" in diagnosis.fix.text) is ("alertName" in line)
    assert "stackctl-prometheus" in read_by_fallback([line], "grafana").fix.text


def test_a_datasource_of_another_name_is_no_variable():
    # prometheus-operator#972: the dashboards name a datasource that is not provisioned, not a variable.
    diagnosis = diagnosed(["Datasource named prometheus-k8s was not found"], "grafana")
    assert diagnosis.cause is not Cause.grafana_datasource_variable_unresolved
