"""Round 42's misses, built by cause: a domain whose DNS answers the ACME server with SERVFAIL (broken DNSSEC at the
registrar, told apart from a placeholder domain), a Compose key the Compose that ran does not have (a later Compose's
`name:` or `develop:`, or a typo), an image without a build for the host's platform, Grafana's admin password set only
on the first run, Prometheus scraping its own loopback from a container, a file_sd_configs field outside one, a
relative data path under a unit without WorkingDirectory=, a quantized checkpoint newer than vLLM, and a Hub repository
without config.json (an adapter); each beside the neighbours that keep their own reading. The lines are real: quoted
from the public report named beside them (a title where noted)."""

from __future__ import annotations

import pytest

from stackctl.diagnosis import Cause, Severity
from stackctl.diagnosis.compose_file_keys import newer_release
from tests.unit.diagnosis.reading import diagnosed, read_by_fallback
from tests.unit.diagnosis.real_logs import DATA, read_headers

ROUND42 = DATA / "heldout_round42"


def _round42(stem: str) -> list[str]:
    _headers, lines = read_headers(ROUND42 / f"{stem}.log")
    return lines


_SERVFAIL_REDACTED = "certbot_dns01_servfail_broken_dnssec_at_registrar__virtualmin-gpl-issue-418"
_COMPOSE_NAME = "docker_compose_top_level_name_old_compose__trueblocks-docker-issue-383"
_NO_ARM64 = "docker_mysql_image_no_arm64_manifest__digital_atlas-issue-37"
_FIRST_RUN = "grafana_admin_password_only_on_first_run__grafana-issue-6156"
_OWN_LOOPBACK = "prometheus_container_scrapes_own_localhost__django-prometheus-issue-118"
_FILES_FIELD = "prometheus_files_under_static_configs__prometheus-issue-1801"
_RELATIVE_DATA = "prometheus_relative_data_dir_unit_workdir__prometheus-issue-2264"
_WEIGHT_SCALE = "vllm_compressed_weight_scale_keyerror_old_vllm__llm-compressor-issue-959"
_ADAPTER_REPO = "vllm_config_json_only_finetuned_files__LLamaCare-issue-1"


# --- a domain whose DNS answers SERVFAIL -------------------------------------------------------------------------

def test_a_servfail_for_a_redacted_example_domain_is_broken_dnssec_not_a_placeholder():
    diagnosis = diagnosed(_round42(_SERVFAIL_REDACTED), "certbot")
    assert diagnosis.cause is Cause.certbot_dns_servfail
    assert diagnosis.values == {"domain": "example.com", "record": "TXT"}
    for said in ("DNSSEC", "a DS record at the registrar", "dig +cd TXT _acme-challenge.example.com",
                 "https://dnsviz.net/d/example.com/dnssec/"):
        assert said in diagnosis.fix.text


@pytest.mark.parametrize(("line", "record", "domain"), [
    # nsupdate-info/nsupdate.info#331: a CAA lookup ("Might be related with the DNSSEC config?").
    ("    Detail: DNS problem: SERVFAIL looking up CAA for mydomain.awsmppl.com", "CAA", "mydomain.awsmppl.com"),
    # srvrco/getssl#667: an A lookup, the name redacted in the reporter's own way.
    (('getssl: home.<domain>.ovh:Verify error:    "detail": "DNS problem: SERVFAIL looking up A for home.<domain>.ovh - '
     "the domain's nameservers may be malfunctioning\""), "A", "home"),
])
def test_every_record_the_ca_looks_up_reads_the_same_servfail(line, record, domain):
    diagnosis = diagnosed([line], "certbot")
    assert diagnosis.cause is Cause.certbot_dns_servfail and diagnosis.values["record"] == record
    assert diagnosis.values["domain"] == domain
    assert ("NOTIMP" in diagnosis.fix.text) is (record == "CAA")


@pytest.mark.parametrize(("line", "cause"), [
    # A placeholder domain's NXDOMAIN keeps the placeholder reading (a peertube guide's paste).
    (("failed authorization procedure , peertube.example.com (http-01 ) : urn:ietf:params:acme:error:dns: :: DNS problem "
     ": nxdomain looking up a for peertube.example.com"), Cause.certbot_placeholder_domain),
    # acme-dns/acme-dns#54: a real domain's NXDOMAIN for the challenge record is no broken DNS server.
    (("`Failed authorization procedure. evanpolicinski.com (dns-01): urn:ietf:params:acme:error:connection :: The server "
     "could not connect to the client to verify the domain :: DNS problem: NXDOMAIN looking up TXT for "
     "_acme-challenge.evanpolicinski.com`"), Cause.certbot_challenge_unreachable),
])
def test_an_nxdomain_is_no_servfail(line, cause):
    assert diagnosed([line], "certbot").cause is cause


# --- a Compose key the Compose that ran does not have ------------------------------------------------------------

@pytest.mark.parametrize(("lines", "key", "release"), [
    (_round42(_COMPOSE_NAME), "name", "2.3.3"),
    # AbsaOSS/spline-getting-started#47: Docker Compose v2.2.2, older than the top-level name.
    (["(root) Additional property name is not allowed"], "name", "2.3.3"),
    # docker/genai-stack#78: Compose v2.21.0 and the file watch of 2.22.0.
    (["genai-stack/docker-compose.yml: services.bot Additional property develop is not allowed"], "develop", "2.22.0"),
])
def test_a_key_a_later_compose_added_upgrades_compose_or_drops_the_key(lines, key, release):
    diagnosis = diagnosed(lines, "docker")
    assert diagnosis.cause is Cause.compose_too_old and diagnosis.values["release"] == release
    for said in (f"Upgrade docker compose to v{release} or newer", "docker compose version", f"or remove `{key}:`"):
        assert said in diagnosis.fix.text
    assert ("stackctl's own docker-compose.yml names its project" in diagnosis.fix.text) is (key == "name")


@pytest.mark.parametrize(("line", "said"), [
    # docker/docs#16129: services written at the top level, the version-1 format.
    (("while creating docker-compose.yml file i ran into the following error -> (root) Additional property apache2 is not "
     "allowed"), "a service written outside `services:`"),
    # docker/docs#4303: a service's key no Compose has (images for image).
    ("services.mongo-expres Additional property images is not allowed", "the service mongo-expres has a key `images`"),
])
def test_a_key_no_compose_has_there_is_a_typo_or_misplaced(line, said):
    diagnosis = diagnosed([line], "docker")
    assert diagnosis.cause is Cause.compose_key_unknown and said in diagnosis.fix.text
    assert "docker compose config" in diagnosis.fix.text


def test_a_gpu_reservations_devices_keep_compose_too_olds_own_reading():
    # AbdBarho/stable-diffusion-webui-docker's Compose 1 refusal, in the own set since compose-too-old was built.
    line = ("services.stability-ai.deploy.resources.reservations value Additional properties are not allowed ('devices' "
            "was unexpected)")
    diagnosis = diagnosed([line], "docker")
    assert diagnosis.cause is Cause.compose_too_old and "1.28" in diagnosis.fix.text


def test_a_key_of_another_section_is_not_taken_for_a_later_composes():
    assert newer_release("root", "name") == "2.3.3" and newer_release("", "develop") == "2.22.0"
    assert newer_release("volumes.data", "name") is None and newer_release("services.web", "name") is None


# --- an image without a build for the host's platform ------------------------------------------------------------

@pytest.mark.parametrize(("lines", "platform"), [
    (_round42(_NO_ARM64), "linux/arm64/v8"),
    # docker-library/mysql#415: an arm64 host whose Docker names no variant.
    (["# docker pull mysql:latest", "latest: Pulling from library/mysql",
      "no matching manifest for linux/arm64 in the manifest list entries"], "linux/arm64"),
    # oddfar/campus-imaotai#190: a Compose build FROM mysql:5.7.
    ([("ERROR: Service 'campus-mysql' failed to build: no matching manifest for linux/arm64/v8 in the manifest list "
      "entries")], "linux/arm64/v8"),
])
def test_an_image_without_a_build_for_the_host_runs_another_image_or_emulates(lines, platform):
    diagnosis = diagnosed(lines, "docker")
    assert diagnosis.cause is Cause.wrong_architecture and diagnosis.values["platform"] == platform
    for said in ("platform: linux/amd64", "docker run --platform linux/amd64", "uname -m", "mariadb", "tonistiigi/binfmt"):
        assert said in diagnosis.fix.text


@pytest.mark.parametrize(("line", "cause"), [
    # A tag that does not exist (vllm-project/vllm's TPU image) is no platform.
    ("Error response from daemon: manifest for vllm/vllm-tpu:latest not found: manifest unknown: manifest unknown",
     Cause.image_pull_denied),
])
def test_a_missing_tag_is_no_missing_platform(line, cause):
    diagnosis = diagnosed([line], "docker")
    assert diagnosis.cause is cause and "platform" not in diagnosis.values


# --- Grafana's admin password set on the first run only ----------------------------------------------------------

def test_grafanas_admin_password_is_said_to_be_set_only_on_the_first_run():
    diagnosis = diagnosed(_round42(_FIRST_RUN), "grafana")
    assert diagnosis.cause is Cause.grafana_admin_password_ignored
    for said in ("initial admin password", "first run", "set once", "later changes", "reset-admin-password"):
        assert said in diagnosis.fix.text


# --- Prometheus scraping a loopback target -----------------------------------------------------------------------

@pytest.mark.parametrize(("line", "port"), [
    # docker/docs#6010: Docker's own metrics on the host, scraped from a container (Go's older getsockopt).
    (("The prometheus instructions are broken for linux, because the host docker daemon.json binds to localhost, and the "
     "container can't reach it via localhost.  The error from prometheus: `Get http://localhost:9323/metrics: dial tcp "
     "127.0.0.1:9323: getsockopt: connection refused`"), 9323),
    # ChristianLempa/boilerplates#38: Prometheus 2's quoted URL.
    ('`Get "http://localhost:8080/metrics": dial tcp 127.0.0.1:8080: connect: connection refused`', 8080),
])
def test_a_containerised_prometheus_scraping_localhost_goes_on_the_host_network(line, port):
    diagnosis = diagnosed([line], "prometheus")
    assert diagnosis.cause is Cause.prometheus_scrape_loopback_refused and diagnosis.severity is Severity.advisory
    assert diagnosis.values["port"] == port and diagnosis.fix.key is None
    for said in ("network_mode: host", "docker run --network host", f"host.docker.internal:{port}", "host-gateway"):
        assert said in diagnosis.fix.text


def test_a_refused_port_of_stackctls_own_names_the_service_and_the_host_network():
    diagnosis = diagnosed(_round42(_OWN_LOOPBACK), "prometheus")
    assert diagnosis.cause is Cause.prometheus_scrape_loopback_refused and diagnosis.fix.key == "ports.vllm"
    text = diagnosis.fix.text
    assert text.index("stackctl's vllm (ports.vllm)") < text.index("A Prometheus of your own in a container")
    assert "`stackctl logs vllm --explain`" in text and "network_mode: host" in text


@pytest.mark.parametrize("line", [
    # prometheus/prometheus#4419: another host's exporter refusing, no loopback.
    "Error: Get http://10.0.0.107:9100/metrics: dial tcp 10.0.0.107:9100: connect: connection refused",
    # vegasbrianc/prometheus#22: a service name that resolved elsewhere.
    "`Get http://cadvisor:8080/metrics: dial tcp 192.64.119.254:8080: getsockopt: connection refused`",
    # Grafana's query of Prometheus's API (the own set's grafana-datasource-unreachable) is no scrape.
    ('Error reading Prometheus: Post "http://localhost:9090/api/v1/query": dial tcp 127.0.0.1:9090: connect: connection '
    "refused"),
])
def test_a_refusal_that_is_no_loopback_scrape_keeps_its_reading(line):
    diagnosis = diagnosed([line], "prometheus")
    assert diagnosis.cause is not Cause.prometheus_scrape_loopback_refused


# --- a file_sd_configs field outside file_sd_configs -------------------------------------------------------------

@pytest.mark.parametrize(("lines", "where"), [
    (_round42(_FILES_FIELD), "in a static_configs entry"),
    # prometheus/prometheus#2246: the docs' snippet pasted without its job (the line as the stored copy shows it, cut
    # before its source field).
    ([("    ERRO[0000] Error loading config: couldn't load configuration (-config.file=/usr/local/etc/prometheus.yml): "
      "unknown fields in config: files")], "outside any file_sd_configs entry"),
])
def test_a_files_field_outside_file_sd_configs_moves_under_it(lines, where):
    diagnosis = diagnosed(lines, "prometheus")
    assert diagnosis.cause is Cause.prometheus_config_field_misplaced and diagnosis.values["field"] == "files"
    for said in (where, "file_sd_configs:", "promtool check config"):
        assert said in diagnosis.fix.text


def test_another_unknown_field_keeps_its_reading():
    # prometheus/prometheus#2879: static_configs on a Prometheus older than 0.14.
    line = ("ERRO[0000] Couldn't load configuration (-config.file=./vimal.yml): unknown fields in scrape_config: "
            "static_configs  file=main.go line=177")
    assert diagnosed([line], "prometheus").cause is Cause.prometheus_config_field_newer


# --- a relative data path ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("lines", "path"), [
    (_round42(_RELATIVE_DATA), "data"),
    # redhat-scholars/istio-tutorial#50: Prometheus 2's wording, the reporter's bold kept.
    ([('> level=error ts=2018-02-19T15:55:28.021436679Z caller=**main.go:323 msg="Opening storage failed" err="mkdir '
      'data/: permission denied"**')], "data"),
])
def test_a_relative_data_path_gets_an_absolute_one_or_a_working_directory(lines, path):
    diagnosis = diagnosed(lines, "prometheus")
    assert diagnosis.cause is Cause.prometheus_data_path_relative and diagnosis.values["path"] == path
    for said in ("WorkingDirectory=", "--storage.tsdb.path=/var/lib/prometheus", "-storage.local.path", "working directory"):
        assert said in diagnosis.fix.text


@pytest.mark.parametrize(("line", "service", "cause"), [
    # pgsty/pigsty#273: an absolute path keeps the storage permission's chown.
    (('  msg="Error opening query log file" file=/data/prometheus/data/queries.active err="open '
     '/data/prometheus/data/queries.active: permission denied"'), "prometheus", Cause.prometheus_storage_permission),
    # grafana/grafana#4569 (held-out round 5): Grafana's own relative data/plugins.
    ("2016/04/05 15:13:20 [W] Plugins: Failed to create plugin dir: data/plugins, error: mkdir data: permission denied",
     "grafana", Cause.grafana_data_permission),
])
def test_an_absolute_path_or_another_programs_keeps_its_reading(line, service, cause):
    assert diagnosed([line], service).cause is cause


# --- a quantized checkpoint newer than vLLM ----------------------------------------------------------------------

@pytest.mark.parametrize(("lines", "parameter"), [
    (_round42(_WEIGHT_SCALE), "layers.0.mlp.down_proj.weight_scale"),
    # vllm-project/llm-compressor#967's title: kv-cache scales a starcoder2 loader did not remap (fixed in vLLM).
    (["KeyError: 'model.layers.0.self_attn.k_scale'"], "model.layers.0.self_attn.k_scale"),
    # vllm-project/llm-compressor#1306: an FP8 Gemma 3 refused by vLLM 0.8.2.
    ([("Following the sample to quantize Gemma2 to FP8, and using the Gemma3-27B-IT model, the llm compressor ends as "
      "expected but then when running vllm it fails with `KeyError: 'vision_model.encoder.layers.0.mlp.fc1.weight_scale'`")],
     "vision_model.encoder.layers.0.mlp.fc1.weight_scale"),
])
def test_a_quantization_parameter_the_loader_lacks_upgrades_vllm(lines, parameter):
    diagnosis = diagnosed(lines, "vllm")
    assert diagnosis.cause is Cause.engine_too_old_for_model and diagnosis.values["parameter"] == parameter
    assert diagnosis.fix.key == "images.vllm" and "Upgrade vLLM" in diagnosis.fix.text


def test_a_plain_weight_the_loader_lacks_is_no_quantization_format():
    # vllm-project/vllm#4989: Mistral's consolidated checkpoint layout.
    diagnosis = diagnosed(["KeyError: 'layers.0.attention.wk.weight'"], "vllm")
    assert "parameter" not in diagnosis.values


# --- a Hub repository without config.json ------------------------------------------------------------------------

@pytest.mark.parametrize(("lines", "repo"), [
    (_round42(_ADAPTER_REPO), "Stephen-smj/LlamaCare"),
    # arcee-ai/mergekit#197's title: a LoRA, its maintainer says, with no full set of weights.
    (["OSError: bilalRahib/Tiny-LLama-NSFW-Chatbot does not appear to have a file named config.json."],
     "bilalRahib/Tiny-LLama-NSFW-Chatbot"),
])
def test_a_repository_without_config_serves_its_base_model_with_the_adapter(lines, repo):
    diagnosis = diagnosed(lines, "vllm")
    assert diagnosis.cause is Cause.model_repo_without_config and diagnosis.values["model"] == repo
    for said in ("adapter_config.json", "base model", f"--enable-lora --lora-modules NAME={repo}", "merge_and_unload"):
        assert said in diagnosis.fix.text
    assert "typo" not in diagnosis.fix.text


def test_a_local_directory_without_config_keeps_model_not_found():
    # huggingface/peft#523: a local path (redacted by its reporter).
    line = ("`OSError: /home/<path-to-bert-model> does not appear to have a file named config.json. Checkout "
            "'https://huggingface.co//home/<path-to-bert-model>' for available files.`")
    assert diagnosed([line], "vllm").cause is Cause.model_not_found


# --- the fallback's stated classes -------------------------------------------------------------------------------

@pytest.mark.parametrize(("stem", "service", "said"), [
    (_SERVFAIL_REDACTED, "certbot", "DS record at the registrar"),
    (_COMPOSE_NAME, "docker", "Upgrade docker compose to v2.3.3"),
    (_FILES_FIELD, "prometheus", "file_sd_configs:"),
    (_WEIGHT_SCALE, "vllm", "Upgrade vLLM"),
    (_ADAPTER_REPO, "vllm", "--enable-lora"),
])
def test_the_fallback_names_the_stated_cause_where_signatures_do_not_apply(stem, service, said):
    assert said in read_by_fallback(_round42(stem), service).fix.text


def test_the_fallback_names_a_missing_platform_on_composes_error_line():
    line = ("ERROR: Service 'campus-mysql' failed to build: no matching manifest for linux/arm64/v8 in the manifest list "
            "entries")
    assert "platform: linux/amd64" in read_by_fallback([line], "docker").fix.text


def test_the_fallback_keeps_its_own_readings_of_a_relative_data_path_and_a_refused_port():
    # Not stated classes: the permission remedy would follow the working directory, and a port's owner needs context.
    assert "WorkingDirectory" not in read_by_fallback(_round42(_RELATIVE_DATA), "prometheus").fix.text
    assert "host.docker.internal" not in read_by_fallback(_round42(_OWN_LOOPBACK), "prometheus").fix.text
