"""nginx's `user` directive naming a user (getpwnam) or group (getgrnam) the host does not have: the
distribution's nginx.conf, or one copied from another, says `user nginx;` (RHEL's and nginx.org's
packages create that user; Debian's is www-data) or `user nobody;` on a system without that group."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_LOOKUP = re.compile(r"(?P<call>getpwnam|getgrnam)\(\"(?P<name>[^\"]*)\"\) failed(?:.*? in (?P<file>/\S+?):(?P<line>\d+))?")


def _nginx_user_unknown(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_LOOKUP)
    name, file, line = values.get("name", ""), values.get("file", ""), values.get("line", "")
    group = values.get("call") == "getgrnam"
    what = "group" if group else "user"
    where = f" ({file}:{line})" if file and line else ""
    create = (f"`sudo groupadd --system {name or 'NAME'}`" if group else
              f"`sudo useradd --system --no-create-home --shell /usr/sbin/nologin {name or 'NAME'}`")
    return found(evidence, Cause.nginx_user_unknown,
                 f"nginx's `user` directive{where} names the {what} {name or '(unnamed)'}, which this system does not "
                 "have, so nginx does not start",
                 Fix(f"either create the {what} ({create}; inside a container, in its image) or change the user "
                     f"directive{where} to one that exists: `user www-data;` on Debian and Ubuntu, `user nobody "
                     "nogroup;` where the group nobody is missing (`getent passwd NAME`, `getent group NAME` check). "
                     "stackctl's own nginx.conf (native runtime) sets `user` only when run as root (`user root`), "
                     "so this directive comes from another nginx.conf: the distribution's /etc/nginx/nginx.conf or "
                     "a file given with -c; then `sudo nginx -t` and `stackctl up`"),
                 **({what: name} if name else {}), **({"file": file} if file else {}))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.nginx_user_unknown, r"\[emerg\].*\b(?:getpwnam|getgrnam)\(\"[^\"]*\"\) failed", _nginx_user_unknown),
)
