"""Round 31's misses, built by cause: a client that does not trust the endpoint's certificate chain, a
table legacy iptables lacks in the kernel (Docker 28's raw table, the nat table of a kernel without
legacy iptables), nginx's proxy_pass with a URI in a regex location, the ACME server finding no address
for a domain, and a CUDA kernel's illegal memory access in vLLM; each beside the neighbours that keep
their own class, and read by the fallback too where the error line states the cause. The lines are real:
from tests/data, quoted from the public report named beside them."""

from __future__ import annotations

from stackctl.diagnosis import Cause
from stackctl.diagnosis.stated_classes import classes_stated

# --- a client that does not trust the endpoint's certificate ------------------------------------------

_NODE_REFUSALS = (
    "Failed to connect to api.anthropic.com: SELF_SIGNED_CERT_IN_CHAIN",  # claude-code#2855
    "Failed to fetch version from https://storage.googleapis.com/x/latest: unable to get local issuer certificate",  # #22756
    "      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'",  # deep-research#99
    ("API Error: Unable to connect to API: Self-signed certificate detected. Check your proxy or corporate SSL "
    "certificates"),  # claude-code#26897
)
_PYTHON_REFUSALS = (
    ("ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed "
    "certificate in certificate chain (_ssl.c:1007)"),  # continue#341
    ("SSLError: HTTPSConnectionPool(host='api.cloud.llamaindex.ai', port=443): Max retries exceeded with url: "
    "/api/parsing/upload (Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate "
    "verify failed: self-signed certificate in certificate chain (_ssl.c:1000)')))"),  # llama_cloud_services#348
)
from tests.unit.diagnosis.reading import diagnosed


def test_a_node_client_refusing_the_chain_names_node_extra_ca_certs_and_never_turning_verification_off():
    for line in _NODE_REFUSALS:
        diagnosis = diagnosed([line], "filter-proxy")
        assert diagnosis.cause is Cause.client_certificate_untrusted, line
        assert diagnosis.fix.env == "NODE_EXTRA_CA_CERTS"
        text = diagnosis.fix.text
        assert "NODE_EXTRA_CA_CERTS=/path/to/ca.pem" in text and "Never turn verification off" in text
        assert "SSL_CERT_FILE" not in text


def test_a_python_client_refusing_the_chain_names_ssl_cert_file_and_requests_bundle():
    for line in _PYTHON_REFUSALS:
        diagnosis = diagnosed([line], "filter-proxy")
        assert diagnosis.cause is Cause.client_certificate_untrusted, line
        assert diagnosis.fix.env == "SSL_CERT_FILE"
        assert "REQUESTS_CA_BUNDLE" in diagnosis.fix.text and "NODE_EXTRA_CA_CERTS" not in diagnosis.fix.text


def test_the_fix_says_where_stackctls_certificate_comes_from_since_it_makes_no_ca_of_its_own():
    # stackctl/tls/certbot.py: Let's Encrypt, --staging or --acme-server; the chain under letsencrypt_dir/live/.
    text = diagnosed([_NODE_REFUSALS[0]], "filter-proxy").fix.text
    assert "stackctl makes no CA of its own" in text and "--staging" in text and "--acme-server" in text
    assert "LETSENCRYPT_DIR/live/HOSTNAME/fullchain.pem" in text


def test_a_client_that_cannot_connect_at_all_keeps_its_base_url_fix():
    # openmanus#470 (tests/data): the OpenAI SDK's Connection error is the base URL, not a certificate.
    diagnosis = diagnosed(["2025-03-11 17:51:59.330 | ERROR    | app.llm:ask_tool:260 - API error: Connection error."],
                          "filter-proxy")
    assert diagnosis.cause is Cause.client_base_url


# --- a table legacy iptables does not have ------------------------------------------------------------

_RAW = ("docker: Error response from daemon: failed to set up container networking: failed to create endpoint Dockhand "
        "on network bridge: Unable to enable DIRECT ACCESS FILTERING - DROP rule:  (iptables failed: iptables --wait -t "
        "raw -A PREROUTING -d 172.17.0.2 ! -i docker0 -j DROP: iptables v1.8.3 (legacy): can't initialize iptables "
        "table `raw': Table does not exist (do you need to insmod?)")  # synology-docker#85
_NAT = ["failed to start daemon: Error initializing network controller: ",
        'failed to register "bridge" driver: failed to create NAT chain DOCKER: ',
        "iptables failed: iptables --wait -t nat -N DOCKER: ",
        "modprobe: FATAL: Module ip_tables not found in directory /lib/modules/7.0.12-joeyblog-bbrv3",
        "iptables v1.8.4 (legacy): can't initialize iptables table `nat': Table does not exist (do you need to insmod?)",
        "Perhaps iptables or your kernel needs to be upgraded."]  # Actions-bbr-v3#30


def test_docker_28s_raw_table_missing_names_iptable_raw_iptables_nft_and_docker_27():
    diagnosis = diagnosed([_RAW, "Perhaps iptables or your kernel needs to be upgraded.", " (exit status 3))"], "docker")
    assert diagnosis.cause is Cause.docker_kernel_module_missing
    assert diagnosis.values["table"] == "raw" and diagnosis.values["modules"] == "ip_tables, iptable_raw"
    text = diagnosis.fix.text
    assert "sudo modprobe ip_tables iptable_raw" in text and "direct access filtering" in text
    assert "update-alternatives --set iptables /usr/sbin/iptables-nft" in text and "27.5.1" in text
    assert "DOCKER_INSECURE_NO_IPTABLES_RAW=1" in text


def test_a_kernel_without_legacy_iptables_names_iptables_nft_and_the_kernel_options():
    diagnosis = diagnosed(_NAT, "docker")
    assert diagnosis.cause is Cause.docker_kernel_module_missing and diagnosis.values["table"] == "nat"
    text = diagnosis.fix.text
    assert "sudo modprobe ip_tables iptable_nat" in text and "iptables-nft" in text
    assert "CONFIG_IP_NF_IPTABLES_LEGACY" in text and "27.5.1" not in text


def test_docker_28s_ipsets_and_flushed_chains_keep_their_own_fixes():
    # moby#49524: the ipset modules; moby#35161 family (tests/data): a chain flushed, the table is there.
    ipset = diagnosed([('failed to start daemon: Error initializing network controller: error obtaining controller '
                       'instance: failed to register "bridge" driver: creating ipset docker-ext-bridges-v4: invalid '
                       'argument (kernel modules ip_set, ip_set_hash_net and netfilter_xt_set are required)')], "docker")
    assert ipset.cause is Cause.docker_kernel_module_missing and "ip_set" in ipset.values["modules"]
    assert "iptables-nft" not in ipset.fix.text
    chain = diagnosed([("ERROR: Failed to Setup IP tables: Unable to enable SKIP DNAT rule:  (iptables failed: iptables "
                       "--wait -t nat -I DOCKER -i br-5c61efe98fd0 -j RETURN: iptables: No chain/target/match by that "
                       "name.")], "docker")
    assert chain.cause is Cause.docker_iptables_chain_missing


# --- nginx's proxy_pass with a URI in a regex location ------------------------------------------------

def test_a_proxy_pass_uri_in_a_regex_location_names_the_place_a_prefix_location_and_the_rewrite():
    # st2#4172, jfa-go#211.
    line = ('nginx: [emerg] "proxy_pass" cannot have URI part in location given by regular expression, or inside named '
            'location, or inside "if" statement, or inside "limit_except" block in /etc/nginx/conf.d/st2.conf:87')
    diagnosis = diagnosed([line], "nginx")
    assert diagnosis.cause is Cause.nginx_proxy_pass_uri_in_regex
    assert diagnosis.values == {"file": "/etc/nginx/conf.d/st2.conf", "line": "87"}
    text = diagnosis.fix.text
    assert "/etc/nginx/conf.d/st2.conf:87" in text and "location ^~ /path/" in text
    assert "rewrite ^/path/(.*)$ /$1 break;" in text and "uses prefix locations only" in text


def test_an_upstream_name_nginx_cannot_resolve_keeps_its_own_class():
    line = '2024/06/22 16:54:59 [emerg] 1#1: host not found in upstream "pipedfrontend:80" in /etc/nginx/conf.d/p.conf:2'
    assert diagnosed([line], "nginx").cause is Cause.nginx_upstream_host_unknown


# --- the ACME server finding no address ---------------------------------------------------------------

def test_no_valid_ip_addresses_names_the_authoritative_dns_and_dig_trace():
    # certbot#5433 (unknownHost), certbot#7999 (a CNAME to 127.0.0.1), libhv#293 (no valid A records).
    for lines, domain in ((["   Domain: php72.webehostin.com", "   Type:   unknownHost",
                            "   Detail: No valid IP addresses found for php72.webehostin.com"], "php72.webehostin.com"),
                          (["   Domain: 51cy.club", "   Type:   dns", "   Detail: No valid IP addresses found for 51cy.club"],
                           "51cy.club"),
                          ([("  Detail: no valid A records found for video2vid.tk; no valid AAAA records found for "
                            "video2vid.tk")], "video2vid.tk")):
        diagnosis = diagnosed(lines, "certbot")
        assert diagnosis.cause is Cause.certbot_dns_no_address and diagnosis.values["domain"] == domain
        assert f"dig +trace A {domain}" in diagnosis.fix.text and diagnosis.fix.key == "hostname"


def test_nxdomain_keeps_its_create_the_record_fix():
    line = "Detail: DNS problem: NXDOMAIN looking up A for officeapps.shomar.com"  # certbot#2777
    assert diagnosed([line], "certbot").cause is Cause.certbot_dns_missing


# --- a CUDA kernel's illegal memory access ------------------------------------------------------------

def test_an_illegal_memory_access_names_cudagraph_mode_enforce_eager_and_how_to_report_it():
    # MiniMax-M2's recipe (cudagraph_mode PIECEWISE), vllm#45670 (under CUDA graphs), vllm#6976.
    for lines, under_graphs in ((["torch.AcceleratorError: CUDA error: an illegal memory access was encountered"], False),
                                (["INFO 10-12 13:53:25 model_runner.py:1181] Capturing the model for CUDA graphs.",
                                  "RuntimeError: CUDA error: an illegal memory access was encountered"], True)):
        diagnosis = diagnosed(lines, "vllm")
        assert diagnosis.cause is Cause.cuda_illegal_memory_access
        assert (diagnosis.fix.key, diagnosis.fix.flag) == ("vllm.extra_args", "--compilation-config")
        text = diagnosis.fix.text
        assert '"cudagraph_mode": "PIECEWISE"' in text and "--enforce-eager" in text
        assert "CUDA_LAUNCH_BLOCKING=1" in text
        assert ("shows CUDA graphs at work" in text) is under_graphs


def test_a_cause_the_log_names_beside_the_illegal_access_wins():
    # vllm#48749 (tests/data): a capture refusal keeps its own class; the illegal access is only a consequence.
    capture = diagnosed([("(EngineCore pid=1140) ERROR 07-15 00:27:03 core.py:1231] torch.AcceleratorError: CUDA error: "
                         "operation not permitted when stream is capturing"),
                         "RuntimeError: CUDA error: an illegal memory access was encountered"], "vllm")
    assert capture.cause is Cause.cuda_graph_capture_failed


# --- the fallback reads the same causes from the error line -------------------------------------------

def test_the_fallback_reads_each_stated_cause_with_the_classes_fix():
    node = classes_stated("Failed to connect to console.anthropic.com: SELF_SIGNED_CERT_IN_CHAIN")
    assert [cause.env for cause in node] == ["NODE_EXTRA_CA_CERTS"]
    python = classes_stated(_PYTHON_REFUSALS[0])
    assert [cause.env for cause in python] == ["SSL_CERT_FILE"]
    raw = classes_stated(_RAW)
    assert len(raw) == 1 and "iptable_raw" in raw[0].text and "27.5.1" in raw[0].text
    nat = classes_stated(_NAT[3])
    assert len(nat) == 1 and "iptables-nft" in nat[0].text
    regex = classes_stated('[emerg] "proxy_pass" cannot have URI part in location given by regular expression, or '
                           'inside named location [...]')  # Radicale#869
    assert len(regex) == 1 and "location ^~" in regex[0].text and "the line nginx names" in regex[0].text
    address = classes_stated("Detail: No valid IP addresses found for test.website.com")  # letsencrypt-vesta#26
    assert len(address) == 1 and address[0].key == "hostname" and "dig +trace A test.website.com" in address[0].text
    # NXDOMAIN is no record at all, not one without a usable address: its own cause (certbot-dns-missing's fix).
    nxdomain = classes_stated("Detail: DNS problem: NXDOMAIN looking up A for officeapps.shomar.com")
    assert [cause.name for cause in nxdomain] == ["no DNS record: officeapps.shomar.com"]
    assert "dig +trace" not in nxdomain[0].text and "create a DNS record for hostname" in nxdomain[0].text
    # Neighbours state none of these.
    assert classes_stated("iptables: No chain/target/match by that name.") == []
