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
                "in that server block (nginx 1.25.1 and later; older releases know no `http2` directive). stackctl's own site "
                "keeps `listen ... ssl http2` so that older nginx (Debian 12's 1.22) reads it: from stackctl's site this "
                "warning is harmless")
    else:
        text = f"replace the \"{old}\" directive with the \"{new}\" directive{where}, as nginx says"
    return found(evidence, Cause.nginx_directive_deprecated,
                 f"nginx warns that \"{old}\" is deprecated (it still works, until a release removes it)",
                 Fix(text), severity=Severity.advisory, old=old, new=new)


_MISPLACED = re.compile(r"\"(?P<directive>\w+)\" directive is not allowed here in (?P<file>\S+?):(?P<line>\d+)")


# Blocks that stand inside http {} (server, upstream, map) and inside server {} (location).
_HTTP_BLOCKS = frozenset({"server", "upstream", "map", "limit_req_zone", "proxy_cache_path"})


def _nginx_directive_misplaced(evidence: Evidence) -> Diagnosis:
    """A directive at a level where it may not stand: a main-context one (user, worker_processes,
    events) in a file included inside http {}, a site's server {} made the top of nginx.conf, or a
    location outside any server {} (a brace closed too early)."""
    values = evidence.read(_MISPLACED)
    directive, file = values.get("directive", "a"), values.get("file", "an included file")
    certbot = evidence.context.service == "certbot"
    then = ", then run certbot again" if certbot else ", then `stackctl up`"
    if directive in _HTTP_BLOCKS and file.endswith("nginx.conf"):
        where = f"{file} holds a site's configuration at its top level, where the {directive} block may not stand"
        text = (f"the {directive} block belongs inside http {{}}: restore the main nginx.conf (the package's, which "
                f"includes conf.d/*.conf) and put the site's file in conf.d/, or wrap its blocks in `http {{ ... }}`; "
                "`nginx -c` takes a whole nginx.conf, not a site's file; `sudo nginx -t` must pass")
    elif directive == "location":
        where = f"a location block in {file} stands outside any server {{}} block"
        text = (f"move the location block inside a server {{}} block in {file}: a brace above line "
                f"{values.get('line', '?')} closes the server block too early (or the location was pasted after it); "
                "`sudo nginx -t` must pass")
    else:
        where = f"the \"{directive}\" directive is not allowed here in {file}, a file included inside another block"
        text = (f"{file} is included inside http {{}} (conf.d/ and sites-enabled/ are), where the {directive} "
                f"directive may not stand: remove the {directive} directive from it, or remove the offending "
                "conf.d file if it is a whole nginx.conf copied there; `sudo nginx -t` must pass")
    return found(evidence, Cause.nginx_directive_misplaced,
                 f"nginx's configuration test fails{' (certbot runs `nginx -t` first)' if certbot else ''}: {where}",
                 Fix(text + then), directive=directive, file=file)


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


_FEATURE = re.compile(r"Unknown option for --enable-feature\"? option=(?P<option>[\w-]+)"
                      r"|enabled via feature flag (?P<deprecated>[\w-]+)\. This is DEPRECATED")
# Prometheus 3 removed these feature flags: what each became.
_FEATURES_NOW = {"agent": "the flag --agent (agent mode is no longer a feature flag)",
                 "remote-write-receiver": "the flag --web.enable-remote-write-receiver",
                 "promql-at-modifier": "always on", "promql-negative-offset": "always on",
                 "expand-external-labels": "always on", "new-service-discovery-manager": "always on",
                 "no-default-scrape-port": "always on", "auto-gomaxprocs": "on by default",
                 "auto-gomemlimit": "on by default", "native-histograms": "the scrape_native_histograms setting"}


def _prometheus_feature_flag_removed(evidence: Evidence) -> Diagnosis:
    said = evidence.read(_FEATURE)
    option = said.get("option") or said.get("deprecated", "")
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
                 f"Prometheus ignores --enable-feature={option or '(an option)'}: the feature flag was removed"
                 if "deprecated" not in said else
                 f"Prometheus warns that --enable-feature={option} is deprecated: Prometheus 3 ignores it",
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


_PARSED_FILE = re.compile(r"Could not parse file:? (?P<file>/\S+?)[.,]? (?:due to|This is usually)"
                          r"|found '(?P<word>\w+)'\s*\(at char \d+\), \(line:(?P<line>\d+)")


def _certbot_nginx_parse_failed(evidence: Evidence) -> Diagnosis:
    """certbot's nginx plugin reads the configuration with its own parser, which fails on some files
    nginx itself accepts: a comment holding a brace or an odd number of quotes, comments inside a
    directive spread over lines (log_format), `*_by_lua_block` bodies. The position it reports is
    often the start of the enclosing block, not the construct."""
    where = {key: value for line in evidence.lines for key, value in _read_line(_PARSED_FILE, line).items()}
    file = where.get("file", "")
    line = where.get("line")
    return found(evidence, Cause.certbot_nginx_parse_failed,
                 f"certbot's nginx plugin could not parse {file or 'an nginx configuration file'} (nginx itself may "
                 "accept it): certbot skips the file, or finds no server block to install the certificate in",
                 Fix(f"find the construct certbot's parser cannot read in {file or 'the file'}"
                     + (f" (it reports line {line}, the start of the enclosing block; the cause is inside it)" if line
                        else "")
                     + ": usually a comment, inside a multi-line directive such as log_format, or holding a brace "
                     "or an odd number of quotes; remove the commented line or move the comment onto a line of its "
                     "own outside the directive; `*_by_lua_block` bodies it cannot read at all (move them to a file "
                     "certbot does not read, or use `certbot certonly --webroot`). stackctl's rendered nginx.conf has "
                     "no such constructs: certbot only reads the host's other sites"),
                 **({"file": file} if file else {}))


def _read_line(pattern: re.Pattern[str], line: str) -> dict[str, str]:
    match = pattern.search(line)
    return {key: value for key, value in match.groupdict().items() if value} if match else {}


_PROVISIONING_DIR = re.compile(r"(?P<what>plugin|alert notification|dashboard|alerting|datasource|notifier)s? "
                               r"provisioning (?:files from )?directory.*?path=(?P<path>/\S+)|failed to read (?P<bare>"
                               r"plugin) provisioning directory")
_NO_FOLDER = re.compile(r"dashboard has no folder:?\s*(?P<folder>[^\n\"]*)")


def _grafana_provisioning_incomplete(evidence: Evidence) -> Diagnosis:
    """Grafana reads one directory per kind of provisioning (dashboards, datasources, plugins,
    alerting, notifiers) and logs an error for each that is missing; a dashboard provider whose
    dashboards land in no folder logs its own. Neither stops Grafana: the fix is in the files."""
    dirs = [match for line in evidence.lines if (match := _PROVISIONING_DIR.search(line))]
    folders = [match.group("folder").strip() for line in evidence.lines if (match := _NO_FOLDER.search(line))]
    parts = []
    if dirs:
        names = sorted({(match.group("what") or match.group("bare") or "plugin").replace(" ", "_") for match in dirs})
        paths = [match.group("path") for match in dirs if match.group("path")]
        shown = " ".join(paths) if paths else " ".join(f"/etc/grafana/provisioning/{name}s" for name in names)
        # The image ships every provisioning directory, empty: a bind mount of the whole tree
        # (`./provisioning:/etc/grafana/provisioning`) hides those the host directory lacks.
        parts.append("where the service's volumes: bind-mount the whole provisioning directory over "
                     "/etc/grafana/provisioning, it hides the empty directories the image ships: mount only the "
                     "subdirectories you provision (`./provisioning/datasources:/etc/grafana/provisioning/datasources` "
                     "and `./provisioning/dashboards:/etc/grafana/provisioning/dashboards`), or create the missing "
                     f"ones (`mkdir -p {shown}`; for a bind-mounted tree, in the host directory, e.g. "
                     "provisioning/plugins, with a .gitkeep so they exist in the repository)")
    if folders:
        parts.append(f"give the dashboard provider a folder: set `folder: '{folders[0] or 'NAME'}'` in its "
                     "provisioning file (with foldersFromFilesStructure: true, folders come only from "
                     "subdirectories of its path; dashboards at its top level get none)")
    missing = sorted({(match.group("what") or "plugin") for match in dirs})
    verb = "directories do" if len(missing) > 1 else "directory does"
    found_here = ([f"the {' and '.join(missing)} provisioning {verb} not exist"] if dirs else []) + (
        [f"a provisioned dashboard has no folder ({folders[0]})"] if folders else [])
    return found(evidence, Cause.grafana_provisioning_incomplete,
                 "Grafana's provisioning is incomplete: " + "; ".join(found_here)
                 + "; Grafana starts, and the warning returns on every start",
                 Fix("; ".join(parts) + ". stackctl's own provisioning (grafana/provisioning) ships every directory "
                     "and a folder for its dashboards; then `stackctl up`"), severity=Severity.advisory)


def _grafana_datasource_prune(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.grafana_datasource_prune,
                 "Grafana's datasource provisioning failed with \"data source not found\": Grafana 13 fails startup on "
                 "a datasources provisioning file with `prune: true`",
                 Fix("drop prune from the datasources provisioning file (remove the `prune: true` line; delete a "
                     "datasource with a `deleteDatasources:` entry instead); stackctl's own "
                     "grafana/provisioning/datasources file sets no prune; then `stackctl up`"))


_PLUGIN_ENTRY = re.compile(r"parse \"?(?P<entry>\s+https?://[^\s\"]+?)\"?: first path segment")


def _grafana_plugin_list_syntax(evidence: Evidence) -> Diagnosis:
    entry = evidence.read(_PLUGIN_ENTRY).get("entry", "").strip()
    return found(evidence, Cause.grafana_plugin_list_syntax,
                 f"Grafana could not read an entry of its plugin list{f' ({entry})' if entry else ''}: a space in "
                 "the list became part of the plugin's URL",
                 Fix("GF_INSTALL_PLUGINS (and GF_PLUGINS_PREINSTALL) is a comma-separated list with no spaces: "
                     "remove the space after the comma"
                     + (f" before {entry}" if entry else "") + " (each entry is a plugin id, `id version`, or "
                     "`URL;id` for a plugin from a URL, e.g. `GF_INSTALL_PLUGINS=grafana-clock-panel,https://host/p.zip;"
                     "my-panel`); then `stackctl up`", env="GF_INSTALL_PLUGINS"),
                 **({"entry": entry} if entry else {}))


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
    signature(Cause.prometheus_feature_flag_removed,
              r"Unknown option for --enable-feature|enabled via feature flag [\w-]+\. This is DEPRECATED", _prometheus_feature_flag_removed, ADVISORY + 1),
    signature(Cause.anthropic_system_role_refused,
              r"'loc': \('body', 'messages', \d+, 'role'\).*Input should be 'user' or 'assistant'.*'input': 'system'",
              _anthropic_system_role_refused),
    # certbot's own parser (pyparsing) refusing a file nginx accepts: old and new wordings.
    signature(Cause.certbot_nginx_parse_failed, r"Could not parse file:? /\S+|certbot-nginx Expected string_end, "
              r"found|Expected string_end, found '\w+'\s*\(at char", _certbot_nginx_parse_failed),
    signature(Cause.grafana_provisioning_incomplete,
              r"(?:Failed to read|can't read) (?:plugin|alert notification|dashboard|alerting) provisioning files from "
              r"directory.*no such file|failed to read plugin provisioning directory|dashboard has no folder",
              _grafana_provisioning_incomplete, ADVISORY),
    # At startup (provisioning), not a dashboard's query naming a datasource that is gone.
    signature(Cause.grafana_datasource_prune, r"^\W*(?:\S+ )?(?:level=\w+ )?(?:Datasource provisioning error: )?"
              r"data source not found\W*$|provision(?:ing)? data ?sources?.*data source not found",
              _grafana_datasource_prune),
    signature(Cause.grafana_plugin_list_syntax, r"parse \"?\s+https?://\S+: first path segment in URL cannot contain "
              r"colon", _grafana_plugin_list_syntax),
)
