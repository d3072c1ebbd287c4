"""Causes that share a log line, told apart by what else the log shows (real lines from the reports
under tests/data): each gets its own fix, and its neighbours keep theirs."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, DiagnosisContext, diagnose_log

_NGINX = DiagnosisContext(service="nginx")


def _nginx(*lines: str):
    diagnosis = diagnose_log(list(lines), _NGINX)
    assert diagnosis is not None and diagnosis.cause is Cause.nginx_upstream_down
    assert diagnosis.fix.key == "ports.proxy" and "stackctl logs filter-proxy" in diagnosis.fix.text
    return diagnosis.fix.text


def test_a_refused_upstream_on_another_containers_address_is_a_service_listening_on_localhost_only():
    # trustroots#752: the app in the next container listened on localhost.
    text = _nginx('nginx.1    | 2018/10/21 05:57:35 [error] 58#58: *1 connect() failed (111: Connection refused) while '
                  'connecting to upstream, client: 172.17.0.1, server: localhost, request: "GET /favicon.ico HTTP/1.1", '
                  'upstream: "http://172.17.0.5:3000/favicon.ico", host : "localhost:3080"')
    assert "bind to 0.0.0.0" in text and "172.17.0.5:3000" in text
    assert "container's own loopback" not in text


def test_a_refused_loopback_upstream_from_nginx_in_a_container_is_the_containers_own_loopback():
    # javascript-playground#16: nginx in a container (Docker's bridge client) proxying to 127.0.0.1.
    text = _nginx('2020/10/17 11:50:56 [error] 28#28: *2 connect() failed (111: Connection refused) while connecting '
                  'to upstream, client: 172.17.0.1, server: , request: "GET / HTTP/1.1", upstream: '
                  '"http://127.0.0.1:3001/", host: "localhost:8080"')
    assert "container's own loopback" in text and "host network" in text
    assert "0.0.0.0" not in text


def test_a_refused_loopback_upstream_on_the_host_or_a_socket_is_the_upstream_down():
    # localtunnel-server#56 (a public client: nginx on the host) and gunicorn#661 (a unix socket).
    for line in (('2016/12/15 16:11:55 [error] 5#5: *1 connect() failed (111: Connection refused) while connecting to '
                 'upstream, client: 76.98.113.158, server: , request: "GET /?new HTTP/1.1", upstream: '
                 '"http://127.0.0.1:3000/?new", host: "x.example.com"'),
                 ('2013/12/11 01:53:15 [error] 2149#0: *30 connect() to unix:/home/u/run/gunicorn.sock failed (111: '
                 'Connection refused) while connecting to upstream, client: 184.73.61.142, server: example.com, '
                 'request: "GET / HTTP/1.1", upstream: "http://unix:/home/u/run/gunicorn.sock:/", host: "example.com"')):
        text = _nginx(line)
        assert text.startswith("check the filter-proxy") and "0.0.0.0" not in text


# dcgm-exporter's words, the same on every host (#612 on amd64, #621 on GB200/GB300 arm64).
_DCGM_NO_NVML = 'time=2026-09-19T20:06:59.547Z level=ERROR msg="Cannot init NVML library; err: ERROR_LIBRARY_NOT_FOUND"'


def _exporter(lines: list[str], machine: str | None):
    diagnosis = diagnose_log(lines, DiagnosisContext(service="gpu-exporter", machine=machine))
    assert diagnosis is not None
    return diagnosis


def test_nvml_not_found_in_the_exporter_on_arm64_is_the_runtime_not_injecting_it_there():
    arm64 = _exporter([_DCGM_NO_NVML], "aarch64")
    assert arm64.cause is Cause.nvml_not_injected_arm64 and arm64.fix.key == "images.gpu-exporter"
    assert "/usr/lib/aarch64-linux-gnu" in arm64.fix.text and "docker run --rm --gpus all" in arm64.fix.text
    # One fix: it mounts the whole directory and never also says not to mount the library.
    assert "Do not hand-mount" not in arm64.fix.text


def test_the_same_line_on_amd64_or_an_unknown_host_is_the_missing_runtime_with_its_own_fix():
    for machine in ("x86_64", None):
        plain = _exporter([_DCGM_NO_NVML], machine)
        assert plain.cause is Cause.no_gpu_runtime and "nvidia-ctk runtime configure" in plain.fix.text
        assert "aarch64" not in plain.fix.text and "Do not hand-mount libnvidia-ml.so" in plain.fix.text


def test_an_unknown_host_whose_log_says_aarch64_is_read_as_arm64():
    # DCGM's build line names the architecture it runs on (dcgm-exporter#416 quotes the x86_64 one).
    build = ('time="2024-11-13T22:25:51Z" level=info msg="version:3.3.8;arch:aarch64;buildtype:Release;buildid:43" '
             "dcgm_level=INFO")
    assert _exporter([build, _DCGM_NO_NVML], None).cause is Cause.nvml_not_injected_arm64
    amd64 = build.replace("aarch64", "x86_64")
    assert _exporter([amd64, _DCGM_NO_NVML], None).cause is Cause.no_gpu_runtime


def test_neighbours_on_arm64_keep_their_class():
    # NVML loaded but failing (a daemon-reload), the host's toolkit not finding the driver, vLLM without a GPU.
    assert _exporter(["Failed to initialize NVML: Unknown Error"], "aarch64").cause is Cause.gpu_access_lost
    host = ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
            "object file: no such file or directory: unknown.")
    assert diagnose_log([host], DiagnosisContext(service="docker", machine="aarch64")).cause is Cause.gpu_driver_not_loaded
    vllm = diagnose_log(["NVIDIA-SMI couldn't find libnvidia-ml.so library in your system."],
                        DiagnosisContext(service="vllm", machine="aarch64"))
    assert vllm is not None and vllm.cause is Cause.no_gpu_runtime


_CERTBOT = DiagnosisContext(service="certbot")


def _certbot(*lines: str):
    diagnosis = diagnose_log(list(lines), _CERTBOT)
    assert diagnosis is not None and diagnosis.cause is Cause.certbot_port_80_busy
    return diagnosis


def test_certbot_naming_a_host_web_server_on_port_80_stops_that_program_or_moves_stackctls_port():
    # certbot#1424: certbot before 0.10 names who holds the port, with no ERROR on the line.
    diagnosis = _certbot("The program apache2 (process ID 23326) is already listening on TCP port 80. This will prevent "
                         "us from binding to that port. Please stop the apache2 program temporarily and then try again.")
    fix = diagnosis.fix
    assert (fix.key, fix.flag) == ("ports.http", "--webroot")
    assert "sudo systemctl disable --now apache2" in fix.text and "stackctl tls issue" in fix.text
    assert diagnosis.values == {"port": 80, "program": "apache2", "pid": 23326}


def test_certbot_naming_nginx_on_443_is_stackctls_webroot_or_nginx_stopped_while_it_runs():
    # elewant#159: the message wraps at 80 columns.
    diagnosis = _certbot("The program nginx (process ID 32742) is already listening on TCP port 443. This",
                         "will prevent us from binding to that port. Please stop the nginx program",
                         "temporarily and then try again. For automated renewal, you may want to use a")
    fix = diagnosis.fix
    assert (fix.key, fix.flag) == ("ports.https", "--webroot")
    assert "certbot certonly --webroot" in fix.text and "stop nginx while certbot runs" in fix.text
    assert diagnosis.values["program"] == "nginx" and diagnosis.values["port"] == 443


def test_certbot_not_naming_the_program_keeps_its_general_fix():
    # certbot#3958's wording names no program: the fix says how to find it, and names no flag.
    diagnosis = _certbot("Port 443 is already in use by another process. This will prevent us from binding")
    assert diagnosis.fix.flag is None and "ss -ltnp 'sport = :443'" in diagnosis.fix.text
    assert "program" not in diagnosis.values


# certbot's standalone hint (matrix-docker-ansible-deploy#1230: its server on port 8080 behind a forward).
_STANDALONE_HINT = ("The Certificate Authority failed to download the challenge files from the temporary standalone "
                    "webserver started by Certbot on port 8080. Ensure that the listed domains point to this machine "
                    "and that it can accept inbound connections from the internet.")


def test_certbots_hint_alone_is_the_names_dns_record_then_port_80_from_the_internet():
    diagnosis = diagnose_log([_STANDALONE_HINT], _CERTBOT)
    assert diagnosis is not None and diagnosis.cause is Cause.certbot_challenge_not_this_host
    fix = diagnosis.fix
    assert fix.key == "hostname" and "A record" in fix.text and "AAAA" in fix.text and "DNS propagation" in fix.text
    assert "port 80 must be forwarded to 8080" in fix.text and "stackctl doctor" in fix.text
    assert diagnosis.values == {"port": 8080}


def test_certbots_hint_cut_by_a_terminal_and_followed_by_its_summary_is_still_the_hint():
    # ansible-easy-vpn#248: cut mid-word, then "Some challenges have failed." (the unreachable class's
    # consequence line) follows it; the reply was a missing A record.
    hint = ("Hint: The Certificate Authority failed to download the challenge files from the               temporary "
            "standalone webserver started by Certbot on port 80. Ensure that the li              sted domains point to "
            "this machine and that it can accept inbound connections fr              om the internet.")
    diagnosis = diagnose_log([hint, "", "Some challenges have failed."], _CERTBOT)
    assert diagnosis.cause is Cause.certbot_challenge_not_this_host
    assert "forwarded to" not in diagnosis.fix.text and diagnosis.values == {"port": 80}


def test_the_reason_the_ca_gave_beside_the_hint_keeps_its_own_class():
    # installation_guide's TLS notes: a timeout, then the nginx plugin's hint: the firewall's fix.
    timeout = ("  Detail: 18.60.72.242: Fetching http://www.thirumal.com/.well-known/acme-challenge/5X3aRcZZoJOOChjfToF4"
               "ovnPKmwvnOS2eD7JxhHgFXM: Timeout during connect (likely firewall problem)")
    nginx_hint = ("Hint: The Certificate Authority failed to verify the temporary nginx configuration changes made by "
                  "Certbot. Ensure the listed domains point to this nginx server and that it is accessible from the "
                  "internet.")
    assert diagnose_log([timeout, "", nginx_hint], _CERTBOT).cause is Cause.certbot_challenge_unreachable
    assert diagnose_log([nginx_hint], _CERTBOT).cause is Cause.certbot_challenge_not_this_host
    # A public setup log: NXDOMAIN, then the standalone hint: the missing record's fix.
    nxdomain = ("  Detail: DNS problem: NXDOMAIN looking up A for directus.dbgi.org - check that a DNS record exists "
                "for this domain")
    assert diagnose_log([nxdomain, "", _STANDALONE_HINT], _CERTBOT).cause is Cause.certbot_dns_missing
    # The webroot plugin's hint is about the webroot, not this class.
    webroot = ("Hint: The Certificate Authority failed to download the temporary challenge files created by Certbot. "
               "Ensure that the listed domains serve their content from the provided --webroot-path/-w and that files "
               "created there can be downloaded from the internet.")
    assert diagnose_log([webroot], _CERTBOT).cause is not Cause.certbot_challenge_not_this_host


_SUPERVISORD = DiagnosisContext(service="supervisord")
_TAKEN = ("Error: Another program is already listening on a port that one of our HTTP servers is configured to use.  "
          "Shut this program down first before starting supervisord.")
# supervisor#459: the running supervisord as `ps aux` showed it.
_PS_SUPERVISORD = ("ubuntu    1444  0.2  0.4  58920 10088 ?        Ss   14:53   0:32 /usr/bin/python "
                   "/usr/local/bin/supervisord")


def _supervisord(*lines: str):
    diagnosis = diagnose_log(list(lines), _SUPERVISORD)
    assert diagnosis is not None and diagnosis.cause is Cause.supervisor_port_taken
    return diagnosis


def test_supervisords_refusal_cut_by_a_terminal_checks_for_a_running_one_then_removes_the_stale_socket():
    # my-memory's supervisor notes: the message wrapped after "HTTP"; a crashed supervisord's socket was the cause.
    diagnosis = _supervisord("Starting supervisor:", "Error: Another program is already listening on a port that one of "
                             "our HTTP", "servers is configured to use.")
    text = diagnosis.fix.text
    assert text.index("pgrep -a supervisord") < text.index("remove the stale socket file")
    assert "`unlink` the file= of [unix_http_server]" in text and ".stackctl/supervisor/supervisor.sock" in text
    assert "pid" not in diagnosis.values


def test_a_supervisord_the_log_shows_running_is_used_or_stopped_and_its_socket_kept():
    diagnosis = _supervisord(_PS_SUPERVISORD, _TAKEN)
    assert diagnosis.values == {"pid": 1444} and "already runs (pid 1444)" in diagnosis.summary
    text = diagnosis.fix.text
    assert "supervisorctl -c THE_SAME_FILE shutdown" in text and "Do not remove its socket file" in text
    assert "unlink" not in text


def test_grep_finding_itself_or_a_killed_supervisord_is_not_one_running():
    grep = "ubuntu    2051  0.0  0.0  14224  1016 pts/0    S+   15:02   0:00 grep --color=auto supervisord"
    for lines in ((grep, _TAKEN), (_PS_SUPERVISORD, "$ kill 1444", _TAKEN)):
        diagnosis = _supervisord(*lines)
        assert "pid" not in diagnosis.values and "remove the stale socket file" in diagnosis.fix.text


def _supervisorctl(*lines: str, cause: Cause = Cause.supervisor_not_running):
    diagnosis = diagnose_log(list(lines), _SUPERVISORD)
    assert diagnosis is not None and diagnosis.cause is cause
    return diagnosis


def test_supervisorctl_without_a_socket_names_each_way_to_its_supervisord():
    """supervisor#994's Python 2 socket.error and openproject#7343's bare message: the log does not say
    which, so the fix starts supervisord, then points supervisorctl at its configuration and sections."""
    for line in (("error: <class 'socket.error'>, [Errno 2] No such file or directory: file: "
                 "/usr/lib/python2.7/socket.py line: 228"), "unix:///var/run/supervisor.sock no such file"):
        diagnosis = _supervisorctl(line)
        text = diagnosis.fix.text
        assert text.index("stackctl up") < text.index("supervisorctl -c FILE") < text.index("[unix_http_server]")
        assert "serverurl" in text and "[rpcinterface:supervisor]" in text
        assert "no [unix_http_server] section" in diagnosis.summary


def test_supervisorctl_refused_on_its_socket_is_a_supervisord_that_stopped():
    # nyzoVerifier#13: after touching the socket file, nothing answers on it.
    diagnosis = _supervisorctl("error: <class 'socket.error'>, [Errno 111] Connection refused: file: "
                               "/usr/lib/python2.7/socket.py line: 228")
    assert "nothing answers on it" in diagnosis.summary and "Touching the socket file" in diagnosis.fix.text


def test_supervisorctl_without_a_socket_while_a_supervisord_runs_is_another_configuration():
    diagnosis = _supervisorctl(_PS_SUPERVISORD, "unix:///tmp/supervisor.sock no such file")
    assert diagnosis.values == {"pid": 1444, "socket": "/tmp/supervisor.sock"}
    assert "started with another configuration file" in diagnosis.summary
    assert diagnosis.fix.text.startswith("run supervisorctl with the configuration file it was started with")
    # A killed one is not running: the general fix again.
    stopped = _supervisorctl(_PS_SUPERVISORD, "$ kill 1444", "unix:///tmp/supervisor.sock no such file")
    assert "pid" not in stopped.values and stopped.fix.text.startswith("start supervisord")


def test_supervisorctl_reading_a_file_without_its_section_keeps_its_own_class():
    diagnosis = diagnose_log(["Error: .ini file does not include supervisorctl section"], _SUPERVISORD)
    assert diagnosis is not None and diagnosis.cause is Cause.supervisorctl_section_missing


_WRONG_SERVER = Cause.supervisorctl_wrong_server


def test_supervisorctl_refused_over_xml_rpc_is_another_server_or_supervisords_password():
    # A blog's 404 (supervisorctl without -c, round 23) and supervisor#1253's 401.
    other = _supervisorctl("error: <class 'xmlrpclib.ProtocolError'>, <ProtocolError for 127.0.0.1/RPC2: 404 Not "
                           "Found>: file: /usr/local/Cellar/supervisor/3.3.5/libexec/lib/python2.7/site-packages/"
                           "supervisor/xmlrpc.py line: 519", cause=_WRONG_SERVER)
    assert other.values == {"status": 404, "server": "127.0.0.1"}
    assert "supervisorctl -c" in other.fix.text and "[inet_http_server]" in other.fix.text and "ss -ltnp" in other.fix.text
    password = _supervisorctl("Server requires authentication",
                              "error: <class 'xmlrpclib.ProtocolError'>, <ProtocolError for 127.0.0.1/RPC2: 401 "
                              "Unauthorized>: file: /usr/lib/python2.7/site-packages/supervisor/xmlrpc.py line: 545",
                              cause=_WRONG_SERVER)
    assert password.values["status"] == 401
    assert "password=" in password.fix.text and "supervisorctl -u USER -p PASSWORD" in password.fix.text


def test_a_supervisord_that_answered_and_failed_or_another_xml_rpc_client_is_not_another_server():
    # supervisor#1600: a 500 is supervisord's own failure; rtorrent_orphan_cleanup#12: rTorrent's /RPC2, not supervisorctl.
    for line in (("error: <class 'xmlrpc.client.ProtocolError'>, <ProtocolError for 127.0.0.1/RPC2: 500 Internal Server "
                 "Error>: file: /usr/lib/python3/dist-packages/supervisor/xmlrpc.py line: 542"),
                 ("xmlrpc.client.ProtocolError: <ProtocolError for myuser:xxx@yyy.feralhosting.com/shakenfr/rutorrent/"
                 "RPC2: 401 Unauthorized>")):
        diagnosis = diagnose_log([line], _SUPERVISORD)
        assert diagnosis is None or diagnosis.cause is not Cause.supervisorctl_wrong_server, line


def _request(line: str):
    diagnosis = diagnose_log([line], DiagnosisContext(service="vllm"))
    assert diagnosis is not None
    return diagnosis


def test_roles_that_must_alternate_are_their_own_cause_with_the_merge_and_the_template():
    # graphrag#564: vLLM relaying a Mistral template's refusal.
    diagnosis = _request("ERROR 07-16 12:08:18 api_server.py:247] Error in applying chat template from request: "
                         "Conversation roles must alternate user/assistant/user/assistant/...")
    assert diagnosis.cause is Cause.roles_must_alternate
    assert (diagnosis.fix.key, diagnosis.fix.flag) == ("vllm.extra_args", "--chat-template")
    text = diagnosis.fix.text
    assert "merge consecutive messages of one role" in text and "STACKCTL_PROXY_SYSTEM_PLACEMENT=front" in text


def test_llama_cpps_template_quote_is_not_the_evidence_its_own_message_is():
    # raycast-openai-translator#34: llama.cpp quotes the template source, then states the exception.
    line = ('srv    operator(): got exception: {"error":{"code":500,"message":"\\n------------\\nWhile executing '
            'CallExpression at line 19, column 27 in source:\\n...% 2 == 0) -%}↵        {{ raise_exception(\\"Conversation '
            'roles must alternate user...\\n                                           ^\\nError: Jinja Exception: '
            'Conversation roles must alternate user/assistant/user/assistant/...","type":"server_error"}}')
    assert _request(line).cause is Cause.roles_must_alternate
    # The template source alone (Mistral's chat template line), as a log quoting it shows it.
    quote_only = "{{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    quoted = diagnose_log([quote_only], DiagnosisContext(service="vllm"))
    assert quoted is None or quoted.cause is not Cause.roles_must_alternate


def test_a_system_message_out_of_place_keeps_its_placement_fix():
    # A template's refusal as an OpenAI client relays it (heldout_round10's wally#77 log).
    diagnosis = _request("400 System message must be at the beginning.")
    assert diagnosis.cause is Cause.system_message_position and "--system-placement in-place" in diagnosis.fix.text


# Prometheus's record cut after its message: the reason on the next line (docker_learning's notes).
_PROMETHEUS_CONFIG = 'level=ERROR msg="Error loading config (--config.file=/etc/prometheus/prometheus.yml)"'


def _prometheus(*lines: str):
    diagnosis = diagnose_log(list(lines), DiagnosisContext(service="prometheus"))
    assert diagnosis is not None
    return diagnosis


def test_a_config_file_prometheus_may_not_open_is_its_mode_even_with_the_reason_on_the_next_line():
    diagnosis = _prometheus(_PROMETHEUS_CONFIG, 'err="open /etc/prometheus/prometheus.yml: permission denied"')
    assert diagnosis.cause is Cause.prometheus_config_permission
    assert diagnosis.values["path"] == "/etc/prometheus/prometheus.yml"
    assert "chmod 644" in diagnosis.fix.text and "65534" in diagnosis.fix.text


def test_a_config_file_missing_with_the_reason_on_the_next_line_is_the_mount_without_it():
    diagnosis = _prometheus(_PROMETHEUS_CONFIG, 'err="open /etc/prometheus/prometheus.yml: no such file or directory"')
    assert diagnosis.cause is Cause.prometheus_config_missing


def test_a_config_that_does_not_parse_stays_a_parse_error_whatever_line_its_reason_is_on():
    # node-epimetheus#41 (an older Prometheus, its reason on the next line) and grafana#57814 (one line).
    wrapped = _prometheus(_PROMETHEUS_CONFIG, 'err="error loading config from \\"prometheus.yml\\": couldn\'t load '
                          'configuration (--config.file=\\"prometheus.yml\\"): parsing YAML file prometheus.yml: yaml: '
                          'unmarshal errors:\\n  line 7: field labels not found in type config.plain"')
    one_line = _prometheus(_PROMETHEUS_CONFIG + ' file=/etc/prometheus/prometheus.yml err="parsing YAML file '
                           '/etc/prometheus/prometheus.yml: yaml: line 8: did not find expected \'-\' indicator"')
    assert wrapped.cause is one_line.cause is Cause.prometheus_config_invalid


def test_nginx_user_directive_naming_a_missing_user_or_group_is_told_from_supervisords():
    # NginxProxyManager#398 and Entware-ng#870 (a group); supervisor's own "Invalid user name" stays its own.
    user = diagnose_log(['nginx: [emerg] getpwnam("nginx") failed in /etc/nginx/nginx.conf:1'], _NGINX)
    assert user is not None and user.cause is Cause.nginx_user_unknown
    assert user.values == {"user": "nginx", "file": "/etc/nginx/nginx.conf"} and "sudo useradd --system" in user.fix.text
    group = diagnose_log(['nginx: [emerg] getgrnam("nobody") failed in /opt/etc/nginx/nginx.conf:2'], _NGINX)
    assert group is not None and group.values["group"] == "nobody" and "sudo groupadd --system nobody" in group.fix.text
    supervisord = diagnose_log([("Error: Invalid user name pythonapp in section 'program:app' (file: "
                                 "'/etc/supervisord.conf')")], _SUPERVISORD)
    assert supervisord is not None and supervisord.cause is Cause.supervisor_user_unknown


_DOCKER = DiagnosisContext(service="docker")


def test_nvidia_container_clis_cuda_unknown_error_is_the_driver_needing_a_reboot_not_a_missing_runtime():
    # libnvidia-container#3 and #103 (a reboot fixed it), nvidia-docker#1060 (reloading the modules).
    unknown = diagnose_log(["nvidia-container-cli: initialization error: cuda error: unknown error"], _DOCKER)
    assert unknown is not None and unknown.cause is Cause.driver_library_mismatch
    assert "reboot the host" in unknown.fix.text and "sudo modprobe nvidia nvidia_uvm" in unknown.fix.text
    # Its neighbours keep their classes: no driver loaded, no runtime, CUDA failing inside the container.
    for line, cause in (("nvidia-container-cli: initialization error: nvml error: driver not loaded",
                         Cause.gpu_driver_not_loaded),
                        ('could not select device driver "" with capabilities: [[gpu]]', Cause.no_gpu_runtime),
                        ("cuInit(0) failed -> CUDA_ERROR_UNKNOWN: unknown error", Cause.cuda_init_unknown)):
        diagnosis = diagnose_log([line], _DOCKER)
        assert diagnosis is not None and diagnosis.cause is cause, line
    # WSL's "os call failed" is another CUDA error, not this one (nvidia-container-toolkit#908).
    wsl = diagnose_log([("nvidia-container-cli: initialization error: cuda error: os call failed or operation not "
                         "supported on this os: unknown.")], _DOCKER)
    assert wsl is None or wsl.cause is not Cause.driver_library_mismatch


def test_nvidia_container_clis_ldconfig_missing_or_failing_names_config_tomls_ldconfig_line():
    # nvidia-docker#587 (127: the program is not there) and nvidia-container-toolkit#147 (code 1).
    missing = diagnose_log(["nvidia-container-cli: ldcache error: process /sbin/ldconfig failed with error code: 127"],
                           _DOCKER)
    assert missing is not None and missing.cause is Cause.nvidia_ldconfig_failed
    assert missing.values == {"path": "/sbin/ldconfig", "code": 127} and "is not there" in missing.summary
    assert "run it on the host" not in missing.fix.text
    failing = diagnose_log([("stderr: nvidia-container-cli: ldcache error: process /sbin/ldconfig.real failed with "
                             "error code: 1: unknown.")], _DOCKER)
    assert failing is not None and failing.cause is Cause.nvidia_ldconfig_failed
    assert "`sudo /sbin/ldconfig.real`" in failing.fix.text and "@/sbin/ldconfig.real" in failing.fix.text


_VLLM = DiagnosisContext(service="vllm")


def test_memory_profiling_with_more_free_memory_after_is_not_too_little_free_at_start():
    # vllm#56830 (GB10 and H100) beside round 24's "Free memory on device ... less than desired" on the same Spark.
    grew = diagnose_log(["AssertionError: Error in memory profiling. Initial free memory 98.0 GiB, current free",
                         "memory 100.59 GiB. This happens when other processes sharing the same container release"],
                        _VLLM)
    assert grew is not None and grew.cause is Cause.memory_profiling_free_memory_grew
    assert grew.values == {"initial_free_gib": 98.0, "current_free_gib": 100.59}
    assert (grew.fix.key, grew.fix.flag) == ("vllm.extra_args", "--kv-cache-memory-bytes")
    short = diagnose_log(["ValueError: Free memory on device cuda:0 (104.5/121.69 GiB) on startup is less than",
                          "desired GPU memory utilization (0.92, 111.95 GiB)."], _VLLM)
    assert short is not None and short.cause is Cause.free_memory_below_target


def test_ptx_from_a_newer_toolchain_names_the_images_entrypoint_and_the_driver_not_ptxas():
    # vllm#31700; Triton's ptxas not knowing sm_121 stays its own (TRITON_PTXAS_PATH).
    ptx = diagnose_log([("torch.AcceleratorError: CUDA error: the provided PTX was compiled with an unsupported "
                         "toolchain.")], _VLLM)
    assert ptx is not None and ptx.cause is Cause.ptx_toolchain_unsupported and ptx.fix.key == "images.vllm"
    assert "nvidia_entrypoint.sh" in ptx.fix.text and "update the host driver" in ptx.fix.text
    ptxas = diagnose_log(["ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'"], _VLLM)
    assert ptxas is not None and ptxas.cause is Cause.ptxas_unknown_arch


def test_a_challenge_answered_wrongly_is_a_redirect_or_another_server_not_an_unreachable_host():
    # fastapi-nginx-gunicorn#5: a 404 at https:// after nginx redirected the challenge; certbot#10028: a CDN's 522.
    redirected = diagnose_log([("  Detail: 88.204.254.236: Invalid response from https://chat.iuth.edu.kz/.well-known/"
                                "acme-challenge/X4--aVCXhgZWsXhBgqAKgmini5ydT0tER3yNFLH2keE: 404")], _CERTBOT)
    assert redirected is not None and redirected.cause is Cause.certbot_challenge_wrong_answer
    assert redirected.values["status"] == 404 and "a redirect took it" in redirected.summary
    assert "before any redirect" in redirected.fix.text and redirected.fix.key == "hostname"
    cdn = diagnose_log([("  Detail: During secondary validation: 2a06:98c1:3121::1: Invalid response from "
                         "http://test.moonbyte.net/.well-known/acme-challenge/Vc8OqajF2pYc6fHsFFOC-tJDTtogtFgBkAHh_UTIV_o"
                         ": 522")], _CERTBOT)
    assert cdn is not None and cdn.cause is Cause.certbot_challenge_unreachable


def test_an_address_this_host_lacks_is_the_listen_setting_not_a_port_in_use():
    # compassvpn/agent#117 (node-exporter on the Docker bridge's address), unpoller#629 (another VM's address),
    # llama-cpp-python#77 (uvicorn on ::1 with IPv6 off), NixOS/nixpkgs#5832 (nginx at boot).
    exporter = diagnose_log(["listen tcp 172.17.0.1:9100: bind: cannot assign requested address"],
                            DiagnosisContext(service="node-exporter"))
    assert exporter is not None and exporter.cause is Cause.listen_address_not_on_host
    assert exporter.fix.flag == "--web.listen-address" and ":9100 or 0.0.0.0:9100" in exporter.fix.text
    assert exporter.values == {"address": "172.17.0.1", "port": 9100}
    other_vm = diagnose_log(["[ERROR] listen tcp 192.168.2.65:9100: bind: cannot assign requested address"],
                            DiagnosisContext(service="prometheus"))
    assert other_vm.cause is Cause.listen_address_not_on_host and other_vm.fix.key == "hosts"
    assert "hosts.NAME.address" in other_vm.fix.text
    ipv6 = diagnose_log([("ERROR:    [Errno 99] error while attempting to bind on address ('::1', 8000, 0, 0): cannot "
                          "assign requested address")], _VLLM)
    assert ipv6.cause is Cause.listen_address_not_on_host and (ipv6.fix.key, ipv6.fix.flag) == ("vllm.extra_args",
                                                                                                 "--host")
    assert "[::1]:8000" in ipv6.summary and "IPv6 is off" in ipv6.fix.text
    boot = diagnose_log(["nginx: [emerg] bind() to 203.0.113.7:80 failed (99: Cannot assign requested address)"], _NGINX)
    assert boot.cause is Cause.listen_address_not_on_host and "`listen ADDRESS:PORT`" in boot.fix.text
    assert "network-online.target" in boot.fix.text


def test_a_port_in_use_and_a_clients_connect_keep_their_own_reading():
    # vllm#7514: uvicorn's same words with errno 98; prometheus#10774's listener; engintron#938: nginx's upstream
    # connect() out of local ports is a client's error, not a listen address.
    taken = diagnose_log([("ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address "
                          "already in use")], _VLLM)
    assert taken.cause is Cause.port_in_use
    go_taken = diagnose_log([('ts=2022-05-30T12:28:58.118Z caller=main.go:775 level=error msg="Unable to start web '
                             'listener" err="listen tcp 0.0.0.0:9090: bind: Only one usage of each socket address '
                             '(protocol/network address/port) is normally permitted."')],
                            DiagnosisContext(service="prometheus"))
    assert go_taken.cause is Cause.port_in_use
    connect = diagnose_log([("2018/09/29 23:34:57 [crit] 4793#4793: *210641 connect() to 10.1.2.3:80 failed (99: Cannot "
                             "assign requested address) while connecting to upstream, client: 10.1.2.4, server: "
                             'localhost, request: "GET /?sitemap84.xml HTTP/1.1", upstream: "http://10.1.2.3:80/"')],
                           _NGINX)
    assert connect is None or connect.cause is not Cause.listen_address_not_on_host


def test_grafanas_missing_provisioning_directories_name_the_volumes_mount_of_each_subdirectory():
    # website-monitoring#8: the whole provisioning tree bind-mounted over the image's, without plugins/ and notifiers/.
    said = diagnose_log([('t=2023-02-13T19:33:18+0000 lvl=eror msg="Failed to read plugin provisioning files from '
                          'directory" logger=provisioning.plugins path=/etc/grafana/provisioning/plugins error="open '
                          '/etc/grafana/provisioning/plugins: no such file or directory"')],
                        DiagnosisContext(service="grafana"))
    assert said is not None and said.cause is Cause.grafana_provisioning_incomplete
    assert "volumes:" in said.fix.text
    assert "./provisioning/datasources:/etc/grafana/provisioning/datasources" in said.fix.text
    assert "mkdir -p /etc/grafana/provisioning/plugins" in said.fix.text


_PROMETHEUS = DiagnosisContext(service="prometheus")


def test_a_scrape_jobs_field_outside_any_job_is_the_section_not_the_release():
    # prometheus-operator#7196 (fallback_scrape_protocol rendered under global:), besu-docs#504 (job_name at the top).
    reload = ('time=2024-12-16T01:29:12.923Z level=ERROR source=main.go:1162 msg="Error reloading config" '
              'err="couldn\'t load configuration (--config.file=\\"/etc/prometheus/config_out/prometheus.env.yaml\\"): '
              'parsing YAML file /etc/prometheus/config_out/prometheus.env.yaml: yaml: unmarshal errors:\\n  line 3: '
              'field fallback_scrape_protocol not found in type config.plain"')
    misplaced = diagnose_log([reload], _PROMETHEUS)
    assert misplaced is not None and misplaced.cause is Cause.prometheus_config_field_misplaced
    assert misplaced.values == {"fields": "fallback_scrape_protocol", "line": 3}
    assert "under a scrape_configs entry" in misplaced.fix.text and "global: has none" in misplaced.fix.text
    assert misplaced.fix.key is None
    top = diagnose_log(["field job_name not found in type config.plain"], _PROMETHEUS)
    assert top.cause is Cause.prometheus_config_field_misplaced and "Prometheus 3.0" not in top.fix.text


def test_a_field_unknown_inside_a_job_or_unknown_anywhere_keeps_its_class():
    # prometheus-playground#2: inside a job on Prometheus 2 (config.ScrapeConfig): the image is older than the file.
    newer = diagnose_log([('ts=2025-07-09T06:48:27.678Z caller=main.go:537 level=error msg="Error loading config '
                           '(--config.file=/opt/prometheus/prometheus.yml)" file=/opt/prometheus/prometheus.yml '
                           'err="parsing YAML file /opt/prometheus/prometheus.yml: yaml: unmarshal errors:\\n  line 4: '
                           'field fallback_scrape_protocol not found in type config.ScrapeConfig"')], _PROMETHEUS)
    assert newer.cause is Cause.prometheus_config_field_newer and newer.fix.key == "images.prometheus"
    # kubecost#410: a field no Prometheus knows at the top level; prometheus#8156: a typo inside a job.
    unknown = diagnose_log([('err="error loading config from \\"/etc/config/prometheus.yml\\": couldn\'t load '
                             'configuration (--config.file=\\"/etc/config/prometheus.yml\\"): parsing YAML file '
                             '/etc/config/prometheus.yml: yaml: unmarshal errors:\\n  line 2: field clusterIDConfigmap '
                             'not found in type config.plain"')], _PROMETHEUS)
    assert unknown.cause is Cause.prometheus_config_invalid
    typo = diagnose_log([('failed to reload config: couldn\'t load configuration (--config.file="/config/prometheus.yml"): '
                         'parsing YAML file /config/prometheus.yml: yaml: unmarshal errors:'),
                         "  line 53: field metric_path not found in type config.ScrapeConfig"], _PROMETHEUS)
    assert typo.cause is Cause.prometheus_config_invalid


def test_free_memory_below_the_target_is_read_whole_where_it_wraps_after_on_startup():
    # Round 27's GB10 notes: the message broken after "on startup", a second vLLM holding the GPU.
    wrapped = diagnose_log(["ValueError: Free memory on device cuda:0 (2.6/121.63 GiB) on startup",
                            "is less than desired GPU memory utilization (0.08, 9.73 GiB)"], _VLLM)
    assert wrapped is not None and wrapped.cause is Cause.free_memory_below_target
    assert wrapped.values == {"free_gib": 2.6, "total_gib": 121.63, "gpu_memory_utilization": 0.08}
    # Most of the GPU was taken before this vLLM allocated: the other process leads the fix.
    assert wrapped.fix.text.startswith("another process holds 119.0 of 121.63 GiB")
    assert "lower the other vLLM's --gpu-memory-utilization" in wrapped.fix.text
    assert (wrapped.fix.key, wrapped.fix.value) == ("vllm.gpu_memory_utilization", "0.02")
    # vllm#20305's form on one line, most of the GPU free: this vLLM's own share is what to lower.
    own = diagnose_log([("ValueError: Free memory on device (59.32/79.15 GiB) on startup is less than desired GPU "
                         "memory utilization (0.9, 71.24 GiB). Decrease GPU memory utilization or reduce GPU memory "
                         "used by other processes.")], _VLLM)
    assert own.fix.text.startswith("set vllm.gpu_memory_utilization to 0.74 or less")
    # A line that only mentions the free memory on startup, with no refusal after it, is not this class.
    info = diagnose_log(["INFO [gpu_worker.py:104] Free memory on device cuda:0 on startup: 118.2 GiB"], _VLLM)
    assert info is None or info.cause is not Cause.free_memory_below_target


@pytest.mark.parametrize(("line", "module"), [
    # Round 27's GB10 notes; px1800kbd#10 and nct6687d#99 (modprobe), nvhda#8 and rtl8723au#58 (older kernels'
    # ENOKEY), acer-predator-turbo#113 (insmod of a path), gasket-driver#11 (systemd-modules-load).
    ("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service", "nvidia"),
    ("modprobe: ERROR: could not insert 'nct6687': Key was rejected by service", "nct6687"),
    ("modprobe: ERROR: could not insert 'nvhda': Required key not available", "nvhda"),
    ("insmod: ERROR: could not insert module src/facer.ko: Key was rejected by service", "facer"),
    ("Apr 22 18:10:16 host systemd-modules-load[602]: Failed to insert module 'gasket': Key was rejected by service",
     "gasket"),
])
def test_a_kernel_module_secure_boot_refuses_names_the_mok_enrollment(line, module):
    refused = diagnose_log([line], _DOCKER)
    assert refused is not None and refused.cause is Cause.kernel_module_unsigned and refused.values == {"module": module}
    assert "Secure Boot" in refused.summary and "mokutil --import" in refused.fix.text
    assert "Enroll MOK" in refused.fix.text and "Secure Boot off" in refused.fix.text
    # Only the NVIDIA driver's modules lead on to nvidia-smi and the stack.
    assert ("stackctl up" in refused.fix.text) is (module == "nvidia")


def test_the_nvidia_module_missing_for_the_running_kernel_names_its_modules_package_or_the_previous_kernel():
    # labweaver_v2's kernel hold notes: a kernel update whose linux-modules-nvidia package did not follow.
    missing = diagnose_log(["modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-60-generic"],
                           _DOCKER)
    assert missing is not None and missing.cause is Cause.gpu_driver_not_loaded
    assert missing.values == {"module": "nvidia", "kernel": "6.8.0-60-generic"}
    assert "linux-modules-nvidia-580-open-$(uname -r)" in missing.fix.text and "boot the previous kernel" in missing.fix.text
    # NVML's "driver not loaded" keeps its class and its fix, and names the same cause for a kernel update.
    unloaded = diagnose_log(["nvidia-container-cli: initialization error: nvml error: driver not loaded"], _DOCKER)
    assert unloaded.cause is Cause.gpu_driver_not_loaded
    assert unloaded.fix.text.startswith("make the host driver work first: `nvidia-smi` on the host must list the GPU")
    assert "linux-modules-nvidia" in unloaded.fix.text and "boot the previous kernel" in unloaded.fix.text
    # Neighbours that are no signing refusal and no missing NVIDIA module keep out of both classes.
    for line in ("modprobe: ERROR: could not insert 'nvidia': No such device",
                 "modprobe: FATAL: Module xt_set not found in directory /lib/modules/5.10.120-tegra"):
        other = diagnose_log([line], _DOCKER)
        assert other is None or other.cause not in (Cause.kernel_module_unsigned, Cause.gpu_driver_not_loaded), line
