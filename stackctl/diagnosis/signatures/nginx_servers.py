"""nginx server blocks that claim the same thing on one listen address: a server_name two blocks serve
(nginx keeps the first and warns) and two blocks marked default_server (nginx does not start). Both
come from a second site enabled beside the one meant: the distribution's default, a copy, or one
file included twice."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, Signature, found, signature
from stackctl.diagnosis.stack_keys import nginx_port_key
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_CONFLICT = re.compile(r"conflicting server name [\"“](?P<name>[^\"”]*)[\"”] on (?P<address>\S+?),? ignored")
_DEFAULT = re.compile(r"a duplicate default server for (?P<address>\S+) in (?P<file>[^:\s]+)(?::(?P<line>\d+))?")
_FIND_THEM = ("`sudo nginx -T` prints the whole configuration nginx reads, each file under a `# configuration file` "
              "line: find the server blocks that listen there")


def _nginx_server_name_conflict(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_CONFLICT)
    name, address = values.get("name", ""), values.get("address", "")
    shown = f"`{name}`" if name else "no server_name (\"\")"
    return found(evidence, Cause.nginx_server_conflict,
                 f"two server blocks listening on {address or 'one address'} both claim {shown}: nginx serves it from "
                 "the first it read and ignores the other's claim, so requests for it may reach the wrong site",
                 Fix(f"give each name one server block per listen port: {_FIND_THEM} with server_name "
                     f"{name or '(none)'}, then remove the duplicate (a second copy of the site in sites-enabled/ or "
                     "conf.d/, the same file included twice, a redirect block that repeats the name on the same port) "
                     "or merge the two, and check with `sudo nginx -t`. stackctl's site (stackctl-site.conf) claims "
                     "`hostname` from stack.yaml on ports.http and ports.https: another site with that name on those "
                     "ports must be disabled, or stackctl given ports of its own", key="hostname"),
                 severity=Severity.advisory, **({"server_name": name} if name else {}),
                 **({"address": address} if address else {}))


def _nginx_duplicate_default_server(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_DEFAULT)
    address, file, line = values.get("address", ""), values.get("file", ""), values.get("line", "")
    where = f"{file}:{line}" if line else file
    return found(evidence, Cause.nginx_server_conflict,
                 f"two server blocks mark `default_server` on {address or 'one listen address'}"
                 f"{' (the second at ' + where + ')' if where else ''}, so nginx does not start",
                 Fix("only one server block per listen address may be its default_server: remove `default_server` "
                     f"from the listen line{' at ' + where if where else ''} or from the other site's ({_FIND_THEM}); "
                     "most often the other is the distribution's own default site (`sudo rm "
                     "/etc/nginx/sites-enabled/default`) or a second copy of a site, and check with `sudo nginx -t`. "
                     "stackctl's site (stackctl-site.conf) marks no default_server; another site enabled beside it "
                     "on ports.http/ports.https may have one, or stackctl can move to ports no other site uses",
                     key=nginx_port_key(address.rsplit(":", 1)[-1])), **({"address": address} if address else {}),
                 **({"file": file} if file else {}))


SIGNATURES: tuple[Signature, ...] = (
    # nginx's warning (its quotes, or typographic ones where a report retyped it).
    signature(Cause.nginx_server_conflict, r"conflicting server name [\"“][^\"”]*[\"”] on \S+ ignored",
              _nginx_server_name_conflict, ADVISORY),
    signature(Cause.nginx_server_conflict, r"a duplicate default server for \S+", _nginx_duplicate_default_server),
)
