"""nginx's "unknown directive": read by the nginx-directive signatures and by the fallback alike.

nginx names a directive unknown when no module it has loaded defines it, for one of three causes:

- a directive of a newer nginx: `http2 on;` exists from 1.25.1 (before it, HTTP/2 is the `http2`
  parameter of `listen`), `http3`/`quic_*` from 1.25.0 with ngx_http_v3_module, and a few others
  (Xray-install#7, nginx-proxy-automation#381, engintron#1483, nginx-ui#1397, valet-linux-plus#152):
  Debian 12 ships nginx 1.22, Ubuntu 22.04 1.18 and 24.04 1.24;
- a directive of a module this nginx was not built with or does not load: headers-more's
  `more_set_headers`, brotli, Lua, njs, GeoIP, RTMP (dotdeb-nginx#90, GSA/data.gov#546,
  headers-more#108, docker-openresty#69);
- a typo, stray bytes pasted with it (a byte-order mark, a non-breaking space), or a file that is no
  nginx configuration in an included directory.

stackctl's own site uses only directives nginx 1.18 knows (HTTP/2 as `listen ... ssl http2`): an unknown
one comes from a configuration stackctl did not render, or one edited after rendering.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

UNKNOWN_DIRECTIVE = re.compile(r"unknown directive \"(?P<name>[^\"]{1,80})\"(?: in (?P<file>\S+?):(?P<line>\d+))?")

# Directives of nginx itself that older releases lack: the release that brought each.
_NEWER_NGINX = {
    "http2": "1.25.1",
    **dict.fromkeys(("http3", "http3_hq", "http3_max_concurrent_streams", "http3_stream_buffer_size", "quic_retry",
                     "quic_gso", "quic_host_key", "quic_bpf", "quic_active_connection_id_limit"), "1.25.0"),
    "ssl_reject_handshake": "1.19.4",
    "ssl_conf_command": "1.19.4",
    "proxy_ssl_conf_command": "1.19.4",
    "keepalive_time": "1.19.10",
    "ssl_certificate_cache": "1.27.4",
}
# Third-party and optional modules by the prefix of their directives: the module, and Debian's package.
_MODULES = (
    (re.compile(r"^more_(?:set|clear)_(?:input_)?headers$"), "headers-more", "libnginx-mod-http-headers-more-filter"),
    (re.compile(r"^brotli"), "brotli", "libnginx-mod-http-brotli-filter"),
    (re.compile(r"^(?:\w+_by_lua\w*|lua_\w+)$"), "Lua (OpenResty's lua-nginx-module)", "libnginx-mod-http-lua"),
    (re.compile(r"^js_\w+$"), "njs", "nginx-module-njs (nginx.org's packages)"),
    (re.compile(r"^geoip2?_\w+$"), "GeoIP", "libnginx-mod-http-geoip or libnginx-mod-http-geoip2"),
    (re.compile(r"^rtmp(?:_\w+)?$"), "RTMP", "libnginx-mod-rtmp"),
    (re.compile(r"^(?:sub_filter\w*|image_filter\w*|xslt_\w+|perl\w*)$"), "an optional nginx module",
     "libnginx-mod-http-image-filter, -xslt-filter or -perl"),
    (re.compile(r"^(?:vhost_traffic_status\w*|modsecurity\w*|pagespeed|passenger_\w+|upload_progress\w*)$"),
     "a third-party module", None),
)


@dataclass(frozen=True)
class UnknownDirective:
    name: str
    file: str
    line: str
    # The nginx release that brought it, where nginx itself has it; else None.
    since: str | None


def unknown_directive(text: str) -> UnknownDirective | None:
    match = UNKNOWN_DIRECTIVE.search(text)
    if match is None:
        return None
    name = match["name"].strip()
    return UnknownDirective(name, match["file"] or "", match["line"] or "", _NEWER_NGINX.get(name.lower()))


def directive_place(directive: UnknownDirective) -> str:
    return f"{directive.file}:{directive.line}" if directive.file else "the line nginx names"


_NOT_OURS = ("stackctl's own site uses only directives older nginx releases know (HTTP/2 as `listen ... ssl http2`, "
             "for Debian 12's nginx 1.22): this directive comes from a configuration stackctl did not render (a "
             "site of your own, another project's, one copied from newer docs) or one edited after rendering")


def newer_directive_fix(directive: UnknownDirective) -> str:
    where = directive_place(directive)
    if directive.name.lower() == "http2":
        change = ("write HTTP/2 the older way instead: remove `http2 on;` and put http2 on the listen lines "
                  "(`listen 443 ssl http2;`, `listen [::]:443 ssl http2;`), which nginx before 1.25.1 takes (1.25.1 "
                  "and later only warn that it is deprecated)")
    elif directive.name.lower().startswith(("http3", "quic")):
        change = ("remove the HTTP/3 lines (`http3`, `quic_*`, and `listen ... quic`) to serve HTTP/2 and 1.1 only, "
                  "or run an nginx 1.25.0 or later built with ngx_http_v3_module (`nginx -V` lists "
                  "--with-http_v3_module)")
    else:
        change = f"remove the {directive.name} line, or write what it does the way this release does"
    return (f"the \"{directive.name}\" directive at {where} exists only from nginx {directive.since} on, and this nginx "
            f"is older (`nginx -v` prints its version; Debian 12 ships 1.22, Ubuntu 22.04 1.18, Ubuntu 24.04 1.24): "
            f"{change}; or upgrade nginx to {directive.since} or later (nginx.org's packages for Debian and Ubuntu, or "
            f"the nginx image's current tag). Check with `sudo nginx -t`. {_NOT_OURS}")


def unknown_directive_fix(directive: UnknownDirective) -> str:
    where = directive_place(directive)
    module = next(((name, package) for pattern, name, package in _MODULES if pattern.search(directive.name.lower())),
                  None)
    if module is not None:
        name, package = module
        load = (f"install its package ({package}; its file in /etc/nginx/modules-enabled/ loads it where nginx.conf keeps "
                "`include /etc/nginx/modules-enabled/*.conf;` at the top), " if package else "")
        return (f"\"{directive.name}\" at {where} is a directive of {name}, which this nginx does not load: {load}"
                "or load the module's .so with `load_module modules/ngx_....so;` at the top of nginx.conf, or use an "
                f"nginx built with it (`nginx -V` lists the modules built in; OpenResty bundles headers-more and Lua); or "
                f"remove the {directive.name} lines. Check with `sudo nginx -t`. {_NOT_OURS}")
    return (f"nginx knows no directive \"{directive.name}\" (at {where}): check its spelling against nginx's directive "
            "index (https://nginx.org/en/docs/dirindex.html); a name with stray characters (ï»¿, Â) is a byte-order mark "
            "or a non-breaking space pasted from a web page: save the file as plain UTF-8 and retype the line; a file "
            "that is no nginx configuration in an included directory (conf.d/*.conf) reads the same; if it is a "
            "module's directive, load the module (its package, or "
            "`load_module` at the top of nginx.conf; `nginx -V` lists the modules built in) or remove the line; if "
            "newer nginx docs show it, upgrade nginx. Check with `sudo nginx -t`. " + _NOT_OURS)
