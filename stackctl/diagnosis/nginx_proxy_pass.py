"""nginx's proxy_pass with a URI part where nginx cannot replace the matched location with it: read by
the nginx-proxy-pass-uri-in-regex signature and by the fallback alike.

`proxy_pass http://HOST:PORT/path/` replaces the part of the request URI the location matched with
/path/; inside a regular-expression location (`location ~`), a named location (`@x`), an `if` or a
`limit_except` block there is no matched prefix to replace, so nginx refuses any URI part, even a
lone "/", and does not start. A prefix location (`location ^~ /path/`) takes it, or proxy_pass loses its
URI and a `rewrite ... break` sets the path (st2#4172, jfa-go#211, Radicale#869).
"""

from __future__ import annotations

import re

URI_IN_REGEX = re.compile(r"\"proxy_pass\" cannot have URI part in location given by regular expression"
                          r"(?:.*? in (?P<file>/[^:\s]+):(?P<line>\d+))?")


def proxy_pass_place(line: str) -> tuple[str, str]:
    """(file, line number) the refusal names, or empty strings."""
    match = URI_IN_REGEX.search(line)
    return (match["file"] or "", match["line"] or "") if match else ("", "")


def proxy_pass_fix(file: str, number: str) -> str:
    where = f"{file}:{number}" if file else "the line nginx names"
    return (f"the proxy_pass at {where} has a URI part (a path after HOST:PORT, even a lone \"/\") inside a "
            "regular-expression location (`location ~ ...`), a named location (`@name`), an `if` or a `limit_except` "
            "block, where nginx cannot use one: make the location a prefix location instead of a regular expression "
            "location (`location ^~ /path/ { proxy_pass http://HOST:PORT/; }`: ^~ also keeps regex locations from "
            "taking its requests), or drop the URI from proxy_pass (`proxy_pass http://HOST:PORT;`) and set the path "
            "with `rewrite ^/path/(.*)$ /$1 break;` before it (a variable in proxy_pass is also allowed: "
            "`proxy_pass http://HOST:PORT$request_uri;`); check with `nginx -t`. stackctl's rendered site uses "
            "prefix locations only: this is a site of your own or one copied from another project's docs")
