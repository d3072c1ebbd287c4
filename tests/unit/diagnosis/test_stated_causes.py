"""Causes an error line states, read by the fallback where no signature knows the failure: two
components whose versions do not match, a unix socket with no server behind it (or one refusing this
user), an image the registry refuses. Each with its neighbours that state no such cause. The lines are
real: from tests/data, or quoted from the public report named beside them."""

from __future__ import annotations

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis.diagnose import context_for
from stackctl.diagnosis.remedy import Remedy, RemedyKind
from stackctl.diagnosis.stack_keys import placement
from stackctl.diagnosis.stated_causes import stated_causes
from tests.unit.diagnosis.reading import read_by_fallback

_DEFAULTS = parse_stack_config({})


def _causes(line: str, service: str):
    return stated_causes([line], context_for(service, _DEFAULTS))


# --- versions that do not match ---------------------------------------------------------------------

def test_a_name_the_installed_package_lacks_names_that_package_and_the_engines_image():
    # Loong#12 (held-out round 9): outlines newer than the vLLM that imports it.
    line = ("ImportError: cannot import name 'build_regex_from_schema' from 'outlines.fsm.json_schema' "
            "(/home/anaconda3/envs/Finance_Baseline/lib/python3.9/site-packages/outlines/fsm/json_schema.py)")
    fix = read_by_fallback([line], "vllm", failed=True).fix
    assert fix.text.startswith("the error states its cause: the installed outlines has no build_regex_from_schema")
    assert fix.key == "images.vllm" and "stackctl install-engine" in fix.text and "pip check" in fix.text


def test_a_package_found_nowhere_is_no_version_mismatch():
    # vllm#5086: a directory named vllm shadows the package ("unknown location").
    assert _causes("ImportError: cannot import name 'LLM' from 'vllm' (unknown location)", "vllm") == []


def test_an_undefined_symbol_names_the_library_it_belongs_to_and_the_module_built_against_another():
    # vllm#3147 (held-out round 5): vLLM's extension built against another torch (at::_ops is PyTorch's).
    line = ("ImportError: /usr/local/lib/python3.10/dist-packages/vllm/_C.cpython-310-x86_64-linux-gnu.so: undefined "
            "symbol: _ZN2at4_ops15to_dtype_layout4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEE")
    fix = read_by_fallback([line], "vllm", failed=True).fix
    assert "vllm was compiled against another torch than the one installed" in fix.text
    assert fix.key == "images.vllm" and "ABI" in fix.text and "stackctl install-engine" in fix.text
    # vllm#13608: a source build's extension, outside site-packages: its package is its directory.
    [cause] = _causes("ImportError: /workspace/vllm-abo/vllm/_C.abi3.so: undefined symbol: "
                      "_ZN5torch3jit17parseSchemaOrNameERKSsb", "vllm")
    assert cause.text.startswith("vllm was compiled against another torch")


def test_a_cuda_driver_symbol_missing_is_a_driver_too_old_not_a_rebuild():
    # vllm#11623: cuTensorMapEncodeTiled is the CUDA driver API's (libcuda, from the driver).
    line = ("WARNING 12-30 17:06:52 _custom_ops.py:19] Failed to import from vllm._C with ImportError('/usr/local/app/"
            ".local/lib/python3.8/site-packages/vllm/_C.abi3.so: undefined symbol: cuTensorMapEncodeTiled')")
    [cause] = _causes(line, "vllm")
    assert "update the host's NVIDIA driver" in cause.text and "ABI" not in cause.text


def test_pips_requires_but_you_have_names_the_pin_with_its_versions():
    # hiyouga/EasyR1#27 and vllm#2747: pip's resolver after an install over the engine.
    [torch] = _causes("vllm 0.7.3 requires torch==2.5.1, but you have torch 2.4.0+cu124 which is incompatible.", "vllm")
    assert torch.name == "version mismatch: torch" and torch.key == "images.vllm"
    assert "vllm 0.7.3 requires torch==2.5.1 but torch 2.4.0+cu124 is installed" in torch.text
    assert "pin torch==2.5.1" in torch.text
    [pydantic] = _causes("outlines 0.0.37 requires pydantic>=2.0, but you have pydantic 1.10.13 which is "
                         "incompatible.", "vllm")
    assert "pin pydantic>=2.0" in pydantic.text


def test_numpys_c_api_mismatch_names_numpy_and_both_versions():
    # zju3dv/NeuralRecon#147.
    [cause] = _causes("RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xe",
                      "vllm")
    assert cause.name == "version mismatch: numpy" and "API version 0x10 but numpy's is 0xe" in cause.text


def test_an_api_version_mismatch_names_the_services_image_to_update_or_roll_back():
    # dcgm-exporter#80 (held-out round 10): the exporter's DCGM bindings against the host's.
    fix = read_by_fallback(['time="2022-07-19T14:22:41Z" level=fatal msg="Error getting device busid: API version mismatch"'],
                    "gpu-exporter", failed=True).fix
    assert fix.key == "images.gpu-exporter" and "roll back" in fix.text
    assert "gpu-exporter's image and the library it talks to are of different releases" in fix.text
    # gpu-monitoring-tools#165: where the line names the API, the fix does.
    [dcgm] = _causes('time="2021-03-11T18:34:25+08:00" level=fatal msg="Error retrieving DCGM MIG hierarchy: API '
                     'version mismatch"', "gpu-exporter")
    assert dcgm.name == "version mismatch: DCGM" and "the DCGM it talks to" in dcgm.text


def test_the_nvidia_drivers_own_mismatch_is_a_reboot_not_an_image():
    # nvidia-container-toolkit#394 (held-out round 3).
    fix = read_by_fallback([("nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: "
                     "unknown")], "docker", failed=True).fix
    assert "reboot" in fix.text and "rmmod" in fix.text and fix.key is None


# --- a unix socket with no server behind it ---------------------------------------------------------

def test_supervisorctls_missing_socket_says_start_supervisord_or_point_supervisorctl_at_its_socket():
    # supervisor#121 (held-out round 16) and #1259 (round 21: Python 2's socket error names no path).
    for line in ("unix:///var/run/supervisor.sock no such file",
                 ("error: <class 'socket.error'>, [Errno 2] No such file or directory: file: "
                 "/usr/lib/python2.7/socket.py line: 228")):
        fix = read_by_fallback([line], "supervisord", failed=True).fix
        assert "start supervisord" in fix.text and "supervisorctl -c" in fix.text and "serverurl" in fix.text


def test_dockers_socket_missing_names_rootless_and_system_docker_and_old_compose_adds_the_group():
    # cmc-csci143#454 (held-out round 3): a rootless engine's socket.
    rootless = read_by_fallback([("Cannot connect to the Docker daemon at unix:///run/user/1351/docker.sock. Is the docker "
                          "daemon running?")], "docker", failed=True).fix
    assert "systemctl --user start docker" in rootless.text and "DOCKER_HOST" in rootless.text
    assert rootless.key == "runtime"
    # compose#4181 (held-out round 4): docker-compose 1.x says this also for a socket that refuses the user.
    old = read_by_fallback(["ERROR: Couldn't connect to Docker daemon at http+docker://localunixsocket - is it running?"],
                    "docker", failed=True).fix
    assert "sudo systemctl enable --now docker" in old.text and "docker group" in old.text
    # go-dockerclient#760: a Go client's dial.
    [cause] = _causes("create container failed: Post http://unix.sock/containers/create?name=x: dial unix "
                      "/var/run/docker.sock: connect: no such file or directory", "docker")
    assert cause.name == "socket: docker"


def test_a_socket_named_for_another_server_says_start_that_server():
    # nginx-php-fpm#247: nginx's upstream socket with nothing accepting on it.
    [cause] = _causes("connect() to unix:/var/run/php-fpm.sock failed (111: Connection refused) while connecting "
                      "to upstream,", "nginx")
    assert cause.text.startswith("nothing answers on /var/run/php-fpm.sock (a socket file its server left behind")
    assert "start php-fpm" in cause.text
    # containerd#10432: crictl's dial to the kubelet's old dockershim socket.
    [shim] = _causes('FATA[0001] getting status of runtime: rpc error: code = Unavailable desc = connection error: '
                     'desc = "transport: Error while dialing dial unix /var/run/dockershim.sock: connect: no such file '
                     'or directory"', "docker")
    assert "start dockershim" in shim.text


def test_a_socket_that_refuses_the_user_names_the_docker_group():
    # biorad#28 (held-out round 2).
    fix = read_by_fallback([("docker: Got permission denied while trying to connect to the Docker daemon socket at "
                     "unix:///var/run/docker.sock: Post http://%2Fvar%2Frun%2Fdocker.sock/v1.26/containers/create?"
                     "name=hello-world: dial unix /var/run/docker.sock: connect: permission denied.")], "docker", failed=True).fix
    assert "docker group" in fix.text and "usermod -aG docker" in fix.text and fix.key == "runtime"


def test_neighbours_a_tcp_refusal_and_a_server_that_cannot_create_its_socket_state_no_missing_server():
    # grafana's datasource to a Prometheus not up (TCP, not a socket); containerd#625: the server itself
    # cannot bind its socket (its directory missing); supervisor#1183: supervisord cannot open its own.
    for line, service in ((('Post "http://localhost:9090/api/v1/query": dial tcp 127.0.0.1:9090: connect: connection '
                           'refused'), "grafana"),
                          (("FATA[0000] can't create unix socket /run/containerd/containerd.sock: listen unix "
                           "/run/containerd/containerd.sock: bind: no such file or directory"), "docker"),
                          ("Error: Cannot open an HTTP server: socket.error reported errno.EACCES (13)", "supervisord")):
        assert not [cause for cause in _causes(line, service) if cause.name.startswith("socket")]


# --- an image the registry refuses --------------------------------------------------------------------

def test_a_refused_pull_names_the_image_its_key_a_local_build_and_the_login_last():
    # edit-mind#113 (held-out round 4): two images of a Compose project, never pushed.
    fix = read_by_fallback([("get errors during pull: \"pull access denied for edit-mind-web, repository does not exist or "
                     "may require 'docker login': denied: requested access to the resource is denied\" and \"pull "
                     "access denied for edit-mind-ml, repository does not exist or may require 'docker login'\"")],
                    "docker", failed=True).fix
    assert fix.text.startswith("the error states its cause: the registry refuses edit-mind-web, edit-mind-ml")
    assert "image name" in fix.text and "docker compose build" in fix.text
    assert "run `docker login`" not in fix.text  # the login is said once, after the name to check
    # vllm#17114: a tag that does not exist, for the engine's image.
    tpu = read_by_fallback([("Error response from daemon: manifest for vllm/vllm-tpu:latest not found: manifest unknown: "
                     "manifest unknown")], "vllm", failed=True).fix
    assert tpu.key == "images.vllm" and "vllm/vllm-tpu:latest" in tpu.text
    # dynamo#515: a private registry's login names the registry.
    [nvcr] = _causes("Error response from daemon: pull access denied for nvcr.io/nvidian/nim-llm-dev/yatai-bentos-jsm3, "
                     "repository does not exist or may require 'docker login': denied: requested access to the "
                     "resource is denied", "vllm")
    assert "`docker login nvcr.io`" in nvcr.text


def test_a_pull_rate_limit_is_no_refused_image():
    # play-with-docker#422's neighbour class: Docker Hub's limit, not a wrong name.
    assert _causes("Error response from daemon: toomanyrequests: You have reached your unauthenticated pull rate "
                   "limit. https://www.docker.com/increase-rate-limit", "docker") == []


@pytest.mark.parametrize(("service", "where"), [("docker", "run `docker login` on this host"),
                                                ("compose", "run `docker login` on this host"),
                                                ("vllm", "run `docker login` where vllm runs")])
def test_a_command_for_the_docker_client_runs_on_this_host(service, where):
    assert placement(Remedy(RemedyKind.command, "docker login"), service).text.startswith(where)


# --- what a service needs from the host and does not find ---------------------------------------------

def test_docker_without_a_gpu_device_driver_names_the_toolkit_its_registration_and_the_snap():
    # nvidia-docker#1034 (held-out round 10) and #1637 (round 12: a snap Docker).
    fix = read_by_fallback([('docker: Error response from daemon: could not select device driver "" with capabilities: '
                     '[[gpu]].')], "docker", failed=True).fix
    assert "nvidia-container-toolkit" in fix.text and "nvidia-ctk runtime configure --runtime=docker" in fix.text
    assert "systemctl restart docker" in fix.text and "snap" in fix.text
    # stable-diffusion-webui-docker#130: a driver named, the same refusal.
    assert [cause.name for cause in _causes('Error response from daemon: could not select device driver "nvidia" '
                                            'with capabilities: [[gpu]]', "docker")] == ["no GPU device driver"]
    # Compose's `gpus: all` asks with no capability named (what tests/e2e/test_compose_faults.py reads).
    assert _causes('Error response from daemon: could not select device driver "" with capabilities: []',
                   "docker")[0].name == "no GPU device driver"


def test_a_runtime_name_docker_lacks_is_no_missing_device_driver():
    # duix-avatar#247: --runtime=nvidia on a daemon without it registered is its own failure.
    assert _causes("Error response from daemon: unknown or invalid runtime name: nvidia", "docker") == []


def test_an_upstream_name_nginx_cannot_resolve_is_named_with_its_compose_remedies():
    # dnmp#421 (held-out round 2) and docker-magento#25 (round 7: with its port).
    fix = read_by_fallback(['nginx: [emerg] host not found in upstream "php" in /etc/nginx/conf.d/localhost.conf:30'],
                    "nginx", failed=True).fix
    assert fix.key == "hosts" and "upstream host php" in fix.text and "`getent hosts php`" in fix.text
    assert "depends_on:" in fix.text and "resolver 127.0.0.11" in fix.text
    [port] = _causes('nginx: [emerg] host not found in upstream "php-fpm:9000" in /etc/nginx/conf.d/default.conf:2',
                     "nginx")
    assert port.name == "upstream host: php-fpm"


def test_nginxs_other_upstream_failures_state_no_unresolved_name():
    # nginx-proxy#1085: the name resolved and nothing listened; an upstream's own header too big.
    for line in (("2018/03/06 06:38:39 [error] 52#52: *1 connect() failed (111: Connection refused) while connecting "
                 "to upstream, client: 172.17.152.103"),
                 ("2016/11/29 18:10:10 [error] 64#0: *59606 upstream sent too big header while reading response "
                 "header from upstream")):
        assert not [cause for cause in _causes(line, "nginx") if cause.name.startswith("upstream host")]


def test_the_hubs_refusal_without_a_token_names_hf_token_and_the_repository_beside_it():
    # optimum-neuron#535 (held-out round 1): the repository is named on the line after the error.
    fix = read_by_fallback(["huggingface_hub.utils._errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-6604c5e0)",
                     ("Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-2-7b-chat-hf/resolve/"
                     "main/config.json.")], "vllm", failed=True).fix
    assert fix.env == "HF_TOKEN" and "https://huggingface.co/meta-llama/Llama-2-7b-chat-hf" in fix.text
    # basaran#289 (round 1): requests' words for the same refusal.
    [cause] = _causes("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/"
                      "meta-llama/Llama-2-7b-chat-hf/resolve/main/tokenizer_config.json", "vllm")
    assert cause.env == "HF_TOKEN"


def test_a_401_from_another_server_is_no_gated_model():
    # vLLM's API server refusing a request without its key; supervisorctl refused by supervisord's password.
    for line in (('(APIServer pid=3999075) INFO:     127.0.0.1:46686 - "GET /v1/chat/completions HTTP/1.1" 401 '
                 "Unauthorized"),
                 ("error: <class 'xmlrpc.client.ProtocolError'>, <ProtocolError for 127.0.0.1/RPC2: 401 Unauthorized>: "
                 "file: /usr/local/lib/python3.8/dist-packages/supervisor/xmlrpc.py line: 542")):
        assert _causes(line, "vllm") == []


# --- what the services around it state --------------------------------------------------------------

def test_exec_format_error_is_a_program_of_another_architecture_with_the_services_image():
    # xandikos#227 (held-out round 3) in node-exporter's log; the AEON DFlash image (round 19) on an amd64 host.
    fix = read_by_fallback(["exec /usr/bin/python3: exec format error"], "node-exporter", failed=True).fix
    assert fix.text.startswith("the error states its cause: a program in the image is built for another CPU architecture")
    assert fix.key == "images.node-exporter" and "uname -m" in fix.text and "an arm64 image" in fix.text
    docker = read_by_fallback([("The requested image's platform (linux/arm64) does not match the detected host platform "
                        "(linux/amd64/v3)")], "docker", failed=True).fix
    assert "built for linux/arm64 and this host is linux/amd64/v3" in docker.text and docker.key is None
    assert read_by_fallback(["exec /usr/local/bin/python: exec format error"], "ray-head", failed=True).fix.key == "images.vllm"


def test_a_program_not_found_or_not_executable_is_no_other_architecture():
    assert _causes('exec: "nvidia-smi": executable file not found in $PATH', "gpu-exporter") == []
    assert _causes("exec /docker-entrypoint.sh: permission denied", "grafana") == []


def test_a_refused_connection_names_what_should_listen_there_and_its_key():
    # nginx-proxy#1085 (held-out round 1): stackctl's nginx has one upstream, the filter-proxy, whatever the port.
    nginx = read_by_fallback([('nginx.1    | 2018/03/06 06:38:39 [error] 52#52: *1 connect() failed (111: Connection refused) '
                        'while connecting to upstream, client: 172.17.152.103, server: one.example.com, request: "GET / '
                        'HTTP/1.1", upstream: "http://172.19.0.3:80/", host: "one.example.com"')], "nginx", failed=True).fix
    assert nginx.key == "ports.proxy" and "nothing listens on 172.19.0.3:80" in nginx.text
    assert "stackctl logs filter-proxy --explain" in nginx.text and "bind it to 0.0.0.0" in nginx.text
    # grafana#29296 (round 5): Grafana's datasource at Prometheus's port.
    grafana = read_by_fallback([('tsdb.HandleRequest() error Post "http://localhost:9090/api/v1/query_range": dial tcp '
                          '127.0.0.1:9090: connect: connection refused')], "grafana", failed=True).fix
    assert grafana.key == "ports.prometheus" and "stackctl logs prometheus --explain" in grafana.text
    # node_exporter#1027 (round 14): curl at a mistyped listen address.
    curl = read_by_fallback(["curl: (7) Failed connect to 172.4.0.1:9092; Connection refused"], "node-exporter", failed=True).fix
    assert "nothing listens on 172.4.0.1:9092" in curl.text and "--web.listen-address names: check it for a typo" in curl.text


def test_other_connection_failures_state_no_refusal():
    # engintron#938: out of local ports; a route or a name that fails is not a server that refused.
    assert _causes("connect() to 10.1.2.3:80 failed (99: Cannot assign requested address) while connecting to upstream",
                   "nginx") == []
    assert _causes("dial tcp 10.0.0.7:9100: connect: no route to host", "prometheus") == []
    assert _causes("dial tcp: lookup grafana.com on 127.0.0.11:53: server misbehaving", "grafana") == []


def test_an_upstreams_header_past_nginxs_buffer_names_proxy_buffer_size():
    # deis/router#293 (round 11); a closed upstream is another failure.
    line = ('2016/11/29 18:10:10 [error] 64#0: *59606 upstream sent too big header while reading response header from '
            'upstream, client: 100.96.2.1, server: ~^subdomain\\.(?<domain>.+)$, request: "GET / HTTP/1.1", upstream: '
            '"http://101.69.46.220:80/", host: "subdomain.example.com"')
    fix = read_by_fallback([line], "nginx", failed=True).fix
    assert "proxy_buffer_size 16k; proxy_buffers 8 16k; proxy_busy_buffers_size 32k;" in fix.text and fix.key is None
    closed = _causes("upstream prematurely closed connection while reading response header from upstream", "nginx")
    assert [cause.name for cause in closed] == ["upstream closed early: unnamed"]  # round 38's reading, not the buffer


# --- text a program could not encode -----------------------------------------------------------------

_ENCODE = "UnicodeEncodeError: 'ascii' codec can't encode {what} in position {position}: ordinal not in range(128)"


def test_a_bare_unicode_encode_error_in_vllm_names_hf_token_with_non_ascii_characters_then_the_locale():
    # Round 27's GB10 notes: position 7 is the first character after "Bearer ", the token's own.
    fix = read_by_fallback([_ENCODE.format(what="characters", position="7-10")], "vllm", failed=True).fix
    assert fix.env == "HF_TOKEN" and "retype HF_TOKEN in .env with plain ASCII" in fix.text
    assert "non-ASCII" in fix.text and "the first character after `Bearer `" in fix.text
    # Nothing ties it to a header: a position elsewhere names the locale too, after the token.
    elsewhere = read_by_fallback([_ENCODE.format(what="character '\\u2019'", position="0")], "vllm", failed=True).fix
    assert "Bearer `" not in elsewhere.text and elsewhere.text.index("HF_TOKEN") < elsewhere.text.index("LANG=C.UTF-8")


def test_a_unicode_encode_error_raised_building_a_header_names_the_token_and_not_the_locale():
    # groq-python#16 and crewAI#755: httpx's normalize_header_value refusing a pasted API key.
    lines = ["Traceback (most recent call last):",
             '  File "/opt/anaconda3/lib/python3.11/site-packages/httpx/_utils.py", line 53, in normalize_header_value',
             '    return value.encode(encoding or "ascii")',
             _ENCODE.format(what="character '\\u200b'", position="140")]
    fix = read_by_fallback(lines, "vllm", failed=True).fix
    assert fix.env == "HF_TOKEN" and "`Authorization: Bearer <token>`" in fix.text and "LANG" not in fix.text
    # The filter-proxy's clients read their own keys: no HF_TOKEN there.
    proxy = read_by_fallback(lines, "proxy", failed=True).fix
    assert proxy.env is None and "retype the token or API key in .env" in proxy.text


def test_a_unicode_encode_error_writing_output_names_the_locale_not_a_token():
    # lecli#31's line, raised where logging writes to an ASCII-only stream.
    lines = ["Traceback (most recent call last):",
             '  File "/usr/lib/python3.10/logging/__init__.py", line 1103, in emit',
             "    stream.write(msg + self.terminator)",
             _ENCODE.format(what="character u'\\xfc'", position="30")]
    fix = read_by_fallback(lines, "vllm", failed=True).fix
    assert fix.env == "LANG" and "LANG=C.UTF-8" in fix.text and "HF_TOKEN" not in fix.text


def test_a_unicode_decode_error_or_another_codec_states_no_encoding_cause():
    # httpie#212's decode error and a UTF-8 codec's refusal are other failures.
    assert _causes("UnicodeDecodeError: 'ascii' codec can't decode byte 0xc3 in position 20: ordinal not in range(128)",
                   "vllm") == []
    assert _causes("UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud83d' in position 3: surrogates not "
                   "allowed", "vllm") == []
