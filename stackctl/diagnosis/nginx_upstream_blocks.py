"""nginx's `duplicate upstream "NAME" in FILE:LINE`: a second `upstream NAME { ... }` block, which nginx refuses
(each upstream name is defined once across the whole configuration, every included file together).

Where the second one comes from: two site files written from one template (capistrano-3-rails-template#29,
fixed by naming the upstream after the application), one file included twice (bunkerweb#466: the same custom
configuration kept as upstream.conf and upstream.conf.conf, both matched), or a name another part of the
configuration already uses (ngx_http_google_filter_module#61: `upstream google`, renamed `upstream
www.google.com`). Renaming the block (and the proxy_pass naming it) or including the file once fixes it.
stackctl names its own upstream stackctl_filter_proxy_PORT, PORT being ports.proxy: a duplicate of that name is
two stackctl sites (an old copy left enabled, or two stacks on one ports.proxy) in the same nginx.
"""

from __future__ import annotations

import re

DUPLICATE_UPSTREAM = re.compile(r"duplicate upstream \"(?P<name>[^\"]+)\"(?: in (?P<file>/?[^\s:]+)(?::(?P<line>\d+))?)?")
_STACKCTL_UPSTREAM = "stackctl_filter_proxy_"


def duplicate_upstream(text: str) -> re.Match[str] | None:
    return DUPLICATE_UPSTREAM.search(text)


def is_stackctl_upstream(name: str) -> bool:
    return name.startswith(_STACKCTL_UPSTREAM)


def duplicate_upstream_fix(name: str, file: str) -> str:
    where = file or "the file nginx names"
    stackctl = (f" {name} is stackctl's own upstream: two stackctl sites are enabled in this nginx (an old copy of "
                "stackctl-site.conf left in sites-enabled/ or conf.d/, or two stacks with the same ports.proxy): "
                "remove the stale copy, or give the second stack another ports.proxy in its stack.yaml, then "
                "`stackctl up`." if is_stackctl_upstream(name) else "")
    return (f"two `upstream {name}` blocks are defined, and nginx allows each upstream name once across its whole "
            f"configuration: rename the upstream in {where} (and the proxy_pass that names it) to a different "
            "upstream name, one per site or application, or include the file that defines it once: a file included "
            "twice (a copy such as X.conf.conf beside X.conf under an include glob, a file both in conf.d/ and "
            "included by name, a site in sites-enabled/ and conf.d/) defines it twice. `nginx -T 2>/dev/null | grep "
            f"-n 'upstream {name}'` lists every definition; `nginx -t` checks the change.{stackctl}")
