"""The fallback's general readings, whatever the service and however no signature knows the failure:
the operating system's refusals (a port in use, a path denied, a program not executable, a directory
in a file's place), what ran out (the disk, a server's rate limit, a lock another process holds, a
data file cut short), a component the log asks to upgrade, and a setting compared with its limit;
each placed in stackctl's terms. The lines are real ones from the own set (tests/data)."""

from __future__ import annotations

import pytest

from stackctl.config import parse_stack_config
from stackctl.diagnosis import Cause
from stackctl.diagnosis.diagnose import context_for
from stackctl.diagnosis.fallback import fallback_diagnosis
from stackctl.diagnosis.log_lines import Weight, decisive_error
from stackctl.diagnosis.remedy import Remedy, RemedyKind, named_remedies
from stackctl.diagnosis.stack_keys import placement

_DEFAULTS = parse_stack_config({})


def _fallback(lines: list[str], service: str):
    """What the fallback says (the signatures aside: most of these lines have a class of their own)."""
    diagnosis = fallback_diagnosis(lines, context_for(service, _DEFAULTS, failed=True))
    assert diagnosis is not None
    return diagnosis


@pytest.mark.parametrize(("line", "remedy"), [
    # a port in use, with the number where the line states it, and without (nginx's last word)
    (("ERROR (uvicorn.error):  [Errno 98] error while attempting to bind on address ('0.0.0.0', 7878): address "
     "already in use"), Remedy(RemedyKind.port, "7878")),
    ("nginx: [emerg] bind() to 0.0.0.0:443 failed (98: Address in use)", Remedy(RemedyKind.port, "443")),
    ("2017/11/04 08:40:13 [emerg] 11#11: still could not bind()", Remedy(RemedyKind.port, "")),
    # a path denied: Go's, coreutils' and grafana-cli's words
    ('err="open /opt/bitnami/prometheus/conf/prometheus.yml: permission denied"',
     Remedy(RemedyKind.permission, "/opt/bitnami/prometheus/conf/prometheus.yml")),
    ("mkdir: can't create directory '/var/lib/grafana/plugins': Permission denied",
     Remedy(RemedyKind.permission, "/var/lib/grafana/plugins")),
    ((" Error: ✗ Could not create /var/lib/grafana/plugins/natel-plotly-panel. Permission denied. Make sure you have "
     "write access to plugindir"), Remedy(RemedyKind.permission, "/var/lib/grafana/plugins/natel-plotly-panel")),
    ("2020-03-27 07:11:55,663 INFO spawnerr: command at '/app/webserver.sh' is not executable",
     Remedy(RemedyKind.executable, "/app/webserver.sh")),
    ('error="read /etc/grafana/provisioning/dashboards/customdashboards.yml: is a directory"',
     Remedy(RemedyKind.directory_for_file, "/etc/grafana/provisioning/dashboards/customdashboards.yml")),
    # a component to upgrade
    (("Error response from daemon: client version 1.41 is too old. Minimum supported API version is 1.44, please "
     "upgrade your client to a newer version"), Remedy(RemedyKind.upgrade, "client")),
    (("ValueError: The checkpoint you are trying to load has model type qwen3_moe but Transformers does not recognize "
     "this architecture. This could be because of an issue with the checkpoint, or because your version of "
     "Transformers is out of date."), Remedy(RemedyKind.upgrade, "transformers")),
    # a setting compared with its limit: set to that limit, or raised to what it refused
    ("ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (524)",
     Remedy(RemedyKind.setting, "max_num_seqs", "524")),
    ("ValueError: LoRA rank 64 is greater than max_lora_rank 16.", Remedy(RemedyKind.setting, "max_lora_rank", "64")),
    ("ValueError: Prompt length of 5016 is longer than the maximum model length of 4096.",
     Remedy(RemedyKind.setting, "max_model_len", "5016")),
    ("ValueError: max_num_batched_tokens (2048) is smaller than max_model_len (8192).",
     Remedy(RemedyKind.setting, "max_num_batched_tokens", "8192")),
])
def test_the_remedy_a_refusal_or_a_comparison_names(line, remedy):
    assert remedy in named_remedies([line])


def test_what_the_line_offers_comes_before_what_it_compares():
    line = ("ValueError: Chunked MM input disabled but max_tokens_per_mm_item (2496) is larger than "
            "max_num_batched_tokens (2048). Please increase max_num_batched_tokens.")
    assert named_remedies([line])[0] == Remedy(RemedyKind.setting, "max_num_batched_tokens")


@pytest.mark.parametrize("line", [
    "INFO 03-20 00:13:54 gpu_executor.py:126] Maximum concurrency for 131072 tokens per request: 0.96x",
    "the temperature is higher than 3 words",
    "this request is larger than allowed",
])
def test_a_comparison_without_a_setting_names_none(line):
    assert [remedy for remedy in named_remedies([line]) if remedy.kind is RemedyKind.setting] == []


@pytest.mark.parametrize("line", [
    ("Error loading model: The model's max seq len (131072) is larger than the maximum number of tokens that can be "
    "stored in KV cache (126208)."),
    " Error: ✗ Could not create /var/lib/grafana/plugins/natel-plotly-panel. Permission denied.",
    "[Errno 98] error while attempting to bind on address ('0.0.0.0', 4400): address already in use",
    "mkdir: can't create directory '/var/lib/grafana/plugins': Permission denied",
])
def test_error_lines_found_without_a_level_word(line):
    found = decisive_error([line])
    assert found is not None and found.weight is Weight.error


def test_the_os_words_in_a_quiet_record_stay_quiet():
    assert decisive_error(["2020-03-27 07:11:55,663 INFO spawnerr: command at '/app/webserver.sh' is not executable"]) \
        is None


def test_a_port_in_use_names_the_key_that_sets_it():
    vllm = _fallback(["[Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use"],
                     "vllm")
    assert (vllm.cause, vllm.fix.key, vllm.fix.flag) == (Cause.unrecognised, "ports.vllm", "--port")
    assert "`ss -ltnp 'sport = :8000'`" in vllm.fix.text
    # A port stack.yaml does not set: the service's own key.
    other = _fallback([("[Errno 98] error while attempting to bind on address ('0.0.0.0', 4400): address already in "
                       "use")], "vllm")
    assert other.fix.key == "ports.vllm" and "port 4400 is already in use" in other.fix.text
    nginx = placement(Remedy(RemedyKind.port, "443"), "nginx", context_for("nginx", _DEFAULTS).port_keys)
    assert nginx.key == "ports.https"


@pytest.mark.parametrize(("service", "owner"), [
    ("prometheus", "runs as nobody (uid 65534): `sudo chown -R 65534:65534`"),
    ("grafana", "runs as grafana (uid 472): `sudo chown -R 472:472`"),
    ("nginx", "the user it runs as must own it"),
])
def test_a_path_denied_names_the_user_the_service_runs_as(service, owner):
    diagnosis = _fallback(['err="opening storage failed: lock DB directory: open /prometheus/lock: permission denied"'],
                          service)
    assert f"give {service} access to /prometheus/lock (permission denied)" in diagnosis.fix.text
    assert owner in diagnosis.fix.text and ":z" in diagnosis.fix.text
    assert "exist and readable" not in diagnosis.fix.text


def test_a_program_not_executable_and_a_directory_for_a_file():
    executable = placement(Remedy(RemedyKind.executable, "/run.sh"), "supervisord")
    assert "`chmod +x /run.sh`" in executable.text
    directory = _fallback(['msg="Error loading config" err="read /etc/prometheus/config.yml: is a directory"'],
                          "prometheus")
    assert "/etc/prometheus/config.yml is a directory where prometheus expects a file" in directory.fix.text


def test_a_component_to_upgrade_is_placed_by_service():
    engine = _fallback([("ValueError: The checkpoint you are trying to load has model type `glm4_moe` but Transformers "
                        "does not recognize this architecture. This could be because of an issue with the checkpoint, "
                        "or because your version of Transformers is out of date.")], "vllm")
    assert engine.fix.key == "images.vllm" and "a newer vLLM (images.vllm) that ships a newer transformers" in engine.fix.text
    docker = _fallback([("Error response from daemon: client version 1.40 is too old. Minimum supported API version is "
                        "1.44, please upgrade your client to a newer version")], "docker")
    assert "newer docker client" in docker.fix.text
    exporter = placement(Remedy(RemedyKind.upgrade, "dcgm-exporter"), "gpu-exporter")
    assert exporter.key == "images.gpu-exporter" and "a newer GPU exporter (images.gpu-exporter)" in exporter.text


def test_a_refused_flag_of_another_service_may_want_a_newer_image():
    diagnosis = _fallback(["node_exporter: error: unknown long flag '--collector.processes', try --help"],
                          "node-exporter")
    assert "take --collector.processes off node-exporter's command line" in diagnosis.fix.text
    assert "a newer node-exporter (images.node-exporter)" in diagnosis.fix.text


def test_an_old_prometheus_refusing_a_newer_flag_names_prometheus_in_words_beside_its_images_key():
    # prometheus#9993 (round 24): --storage.tsdb.retention.time on a Prometheus older than 2.8.
    diagnosis = _fallback(["unknown long flag '--storage.tsdb.retention.time'"], "prometheus")
    assert "take --storage.tsdb.retention.time off prometheus's command line" in diagnosis.fix.text
    assert "a newer Prometheus (images.prometheus)" in diagnosis.fix.text


def test_a_setting_at_its_limit_becomes_the_engines_flag():
    diagnosis = _fallback(["ValueError: LoRA rank 64 is greater than max_lora_rank 16."], "vllm")
    assert (diagnosis.fix.key, diagnosis.fix.flag, diagnosis.fix.value) == ("vllm.extra_args", "--max-lora-rank", "64")
    window = _fallback(["ValueError: Prompt length of 5016 is longer than the maximum model length of 4096."], "vllm")
    assert (window.fix.key, window.fix.value) == ("vllm.max_model_len", "5016")


@pytest.mark.parametrize(("line", "remedy"), [
    # the disk full, with the path written where the line states it
    ("OSError: [Errno 28] No space left on device", Remedy(RemedyKind.disk_full, "disk")),
    (("failed to register layer: ApplyLayer exit status 1 stdout:  stderr: mkdir /root/.npm/registry.npmjs.org/"
      "har-validator: no space left on device"),
     Remedy(RemedyKind.disk_full, "disk", "/root/.npm/registry.npmjs.org/har-validator")),
    # a server's rate limit, with when to retry where the line says it
    (("acme.messages.Error: urn:ietf:params:acme:error:rateLimited :: There were too many requests of a given type :: "
      "too many certificates (5) already issued for this exact set of domains in the last 168h0m0s, retry after "
      "2024-10-20 03:25:33 UTC: see https://letsencrypt.org/docs/rate-limits/#new-certificates-per-exact-set-of-"
      "hostnames"), Remedy(RemedyKind.rate_limited, "rate limit", "2024-10-20 03:25:33 UTC")),
    (("error pulling image configuration: toomanyrequests: Too Many Requests. Please see https://docs.docker.com/"
     "docker-hub/download-rate-limit/"), Remedy(RemedyKind.rate_limited, "rate limit")),
    # a lock another process holds (flock's EAGAIN)
    (('level=error ts=2021-10-15T08:25:42.501Z caller=main.go:915 err="opening storage failed: lock DB directory: '
      'resource temporarily unavailable"'), Remedy(RemedyKind.lock_held, "lock")),
    # a data file empty or cut short
    ('level=error caller=main.go:731 err="opening storage failed: block dir: : unexpected end of JSON input"',
     Remedy(RemedyKind.data_truncated, "JSON file")),
    (('ts=2022-08-03T19:15:26.989Z caller=main.go:1112 level=error err="opening storage failed: /prometheus/'
      'chunks_head/000001: invalid magic number 0"'),
     Remedy(RemedyKind.data_truncated, "data file", "/prometheus/chunks_head/000001")),
    # a path denied in more words: Go without its operation, Go with a relative path, Rust, supervisord
    ("/prometheus/queries.active: permission denied", Remedy(RemedyKind.permission, "/prometheus/queries.active")),
    ("2016/04/05 15:13:20 [W] Plugins: Failed to create plugin dir: data/plugins, error: mkdir data: permission denied",
     Remedy(RemedyKind.permission, "data")),
    (('openai_harmony.HarmonyError: error downloading or loading vocab file: an underlying IO error occurred while '
      'creating file "/tmp/tiktoken-rs-cache/fb374d419588a4632f3f557e76b4b70aebbca790": Permission denied (os error 13)'),
     Remedy(RemedyKind.permission, "/tmp/tiktoken-rs-cache/fb374d419588a4632f3f557e76b4b70aebbca790")),
    ("supervisor: couldn't chdir to /var/azuracast/stations/rush/config: EACCES",
     Remedy(RemedyKind.permission, "/var/azuracast/stations/rush/config")),
    # exec's EACCES is the execute bit
    ("supervisor: couldn't exec mytool: EACCES", Remedy(RemedyKind.executable, "mytool")),
    # a path missing, quoted in the call OpenSSL reports for nginx
    (('nginx: [emerg] BIO_new_file("/etc/letsencrypt/live/abc.com/fullchain.pem") failed (SSL: error:02001002:system '
      "library:fopen:No such file or directory:fopen('/etc/letsencrypt/live/abc.com/fullchain.pem','r') "
      "error:2006D080:BIO routines:BIO_new_file:no such file)"),
     Remedy(RemedyKind.file, "/etc/letsencrypt/live/abc.com/fullchain.pem")),
])
def test_what_ran_out_and_more_ways_a_path_is_refused(line, remedy):
    assert remedy in named_remedies([line])


@pytest.mark.parametrize("line", [
    # Docker's socket refused is the docker group, not a path's owner.
    ("permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get "
     '"http://%2Fvar%2Frun%2Fdocker.sock/v1.24/containers/json": dial unix /var/run/docker.sock: connect: permission '
     "denied"),
    # fork's EAGAIN is a process limit, no lock; a connection's unexpected EOF is no data file; Grafana's
    # SQLite "database is locked" is its own class (busy, not held by a second instance).
    "runtime: failed to create new OS thread (have 2 already; errno=11): resource temporarily unavailable",
    'Error response from daemon: Get "https://registry-1.docker.io/v2/": unexpected EOF',
    't=2020-02-25T04:10:06+0000 lvl=eror msg="Failed to look up user" logger=context error="database is locked"',
])
def test_neighbours_of_what_ran_out_name_none_of_it(line):
    kinds = {remedy.kind for remedy in named_remedies([line])}
    assert kinds.isdisjoint({RemedyKind.permission, RemedyKind.disk_full, RemedyKind.rate_limited,
                             RemedyKind.lock_held, RemedyKind.data_truncated})


def test_what_ran_out_is_placed_for_the_service_that_ran_out_of_it():
    docker = _fallback([("failed to register layer: Error processing tar file(exit status 1): write /opt/conda/lib/"
                        "libnvvm.so.3.3.0: no space left on device")], "docker")
    assert "docker system prune" in docker.fix.text and "data-root" in docker.fix.text
    assert "/opt/conda" not in docker.fix.text  # a path inside the image being unpacked is not the full disk
    engine = _fallback(["OSError: [Errno 28] No space left on device"], "vllm")
    assert engine.fix.key == "hf_cache" and "df -h" in engine.fix.text
    certbot = _fallback([("acme.messages.Error: urn:ietf:params:acme:error:rateLimited :: There were too many requests "
                          "of a given type :: Error creating new order :: too many certificates already issued for "
                          "exact set of domains: example.org")], "certbot")
    assert certbot.fix.key == "letsencrypt_dir" and "--staging" in certbot.fix.text and certbot.fix.value is None
    pull = _fallback([("Error response from daemon: toomanyrequests: You have reached your unauthenticated pull rate "
                      "limit. https://www.docker.com/increase-rate-limit")], "docker")
    assert "`docker login`" in pull.fix.text
    lock = _fallback(['err="opening storage failed: lock DB directory: resource temporarily unavailable"'],
                     "prometheus")
    assert "lock on /prometheus" in lock.fix.text and "another prometheus" in lock.fix.text and "NFS" in lock.fix.text
    head = _fallback(['err="opening storage failed: /prometheus/chunks_head/000001: invalid magic number 0"'],
                     "prometheus")
    assert "(/prometheus/chunks_head/000001) is empty or cut short" in head.fix.text
    assert "find /prometheus/chunks_head -size 0" in head.fix.text


def test_an_action_asked_for_in_words_is_kept_beside_a_port_the_line_does_not_number():
    # A Java server's BindException message: the port taken is unnamed, so it repeats no part of the action.
    remedies = named_remedies(["java.net.BindException: Address already in use. Please change port number."])
    assert remedies == [Remedy(RemedyKind.port, ""), Remedy(RemedyKind.stated, "change port number")]
    # certbot-zimbra#39's numbered port keeps its action as before.
    named = named_remedies([("Could not bind TCP port 443 because it is already in use by another process on this "
                            "system (such as a web server). Please stop the program in question and then try again.")])
    assert [remedy.kind for remedy in named] == [RemedyKind.port, RemedyKind.stated]


def test_a_command_quoted_after_require_is_one_to_run_and_a_quoted_name_is_not():
    # wolweb#3: Docker's pull refusal.
    line = ("ERROR: pull access denied for wolweb, repository does not exist or may require 'docker login': denied: "
            "requested access to the resource is denied")
    assert named_remedies([line]) == [Remedy(RemedyKind.command, "docker login")]
    # One quoted word after "requires" is a package, not a command (a script's own note).
    package = named_remedies(["Note: device_map requires 'accelerate' package. Loading without it..."])
    assert package == [Remedy(RemedyKind.package, "accelerate")]


def test_a_prometheus_block_whose_meta_json_ends_early_is_the_block_to_move_away():
    # prometheus#5457 (the block directory left empty).
    unnamed = _fallback([('level=error caller=main.go:731 err="opening storage failed: block dir: : unexpected end of '
                         'JSON input"')], "prometheus")
    assert "find /prometheus -name meta.json -size 0" in unnamed.fix.text and "block directory" in unnamed.fix.text
    # outline-server#615 (the reporter wrote {HASH} for the block's name).
    named = _fallback([('level=error ts=2020-04-01T07:53:10.069420248Z caller=main.go:617 err="opening storage failed: '
                       'block dir: \\"/home/vince/shadowbox/persisted-state/prometheus/data/{HASH}\\": unexpected end of '
                       'JSON input"')], "prometheus")
    assert "move the block /home/vince/shadowbox/persisted-state/prometheus/data/{HASH} (its meta.json)" in named.fix.text
    # Docker's JSON cut short (a container's config.v2.json) keeps the general reading.
    other = _fallback(["Error response from daemon: unexpected end of JSON input"], "docker")
    assert "meta.json" not in other.fix.text and "is empty or cut short" in other.fix.text
