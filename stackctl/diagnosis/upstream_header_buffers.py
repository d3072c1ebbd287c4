"""Which of nginx's buffers an upstream's too large response headers overflowed: read from the upstream's scheme.

"upstream sent too big header while reading response header from upstream" is the same refusal for every kind of
upstream, but each module keeps its own buffer for the first part of the response, the headers: proxy_buffer_size
for proxy_pass (http:// and https:// upstreams), fastcgi_buffer_size for fastcgi_pass (PHP-FPM; the line names
`upstream: "fastcgi://..."`), uwsgi_buffer_size for uwsgi_pass (`uwsgi://`), scgi_buffer_size for scgi_pass, each with
its *_buffers and *_busy_buffers_size. Raising proxy_buffer_size does nothing for a FastCGI upstream
(Varying-Vagrant-Vagrants/VVV#135 and WordPress's admin-ajax.php: fastcgi_buffers and fastcgi_buffer_size;
bueltge/debug-objects#54; MIT-LCP/physionet-build#838: uwsgi_buffer_size, not proxy_buffer_size). Where the line
names no upstream, the location's own *_pass directive tells which.
"""

from __future__ import annotations

import re

_UPSTREAM_SCHEME = re.compile(r"upstream: \"(?P<scheme>https?|fastcgi|uwsgi|scgi|grpcs?)://")
# The module of each scheme: its prefix, what passes to it, and an example set of sizes.
_MODULES = {"http": "proxy", "https": "proxy", "fastcgi": "fastcgi", "uwsgi": "uwsgi", "scgi": "scgi",
            "grpc": "grpc", "grpcs": "grpc"}


def upstream_module(text: str) -> str | None:
    """The module whose buffers the upstream on the line fills (proxy, fastcgi, uwsgi, scgi, grpc), or None where
    the line names no upstream."""
    match = _UPSTREAM_SCHEME.search(text)
    return _MODULES[match["scheme"]] if match else None


def _buffers(module: str) -> str:
    if module == "grpc":
        return "`grpc_buffer_size 32k;`"
    return f"`{module}_buffer_size 32k; {module}_buffers 8 32k; {module}_busy_buffers_size 64k;`"


def header_buffers_fix(module: str | None) -> str:
    """Which buffer directives to raise, and where, for the upstream's module (None: the line names none)."""
    stackctl = ("stackctl's own site proxies to the filter-proxy (proxy_pass, nginx/stackctl-site.conf.j2), whose "
                "headers are small, so also check what upstream it is and what sets its cookies; then `nginx -t` and "
                "reload (`stackctl up` for stackctl's site)")
    if module is None:
        return ("the upstream's response headers (large cookies or tokens, most often) do not fit the buffer nginx "
                "keeps for them (one memory page, 4k or 8k, by default), so the client gets 502 Bad Gateway. Raise the "
                "buffer of the module the location passes to: for proxy_pass, proxy_buffer_size (and proxy_buffers / "
                f"proxy_busy_buffers_size with it, e.g. {_buffers('proxy')}); for fastcgi_pass (PHP-FPM), "
                f"fastcgi_buffer_size and fastcgi_buffers ({_buffers('fastcgi')}); for uwsgi_pass, uwsgi_buffer_size "
                "and uwsgi_buffers: proxy_buffer_size does not apply to a FastCGI or uwsgi upstream; " + stackctl)
    if module == "proxy":
        return (f"raise proxy_buffer_size (and proxy_buffers / proxy_busy_buffers_size with it, e.g. {_buffers('proxy')}) "
                "in the location that proxies to that upstream (proxy_pass): its response headers (large cookies or "
                "tokens, most often) do not fit the default buffer of one memory page; " + stackctl)
    return (f"the upstream is a {module} one ({module}_pass), whose response headers go to {module}_buffer_size, not "
            f"proxy_buffer_size (which only proxy_pass uses): raise {module}_buffer_size"
            + (f" and {module}_buffers" if module != "grpc" else "") + f" in that location, e.g. {_buffers(module)}; "
            "where another nginx proxies in front of this one, its proxy_buffer_size / proxy_buffers too. The headers "
            "are most often large cookies or tokens the application sets; " + stackctl)
