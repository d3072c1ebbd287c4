"""A Grafana plugin without a signature, which Grafana does not load: read by the grafana-plugin-unsigned
signature and by the fallback alike.

Grafana 7 onwards loads only signed plugins unless told otherwise: 'Failed to load plugin ... plugin "X" is
unsigned' (7.0), "Skipping loading plugin due to problem with signature" pluginId=X status=unsigned, "plugin 'X'
has no signature", "Plugin is unsigned" id=X ("could not find a MANIFEST.txt"), "Some plugin scanning errors
were found errors="plugin 'X' is unsigned"". Allow it by its plugin id: `allow_loading_unsigned_plugins = X`
under [plugins] in grafana.ini, or GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS=X in Grafana's environment (the
section's prefix GF_PLUGINS_ included: grafana#31125 set GF_ALLOW_LOADING_UNSIGNED_PLUGINS), a comma-separated
list without spaces (grafana#26485); or install a signed release (clickhouse-grafana#212, grafana-csv-plugin#24,
grafana-dashboard-reporter-app#44, GrafanaJsonDatasource#277). A plugin whose signature was modified is never
loaded, allowed or not.
"""

from __future__ import annotations

import re

UNSIGNED = re.compile(r"plugin \\?[\"'](?P<quoted>[^\"'\\]+)\\?[\"'] (?:is unsigned|has no signature)"
                      r"|problem with signature\"? .*?pluginId=(?P<skipped>[\w.-]+).*?status=unsigned"
                      r"|Plugin is unsigned\"? .*?\bid=(?P<id>[\w.-]+)")


def unsigned_plugin(text: str) -> str | None:
    """The id of the plugin `text` says Grafana did not load for want of a signature ("" where it names
    none), or None."""
    match = UNSIGNED.search(text)
    if match is None:
        return None
    return match["quoted"] or match["skipped"] or match["id"] or ""


def unsigned_fix(plugin: str) -> str:
    named = plugin or "PLUGIN_ID"
    return (f"Grafana loads only signed plugins, and {plugin or 'this plugin'} has no signature: allow it by its id, "
            f"`allow_loading_unsigned_plugins = {named}` under [plugins] in grafana.ini, or "
            f"GF_PLUGINS_ALLOW_LOADING_UNSIGNED_PLUGINS={named} in Grafana's environment (several ids comma-separated, "
            "no spaces; the GF_PLUGINS_ prefix included), then restart Grafana; or install a signed release of the "
            "plugin. stackctl's Grafana needs no plugin and has no stack.yaml key for this: put the variable on the "
            "grafana service in an override file passed to `docker compose -f`, or in grafana.ini natively")
