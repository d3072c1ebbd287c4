"""Docker checks through python-on-whales against a fake `docker` printing recorded `docker info`."""

from stackctl.doctor.docker import check_docker
from stackctl.doctor.result import Status
from tests.support.fakehost import by_name, context, make_host
from tests.support.stack_builder import make_stack


def test_engine_compose_and_nvidia_runtime_present(tmp_path):
    results = check_docker(context(make_stack(tmp_path, hardware="rtx-pro-6000"),
                                   make_host(tmp_path, docker="info-nvidia.json")))
    assert [r.status for r in results] == [Status.ok] * 3
    assert "28.5.1" in by_name(results, "docker").found
    assert "v2.40.0" in by_name(results, "compose").found
    assert "nvidia" in by_name(results, "nvidia-runtime").found


def test_daemon_down_fails(tmp_path):
    results = check_docker(context(make_stack(tmp_path, hardware="rtx-pro-6000"), make_host(tmp_path, docker=None)))
    docker = by_name(results, "docker")
    assert docker.status is Status.fail and "Cannot connect to the Docker daemon" in docker.found
    assert "systemctl enable --now docker" in docker.fix


def test_no_docker_client(tmp_path):
    results = check_docker(context(make_stack(tmp_path, hardware="rtx-pro-6000"), make_host(tmp_path, docker="absent")))
    assert by_name(results, "docker").found == "the docker client is not installed"


def test_missing_compose_v2_and_nvidia_runtime_fail(tmp_path):
    facts = make_host(tmp_path, docker="info-runc-only.json", compose=None)
    results = check_docker(context(make_stack(tmp_path, hardware="rtx-pro-6000"), facts))
    compose, runtime = by_name(results, "compose"), by_name(results, "nvidia-runtime")
    assert compose.status is Status.fail and "docker-compose-plugin" in compose.fix
    assert runtime.status is Status.fail and "nvidia-ctk runtime configure --runtime=docker" in runtime.fix


def test_cdi_spec_counts_as_gpu_access(tmp_path):
    facts = make_host(tmp_path, docker="info-runc-only.json")
    (facts.root / "etc" / "cdi").mkdir(parents=True)
    (facts.root / "etc" / "cdi" / "nvidia.yaml").write_text("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\n")
    runtime = by_name(check_docker(context(make_stack(tmp_path, hardware="rtx-pro-6000"), facts)), "nvidia-runtime")
    assert runtime.status is Status.ok and "nvidia.yaml" in runtime.found


def test_native_runtime_does_not_need_docker(tmp_path):
    results = check_docker(context(make_stack(tmp_path, runtime="native", hardware="rtx-pro-6000"), make_host(tmp_path)))
    assert all(r.status is Status.ok and "not used" in r.found for r in results)


def test_gpu_stack_on_an_engine_without_nvidia_runtime_names_the_services_and_the_cpu_way_out(tmp_path):
    facts = make_host(tmp_path, docker="info-runc-only.json")
    runtime = by_name(check_docker(context(make_stack(tmp_path, hardware="generic"), facts)), "nvidia-runtime")
    assert runtime.status is Status.fail
    assert "gpu-exporter, vllm ask Docker for GPUs" in runtime.found
    assert "nvidia-ctk runtime configure" in runtime.fix and "hardware: cpu" in runtime.fix


def test_cpu_stack_asks_for_no_gpu_so_needs_no_nvidia_runtime(tmp_path):
    facts = make_host(tmp_path, docker="info-runc-only.json")
    results = check_docker(context(make_stack(tmp_path, hardware="cpu", model="tiny"), facts))
    runtime = by_name(results, "nvidia-runtime")
    assert runtime.status is Status.ok and "no service asks for a GPU" in runtime.found


def _mountinfo(facts, root_line: str) -> None:
    path = facts.root / "proc" / "self" / "mountinfo"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("22 1 0:21 / /proc rw,nosuid shared:5 - proc proc rw\n" + root_line + "\n")


def test_private_root_mount_refuses_node_exporters_rslave_bind_before_start(tmp_path):
    from stackctl.doctor.docker import check_mount_propagation

    facts = make_host(tmp_path, docker="info-runc-only.json")
    _mountinfo(facts, "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw")
    result = check_mount_propagation(context(make_stack(tmp_path, hardware="cpu", model="tiny"), facts))
    assert result.status is Status.fail and "node-exporter" in result.found and "private mount" in result.found
    assert "mount --make-rshared /" in result.fix and "services.monitoring: false" in result.fix


def test_shared_root_mount_and_stacks_without_the_bind_pass(tmp_path):
    from stackctl.doctor.docker import check_mount_propagation

    facts = make_host(tmp_path, docker="info-runc-only.json")
    _mountinfo(facts, "27 1 254:0 / / rw,relatime shared:2 - ext4 /dev/vda rw")
    assert check_mount_propagation(context(make_stack(tmp_path, hardware="cpu", model="tiny"), facts)).status is Status.ok
    _mountinfo(facts, "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw")
    no_monitoring = make_stack(tmp_path / "b", hardware="cpu", model="tiny", services={"monitoring": False})
    assert check_mount_propagation(context(no_monitoring, facts)).status is Status.ok
