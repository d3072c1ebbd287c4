"""A service refusing part of its own configuration, or warning that a part is gone: supervisord's
program user that does not exist, dcgm-exporter's profiling module or a counter this GPU lacks,
Grafana's provisioned folder holding JSON that is no dashboard, nginx's directives deprecated or
misplaced (a conf.d file carrying a main-context directive), certbot's nginx plugin looking for the
configuration in /etc/nginx when it lives elsewhere, Prometheus 3's removed feature flags, and vLLM's
Anthropic route refusing a system role inside messages."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_USER = re.compile(r"Invalid user name (?P<user>\S+) in section '(?P<section>[^']+)'(?: \(file: '(?P<file>[^']+)'\))?")


def _supervisor_user_unknown(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_USER)
    user, section, file = values.get("user", ""), values.get("section", "a program section"), values.get("file")
    where = f" ({file})" if file else ""
    return found(evidence, Cause.supervisor_user_unknown,
                 f"supervisord will not start: [{section}]{where} runs as user {user or '(named)'}, who does not exist "
                 "on this host (an invalid user name)",
                 Fix(f"set the user line in the program section (user= in [{section}]{where}) to an existing user "
                     f"(`id {user or 'NAME'}` says whether one exists), or create that user; supervisord must run as "
                     "root to switch users at all. stackctl's own programs carry no user= (they run as you)"),
                 **({"user": user} if user else {}), section=section)


_MODULE = re.compile(r"dlopen\((?P<library>libdcgmmodule\w+\.so[\d.]*)\)")


def _dcgm_profiling_module_missing(evidence: Evidence) -> Diagnosis:
    library = evidence.read(_MODULE).get("library", "libdcgmmoduleprofiling.so")
    return found(evidence, Cause.dcgm_profiling_module_missing,
                 f"dcgm-exporter's DCGM has no profiling module ({library} is not in the image), so the DCP metrics "
                 "(DCGM_FI_PROF_*: SM and tensor activity, DRAM, PCIe) are skipped; the others are exported",
                 Fix("use a newer dcgm-exporter image (images.gpu-exporter) that ships DCGM's profiling module: it "
                     "comes in the datacenter-gpu-manager-4-proprietary package, which some releases' images left "
                     "out; or build the image with that package installed; then `stackctl up`",
                     key="images.gpu-exporter"), severity=Severity.advisory, library=library)


def _dcgm_field_unsupported(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.dcgm_field_unsupported,
                 "dcgm-exporter stops: a metric in its counters file is one this GPU does not support (DCGM refuses "
                 "to watch the whole list for one field)",
                 Fix("remove the unsupported metric from the exporter's counters file (the metrics csv passed with "
                     "-f / DCGM_EXPORTER_COLLECTORS): profiling fields differ by GPU, e.g. DCGM_FI_PROF_PIPE_FP64_ACTIVE "
                     "on A10/L40S, DCGM_FI_PROF_PIPE_TENSOR_IMMA/HMMA_ACTIVE before Ampere; or use a newer "
                     "images.gpu-exporter (2.4.6-2.6.10 and later skip fields the GPU lacks); then `stackctl up`",
                     key="images.gpu-exporter"))


_NOT_A_DASHBOARD = re.compile(r"failed to load dashboard from .*?file=(?:\"(?P<quoted>[^\"]+)\"|(?P<file>\S+))"
                              r".*Dashboard title cannot be empty")


def _grafana_not_a_dashboard(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_NOT_A_DASHBOARD)
    file = values.get("quoted") or values.get("file") or ""
    return found(evidence, Cause.grafana_not_a_dashboard,
                 f"Grafana's dashboard provisioning read {file or 'a JSON file'} and found no dashboard in it (no "
                 "title at the top level), so it is not loaded",
                 Fix("a provisioned dashboards folder must hold only dashboard models: if the file is no dashboard "
                     "(jsonnetfile.json, package.json), move the non-dashboard JSON files to a separate directory, "
                     "out of the provisioned dashboards folder; if it is a dashboard saved from the API "
                     "({\"dashboard\": {...}, \"meta\": ...}), unwrap it to the inner dashboard object"),
                 severity=Severity.advisory, **({"file": file} if file else {}))


_DEPRECATED_DIRECTIVE = re.compile(r"the \"(?P<old>[^\"]+)\" directive is deprecated, use the \"(?P<new>[^\"]+)\" "
                                   r"directive instead(?: in (?P<file>\S+?)(?::\d+)?$)?")


def _nginx_directive_deprecated(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_DEPRECATED_DIRECTIVE)
    old, new, file = values.get("old", ""), values.get("new", ""), values.get("file")
    where = f" in {file}" if file else ""
    if "listen" in old and new == "http2":
        text = (f"remove http2 from the listen line{where} (`listen 443 ssl;`) and add the http2 directive `http2 on;` "
                "in that server block (nginx 1.25.1 and later); stackctl's own site already does")
    else:
        text = f"replace the \"{old}\" directive with the \"{new}\" directive{where}, as nginx says"
    return found(evidence, Cause.nginx_directive_deprecated,
                 f"nginx warns that \"{old}\" is deprecated (it still works, until a release removes it)",
                 Fix(text), severity=Severity.advisory, old=old, new=new)


_MISPLACED = re.compile(r"\"(?P<directive>\w+)\" directive is not allowed here in (?P<file>\S+?):(?P<line>\d+)")


def _nginx_directive_misplaced(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_MISPLACED)
    directive, file = values.get("directive", "a"), values.get("file", "an included file")
    certbot = evidence.context.service == "certbot"
    return found(evidence, Cause.nginx_directive_misplaced,
                 f"nginx's configuration test fails{' (certbot runs `nginx -t` first)' if certbot else ''}: the "
                 f"\"{directive}\" directive is not allowed here in {file}, a file included inside another block",
                 Fix(f"{file} is included inside http {{}} (conf.d/ and sites-enabled/ are), where the {directive} "
                     f"directive may not stand: remove the {directive} directive from it, or remove the offending "
                     "conf.d file if it is a whole nginx.conf copied there; `sudo nginx -t` must pass"
                     + (", then run certbot again" if certbot else ", then `stackctl up`")),
                 directive=directive, file=file)


_OPEN_FAILED = re.compile(r"open\(\) \\?\"(?P<path>/etc/nginx/[^\"\\]+)\\?\" failed \(2: No such file or directory\)")


def _certbot_nginx_server_root(evidence: Evidence) -> Diagnosis:
    path = evidence.read(_OPEN_FAILED).get("path", "/etc/nginx/...")
    return found(evidence, Cause.certbot_nginx_server_root,
                 f"certbot's nginx plugin tests the configuration in /etc/nginx, where nginx cannot open {path}: this "
                 "nginx's configuration lives elsewhere (a source build: /usr/local/nginx/conf)",
                 Fix("tell certbot where it is: --nginx-server-root DIR, the directory that contains your nginx "
                     "configuration (nginx.conf; `nginx -V` shows --conf-path), or nginx_server_root = DIR in "
                     "certbot's cli.ini; if nginx does live in /etc/nginx, restore the missing file there",
                     flag="--nginx-server-root"), path=path)


_FEATURE = re.compile(r"Unknown option for --enable-feature\"? option=(?P<option>[\w-]+)")
# Prometheus 3 removed these feature flags: what each became.
_FEATURES_NOW = {"agent": "the flag --agent (agent mode is no longer a feature flag)",
                 "remote-write-receiver": "the flag --web.enable-remote-write-receiver",
                 "promql-at-modifier": "always on", "promql-negative-offset": "always on",
                 "expand-external-labels": "always on", "new-service-discovery-manager": "always on",
                 "no-default-scrape-port": "always on", "auto-gomaxprocs": "on by default",
                 "auto-gomemlimit": "on by default", "native-histograms": "the scrape_native_histograms setting"}


def _prometheus_feature_flag_removed(evidence: Evidence) -> Diagnosis:
    option = evidence.read(_FEATURE).get("option", "")
    now = _FEATURES_NOW.get(option)
    if option == "agent":
        text = ("the agent feature flag was removed: remove --enable-feature=agent and start Prometheus with --agent "
                "instead (it otherwise starts as a full server)")
    elif now:
        text = f"remove --enable-feature={option} from Prometheus's flags: it is now {now}"
    else:
        text = (f"remove --enable-feature={option or 'OPTION'}: this Prometheus has no such feature flag (removed, "
                "graduated to a flag or setting, or misspelt); `prometheus --help` and the feature-flags page of "
                "its release list what it has")
    return found(evidence, Cause.prometheus_feature_flag_removed,
                 f"Prometheus ignores --enable-feature={option or '(an option)'}: the feature flag was removed",
                 Fix(text + "; then `stackctl up`", flag="--agent" if option == "agent" else None),
                 severity=Severity.advisory, **({"option": option} if option else {}))


def _anthropic_system_role_refused(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.anthropic_system_role_refused,
                 "vLLM's Anthropic Messages route refused a message with role system inside messages (only user and "
                 "assistant are accepted there before vLLM 0.23); newer Claude Code releases send one",
                 Fix("upgrade vLLM: set images.vllm to vLLM 0.23 or a newer vLLM, which accepts system messages inside "
                     "messages; until then send clients through stackctl's filter-proxy (its /v1/messages moves them "
                     "to the top-level system field, see --system-placement) rather than to vLLM directly",
                     key="images.vllm"))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.supervisor_user_unknown, r"Invalid user name \S+ in section '", _supervisor_user_unknown),
    signature(Cause.dcgm_profiling_module_missing, r"dlopen\(libdcgmmodule\w+\.so[\d.]*\) returned: .*cannot open "
              r"shared object file", _dcgm_profiling_module_missing, ADVISORY + 1),
    signature(Cause.dcgm_field_unsupported, r"Error watching fields: Feature not supported", _dcgm_field_unsupported),
    signature(Cause.grafana_not_a_dashboard, r"failed to load dashboard from .*Dashboard title cannot be empty", _grafana_not_a_dashboard, ADVISORY + 1),
    signature(Cause.nginx_directive_deprecated, r"the \"[^\"]+\" directive is deprecated, use the \"[^\"]+\" directive",
              _nginx_directive_deprecated, ADVISORY),
    signature(Cause.nginx_directive_misplaced, r"\"\w+\" directive is not allowed here in \S+:\d+", _nginx_directive_misplaced),
    signature(Cause.certbot_nginx_server_root, r"Error while running nginx .*open\(\) \\?\"/etc/nginx/\S+ failed "
              r"\(2: No such file or directory\)", _certbot_nginx_server_root),
    signature(Cause.prometheus_feature_flag_removed, r"Unknown option for --enable-feature", _prometheus_feature_flag_removed, ADVISORY + 1),
    signature(Cause.anthropic_system_role_refused,
              r"'loc': \('body', 'messages', \d+, 'role'\).*Input should be 'user' or 'assistant'.*'input': 'system'",
              _anthropic_system_role_refused),
)
