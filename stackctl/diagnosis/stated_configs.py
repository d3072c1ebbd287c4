"""Causes an error line states about a service's own configuration and what it needs from the host,
for the fallback to name the fix of:

- supervisord's `%(ENV_X)s` naming a variable not in its environment when it started ("Format string
  '%(ENV_X)s' for 'supervisord.user' contains names ('ENV_X') which cannot be expanded");
- nginx's worker refused its temp files ('open() "/var/lib/nginx/body/0000000001" failed (13:
  Permission denied)'): the directory client_body_temp_path (proxy_temp_path, ...) names;
- nginx told to listen on IPv6 where the host has none ("socket() [::]:80 failed (97: Address family
  not supported by protocol)"), and the same refusal from other programs;
- a Prometheus command-line flag written into prometheus.yml ("field path not found in type
  config.plain": storage.tsdb.path);
- a YAML file a Go service read that does not parse ("yaml: line 7: mapping values are not allowed in
  this context", "did not find expected key", "did not find expected '-' indicator", as Prometheus,
  promtool and Grafana's provisioning say them): the quoting or indentation at that line.
"""

from __future__ import annotations

import re

from stackctl.diagnosis.prometheus_flags import FLAG_FIELD, flag_fields_fix
from stackctl.diagnosis.stated_cause import StatedCause
from stackctl.diagnosis.verdict import DiagnosisContext


def configs_stated(line: str, context: DiagnosisContext) -> list[StatedCause]:
    return [*_unexpanded(line), *_temp_path_denied(line), *no_ipv6(line, context), *_prometheus_flags(line),
            *_yaml_syntax(line, context)]


# --- a YAML file that does not parse ---------------------------------------------------------------

# go-yaml's syntax errors (not its "unmarshal errors", a field of the wrong type or name).
_YAML_SYNTAX = re.compile(r"\byaml: line (?P<line>\d+): (?P<message>(?!unmarshal)[^\"\\]+?)(?=\s*(?:\"|\\|$|\s\w+=))")
_YAML_FILE = re.compile(r"parsing YAML file (?P<file>[^\s:\"]+)")
# What each syntax error most often means, by its words.
_YAML_HINTS = (
    (re.compile(r"mapping values are not allowed"), ("a value with ': ' in it (a description, an annotation, a URL) must "
     "be in quotes, or a key sits indented under a value")),
    (re.compile(r"did not find expected (?:key|'-' indicator)|could not find expected ':'"), ("the indentation at or "
     "just above that line is off: spaces only, never tabs, and the items of one list or mapping aligned")),
    (re.compile(r"found character that cannot start any token"), ("a tab, or a value that starts with a character "
     "YAML reserves (@, `, %, *, &) and must be in quotes")),
)
_YAML_CHECKS = {"prometheus": "`promtool check config FILE` (`promtool check rules FILE` for a rule file)"}


def _yaml_syntax(line: str, context: DiagnosisContext) -> list[StatedCause]:
    match = _YAML_SYNTAX.search(line)
    if match is None:
        return []
    message = match["message"].strip()
    hint = next((text for pattern, text in _YAML_HINTS if pattern.search(message)),
                "check the quoting and indentation at and just above that line")
    named = _YAML_FILE.search(line)
    which = named["file"] if named else f"a YAML file {context.service} read"
    check = _YAML_CHECKS.get(context.service, "a YAML linter (`yamllint FILE`)")
    return [StatedCause(f"YAML syntax: line {match['line']}", (
        f"{which} does not parse at line {match['line']} ({message}): {hint}; {check} finds what is left; "
        "a file stackctl renders is rendered afresh by `stackctl up`, so correct the file that was added or edited"))]


# --- supervisord's %(ENV_X)s ---------------------------------------------------------------------

_UNEXPANDED = re.compile(r"Format string '(?P<format>.*?)' for '(?P<option>[^']+)' contains names \((?P<names>[^)]*)\) "
                         r"which cannot be expanded")
_NAME = re.compile(r"'(?P<name>[^']+)'")
_CONFIG_FILE = re.compile(r"\(file: '(?P<file>[^']+)'\)")
# Where stackctl's native runtime starts supervisord (stackctl/runtime/supervisor.py).
_STACKCTL_SUPERVISORD = (
    "stackctl's own supervisord.conf (native runtime: .stackctl/supervisor/supervisord.conf) expands no variables: "
    "its programs read .env through stackctl's launcher, and `stackctl up` starts supervisord with the environment "
    "of the shell that runs it")


def _unexpanded(line: str) -> list[StatedCause]:
    match = _UNEXPANDED.search(line)
    if match is None:
        return []
    names = [found["name"] for found in _NAME.finditer(match["names"])] or ["?"]
    variables = [name.removeprefix("ENV_") for name in names]
    written = [name for name in names if not name.startswith("ENV_")]
    file = _CONFIG_FILE.search(line)
    where = f" ({match['option']} in {file['file']})" if file else f" ({match['option']})"
    listed = ", ".join(variables)
    text = (f"supervisord could not expand {match['format']}{where}: supervisord reads environment variables only as "
            f"%(ENV_NAME)s, from the environment it was started with, and {listed} "
            f"{'is' if len(variables) == 1 else 'are'} not in it")
    if written:
        text += (f" (write %(ENV_{written[0]})s: without the ENV_ prefix {written[0]} is looked up among supervisord's "
                 "own names, here, program_name, process_num)")
    text += (f": set the environment variable {listed}: it must be present in the environment at the time that "
             "supervisord is started: export it before starting supervisord, or set it in the environment of what "
             "starts it (a systemd unit's Environment= or EnvironmentFile=, a container's `environment:` or "
             "`docker run -e`); a variable set afterwards is not seen: restart supervisord itself (`supervisorctl "
             f"reload` keeps the environment it started with). {_STACKCTL_SUPERVISORD}, so this format string is "
             "from another supervisord configuration" + (f" ({file['file']})" if file else ""))
    return [StatedCause(f"supervisord variable: {listed}", text, env=variables[0])]


# --- nginx's temp files ---------------------------------------------------------------------------

_TEMP_DENIED = re.compile(r"\b(?:open|mkdir)\(\) \"(?P<path>/[^\"]+)\" failed \(13: Permission denied\)")
# The directive each temp directory belongs to, by the words in its path (Debian's /var/lib/nginx/body,
# the official image's /var/cache/nginx/client_temp, a hand-set client_body_temp_path).
_TEMP_KINDS = (("client_body_temp_path", re.compile(r"client_?(?:body|temp)|/body\b|/client\b")),
               ("proxy_temp_path", re.compile(r"proxy")), ("fastcgi_temp_path", re.compile(r"fastcgi")),
               ("uwsgi_temp_path", re.compile(r"uwsgi")), ("scgi_temp_path", re.compile(r"scgi")))
# nginx names each temp file with ten digits, in the temp path's (level) subdirectories.
_TEMP_FILE = re.compile(r"/\d{10}$")
_STACKCTL_TEMP = ("stackctl's native nginx sets every temp path in the stack's state directory (client_body_temp_path "
                  ".stackctl/nginx/client_body, proxy_temp_path .stackctl/nginx/proxy, and fastcgi, uwsgi, scgi beside "
                  "them), owned by the user that runs `stackctl up`; its Compose nginx keeps the image's /var/cache/nginx; "
                  "stackctl's site proxies to the filter-proxy unbuffered (proxy_request_buffering off, proxy_buffering "
                  "off), so its own requests seldom need a temp file")


def _temp_path_denied(line: str) -> list[StatedCause]:
    match = _TEMP_DENIED.search(line)
    if match is None:
        return []
    path = match["path"]
    directory = path.rsplit("/", 1)[0] if _TEMP_FILE.search(path) else path
    named = next((directive for directive, words in _TEMP_KINDS if words.search(directory)), None)
    if named is None and not _TEMP_FILE.search(path) and "temp" not in directory:
        # Not a temp file: a document root or another file nginx may not read.
        return []
    directive = named or ("proxy_temp_path" if "upstream" in line else "client_body_temp_path")
    return [StatedCause(f"nginx temp path: {directive}", (
        f"nginx's worker may not write its temp file {path} (13: Permission denied): the directory {directive} names "
        f"(here {directory}) must be writable by nginx's worker user (the `user` directive: www-data on Debian, nginx "
        "in the official image; the user that started nginx when it is not root), and so every directory above it "
        f"searchable: `sudo chown -R WORKER_USER {directory}`, or set {directive} to a directory the nginx worker can "
        "write to (one created by root, or by an nginx run as another user, keeps its old owner); then `nginx -t` "
        f"and reload. {_STACKCTL_TEMP}"))]


# --- IPv6 where the host has none ----------------------------------------------------------------

# nginx's listen on [::] (IPv6 off in the kernel, or in the container); its upstream resolved to IPv6.
_NGINX_IPV6 = re.compile(r"socket\(\) (?P<address>\[[\da-fA-F:.]*\]:\d+) failed \(97: Address family not supported")
_UPSTREAM_IPV6 = re.compile(r"socket\(\) failed \(97: Address family not supported by protocol\) while connecting to "
                            r"upstream")
# Go's and Python's words for the same refusal.
_OTHER_IPV6 = re.compile(r"listen tcp6? (?P<address>\[[\da-fA-F:.]*\]:\d+): socket: address family not supported"
                         r"|\[Errno 97\] Address family not supported", re.IGNORECASE)
_PORT = re.compile(r":(?P<port>\d+)$")
# Every refusal above, for a signature's trigger.
IPV6_REFUSED = (_NGINX_IPV6, _UPSTREAM_IPV6, _OTHER_IPV6)
_IPV6_OFF = ("this host (or the container it runs in) has IPv6 turned off (`sysctl net.ipv6.conf.all.disable_ipv6` "
             "says 1, or the kernel booted with ipv6.disable=1)")


def no_ipv6(line: str, context: DiagnosisContext) -> list[StatedCause]:
    listen = _NGINX_IPV6.search(line)
    if listen:
        address = listen["address"]
        port = _PORT.search(address)
        bare = port["port"] if port else "PORT"
        return [StatedCause(f"no IPv6: {address}", (
            f"{_IPV6_OFF}, and nginx is told to listen on {address} (`listen {address};`): remove that listen line "
            f"and keep the IPv4 one (`listen {bare};`), or turn IPv6 on (`sudo sysctl -w "
            "net.ipv6.conf.all.disable_ipv6=0`); stackctl's own site listens on IPv4 only (`listen PORT` for "
            "ports.http and ports.https), so the [::] line is from another nginx configuration: the distribution's "
            "default site (/etc/nginx/sites-enabled/default has `listen [::]:80 default_server`; remove the link) or "
            "an image whose start script adds one"))]
    if _UPSTREAM_IPV6.search(line):
        return [StatedCause("no IPv6: upstream", (
            f"{_IPV6_OFF}, and nginx's upstream resolved to an IPv6 address: make nginx resolve IPv4 only "
            "(`resolver ADDRESS ipv6=off;` where a resolver is set) or proxy_pass an IPv4 address; stackctl's own "
            "upstream, the filter-proxy, is an address (127.0.0.1, or hosts: in stack.yaml)"))]
    other = _OTHER_IPV6.search(line)
    if other is None:
        return []
    address = other["address"] or "an IPv6 address"
    port = _PORT.search(other["address"] or "")
    key = context.port_keys.get(int(port["port"])) if port else None
    service = context.service
    return [StatedCause(f"no IPv6: {address}", (
        f"{_IPV6_OFF}, and {service} is told to listen on {address}: give it an IPv4 address (0.0.0.0:PORT, or "
        "127.0.0.1:PORT) in its listen setting, or turn IPv6 on (`sudo sysctl -w net.ipv6.conf.all.disable_ipv6=0`)"
        + (f"; here that port is {key} in stack.yaml" if key else "")), key)]


# --- a Prometheus flag in prometheus.yml ---------------------------------------------------------

def _prometheus_flags(line: str) -> list[StatedCause]:
    fields = [match["field"] for match in FLAG_FIELD.finditer(line)]
    if not fields:
        return []
    return [StatedCause(f"prometheus flag in prometheus.yml: {', '.join(fields)}", flag_fields_fix(fields))]
