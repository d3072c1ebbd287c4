"""Causes an error line states about a service's configuration and about the model vLLM serves, read by
the fallback where no signature knows the failure (stated_configs, stated_engine), each beside the
neighbours that state no such cause or keep their own class. The lines are real: from tests/data, or
quoted from the public report named beside them."""

from __future__ import annotations

from pathlib import Path

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause, diagnose_log
from stackctl.diagnosis.diagnose import context_for
from stackctl.diagnosis.stated_causes import stated_causes
from tests.unit.diagnosis.reading import read_by_fallback
from tests.unit.diagnosis.real_logs import DATA, read_headers

_DEFAULTS = parse_stack_config({})
_ROUND26 = DATA / "heldout_round26"


def _log(name: str) -> tuple[str, list[str]]:
    [path] = list(_ROUND26.glob(f"{name}__*.log"))
    headers, lines = read_headers(Path(path))
    return headers["service"], lines


# --- supervisord's %(ENV_X)s ---------------------------------------------------------------------

def test_an_env_variable_supervisord_cannot_expand_names_it_without_its_prefix_and_when_it_must_be_set():
    service, lines = _log("supervisord_env_expansion_var_unset_in_container")
    fix = read_by_fallback(lines, service, failed=True).fix
    assert fix.env == "SD_USER" and "set the environment variable SD_USER" in fix.text
    assert "present in the environment at the time that supervisord is started" in fix.text
    assert "`supervisorctl reload` keeps the environment" in fix.text
    # stackctl's own supervisord: where it starts and with which environment.
    assert "`stackctl up` starts supervisord with the environment of the shell that runs it" in fix.text


def test_a_name_written_without_env_prefix_is_told_to_take_it():
    # supervisor#909: %(MY_PATH)s where %(ENV_MY_PATH)s was meant.
    service, lines = _log("supervisord_env_expansion_var_not_in_environment")
    fix = read_by_fallback(lines, service, failed=True).fix
    assert fix.env == "MY_PATH" and "write %(ENV_MY_PATH)s" in fix.text and "/etc/supervisord.conf" in fix.text


def test_supervisord_neighbours_keep_their_own_class():
    # supervisorctl without its section, and a program that exits: not a variable to set.
    assert diagnose_log([".ini file does not include supervisorctl section"],
                        context_for("supervisord", _DEFAULTS)).cause is Cause.supervisorctl_section_missing
    assert stated_causes(["Error: .ini file does not include supervisorctl section"],
                         context_for("supervisord", _DEFAULTS)) == []


# --- nginx's temp path ---------------------------------------------------------------------------

def test_a_temp_file_nginx_may_not_write_names_its_directive_and_the_worker_user():
    service, lines = _log("nginx_client_body_temp_path_not_writable")
    fix = read_by_fallback(lines, service, failed=True).fix
    assert "the directory client_body_temp_path names (here /tmp/nginx_client_body)" in fix.text
    assert "writable by nginx's worker user" in fix.text and ".stackctl/nginx/client_body" in fix.text
    # The stated cause says it: no second sentence for the same path.
    assert "the log also names" not in fix.text


def test_the_temp_directory_is_told_by_its_path_and_a_document_root_is_no_temp_path():
    # RHEL's nginx package (quoted in public setup notes: an upload refused by /var/lib/nginx's owner).
    line = '[crit] 24457#0: *206 open() "/var/lib/nginx/tmp/client_body/0000000001" failed (13: Permission denied)'
    [cause] = stated_causes([line], context_for("nginx", _DEFAULTS))
    assert cause.name == "nginx temp path: client_body_temp_path"
    proxied = ('[crit] 7#7: *3 open() "/var/cache/nginx/proxy_temp/1/00/0000000001" failed (13: Permission denied) '
               'while reading upstream')
    assert stated_causes([proxied], context_for("nginx", _DEFAULTS))[0].name == "nginx temp path: proxy_temp_path"
    # A file nginx may not read is a path to give it access to, not a temp directory (and no longer a
    # file to create).
    page = '[error] 7#7: *1 open() "/usr/share/nginx/html/index.html" failed (13: Permission denied)'
    assert stated_causes([page], context_for("nginx", _DEFAULTS)) == []
    fix = read_by_fallback([page], "nginx", failed=True).fix
    assert "give nginx access to /usr/share/nginx/html/index.html (permission denied)" in fix.text
    missing = '[error] 7#7: *1 open() "/usr/share/nginx/html/favicon.ico" failed (2: No such file or directory)'
    assert "make /usr/share/nginx/html/favicon.ico exist" in read_by_fallback([missing], "nginx", failed=True).fix.text


# --- IPv6 where the host has none ----------------------------------------------------------------

def test_nginx_listening_on_ipv6_without_it_says_to_drop_the_line_and_what_stackctl_listens_on():
    # digitalocean/nginxconfig.io#151, sharevb/it-tools#98.
    for line, port in (("nginx: [emerg] socket() [::]:80 failed (97: Address family not supported by protocol)", "80"),
                       (("2025/06/18 22:19:32 [emerg] 1#1: socket() [::]:8080 failed (97: Address family not supported "
                        "by protocol)"), "8080")):
        fix = read_by_fallback([line], "nginx", failed=True).fix
        assert f"`listen [::]:{port};`" in fix.text and f"`listen {port};`" in fix.text
        assert "IPv6 turned off" in fix.text and "stackctl's own site listens on IPv4 only" in fix.text


def test_an_upstream_resolved_to_ipv6_is_told_from_a_listen():
    # cuber/ngx_http_google_filter_module#45.
    line = ("[alert] 22169#0: *15 socket() failed (97: Address family not supported by protocol) while connecting to "
            'upstream, client: 116.234.73.109, server: localhost, request: "GET /search HTTP/1.1"')
    [cause] = stated_causes([line], context_for("nginx", _DEFAULTS))
    assert cause.name == "no IPv6: upstream" and "ipv6=off" in cause.text


def test_an_address_in_use_is_no_ipv6_refusal():
    line = "nginx: [emerg] bind() to [::]:80 failed (98: Address already in use)"
    assert stated_causes([line], context_for("nginx", _DEFAULTS)) == []


# --- a Prometheus flag in prometheus.yml ---------------------------------------------------------

def test_a_storage_flag_written_into_prometheus_yml_names_the_flag():
    # prometheus#14139 (storage: tsdb: path:), prometheus#12139 (storage: tsdb: retention:).
    path = ["Checking /data/www/Monitoring/prometheus/prometheus.yml",
            "  FAILED: parsing YAML file /data/www/Monitoring/prometheus/prometheus.yml: yaml: unmarshal errors:",
            "  line 10: field path not found in type config.plain"]
    retention = ["Checking prometheus.yml", "  FAILED: parsing YAML file prometheus.yml: yaml: unmarshal errors:",
                 "  line 6: field retention not found in type config.plain"]
    for lines, flag in ((path, "--storage.tsdb.path"), (retention, "--storage.tsdb.retention.time")):
        fallback = read_by_fallback(lines, "prometheus", failed=True).fix.text
        assert f"is the flag {flag}" in fallback and "not a field of prometheus.yml" in fallback
        # With the signatures on, the parse error's class keeps it and names the flag too.
        known = diagnose_log(lines, context_for("prometheus", _DEFAULTS))
        assert known is not None and known.cause is Cause.prometheus_config_invalid
        assert f"is the flag {flag}" in known.fix.text


def test_fields_prometheus_yml_knows_elsewhere_keep_their_own_reading():
    # django-prometheus#119 (held-out round 4): labels moved to external_labels, not a flag.
    line = "  line 7: field labels not found in type config.plain"
    assert stated_causes([line], context_for("prometheus", _DEFAULTS)) == []
    misplaced = ["  line 3: field fallback_scrape_protocol not found in type config.plain"]
    assert diagnose_log(misplaced, context_for("prometheus", _DEFAULTS)).cause is Cause.prometheus_config_field_misplaced


# --- what vLLM states about the model ------------------------------------------------------------

def test_an_architecture_this_vllm_does_not_know_names_a_newer_images_vllm():
    # vllm#22231 (held-out round 6).
    line = ("ValueError: Model architectures ['Qwen3ForCausalLM'] are not supported for now. Supported architectures: "
            "['AquilaModel', 'AquilaForCausalLM', 'LlamaForCausalLM']")
    fix = read_by_fallback([line], "vllm", failed=True).fix
    assert fix.key == "images.vllm" and "upgrade vLLM" in fix.text and "Qwen3ForCausalLM" in fix.text
    # The same words for an architecture the list names: a broken install, not an old release.
    broken = line.replace("Qwen3ForCausalLM'] are", "LlamaForCausalLM'] are")
    assert "engine install is broken" in read_by_fallback([broken], "vllm", failed=True).fix.text


def test_no_chat_template_and_roles_that_must_alternate_name_the_chat_template_flag():
    # vllm#7978 (held-out round 3); graphrag#564 (held-out round 2).
    template = ("ValueError: As of transformers v4.44, default chat template is no longer allowed, so you must provide "
                "a chat template if the tokenizer does not define one.")
    roles = ("api_server.py:247] Error in applying chat template from request: Conversation roles must alternate "
             "user/assistant/user/assistant/...")
    for line in (template, roles):
        fix = read_by_fallback([line], "vllm", failed=True).fix
        assert fix.flag == "--chat-template" and fix.key == "vllm.extra_args"
    assert "system message first" in read_by_fallback([roles], "vllm", failed=True).fix.text
    # With the signatures on, each keeps its own class.
    assert diagnose_log([template], context_for("vllm", _DEFAULTS)).cause is Cause.chat_template_missing
    assert diagnose_log([roles], context_for("vllm", _DEFAULTS)).cause is Cause.roles_must_alternate


# --- Docker without a GPU device driver: CDI ------------------------------------------------------

def test_no_gpu_device_driver_names_the_cdi_request_beside_the_toolkit():
    # nixpkgs#353059 (held-out round 26): a CDI-only host, where `gpus: all` finds no driver.
    service, lines = _log("gpus_flag_no_legacy_hook_use_cdi_or_runtime")
    known = diagnose_log(lines, context_for(service, _DEFAULTS))
    assert known is not None and known.cause is Cause.no_gpu_runtime
    # What tests/e2e/test_compose_faults.py asserts stays true.
    assert known.fix.text.startswith("install the NVIDIA Container Toolkit")
    assert "nvidia-ctk runtime configure" in known.fix.text and known.summary.startswith("Docker has no NVIDIA runtime")
    fallback = read_by_fallback(lines, service, failed=True).fix.text
    for fix in (known.fix.text, fallback):
        assert "`driver: cdi`" in fix and "nvidia.com/gpu=all" in fix and "runtime: nvidia" in fix
        assert "no stack.yaml key for a CDI request" in fix
