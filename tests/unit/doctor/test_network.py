"""Ports (real sockets), nginx site files in a fake /etc, HF_TOKEN and .env mode."""

import os
import socket
import subprocess
import sys

from stackctl.doctor.network import (
    check_env_file,
    check_hf_token,
    check_nginx_upstreams,
    check_ports,
)
from stackctl.doctor.result import Status
from stackctl.host import HostFacts
from stackctl.profiles import MODEL_PROFILES
from stackctl.profiles.model_profiles import ModelProfile
from tests.support.fakehost import by_name, context, make_host
from tests.support.processes import free_ports
from tests.support.stack_builder import make_stack


def port_settings() -> dict:
    names = ["vllm", "proxy", "prometheus", "grafana", "node_exporter", "gpu_exporter", "http", "https"]
    return dict(zip(names, free_ports(len(names))))


def test_free_ports_pass(tmp_path):
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny", ports=port_settings())
    result = check_ports(context(stack, HostFacts()))
    assert result.status is Status.ok and "ports free" in result.found


def test_port_held_by_another_process_fails_naming_it(tmp_path):
    ports = port_settings()
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny", ports=ports)
    with socket.socket() as listener:
        listener.bind(("0.0.0.0", ports["proxy"]))
        listener.listen()
        result = check_ports(context(stack, HostFacts()))
    assert result.status is Status.fail
    assert f"proxy {ports['proxy']} (pid {os.getpid()}:" in result.found
    assert f"sport = :{ports['proxy']}" in result.fix


def test_port_held_by_this_stack_is_fine(tmp_path):
    ports = port_settings()
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny", ports=ports)
    # A process whose command line names the stack directory, as the native runtime's services do.
    server = subprocess.Popen([sys.executable, "-c", (
        "import socket, sys, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
        f"s.bind(('0.0.0.0', {ports['vllm']})); s.listen(); print('up', flush=True); time.sleep(60)"),
        str(stack.layout.root)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline().strip() == "up"
        result = check_ports(context(stack, HostFacts()))
    finally:
        server.kill()
        server.wait()
    assert result.status is Status.ok, result
    assert f"held by this stack: vllm {ports['vllm']}" in result.found


def test_port_held_by_a_worker_in_a_recorded_process_group_is_fine(tmp_path):
    """nginx's workers share the listening socket but their command line names nothing: the
    process group the native runtime recorded tells they are this stack's."""
    import json

    ports = port_settings()
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny", ports=ports)
    server = subprocess.Popen([sys.executable, "-c", (
        "import socket, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
        f"s.bind(('0.0.0.0', {ports['http']})); s.listen(); print('up', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True, start_new_session=True)
    records = stack.layout.state / "pids"
    try:
        assert server.stdout.readline().strip() == "up"
        stranger = check_ports(context(stack, HostFacts()))
        records.mkdir(parents=True)
        (records / "nginx.json").write_text(json.dumps({"service": "nginx", "pid": server.pid}))
        ours = check_ports(context(stack, HostFacts()))
    finally:
        server.kill()
        server.wait()
    assert stranger.status is Status.fail, stranger
    assert ours.status is Status.ok, ours
    assert f"held by this stack: http {ports['http']}" in ours.found


CONTAINER = "3f5c0e8a1b2d4c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6"


def fake_listener(facts, port: int, pid: int = 4242, container: str | None = CONTAINER):
    """/proc of a host where `pid` (in a container, host networking) listens on `port`."""
    proc = facts.root / "proc"
    (proc / "net").mkdir(parents=True, exist_ok=True)
    header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    (proc / "net" / "tcp").write_text(
        header + f"   0: 00000000:{port:04X} 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0\n")
    (proc / str(pid) / "fd").mkdir(parents=True)
    os.symlink("socket:[777]", proc / str(pid) / "fd" / "6")
    (proc / str(pid) / "cmdline").write_bytes(b"nginx: master process nginx -g daemon off;\0")
    cgroup = f"0::/system.slice/docker-{container}.scope\n" if container else "0::/user.slice\n"
    (proc / str(pid) / "cgroup").write_text(cgroup)


def test_port_held_by_this_stacks_container_is_fine(tmp_path):
    ports = port_settings()
    stack = make_stack(tmp_path, runtime="compose", hardware="rtx-pro-6000", ports=ports)
    facts = make_host(tmp_path, docker="info-nvidia.json", containers=(CONTAINER,))
    fake_listener(facts, ports["http"])
    result = check_ports(context(stack, facts))
    assert result.status is Status.ok, result
    assert f"held by this stack: http {ports['http']}" in result.found


def test_port_held_by_another_container_fails(tmp_path):
    ports = port_settings()
    stack = make_stack(tmp_path, runtime="compose", hardware="rtx-pro-6000", ports=ports)
    facts = make_host(tmp_path, docker="info-nvidia.json", containers=())
    fake_listener(facts, ports["http"])
    result = check_ports(context(stack, facts))
    assert result.status is Status.fail
    assert f"http {ports['http']} (pid 4242: nginx: master process" in result.found


def sites(facts, files: dict[str, str]):
    for relative, text in files.items():
        path = facts.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_duplicate_upstream_in_two_enabled_sites_fails_naming_both(tmp_path):
    facts = make_host(tmp_path)
    sites(facts, {
        "etc/nginx/sites-enabled/llm": "upstream llm_backend {\n    server 127.0.0.1:4000;\n}\nserver { listen 80; }\n",
        "etc/nginx/conf.d/llm-copy.conf": "# copied from the old box\nupstream llm_backend { server 10.0.0.5:4000; }\n",
        "etc/nginx/conf.d/ignored.disabled": "upstream llm_backend { server 10.0.0.6:4000; }\n",
    })
    results = check_nginx_upstreams(context(make_stack(tmp_path), facts))
    upstream = by_name(results, "nginx-upstream")
    assert upstream.status is Status.fail
    assert "upstream 'llm_backend'" in upstream.found
    assert str(facts.root / "etc/nginx/sites-enabled/llm") in upstream.found
    assert str(facts.root / "etc/nginx/conf.d/llm-copy.conf") in upstream.found
    assert "ignored.disabled" not in upstream.found  # conf.d only includes *.conf


def test_local_names_in_upstream_warn(tmp_path):
    facts = make_host(tmp_path)
    sites(facts, {"etc/nginx/sites-enabled/llm": "upstream llm { server gpu-box.local:4000; keepalive 8; }\n"
                                                  "server { listen 80; server_name box.local; }\n"})
    results = check_nginx_upstreams(context(make_stack(tmp_path), facts))
    assert by_name(results, "nginx-upstream").status is Status.ok
    local = by_name(results, "nginx-local-names")
    assert local.status is Status.warn and "gpu-box.local" in local.found and local.found.count(".local in") == 1
    assert "use an IP address" in local.fix


def test_clean_sites_pass(tmp_path):
    facts = make_host(tmp_path)
    sites(facts, {"etc/nginx/sites-enabled/a": "upstream a { server 127.0.0.1:4000; }\n",
                  "etc/nginx/conf.d/b.conf": "upstream b { server 192.168.1.20:4000; }\n"})
    results = check_nginx_upstreams(context(make_stack(tmp_path), facts))
    assert [r.status for r in results] == [Status.ok, Status.ok]
    assert "2 upstream(s) in 2 enabled site file(s)" in results[0].found


def test_gated_model_needs_hf_token(tmp_path, monkeypatch):
    gated = ModelProfile(name="gated-test", description="a gated model", hf_id="meta-llama/Llama-3.3-70B-Instruct",
                         served_name="llama", quantization="bf16", weights_gb=141, max_model_len=8192, max_num_seqs=4,
                         tool_call_parser="llama3_json", reasoning_parser=None, gated=True)
    monkeypatch.setitem(MODEL_PROFILES, "gated-test", gated)
    stack = make_stack(tmp_path, hardware="rtx-pro-6000", model="gated-test")
    result = check_hf_token(context(stack, make_host(tmp_path)))
    assert result.status is Status.fail and "HF_TOKEN is empty" in result.found
    assert "huggingface.co/settings/tokens" in result.fix
    with stack.layout.env_file.open("a") as handle:
        handle.write("HF_TOKEN=hf_example\n")
    assert check_hf_token(context(stack, make_host(tmp_path))).status is Status.ok


def test_ungated_model_needs_no_token(tmp_path):
    result = check_hf_token(context(make_stack(tmp_path, hardware="rtx-pro-6000"), make_host(tmp_path)))
    assert result.status is Status.ok and "not gated" in result.found


def test_env_file_mode(tmp_path):
    stack = make_stack(tmp_path)
    facts = make_host(tmp_path)
    assert check_env_file(context(stack, facts)).status is Status.ok
    stack.layout.env_file.chmod(0o644)
    result = check_env_file(context(stack, facts))
    assert result.status is Status.fail and "mode 0644" in result.found
    assert result.fix == f"chmod 600 {stack.layout.env_file}"
    stack.layout.env_file.unlink()
    assert "stackctl init" in check_env_file(context(stack, facts)).fix


def test_connections_in_time_wait_do_not_make_a_port_busy(tmp_path):
    """A service that was just killed leaves TIME_WAIT sockets behind; `up` must still restart it."""
    ports = port_settings()
    stack = make_stack(tmp_path, runtime="native", hardware="cpu", model="tiny", ports=ports)
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("0.0.0.0", ports["vllm"]))
        listener.listen()
        client = socket.create_connection(("127.0.0.1", ports["vllm"]))
        accepted, _ = listener.accept()
        accepted.close()  # the server side closes first: its end goes to TIME_WAIT
        client.recv(1)
        client.close()
    result = check_ports(context(stack, HostFacts()))
    assert result.status is Status.ok, result
