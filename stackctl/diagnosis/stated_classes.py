"""Causes an error line states that a failure class's shared reader also knows, for the fallback to
name the fix of where the class's signature misses the line (a wording a little off its trigger, a
log read with signatures that do not apply):

- Docker's iptables chains flushed from under it ("No chain/target/match by that name" for a DOCKER
  chain, nf_tables' "Chain 'DOCKER-...' does not exist"): docker_chains;
- a Prometheus rule file that did not load ("loading groups failed", "error loading rules", rulefmt's
  refusals): prometheus_rules;
- supervisord's log file it cannot open ("error making dispatchers for 'x': EISDIR", an open() refused
  under its loggers): supervisor_logs;
- nginx's resolver naming no address ('host not found in resolver "X"'): nginx_resolver;
- supervisord's child that cannot enter a program's working directory ("couldn't chdir to DIR:
  ENOENT") or a program that exits 127: supervisor_spawn;
- a client that does not trust the endpoint's certificate chain (Node's SELF_SIGNED_CERT_IN_CHAIN and its
  kin, Python's CERTIFICATE_VERIFY_FAILED): client_certificates;
- a table legacy iptables does not have in this kernel ("can't initialize iptables table `raw': Table does
  not exist", Docker 28's "Unable to enable DIRECT ACCESS FILTERING", "Module ip_tables not found"):
  iptables_tables;
- nginx's proxy_pass with a URI part in a regular-expression location: nginx_proxy_pass;
- the ACME server finding no usable address for a domain ("No valid IP addresses found for X") or no record
  at all ("DNS problem: NXDOMAIN looking up A for X"): acme_dns;
- nginx's "unknown directive": a directive of a newer nginx (http2 before 1.25.1) apart from a module's not
  loaded or a typo: nginx_directives;
- Docker refusing a registry's certificate ("x509: certificate signed by unknown authority" on a pull): a
  TLS-intercepting proxy's for a public registry, a private registry's own CA: registry_certificates;
- supervisord's configuration it cannot parse ("File contains no section headers", quotation marks kept in
  a value, "not a valid boolean value"): supervisor_config;
- a process's open-file limit: "too many open files", supervisord's minfds above what its environment allows,
  systemd refusing a unit's LimitNOFILE ("Failed at step LIMITS"): open_files;
- nginx's upstream connection refused by SELinux ("connect() to X failed (13: Permission denied) while
  connecting to upstream") and a variable nothing defines ('unknown "connection_upgrade" variable'):
  nginx_upstream_access;
- a client refusing a certificate that does not name the host it connected to (ERR_TLS_CERT_ALTNAME_INVALID,
  "Hostname mismatch", "certificate is valid for A, not B"): client_names, before an untrusted chain;
- a safetensors file cut short or not one at all ("MetadataIncompleteBuffer", "HeaderTooLarge"): weight_files;
- a certbot plugin the certbot that ran does not load ("certbot: error: unrecognized arguments: --dns-X-...",
  "does not provide IPluginFactory, skipping"): certbot_plugins; a domain's CAA records refusing Let's Encrypt
  ("CAA record for X prevents issuance"): acme_caa;
- iptables' nf_tables backend refusing Docker's chains ("CHAIN_ADD failed (No such file or directory)", "-N DOCKER:
  ... Chain already exists"): docker_nftables;
- a Grafana plugin without a signature ('plugin "X" is unsigned'): grafana_signatures;
- supervisord's user= as a non-root user ("Can't drop privilege as nonroot user"): supervisor_privileges;
- nginx's TLS files it finds but cannot use: an encrypted private key ("bad password read", "problems getting
  password") and an empty or malformed dhparam file ('PEM_read_bio_DHparams("X") failed ... no start line'):
  nginx_tls_files;
- a Grafana provisioning file of the wrong shape ("cannot unmarshal !!map into []*dashboards.DashboardsAsConfigV0"):
  grafana_provisioning_files;
- nginx's handshake with an https:// upstream: one that answers in plain HTTP ("wrong version number") or
  refuses it (alert 40 or 112: the server name nginx does not send): nginx_upstream_tls;
- Prometheus refusing a query over --query.max-samples and a reload without --web.enable-lifecycle:
  prometheus_queries;
- CUDA error 803 (a driver library that does not match the module) and the NVIDIA runtime's driver RPC timing
  out (persistence mode): gpu_driver_handoff;
- a provisioned Grafana dashboard whose datasource is a template variable ("Datasource named ${DS_X} was not
  found", an alert rule's "datasource=${datasource}"): grafana_datasource_variables;
- supervisord's program that would not stay up ("Exited too quickly (process log may have details)") and a command by
  name that is not on its PATH ("can't find command 'gunicorn'"): supervisor_exits, supervisor_commands;
- node-exporter's collectors denied a kernel file of /proc or /sys that only root may read: node_kernel_files;
- an exporter's web configuration file with a key where its type does not take it ("field X not found in type
  web.Config"): exporter_web_config;
- vLLM's own reservation of its API port refused right after a crash ("sock.bind(("", args.port))", Errno 98):
  vllm_port_reservation;
- nginx's upstream named by a domain name it cannot resolve ("host not found in upstream NAME.example.com"):
  nginx_upstream_names;
- an endpoint refusing the shape of Claude Code's request body (a system message inside messages, "Request body
  format invalid"): client_request_bodies;
- what surrounds a service (stated_surroundings): the DNS-01 challenge answered by another TXT record, a Compose
  file that does not parse as YAML, Grafana Live refusing a browser's origin, nginx's workers out of connections,
  node-exporter's textfile collector denied a .prom file, vLLM's NVML module where the line shows it;
- a script with Windows (CRLF) line endings: its #! interpreter read with the carriage return
  ("/usr/bin/env: 'bash\\r': No such file or directory", "/bin/bash^M: bad interpreter", or the
  message the carriage return folded over: ": No such file or directory").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stackctl.diagnosis.acme_caa import caa_domain, caa_fix
from stackctl.diagnosis.acme_dns import (
    NO_ADDRESS,
    NO_RECORD,
    no_address_domain,
    no_address_fix,
    no_record_fix,
)
from stackctl.diagnosis.certbot_plugins import plugin_fix, plugin_not_loaded
from stackctl.diagnosis.client_certificates import (
    certificate_variable,
    untrusted_client,
    untrusted_fix,
)
from stackctl.diagnosis.client_names import mismatched_target, name_mismatch_fix
from stackctl.diagnosis.client_request_bodies import body_fix, refused_body, system_role_fix
from stackctl.diagnosis.compose_host_ports import (
    REFUSED,
    host_ports,
    host_ports_fix,
    services_named,
)
from stackctl.diagnosis.docker_chains import CHAIN_MISSING, chains_fix, missing_chain
from stackctl.diagnosis.docker_nftables import (
    chain_exists_fix,
    existing_chain,
    nft_add_fix,
    nft_operation,
)
from stackctl.diagnosis.exporter_web_config import fields_fix, unknown_fields
from stackctl.diagnosis.gpu_driver_handoff import (
    driver_combination,
    driver_combination_fix,
    rpc_timeout,
    rpc_timeout_fix,
)
from stackctl.diagnosis.grafana_datasource_variables import unresolved, unresolved_fix
from stackctl.diagnosis.grafana_plugin_catalogue import not_in_catalogue, not_in_catalogue_fix
from stackctl.diagnosis.grafana_provisioning_files import not_provisioning, not_provisioning_fix
from stackctl.diagnosis.grafana_provisioning_rows import (
    provider_named,
    provisioned_file,
    stale_row,
    stale_row_fix,
)
from stackctl.diagnosis.grafana_signatures import unsigned_fix, unsigned_plugin
from stackctl.diagnosis.illegal_access import ILLEGAL_ADDRESS, illegal_access_fix
from stackctl.diagnosis.iptables_tables import (
    TABLE_MISSING,
    missing_table,
    table_fix,
    table_modules,
)
from stackctl.diagnosis.nginx_directives import (
    newer_directive_fix,
    unknown_directive,
    unknown_directive_fix,
)
from stackctl.diagnosis.nginx_name_hash import hash_fix, hash_too_small
from stackctl.diagnosis.nginx_proxy_pass import URI_IN_REGEX, proxy_pass_fix, proxy_pass_place
from stackctl.diagnosis.nginx_resolver import resolver_fix, resolver_value
from stackctl.diagnosis.nginx_tls_files import (
    dhparam_fix,
    encrypted_key,
    encrypted_key_fix,
    invalid_dhparam,
)
from stackctl.diagnosis.nginx_upstream_access import (
    UPSTREAM_DENIED,
    unknown_variable,
    unknown_variable_fix,
    upstream_denied_fix,
)
from stackctl.diagnosis.nginx_upstream_closed import closed, closed_fix, upstream_address
from stackctl.diagnosis.nginx_upstream_names import domain_fix, domain_name, unknown_upstream
from stackctl.diagnosis.nginx_upstream_tls import not_tls, not_tls_fix, refused, refused_fix
from stackctl.diagnosis.node_kernel_files import denied, denied_fix
from stackctl.diagnosis.open_files import open_files_fix, open_files_limit
from stackctl.diagnosis.prometheus_queries import (
    lifecycle_disabled,
    lifecycle_fix,
    too_many_samples,
    too_many_samples_fix,
)
from stackctl.diagnosis.prometheus_rules import RULES_FAILED, rules_fix
from stackctl.diagnosis.registry_certificates import registry_fix, untrusted_registry
from stackctl.diagnosis.stack_keys import ENVIRONMENT
from stackctl.diagnosis.stated_cause import StatedCause
from stackctl.diagnosis.stated_misfits import misfits_stated
from stackctl.diagnosis.stated_round39 import round39_stated
from stackctl.diagnosis.stated_surroundings import surroundings_stated
from stackctl.diagnosis.supervisor_commands import bare_command, not_on_path_fix
from stackctl.diagnosis.supervisor_config import config_error, config_fix
from stackctl.diagnosis.supervisor_exits import EXITED_TOO_QUICKLY, exited_quickly_fix
from stackctl.diagnosis.supervisor_logs import logfile_fix, logfile_refused
from stackctl.diagnosis.supervisor_privileges import cannot_drop, cannot_drop_fix
from stackctl.diagnosis.supervisor_spawn import (
    CHDIR_REFUSED,
    EXITED_127,
    directory_fix,
    not_run_fix,
)
from stackctl.diagnosis.vllm_port_reservation import RESERVATION, reservation_fix
from stackctl.diagnosis.weight_files import corrupt_weights_fix, corrupt_weights_reason


def classes_stated(line: str, traceback: Sequence[str] = ()) -> list[StatedCause]:
    """The causes `line` states that a class's reader knows; `traceback`: the error's own frames (an
    open() refused is supervisord's log file only where its loggers raised it)."""
    return [*_docker_chain(line), *_rule_file(line), *_log_file(line, traceback), *_resolver(line),
            *_supervisor_spawn(line), *_line_endings(line), *_client_certificate(line), *_iptables_table(line),
            *_proxy_pass(line), *_acme_address(line), *_illegal_access(line), *_nginx_directive(line),
            *_registry_certificate(line), *_supervisor_config(line), *_open_files(line), *_nginx_upstream(line),
            *_weight_file(line), *_certbot_refusal(line), *_docker_nftables(line), *_grafana_plugin(line),
            *_supervisor_user(line), *_nginx_tls_file(line), *_grafana_provisioning(line), *_upstream_tls(line),
            *_prometheus_query(line), *_driver_handoff(line), *_grafana_datasource(line), *_supervisor_exit(line),
            *_supervisor_command(line), *_kernel_file(line), *_web_config(line), *_port_reservation(line, traceback),
            *_upstream_domain(line), *_request_body(line), *_round38_classes(line),
            *round39_stated(line, traceback), *surroundings_stated(line, traceback),
            *misfits_stated(line)]


def _supervisor_exit(line: str) -> list[StatedCause]:
    if not EXITED_TOO_QUICKLY.search(line):
        return []
    return [StatedCause("exited too quickly", exited_quickly_fix("", None))]


def _supervisor_command(line: str) -> list[StatedCause]:
    command = bare_command(line)
    return [] if command is None else [StatedCause(f"not on supervisord's PATH: {command}", not_on_path_fix(command))]


def _kernel_file(line: str) -> list[StatedCause]:
    denial = denied(line)
    return [] if denial is None else [StatedCause(f"kernel file: {denial[1]}", denied_fix([denial]))]


def _web_config(line: str) -> list[StatedCause]:
    fields = unknown_fields(line)
    if not fields:
        return []
    return [StatedCause(f"web config key: {', '.join(field.strip() for field, _type in fields)}", fields_fix(fields))]


def _port_reservation(line: str, traceback: Sequence[str]) -> list[StatedCause]:
    if "Errno 98" not in line or not any(RESERVATION.search(frame) for frame in [*traceback, line]):
        return []
    return [StatedCause("vLLM's API port reservation", reservation_fix(None), key="ports.vllm")]


def _upstream_domain(line: str) -> list[StatedCause]:
    upstream = unknown_upstream(line) or ""
    domain = domain_name(upstream)
    return [] if domain is None else [StatedCause(f"upstream domain: {domain}", domain_fix(domain, upstream),
                                                  key="hosts")]


def _request_body(line: str) -> list[StatedCause]:
    refused = refused_body(line)
    if refused is None:
        return []
    if refused == "system role":
        return [StatedCause("system message inside messages", system_role_fix(), env="CLAUDE_CODE_SIMPLE")]
    return [StatedCause("request body refused", body_fix())]


def _upstream_tls(line: str) -> list[StatedCause]:
    upstream = not_tls(line)
    if upstream is not None:
        return [StatedCause(f"plain-HTTP upstream: {upstream or 'unnamed'}", not_tls_fix(upstream))]
    match = refused(line)
    return [] if match is None else [StatedCause(f"upstream TLS alert {match['alert']}", refused_fix(match))]


def _prometheus_query(line: str) -> list[StatedCause]:
    if too_many_samples(line):
        return [StatedCause("query over --query.max-samples", too_many_samples_fix(), flag="--query.max-samples")]
    if lifecycle_disabled(line):
        return [StatedCause("lifecycle API off", lifecycle_fix(), flag="--web.enable-lifecycle")]
    return []


def _driver_handoff(line: str) -> list[StatedCause]:
    if driver_combination(line):
        return [StatedCause("CUDA error 803", driver_combination_fix(), key=ENVIRONMENT, env="LD_LIBRARY_PATH")]
    return [StatedCause("driver RPC timeout", rpc_timeout_fix())] if rpc_timeout(line) else []


def _grafana_datasource(line: str) -> list[StatedCause]:
    match = unresolved(line)
    if match is None:
        return []
    return [StatedCause(f"datasource variable: {match['named'] or match['variable']}", unresolved_fix(match))]


def _nginx_tls_file(line: str) -> list[StatedCause]:
    key = encrypted_key(line)
    if key is not None:
        return [StatedCause(f"encrypted key: {key or 'unnamed'}", encrypted_key_fix(key), key="letsencrypt_dir")]
    dhparam = invalid_dhparam(line)
    return [] if dhparam is None else [StatedCause(f"dhparam: {dhparam}", dhparam_fix(dhparam))]


def _grafana_provisioning(line: str) -> list[StatedCause]:
    match = not_provisioning(line)
    if match is None:
        return []
    return [StatedCause(f"provisioning file: {match['file'] or match['kind']}", not_provisioning_fix(match))]


def _certbot_refusal(line: str) -> list[StatedCause]:
    plugin = plugin_not_loaded(line)
    if plugin is not None:
        return [StatedCause(f"certbot plugin: {plugin.plugin}", plugin_fix(plugin))]
    domain = caa_domain(line)
    return [] if domain is None else [StatedCause(f"CAA: {domain}", caa_fix(domain), key="hostname")]


def _docker_nftables(line: str) -> list[StatedCause]:
    operation = nft_operation(line)
    if operation is not None:
        return [StatedCause(f"nf_tables: {operation}", nft_add_fix(operation))]
    chain = existing_chain(line)
    return [] if chain is None else [StatedCause(f"chain exists: {chain}", chain_exists_fix(chain))]


def _grafana_plugin(line: str) -> list[StatedCause]:
    plugin = unsigned_plugin(line)
    if plugin is None:
        return []
    return [StatedCause(f"unsigned plugin: {plugin or 'unnamed'}", unsigned_fix(plugin),
                        env="GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS")]


def _supervisor_user(line: str) -> list[StatedCause]:
    match = cannot_drop(line)
    return [] if match is None else [StatedCause("user= as non-root", cannot_drop_fix(match["uid"]))]


def _open_files(line: str) -> list[StatedCause]:
    limit = open_files_limit(line)
    if limit is None:
        return []
    return [StatedCause(f"open files limit: {limit.kind}", open_files_fix(limit))]


def _nginx_upstream(line: str) -> list[StatedCause]:
    denied = UPSTREAM_DENIED.search(line)
    if denied:
        return [StatedCause(f"upstream connect denied: {denied['address']}", upstream_denied_fix(denied["address"]))]
    variable = unknown_variable(line)
    return [] if variable is None else [StatedCause(f"nginx variable: ${variable.name}", unknown_variable_fix(variable))]


def _weight_file(line: str) -> list[StatedCause]:
    reason = corrupt_weights_reason(line)
    if reason is None:
        return []
    return [StatedCause(f"safetensors file: {reason}", corrupt_weights_fix(reason), key="vllm.model_path")]


def _nginx_directive(line: str) -> list[StatedCause]:
    directive = unknown_directive(line)
    if directive is None:
        return []
    fix = newer_directive_fix(directive) if directive.since else unknown_directive_fix(directive)
    return [StatedCause(f"nginx directive: {directive.name}", fix)]


def _registry_certificate(line: str) -> list[StatedCause]:
    registry = untrusted_registry(line)
    if registry is None:
        return []
    return [StatedCause(f"registry certificate: {registry.host or 'the registry'}", registry_fix(registry))]


def _supervisor_config(line: str) -> list[StatedCause]:
    error = config_error(line)
    return [] if error is None else [StatedCause(f"supervisord config: {error.kind}", config_fix(error))]


def _client_certificate(line: str) -> list[StatedCause]:
    target = mismatched_target(line)
    if target is not None:
        return [StatedCause(f"certificate name mismatch: {target or 'the host'}", name_mismatch_fix(target),
                            key="hostname")]
    client = untrusted_client(line)
    if client is None:
        return []
    variable = certificate_variable(client)
    return [StatedCause(f"untrusted certificate: {client}", untrusted_fix(client), env=variable)]


def _iptables_table(line: str) -> list[StatedCause]:
    if not TABLE_MISSING.search(line):
        return []
    table = missing_table(line)
    return [StatedCause(f"iptables table: {table}", table_fix(table, table_modules(table, line)))]


def _proxy_pass(line: str) -> list[StatedCause]:
    if not URI_IN_REGEX.search(line):
        return []
    return [StatedCause("proxy_pass URI in a regex location", proxy_pass_fix(*proxy_pass_place(line)))]


def _acme_address(line: str) -> list[StatedCause]:
    no_record = NO_RECORD.search(line)
    if no_record:
        return [StatedCause(f"no DNS record: {no_record['domain']}", no_record_fix(), key="hostname")]
    if not NO_ADDRESS.search(line):
        return []
    domain = no_address_domain(line)
    return [StatedCause(f"no address: {domain or 'the domain'}", no_address_fix(domain), key="hostname")]


def _docker_chain(line: str) -> list[StatedCause]:
    if not CHAIN_MISSING.search(line):
        return []
    chain = missing_chain(line)
    return [StatedCause(f"docker chain: {chain}", chains_fix(chain))]


def _rule_file(line: str) -> list[StatedCause]:
    return [StatedCause("prometheus rules", rules_fix([line]))] if RULES_FAILED.search(line) else []


def _log_file(line: str, traceback: Sequence[str]) -> list[StatedCause]:
    frames = [*traceback, line]
    refused = logfile_refused(frames, len(frames) - 1)
    if refused is None:
        return []
    errno, program, path = refused
    return [StatedCause(f"supervisord log file: {program or path or errno}", logfile_fix(errno, program, path))]


def _resolver(line: str) -> list[StatedCause]:
    value = resolver_value(line)
    return [] if value is None else [StatedCause(f"nginx resolver: {value.strip()}", resolver_fix(value))]


def _supervisor_spawn(line: str) -> list[StatedCause]:
    chdir = CHDIR_REFUSED.search(line)
    if chdir:
        return [StatedCause(f"working directory: {chdir['directory']}",
                            directory_fix(chdir["directory"], chdir["errno"]))]
    exited = EXITED_127.search(line)
    if exited:
        return [StatedCause(f"exit status 127: {exited['program']}", not_run_fix(exited["program"]))]
    return []


# An interpreter's name with the carriage return a CRLF line ending leaves after it, as the kernel or
# env looked it up ('bash\r', "python3\r", /bin/sh^M), or the message that carriage return folded
# back over its own start (": No such file or directory" first, the interpreter's name after it).
_CARRIAGE_RETURN = re.compile(r"(?P<interpreter>[\w/.-]*\b(?:bash|sh|zsh|dash|ash|python[\d.]*|node|perl|ruby|env))"
                              r"(?:\\r|\^M|\r)(?=['\"’:\s]|$)"
                              r"|^\s*: (?:No such file or directory|not found)\b")


def _line_endings(line: str) -> list[StatedCause]:
    match = _CARRIAGE_RETURN.search(line)
    if match is None:
        return []
    interpreter = match["interpreter"]
    named = f"`{interpreter}\\r`" if interpreter else "its interpreter with a carriage return after it"
    return [StatedCause("CRLF line endings", (
        f"a script has Windows (CRLF) line endings: its `#!` line makes the system look for {named}, which does not "
        "exist: convert the script to Unix (LF) line endings with `dos2unix FILE` (or `sed -i 's/\\r$//' FILE`; "
        "`file FILE` says \"with CRLF line terminators\"), then rebuild the image that copies it; keep git on "
        "Windows from converting it again with a `*.sh text eol=lf` line in .gitattributes (or `git config "
        "core.autocrlf input`, and check the files out again)"))]


def _illegal_access(line: str) -> list[StatedCause]:
    if not ILLEGAL_ADDRESS.search(line):
        return []
    return [StatedCause("CUDA illegal memory access", illegal_access_fix(under_graphs=False), key="vllm.extra_args",
                        flag="--compilation-config")]


# --- Round 38's misses, built by cause: the readers their signatures share ----------------------------------------
# - a container on host networking that publishes ports ('"host" network_mode is incompatible with port_bindings',
#   "Published ports are discarded when using host network mode"): compose_host_ports;
# - a stale row of Grafana's dashboard_provisioning table ('failed to save dashboard ... error="Dashboard not
#   found"'): grafana_provisioning_rows; grafana-cli's plugin the catalogue lacks ("Error: ✗ Plugin not found
#   (Grafana v8.3.5 ...)"): grafana_plugin_catalogue;
# - nginx's upstream closing early ("upstream prematurely closed connection while ..."): nginx_upstream_closed; its
#   server-name hash that does not fit ("could not build server_names_hash, you should increase
#   server_names_hash_bucket_size: 32"): nginx_name_hash.


def _round38_classes(line: str) -> list[StatedCause]:
    return [*_host_network_ports(line), *_grafana_stale_row(line),
            *_grafana_plugin_catalogue(line), *_nginx_upstream_closed(line), *_nginx_name_hash(line)]


def _host_network_ports(line: str) -> list[StatedCause]:
    if host_ports(line) is None:
        return []
    return [StatedCause("host network with ports", host_ports_fix(services_named([line]), bool(REFUSED.search(line))))]


def _grafana_stale_row(line: str) -> list[StatedCause]:
    match = stale_row(line)
    if match is None:
        return []
    return [StatedCause("stale dashboard_provisioning row", stale_row_fix(match, provisioned_file([line], 0),
                                                                          provider_named(line)))]


def _grafana_plugin_catalogue(line: str) -> list[StatedCause]:
    match = not_in_catalogue(line)
    if match is None:
        return []
    return [StatedCause("plugin not in grafana.com's catalogue", not_in_catalogue_fix(match["version"]),
                        env="GF_INSTALL_PLUGINS")]


def _nginx_upstream_closed(line: str) -> list[StatedCause]:
    match = closed(line)
    if match is None:
        return []
    return [StatedCause(f"upstream closed early: {upstream_address(match) or 'unnamed'}", closed_fix(match, {}))]


def _nginx_name_hash(line: str) -> list[StatedCause]:
    match = hash_too_small(line)
    return [] if match is None else [StatedCause("server_names_hash too small", hash_fix(match))]
