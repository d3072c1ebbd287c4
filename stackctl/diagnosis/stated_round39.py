"""Round 39's readers, as the causes an error line states for the fallback (stated_classes): where a signature
misses the line (a wording a little off its trigger, a log read with signatures that do not apply), the
fallback still names the cause's fix.

- Let's Encrypt's limits told apart by their words (acme_rate_limits): an hour for failed validations, hours
  for orders and accounts, a week for certificates of one name;
- certbot's standalone server refused port 443 while performing tls-sni-01 (acme_challenge_ports);
- a client refused at a model server's route while it still loads (engine_readiness);
- a DCGM client without its host engine (dcgm_hostengine);
- Grafana's Bad Gateway for a datasource (grafana_gateway);
- nginx's second upstream block of one name (nginx_upstream_blocks) and a certbot live/ path that is the host's,
  not the container's (nginx_certificate_paths).

A container's entrypoint without its execute bit (entrypoint_permissions) is not among them: the fallback
names its permission remedy (a chown) beside any stated cause, which is not this fix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stackctl.diagnosis.acme_challenge_ports import tls_sni_challenge, tls_sni_fix
from stackctl.diagnosis.acme_rate_limits import (
    FAILED_VALIDATIONS,
    failed_validations_fix,
    limit_wait,
    rate_limit,
)
from stackctl.diagnosis.dcgm_hostengine import hostengine_fix, hostengine_unreachable
from stackctl.diagnosis.engine_readiness import not_ready_fix, refused_at_model_path
from stackctl.diagnosis.grafana_gateway import bad_gateway, bad_gateway_fix
from stackctl.diagnosis.nginx_certificate_paths import container_path_fix, mounted_elsewhere
from stackctl.diagnosis.nginx_upstream_blocks import (
    duplicate_upstream,
    duplicate_upstream_fix,
    is_stackctl_upstream,
)
from stackctl.diagnosis.stated_cause import StatedCause

_LETSENCRYPT_DIR = "letsencrypt_dir"
_STANDALONE_BIND = re.compile(r"Could not bind to IPv4 or IPv6|Problem binding to port 443")
_MISSING_CERTIFICATE = re.compile(r"(?:cannot load certificate(?: key)? \"|BIO_new_file\(\")(?P<path>[^\"]+)\".*"
                                  r"(?:No such file|no such file)")


def round39_stated(line: str, traceback: Sequence[str] = ()) -> list[StatedCause]:
    """The causes `line` states that a round-39 reader knows; `traceback`: the error's own frames (certbot's
    standalone server class names the challenge)."""
    return [*_rate_limit(line), *_tls_sni(line, traceback), *_not_ready(line), *_hostengine(line),
            *_bad_gateway(line), *_duplicate_upstream(line), *_certificate_path(line)]


def _rate_limit(line: str) -> list[StatedCause]:
    limit = rate_limit(line)
    if limit is None or limit.weekly:
        return []  # a week's limit: the fallback's rate-limit remedy says it
    text = failed_validations_fix() if limit is FAILED_VALIDATIONS else f"{limit_wait(limit)}, then retry"
    return [StatedCause(f"rate limit: {limit.name}", text, key=_LETSENCRYPT_DIR)]


def _tls_sni(line: str, traceback: Sequence[str]) -> list[StatedCause]:
    if not _STANDALONE_BIND.search(line) or not tls_sni_challenge([*traceback, line]):
        return []
    return [StatedCause("tls-sni-01 binds port 443", tls_sni_fix(), key="ports.https")]


def _not_ready(line: str) -> list[StatedCause]:
    match = refused_at_model_path(line)
    if match is None:
        return []
    address = f"{match['host']}:{match['port']}{match['path']}"
    return [StatedCause(f"model server not ready: {address}", not_ready_fix(address, None))]


def _hostengine(line: str) -> list[StatedCause]:
    if not hostengine_unreachable(line):
        return []
    return [StatedCause("DCGM host engine unreachable", hostengine_fix(), key="images.gpu-exporter")]


def _bad_gateway(line: str) -> list[StatedCause]:
    if not bad_gateway(line):
        return []
    return [StatedCause("Grafana datasource Bad Gateway", bad_gateway_fix("ports.prometheus", 9090),
                        key="ports.prometheus")]


def _duplicate_upstream(line: str) -> list[StatedCause]:
    match = duplicate_upstream(line)
    if match is None:
        return []
    name = match["name"]
    return [StatedCause(f"duplicate upstream: {name}", duplicate_upstream_fix(name, match["file"] or ""),
                        key="ports.proxy" if is_stackctl_upstream(name) else None)]


def _certificate_path(line: str) -> list[StatedCause]:
    match = _MISSING_CERTIFICATE.search(line)
    root = mounted_elsewhere(match["path"]) if match else None
    if match is None or root is None:
        return []
    return [StatedCause(f"certificate path outside the container: {match['path']}",
                        container_path_fix(match["path"], root), key=_LETSENCRYPT_DIR)]
