"""Wordings of newer service releases: Grafana 12's plugin installer (a core plugin it refuses, the
deprecated GF_INSTALL_PLUGINS, a synchronous preinstall that exits on a plugin it cannot fetch), an
exporter flag its release deprecates or refuses beside its renamed successor, dcgm-exporter against another DCGM, and nginx including a file
only certbot's nginx installer writes."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.signature import ADVISORY, Signature, found, images_key, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_CORE_PLUGIN = re.compile(r"plugin (?P<plugin>[\w.-]+) is a core plugin")


def _grafana_core_plugin_install(evidence: Evidence) -> Diagnosis:
    plugin = evidence.read(_CORE_PLUGIN).get("plugin", "")
    return found(evidence, Cause.grafana_core_plugin_install,
                 f"Grafana refuses to install {plugin or 'a plugin'}: it is a core plugin, built into this Grafana, and "
                 "Grafana 12 stops at start on a plugin list that names one",
                 Fix(f"remove {plugin or 'it'} from the plugin list (GF_INSTALL_PLUGINS, GF_PLUGINS_PREINSTALL or "
                     "GF_PLUGINS_PREINSTALL_SYNC in Grafana's environment): remove it from the plugin list and Grafana "
                     "uses its core plugin; stackctl's dashboard needs no plugin; then `stackctl up`",
                     env="GF_INSTALL_PLUGINS"), **({"plugin": plugin} if plugin else {}))


def _grafana_install_plugins_deprecated(evidence: Evidence) -> Diagnosis:
    return found(evidence, Cause.grafana_install_plugins_deprecated,
                 "Grafana 12 warns that GF_INSTALL_PLUGINS is deprecated: it still installs the list, as a synchronous "
                 "preinstall",
                 Fix("replace GF_INSTALL_PLUGINS with GF_PLUGINS_PREINSTALL_SYNC in Grafana's environment (the same "
                     "list; installed before Grafana starts, as before) or GF_PLUGINS_PREINSTALL (installed in the "
                     "background, so a plugin that cannot be fetched does not stop Grafana)",
                     env="GF_PLUGINS_PREINSTALL_SYNC"), severity=Severity.advisory)


_FAILED_PLUGIN = re.compile(r"failed to install plugin (?P<plugin>[^\s;]+?)(?:;\S*)?: \d")


def _grafana_plugin_install_failed(evidence: Evidence) -> Diagnosis:
    """A synchronous preinstall (GF_PLUGINS_PREINSTALL_SYNC, or GF_INSTALL_PLUGINS mapped onto it in
    Grafana 12) that fails ends Grafana; the asynchronous one logs the error and starts."""
    plugin = evidence.read(_FAILED_PLUGIN).get("plugin", "")
    return found(evidence, Cause.grafana_plugin_install_failed,
                 f"Grafana could not install the plugin {plugin or 'in its preinstall list'} (grafana.com has no such "
                 "plugin or version) and, installing it synchronously, exits",
                 Fix("correct the plugin id or version in the list (grafana.com/plugins shows both; Grafana 12.4 takes "
                     "a URL only as `id@version@url`), or use GF_PLUGINS_PREINSTALL instead of "
                     "GF_PLUGINS_PREINSTALL_SYNC (or GF_INSTALL_PLUGINS): an asynchronous preinstall logs the failure "
                     "and Grafana starts anyway; stackctl's dashboard needs no plugin; then `stackctl up`",
                     env="GF_PLUGINS_PREINSTALL"), **({"plugin": plugin} if plugin else {}))


_DEPRECATED_FLAG = re.compile(r"(?P<old>--[\w.-]+) is DEPRECATED and will be removed in (?P<release>[\w.]+), use "
                              r"(?P<new>--[\w.-]+)")


def _service_flag_deprecated(evidence: Evidence) -> Diagnosis:
    said = evidence.read(_DEPRECATED_FLAG)
    old, new, release = said["old"], said["new"], said.get("release", "its next major release")
    service = evidence.context.service
    return found(evidence, Cause.service_flag_deprecated,
                 f"{service} warns that {old} is deprecated and goes in {release}: it still works for now",
                 Fix(f"replace {old} with {new} (same value) where the {service} command is written: stackctl's own "
                     f"compose fragment passes neither, so it is in a compose override or a command edited by hand; a "
                     f"release {release} or later refuses {old}", flag=new),
                 severity=Severity.advisory, flag=new, deprecated=old)


# node_exporter 1.x renamed its filter flags (whitelist/blacklist/ignored-* -> include/exclude) and refuses the old
# name beside the new one (m-lab/k8s-support#551, node_exporter#2486); 1.1.0 to 1.1.2 refused the old one alone
# too, its successor having a default (node_exporter#1999, fixed in 1.2.0).
_EXCLUSIVE_FLAGS = re.compile(r"(?P<first>--[\w.-]+) and (?P<second>--[\w.-]+) are mutually exclusive")
_OLD_FLAG_NAME = re.compile(r"whitelist|blacklist|ignored|accept-|ignore-")


def _service_flags_exclusive(evidence: Evidence) -> Diagnosis:
    said = evidence.read(_EXCLUSIVE_FLAGS)
    first, second = said["first"], said["second"]
    old, new = (first, second) if _OLD_FLAG_NAME.search(first) or not _OLD_FLAG_NAME.search(second) else (second, first)
    service = evidence.context.service
    key = images_key(evidence, default="images.node-exporter")
    return found(evidence, Cause.service_flags_exclusive,
                 f"{service} refuses {old} beside {new}: the old flag and the renamed flag that replaced it",
                 Fix(f"{old} is the renamed flag's old name ({new} replaced it): update the flag: pass only {new} (same "
                     f"value) and remove {old} where the {service} command is written (stackctl's own compose fragment "
                     f"passes neither: a compose override or a command edited by hand); an image that follows the "
                     f"latest tag brings such renames unannounced: pin the version in {key}; node_exporter 1.1.0 to "
                     f"1.1.2 refuse the old name even alone (fixed in 1.2.0)", flag=new, key=key),
                 flag=new, deprecated=old)


def _gpu_exporter_dcgm_mismatch(evidence: Evidence) -> Diagnosis:
    """The exporter's DCGM bindings and the DCGM library (or nv-hostengine) they call are of other
    versions: a release built against another DCGM, or a host engine the image does not match."""
    key = images_key(evidence, default="images.gpu-exporter")
    return found(evidence, Cause.gpu_exporter_dcgm_mismatch,
                 "dcgm-exporter's calls into DCGM fail with \"API version mismatch\": the exporter and the DCGM it "
                 "talks to (its own library, or the host's nv-hostengine) are of different versions",
                 Fix(f"update the exporter image: set {key} in stack.yaml to a newer dcgm-exporter image "
                     "(its releases fix their go-dcgm bindings; the fixed tag after a broken one), or roll back to the "
                     "tag that worked; with a host nv-hostengine, use the exporter tag whose DCGM version matches "
                     "`dcgmi -v`. stackctl's default GPU exporter (nvidia_gpu_exporter) needs no DCGM",
                     key=key))


_INCLUDED = re.compile(r"open\(\) \"(?P<path>/\S*(?:options-ssl-nginx\.conf|ssl-dhparams\.pem))\" failed")


def _nginx_certbot_include_missing(evidence: Evidence) -> Diagnosis:
    path = evidence.read(_INCLUDED).get("path", "/etc/letsencrypt/options-ssl-nginx.conf")
    name = path.rsplit("/", 1)[-1]
    return found(evidence, Cause.nginx_certbot_include_missing,
                 f"nginx cannot open {path}, which its configuration includes, so it does not start",
                 Fix(f"{name} is written by certbot's nginx installer (`certbot --nginx`) only, and not created by "
                     "certbot certonly (webroot or standalone, as stackctl and certbot containers run it): remove "
                     "the include (set ssl_protocols and ssl_ciphers in the server block yourself), or download "
                     f"{name} from the certbot repository (certbot-nginx/certbot_nginx/_internal/tls_configs) into the "
                     "letsencrypt directory (letsencrypt_dir in stack.yaml; `openssl dhparam -out ssl-dhparams.pem 2048` makes the other); "
                     "stackctl's own nginx.conf includes neither; then `stackctl up`", key="letsencrypt_dir"),
                 path=path)


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.grafana_core_plugin_install,
              r"plugin\.forbiddenCorePluginInstall|plugin [\w.-]+ is a core plugin and cannot be installed",
              _grafana_core_plugin_install),
    signature(Cause.grafana_install_plugins_deprecated, r"GF_INSTALL_PLUGINS is deprecated",
              _grafana_install_plugins_deprecated, ADVISORY),
    # The background installer's fatal end (a synchronous preinstall), on a plugin grafana.com does not have.
    signature(Cause.grafana_plugin_install_failed,
              r"invalid service state: Failed.*failed to install plugin.*(?:404|not found|does not exist)",
              _grafana_plugin_install_failed),
    signature(Cause.service_flag_deprecated, _DEPRECATED_FLAG.pattern, _service_flag_deprecated, ADVISORY),
    signature(Cause.service_flags_exclusive, r"--[\w.-]+ and --[\w.-]+ are mutually exclusive", _service_flags_exclusive),
    signature(Cause.gpu_exporter_dcgm_mismatch, r"level=fatal msg=\"?[^\"]*: API version mismatch|FATA\S* .*: API "
              r"version mismatch", _gpu_exporter_dcgm_mismatch),
    signature(Cause.nginx_certbot_include_missing, _INCLUDED.pattern, _nginx_certbot_include_missing),
)
