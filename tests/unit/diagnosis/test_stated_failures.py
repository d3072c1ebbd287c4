"""The fallback on a log with no error line: the line that states the failure in words, and the
remedy the log asks for in words (real lines from the reports under tests/data). Read alone, as
for a failure no signature knows."""

from __future__ import annotations

from stackctl.config import parse_stack_config
from stackctl.diagnosis import DiagnosisContext, Severity, diagnose_log
from stackctl.diagnosis.diagnose import context_for
from stackctl.diagnosis.fallback import read_fallback
from stackctl.diagnosis.remedy import Remedy, RemedyKind, named_remedies

# certbot#1424 and elewant#159 (certbot before 0.10, wrapped at 80 columns in the second).
APACHE = ("The program apache2 (process ID 23326) is already listening on TCP port 80. This will prevent us from binding "
          "to that port. Please stop the apache2 program temporarily and then try again.")
WRAPPED = ["The program nginx (process ID 32742) is already listening on TCP port 443. This",
           "will prevent us from binding to that port. Please stop the nginx program",
           "temporarily and then try again. For automated renewal, you may want to use a",
           "script that stops and starts your webserver. You can find an example at",
           "https://certbot.eff.org/docs/using.html#renewal . Alternatively you can use the",
           "webroot plugin to renew without needing to stop and start your webserver."]


def _read(lines, service, failed=None):
    # As `logs --explain` reads them: with a stack.yaml's ports (443 is ports.https).
    reading = read_fallback(lines, context_for(service, parse_stack_config({}), failed=failed))
    assert reading is not None
    return reading


def test_a_failure_stated_without_an_error_word_is_the_decisive_line_and_its_please_is_the_remedy():
    reading = _read([APACHE], "certbot")
    diagnosis = reading.diagnosis
    assert reading.line == 0 and diagnosis.evidence == APACHE
    assert diagnosis.severity is Severity.advisory  # not known to have failed: a warning
    assert diagnosis.fix.key == "ports.http" and "ss -ltnp 'sport = :80'" in diagnosis.fix.text
    assert "stop the apache2 program temporarily and then try again, as the log asks" in diagnosis.fix.text
    assert _read([APACHE], "certbot", failed=True).diagnosis.severity is Severity.fatal


def test_a_sentence_wrapped_at_the_terminals_width_is_read_from_where_it_starts():
    reading = _read(WRAPPED, "certbot")
    assert reading.line == 0
    assert reading.diagnosis.evidence == " ".join(WRAPPED[:4])  # the message and the lines it wraps onto
    assert "stop the nginx program temporarily" in reading.diagnosis.fix.text
    assert reading.diagnosis.fix.key == "ports.https"


def test_an_echoed_command_is_neither_the_failure_nor_part_of_it():
    # node_exporter#1027: the curl command, then curl's refusal.
    reading = _read(["curl 172.4.0.1:9092/metrics", "curl: (7) Failed connect to 172.4.0.1:9092; Connection refused"],
                    "node-exporter")
    assert reading.line == 1 and reading.diagnosis.evidence.startswith("curl: (7) Failed connect")


def test_a_bare_statement_names_no_remedy_and_says_where_to_look():
    # ankhmorpork#1218: Grafana's whole message.
    diagnosis = _read(["data source not found"], "grafana").diagnosis
    assert diagnosis.evidence == "data source not found" and diagnosis.fix.key is None
    assert diagnosis.fix.text.startswith("no fix is named in the log")


def test_a_warning_is_read_only_from_a_service_known_to_have_failed():
    # dcgm-exporter#427: the exporter's own warning names the capability; the rest is info records.
    lines = [("Warning #2: dcgm-exporter doesn't have sufficient privileges to expose profiling metrics. To get "
              "profiling metrics with dcgm-exporter, use --cap-add SYS_ADMIN"),
             'time="2024-11-30T07:41:50Z" level=info msg="Starting dcgm-exporter"',
             'time="2024-11-30T07:41:51Z" level=info msg="DCGM successfully initialized!"']
    assert read_fallback(lines, DiagnosisContext(service="gpu-exporter")) is None
    failed = _read(lines, "gpu-exporter", failed=True).diagnosis
    assert failed.evidence.startswith("Warning #2:") and failed.fix.flag == "--cap-add"


def test_an_error_line_still_beats_a_stated_failure():
    lines = ["The program nginx (process ID 1) is already listening on TCP port 80.",
             "2026/01/01 00:00:00 [emerg] 1#1: unknown directive \"servr\" in /etc/nginx/conf.d/x.conf:1"]
    assert _read(lines, "nginx").line == 1


def test_pointers_elsewhere_and_json_openings_state_nothing():
    # puppet-pixelated#40: certbot's pointer to its logs follows the refusal itself.
    refusal = ("There were too many requests of a given type :: Error creating new cert :: Too many certificates "
               "already issued for exact set of domains: api.staging.pixelated-project.org")
    reading = _read([refusal, "Please see the logfiles in /var/log/letsencrypt for more details."], "certbot")
    assert reading.line == 0
    assert _read(["ChatGPT error 400: {", '  "error": {', '    "message": "x"', "  }", "}"], "filter-proxy").line == 0


def test_a_healthy_services_log_states_no_failure():
    healthy = {
        # torch's FutureWarning in every vLLM start, then vLLM's records.
        "vllm": [("/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:61: FutureWarning: The pynvml "
                  "package is deprecated. Please install nvidia-ml-py instead. If you did not install pynvml directly, "
                  "please report this to the maintainers of the package that installed pynvml for you."),
                 "INFO 08-06 10:10:10 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8000"],
        "prometheus": [('time=2025-07-01T10:00:00.000Z level=INFO source=main.go:1292 msg="Server is ready to '
                        'receive web requests."')],
        "nginx": ['2026/01/01 00:00:00 [notice] 1#1: using the "epoll" event method',
                  "/docker-entrypoint.sh: Configuration complete; ready for start up"],
        "certbot": ["Saving debug log to /var/log/letsencrypt/letsencrypt.log",
                    "Certificate not yet due for renewal", "No renewals were attempted."],
    }
    for service, lines in healthy.items():
        assert diagnose_log(lines, DiagnosisContext(service=service)) is None, service


def test_a_please_that_asks_for_what_a_remedy_names_is_not_repeated():
    # vllm-recipes#441: "Please increase max_num_batched_tokens" is the setting already read.
    line = ("ValueError: Chunked MM input disabled but max_tokens_per_mm_item (2496) is larger than "
            "max_num_batched_tokens (2048). Please increase max_num_batched_tokens.")
    assert all(remedy.kind is not RemedyKind.stated for remedy in named_remedies([line]))
    assert Remedy(RemedyKind.stated, "stop the apache2 program temporarily and then try again") in named_remedies([APACHE])
