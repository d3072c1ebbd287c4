"""The fallback's readings by cause that hold across programs, read with the signatures aside (most of
these failures have a class of their own; the fallback must name their fix where no signature knows the
wording). Each reading rests on real lines from at least two programs' logs under tests/data."""

from __future__ import annotations

import pytest

from tests.unit.diagnosis.reading import read_by_fallback


@pytest.mark.parametrize(("lines", "service", "window"), [
    # OpenAI's words, as vLLM, autogen and a gateway relay them
    ([('{\'object\': \'error\', \'message\': "This model\'s maximum context length is 32768 tokens. However, you '
      'requested 41648 tokens (37552 in the messages, 4096 in the completion). Please reduce the length of the '
      'messages or completion. None", \'type\': \'BadRequestError\', \'param\': None, \'code\': 400}')], "vllm", "32768"),
    (['\t"name": "InvalidRequestError",',
      ('\t"message": "This model\'s maximum context length is 8192 tokens. However, your messages resulted in 11433 '
      'tokens. Please reduce the length of the messages.",')], "vllm", "8192"),
    ([('API Request failed "400 Please reduce the length of the messages or completion. Current length is 42328 '
      'while limit is 40000"')], "vllm", "40000"),
    # llama.cpp's server, through Claude Code
    ([('  ⎿  API Error: 400 {"error":{"code":400,"message":"request (24071 tokens) exceeds the available context size '
      '(8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":24071,"n_ctx":8192}}')],
     "filter-proxy", "8192"),
    # MLX's server, through Claude Code
    (["⏺ API Error: 400 Prompt exceeds maximum context length"], "vllm", None),
])
def test_a_request_past_the_context_window_names_the_window_key(lines: list[str], service: str, window: str | None):
    diagnosis = read_by_fallback(lines, service)
    assert diagnosis.fix.key == "vllm.max_model_len" and diagnosis.fix.flag == "--max-model-len"
    assert "compact or trim the conversation" in diagnosis.fix.text
    assert window is None or f"({window} tokens)" in diagnosis.fix.text


@pytest.mark.parametrize(("line", "service", "past"), [
    # vLLM's refusal of the answer budget, in its own log and through a client
    (("2026-04-28T14:17:50.089230833+08:00 (APIServer pid=1) ERROR 04-28 14:17:50 [serving_chat.py:257] ValueError: "
      "'max_tokens' or 'max_completion_tokens' is too large: 8192. This model's maximum context length is 8192 tokens "
      "and your request has 1210 input tokens (8192 > 8192 - 1210)."), "vllm", "the context window (8192 tokens)"),
    (("API Error: 400 'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's maximum context length "
     "is 20000 tokens and your request has 16614 input tokens (64000 > 20000 - 16614). None"), "filter-proxy",
     "the context window (20000 tokens)"),
    # OpenAI's cap on an answer, relayed by a gateway
    (('    "message": "max_tokens is too large: 32000. This model supports at most 16384 completion tokens, whereas you '
     'provided 32000.",'), "filter-proxy", "the model's limit on an answer (16384 tokens)"),
])
def test_an_answer_budget_past_the_window_asks_the_client_for_less(line: str, service: str, past: str):
    diagnosis = read_by_fallback([line], service)
    assert "lower max_tokens in the client" in diagnosis.fix.text and past in diagnosis.fix.text
    assert diagnosis.fix.key == "vllm.max_model_len"


def test_a_client_that_needs_a_longer_window_is_told_how_long():
    diagnosis = read_by_fallback([(
        '03:15:53 [diagnostic] lane task error: lane=session:agent:main:main durationMs=179 error="FailoverError: Model '
        'context window too small (4096 tokens). Minimum is 16000."')], "filter-proxy")
    assert diagnosis.fix.key == "vllm.max_model_len" and "to 16000 or more" in diagnosis.fix.text


def test_a_refusal_stated_without_an_error_level_is_still_read():
    """The refusal quoted bare, as a client pastes it: no level, no exception, only the words."""
    diagnosis = read_by_fallback([(
        "This model's maximum context length is 32768 tokens. However, you requested 32000 output tokens and your "
        "prompt contains at least 769 input tokens, for a total of at least 32769 tokens.")], "filter-proxy")
    assert diagnosis.fix.key == "vllm.max_model_len" and "reserves 32000 tokens" in diagnosis.fix.text


@pytest.mark.parametrize(("line", "service", "said"), [
    # the template's raise_exception through jinja2, llama.cpp's server, vLLM's record, a client and a gateway
    ("jinja2.exceptions.TemplateError: System message must be at the beginning.", "vllm", "at the beginning"),
    ("HTTP 500/400: Jinja Exception: System message must be at the beginning.", "filter-proxy", "at the beginning"),
    (('Error: HTTP 400: Bad Request — {"error":{"message":"System message must be at the beginning.","type":'
     '"BadRequestError","param":null,"code":400}}'), "filter-proxy", "at the beginning"),
    ("System message must be at the beginning.", "filter-proxy", "at the beginning"),
    (("ERROR 08-05 12:39:06 serving_chat.py:118] Error in applying chat template from request: System role not "
     "supported"), "vllm", "has no system role"),
    (("litellm.exceptions.BadRequestError: litellm.BadRequestError: OpenAIException - Error code: 400 - {'object': "
     "'error', 'message': 'System role not supported', 'type': 'BadRequestError', 'param': None, 'code': 400}"),
     "filter-proxy", "has no system role"),
    ("jinja2.exceptions.TemplateError: System role not supported.", "vllm", "has no system role"),
])
def test_a_chat_template_refusing_the_system_message_names_the_template_flag(line: str, service: str, said: str):
    diagnosis = read_by_fallback([line], service)
    assert diagnosis.fix.flag == "--chat-template" and diagnosis.fix.key == "vllm.extra_args"
    assert said in diagnosis.fix.text and "system message" in diagnosis.fix.text


@pytest.mark.parametrize(("line", "service", "said"), [
    # logfmt's escaped quotes around a path: node-exporter's statfs() refused, Prometheus's WAL segment empty
    (('nodeexporter    | time="2017-10-12T07:19:45Z" level=error msg="Error on statfs() system call for \\"/rootfs/var/'
     'lib/docker/containers/3ba4123c2ff67826a1869c0c3e2ac7e36beea1601b97ff3075e117448af39300/shm\\": permission denied"'
     ' source="filesystem_linux.go:57"'), "node-exporter",
     "give node-exporter access to /rootfs/var/lib/docker/containers/"),
    (('Dez 12 11:46:22 chuck-norris.always.survives node_exporter[17479]: time="2017-12-12T11:46:22+01:00" '
     'level=error msg="Error on statfs() system call for \\"/var/lib/docker/containers/'
     '3b904624f3f78c0a0bea28242d71b058649e496cd370f61dfd914d611dec669c/shm\\": permission denied" '
     'source="filesystem_linux.go:57"'), "node-exporter", "give node-exporter access to /var/lib/docker/containers/"),
    (('Oct 12 11:48:20 ... docker[2709]: level=error ts=2017-10-12T09:48:20.103205196Z caller=main.go:317 msg="Opening '
     'storage failed" err="validate meta \\"/prometheus/wal/000025\\": EOF"'), "prometheus",
     "(/prometheus/wal/000025) is empty or cut short"),
])
def test_a_path_in_escaped_quotes_is_read_as_quoted(line: str, service: str, said: str):
    assert said in read_by_fallback([line], service).fix.text


@pytest.mark.parametrize(("line", "service", "said", "flag"), [
    # Go's words (node-exporter, Docker's userland proxy), nginx's and uvicorn's
    ("listen tcp 172.17.0.1:9100: bind: cannot assign requested address", "node-exporter",
     "set --web.listen-address to an address this host has", "--web.listen-address"),
    (("Jan 18 02:36:12 www nginx[1305]: nginx: [emerg] bind() to #ipv4-address#:80 failed (99: Cannot assign requested "
     "address)"), "nginx", "set the `listen ADDRESS:PORT` directive to an address this host has", None),
    (("ERROR:    [Errno 99] error while attempting to bind on address ('::1', 8000, 0, 0): cannot assign requested "
     "address"), "vllm", "is an IPv6 address and IPv6 is off", "--host"),
    (("ERROR: for nginx-web  Cannot start service nginx-web: driver failed programming external connectivity on endpoint "
     "nginx-web (a1476bc8e02ba57bf1c3639cca112f12b20e42071eb9e15f62e4e6a25dd47f3d): Error starting userland proxy: "
     "listen tcp 51.15.210.18:443: bind: cannot assign requested address"), "docker",
     "remove the address from the service's `ports:` entry", None),
])
def test_a_listen_address_the_host_lacks_names_the_listen_setting(line: str, service: str, said: str,
                                                                   flag: str | None):
    diagnosis = read_by_fallback([line], service)
    assert said in diagnosis.fix.text and diagnosis.fix.flag == flag


@pytest.mark.parametrize("lines", [
    # the kernel module's words, from the journal and from dmesg, with NVML's for the same cause beside them
    ["Aug 26 14:08:07 nyasara-linux kernel: NVRM: API mismatch: the client has the version 367.44, but",
     "                                      NVRM: this kernel module has the version 367.35.  Please"],
    ["[   12.014918] NVRM: API mismatch: the client has the version 570.153.02, but"],
    ["[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)"],
    ["Failed to initialize NVML: Driver/library version mismatch"],
])
def test_the_driver_modules_version_mismatch_asks_for_a_reboot(lines: list[str]):
    diagnosis = read_by_fallback(lines, "docker")
    assert "reboot the host" in diagnosis.fix.text and "different versions" in diagnosis.fix.text


@pytest.mark.parametrize(("line", "repository"), [
    # huggingface_hub's message as xinference, neosapiens, optimum-neuron, mlx-examples and SGLang logged it, alone
    (("pdf-chatbot-with-local-llm-chat_doc-1  | Repo model meta-llama/Llama-2-13b-chat-hf is gated. You must be "
     "authenticated to access it."), "meta-llama/Llama-2-13b-chat-hf"),
    ("Repo model meta-llama/Llama-2-7b is gated. You must be authenticated to access it.", "meta-llama/Llama-2-7b"),
    ("Access to model mistralai/Mistral-7B-Instruct-v0.2 is restricted. You must be authenticated to access it.",
     "mistralai/Mistral-7B-Instruct-v0.2"),
    (("Access to model meta-llama/Llama-3.2-1B-Instruct is restricted. You must have access to it and be authenticated "
     "to access it. Please log in."), "meta-llama/Llama-3.2-1B-Instruct"),
])
def test_a_gated_repository_named_alone_asks_for_a_token(line: str, repository: str):
    diagnosis = read_by_fallback([line], "vllm")
    assert diagnosis.fix.env == "HF_TOKEN" and f"https://huggingface.co/{repository}" in diagnosis.fix.text


@pytest.mark.parametrize("lines", [
    # certbot's report (no error level, the word alone) and acme.sh's verify error
    [" - The following errors were reported by the server:", "", "   Domain: www.cultrix.nl",
     "   Type:   connection", "   Detail: DNS problem: NXDOMAIN looking up A for www.cultrix.nl"],
    ["Detail: DNS problem: NXDOMAIN looking up A for officeapps.shomar.com"],
    ["[Mon May 30 16:00:45 CST 2016] www.aa.com:Verify error:DNS problem: NXDOMAIN looking up A for www.aa.com"],
])
def test_a_domain_without_a_dns_record_names_the_hostname(lines: list[str]):
    diagnosis = read_by_fallback(lines, "certbot")
    assert diagnosis.fix.key == "hostname" and "create a DNS record for hostname" in diagnosis.fix.text


@pytest.mark.parametrize(("line", "service", "said"), [
    # go-yaml's syntax errors as promtool, Prometheus and Grafana's provisioning report them
    ("yaml: line 7: mapping values are not allowed in this context", "prometheus", "must be in quotes"),
    ("Service init failed: Datasource provisioning error: yaml: line 5: mapping values are not allowed in this context",
     "grafana", "must be in quotes"),
    (('level=error ts=2019-04-04T07:45:15.852696951Z caller=main.go:582 err="Error loading config couldn\'t load '
     'configuration (--config.file=/data/mysql/tidb/deploy/conf/prometheus.yml): parsing YAML file '
     '/data/mysql/tidb/deploy/conf/prometheus.yml: yaml: line 109: did not find expected key"'), "prometheus",
     "/data/mysql/tidb/deploy/conf/prometheus.yml does not parse at line 109"),
    (("ERRO[843257] Couldn't load configuration (-config.file=prometheus.yml): yaml: line 359: did not find expected '-' "
     "indicator  source=main.go:208"), "prometheus", "the indentation at or just above that line is off"),
])
def test_a_yaml_file_that_does_not_parse_names_the_line_and_what_its_words_mean(line: str, service: str, said: str):
    assert said in read_by_fallback([line], service).fix.text
