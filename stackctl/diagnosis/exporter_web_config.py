"""An exporter's web configuration file (--web.config.file: node_exporter, Prometheus and every exporter built on
Prometheus's exporter-toolkit) with a key its type does not know: "yaml: unmarshal errors: line 5: field
client_ca_file not found in type web.Config". Read by the signatures and by the fallback alike.

The file has three top-level keys, tls_server_config, http_server_config and basic_auth_users; everything else sits
under one of them. By the key the error names:

- a key of tls_server_config (cert_file, key_file, client_ca_file, client_auth_type, min_version, ...) or of
  http_server_config (http2, headers) at the top level: its indentation put it outside its section;
- a top-level key inside tls_server_config (type web.TLSConfig): indented into the section above it;
- a name with whitespace of its own ("field   client_ca_file": node_exporter#2938, "must be some weird character in
  my copy pasting of indentation"): invisible characters from a copy-paste, such as non-breaking spaces, which YAML
  does not take for indentation and reads as part of the key;
- any other key (web, log, crm-mon-path: ClusterLabs/ha_cluster_exporter#239 and #253): the file given is not a web
  configuration at all, but the exporter's own configuration.
"""

from __future__ import annotations

import re

FIELD_UNKNOWN = re.compile(r"field (?P<field>[^\n\\\"]+?) not found in type web\.(?P<type>\w+)")
_TLS_KEYS = frozenset({"cert_file", "key_file", "client_ca_file", "client_auth_type", "client_allowed_sans", "min_version",
                       "max_version", "cipher_suites", "curve_preferences", "prefer_server_cipher_suites"})
_HTTP_KEYS = frozenset({"http2", "headers"})
_TOP_KEYS = frozenset({"tls_server_config", "http_server_config", "basic_auth_users"})
_CHECK = ("`promtool check web-config FILE` checks the file; the format is exporter-toolkit's web-configuration.md, "
          "and the exporter reads it at start (restart it after the change). stackctl starts node-exporter and "
          "Prometheus without --web.config.file: the file is one added by hand")


def unknown_fields(text: str) -> list[tuple[str, str]]:
    """Each (field, type) `text` says a web configuration file has and its type does not know."""
    return [(match["field"], match["type"]) for match in FIELD_UNKNOWN.finditer(text)]


def _invisible(field: str) -> bool:
    """The name as YAML read it carries whitespace or other characters no key is written with."""
    return field != field.strip() or bool(re.search(r"[^\w.-]", field.strip()))


def field_fix(field: str, type_: str) -> str:
    """What to do with one key a web configuration file has where its type does not know it."""
    name = field.strip(" \u00a0\u200b\ufeff\t")
    said = []
    if _invisible(field):
        said.append(f"the key `{name}` carries characters of its own in the file (YAML read it as {field!r}): "
                    "invisible whitespace from a copy-paste, such as non-breaking spaces, which YAML does not take "
                    "for indentation: retype that line's indentation with plain spaces (`grep -nP '[^\\x00-\\x7F]' "
                    "FILE` finds them; `cat -A FILE` shows them as M-BM-)")
    if type_ == "Config" and name in _TLS_KEYS:
        said.append(f"`{name}` belongs under tls_server_config: indent it two spaces below `tls_server_config:`, "
                    "beside cert_file and key_file (its indentation put it at the top level)")
    elif type_ == "Config" and name in _HTTP_KEYS:
        said.append(f"`{name}` belongs under http_server_config: indent it below `http_server_config:`")
    elif type_ != "Config" and name in _TOP_KEYS:
        said.append(f"`{name}` is a top-level key, indented into the section above it: move it back to the start "
                    "of the line")
    elif not said:
        said.append(f"`{name}` is no key of a web configuration file, which holds only tls_server_config, "
                    "http_server_config and basic_auth_users: the file passed to --web.config.file is another one "
                    "(the exporter's own configuration: give that one to the exporter's own flag, and to "
                    "--web.config.file a file of those keys alone, or none), or the key is misspelt")
    return "; ".join(said)


def fields_fix(fields: list[tuple[str, str]]) -> str:
    """What to do with the keys a web configuration file's type does not know."""
    return "; ".join(dict.fromkeys(field_fix(field, type_) for field, type_ in fields)) + f". {_CHECK}"
