"""nginx refused by the host when it connects to its upstream, and nginx's variables that nothing defines:
read by their signatures and by the fallback alike.

- 'connect() to 127.0.0.1:8082 failed (13: Permission denied) while connecting to upstream': on an SELinux
  host (RHEL, Alma, Rocky, Fedora, CentOS) nginx runs as httpd_t, which may connect only to the ports
  labelled for web servers: `setsebool -P httpd_can_network_connect 1` (JFrog-Cloud-Installers#268,
  nexus-cookbook#115, nautobot's SELinux notes, rocky-linux/documentation#697); a unix socket upstream refused
  the same way is the socket file's owner and mode, not SELinux as a rule;
- 'unknown "connection_upgrade" variable': $connection_upgrade is no built-in variable, but the name the nginx
  WebSocket guide gives a `map $http_upgrade $connection_upgrade` block in http{} (nginxconfig.io#491,
  jupyterhub#781, ChiaPool#7, internal-chat#11); another unknown variable is a module's not loaded, a map or set
  copied without its definition, or a typo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UPSTREAM_DENIED = re.compile(r"connect\(\) to (?P<address>(?!unix:)\S+?) failed \(13: Permission denied\) while "
                             r"connecting to upstream")
UNKNOWN_VARIABLE = re.compile(r"unknown \"(?P<name>\w+)\" variable")
# Variables of modules a distribution's nginx may not load, and the module that defines them.
_MODULE_VARIABLES = (("geoip2_", "the GeoIP2 module (libnginx-mod-http-geoip2, load_module)"),
                     ("geoip_", "the GeoIP module (libnginx-mod-http-geoip, load_module)"),
                     ("ssl_", "the SSL module (an nginx built --with-http_ssl_module)"),
                     ("http2", "the HTTP/2 module (an nginx built --with-http_v2_module)"),
                     ("realip_", "the realip module (--with-http_realip_module)"))


def upstream_denied_fix(address: str) -> str:
    at = f" to {address}" if address else ""
    return (f"the system refused nginx's connection{at} (13: Permission denied) before any packet left: on an "
            "SELinux host (RHEL, AlmaLinux, Rocky, Fedora; `getenforce` says Enforcing) nginx runs as httpd_t, "
            "which may connect only to the ports labelled for web servers: allow it with `sudo setsebool -P "
            "httpd_can_network_connect 1` (the SELinux boolean; -P keeps it across reboots; Ansible: the "
            "ansible.posix.seboolean module), then retry the request; `sudo ausearch -m avc -c nginx` shows the "
            "denial (name_connect). Never turn SELinux off for it. stackctl's nginx proxies to the filter-proxy on "
            "ports.proxy, which this boolean covers")


@dataclass(frozen=True)
class UnknownVariable:
    name: str


def unknown_variable(text: str) -> UnknownVariable | None:
    match = UNKNOWN_VARIABLE.search(text)
    return UnknownVariable(match["name"]) if match else None


def unknown_variable_fix(variable: UnknownVariable) -> str:
    name = variable.name
    site = ("stackctl's own site sets `proxy_set_header Connection \"\"` and uses no such variable: this one is in a "
            "configuration stackctl did not render (another site, a snippet), then `sudo nginx -t` and reload")
    if name == "connection_upgrade":
        return ("$connection_upgrade is no built-in nginx variable: a WebSocket proxy snippet that sets "
                "`proxy_set_header Connection $connection_upgrade;` needs its map block in the http{} context (in "
                "nginx.conf or a conf.d/ file, outside any server{}): `map $http_upgrade $connection_upgrade { "
                "default upgrade; '' close; }`; or write the header as a constant, `proxy_set_header Connection "
                "'upgrade';`, where every request through that location is a WebSocket; " + site)
    module = next((module for prefix, module in _MODULE_VARIABLES if name.startswith(prefix)), None)
    if module:
        return (f"${name} comes from {module}, which this nginx does not have: install and load that module "
                "(`nginx -V` lists what it was built with), or remove the lines that use the variable; " + site)
    return (f"nginx knows no variable ${name}: a variable that is not built in must be defined before use by a `map "
            f"... ${name} {{ }}` block in http{{}} or a `set ${name} ...;` (a snippet copied without its definition), "
            f"or a module defines it (one not loaded: `nginx -V`); or the name is misspelt (nginx's variables: "
            "$http_NAME for a request header, $upstream_*, $remote_addr, ...); " + site)
