"""nginx's TLS handshake with an upstream (`proxy_pass https://...`) that fails, read by its signatures and by the
fallback alike. Only nginx's own wording: "SSL_do_handshake() failed (...) while SSL handshaking to upstream", never
its handshake with a client ("while SSL handshaking" alone), which is the client's.

- "wrong version number" (OpenSSL's record layer read something that is no TLS record): the upstream answers in
  plain HTTP on that port, an https:// to a plain-HTTP port (nginx-proxy#1879 with VIRTUAL_PROTO=https on port 80,
  vesta#2010, apisix#8126 asked "did you write the wrong upstream port?"). Use http://, or the upstream's TLS port.
- "SSL alert number 112" (unrecognized_name) or "SSL alert number 40" (handshake_failure): the upstream refused the
  handshake. A server behind a CDN, a shared host or another reverse proxy picks its certificate by the name the
  client sends (SNI), and nginx sends none unless `proxy_ssl_server_name on;` (matrix-docker-ansible-deploy#3055,
  jenkins-infra/helm-charts#1507, ethpandaops/ansible-collection-general#281 with proxy_ssl_name,
  NginxProxyManager#4457); alert 40 is also an upstream that asks for a client certificate (ingress-nginx#7082:
  proxy_ssl_certificate) or shares no protocol or cipher with nginx (proxy_ssl_protocols).

stackctl's own nginx proxies to the filter-proxy over plain HTTP (`proxy_pass http://127.0.0.1:PORT`, ports.proxy):
an https:// upstream comes from a site or location added by hand.
"""

from __future__ import annotations

import re

_UPSTREAM = r"(?:[^\n]*?upstream: \"(?P<upstream>[^\"]+)\")?"
NOT_TLS = re.compile(r"SSL_do_handshake\(\) failed \([^\n]*?wrong version number[^\n]*?\) while SSL handshaking to "
                     r"upstream" + _UPSTREAM)
REFUSED = re.compile(r"SSL_do_handshake\(\) failed \([^\n]*?SSL alert number (?P<alert>40|112)\) while SSL handshaking "
                     r"to upstream" + _UPSTREAM)
_HOST = re.compile(r"^\w+://(?P<host>\[[^\]]+\]|[^:/]+)(?::(?P<port>\d+))?")
_OWN = ("stackctl's own nginx proxies to the filter-proxy over plain HTTP (`proxy_pass http://127.0.0.1:PORT`, "
        "ports.proxy), so an https:// upstream comes from a site or location added by hand; `stackctl render` shows "
        "stackctl's own site, and `nginx -t` tests the change before `nginx -s reload`")


def not_tls(text: str) -> str | None:
    """The upstream `text` says answered a TLS handshake with something else ("" where the log names none), or
    None."""
    match = NOT_TLS.search(text)
    return None if match is None else match["upstream"] or ""


def not_tls_fix(upstream: str) -> str:
    parts = _HOST.search(upstream)
    host, port = (parts["host"], parts["port"]) if parts else ("HOST", None)
    plain = f"http://{host}{':' + port if port else ''}" if parts else "http://HOST:PORT"
    port_said = f" on port {port}" if port else ""
    return (f"the upstream {upstream or 'nginx proxies to'} answers in plain HTTP{port_said}, not TLS ('wrong version "
            "number': what came back is no TLS record), so nginx's https:// handshake with it fails and clients get a "
            f"502: where the upstream serves http, proxy to it as an http:// upstream, `proxy_pass {plain};` (behind "
            "nginx-proxy: VIRTUAL_PROTO=http, the default), or point proxy_pass at the upstream's TLS port where it has "
            f"one (443, 8443). {_OWN}")


def refused(text: str) -> re.Match[str] | None:
    """The upstream's refusal of nginx's handshake (the TLS alert and the upstream), or None."""
    return REFUSED.search(text)


def refused_fix(match: re.Match[str]) -> str:
    upstream = match["upstream"] or ""
    parts = _HOST.search(upstream)
    name = "THE.UPSTREAM.NAME" if parts is None or re.fullmatch(r"[\d.]+|\[.*\]|<\w+>", parts["host"]) else parts["host"]
    why = ("'unrecognized name' (alert 112): the upstream knows no site by the name it was sent, or was sent none"
           if match["alert"] == "112" else "'handshake failure' (alert 40)")
    other = ("" if match["alert"] == "112" else
             " Alert 40 is also an upstream that asks for a client certificate (give nginx one: proxy_ssl_certificate "
             "and proxy_ssl_certificate_key) or shares no TLS version or cipher with nginx (proxy_ssl_protocols "
             "TLSv1.2 TLSv1.3).")
    return (f"the upstream {upstream or 'nginx proxies to'} refused nginx's TLS handshake with {why}. Most often it "
            "needs the server name (SNI): a server behind a CDN, on shared hosting or behind another reverse proxy "
            "picks its certificate by the name the client sends, and nginx sends none to an https:// upstream unless "
            f"told: add `proxy_ssl_server_name on;` beside that proxy_pass, and `proxy_ssl_name {name};` where "
            "proxy_pass names an address or an upstream{} block rather than the upstream's own host name "
            f"(proxy_ssl_name $host; sends the client's).{other} {_OWN}")
