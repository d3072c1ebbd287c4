"""A plugin in Grafana's install list that grafana.com's catalogue does not have for this Grafana, as grafana-cli
says it when the Docker image installs GF_INSTALL_PLUGINS before Grafana starts; read by its signature and by the
fallback alike.

grafana-cli asks grafana.com for each plugin id (and version) of the list; one the catalogue does not have, or has
for other Grafana releases only, ends the install and the container with "Error: ✗ Plugin not found (Grafana v8.3.5
linux-amd64)" (grafana#50280, solved by removing the plugins one by one until the culprit was found; nforgeio/
neonKUBE#1658), "Error: ✗ 404: Plugin not found (Grafana vX ...)" in later releases, or, before Grafana 7, "Error: ✗
Failed to find requested plugin, check if the plugin_id is correct: 404 not found error" (grafana#28732, a plugin
version built for Grafana 7 installed on 6.6.2). None of them names the plugin. Grafana 12 installs the list itself
and says which ("failed to install plugin X: 404": the grafana_plugin_install_failed signature of newer_services).
"""

from __future__ import annotations

import re

# The mark before the message is "✗", or whatever an encoding made of it ("?").
NOT_IN_CATALOGUE = re.compile(r"Error: (?:\S{1,3} )?(?:404: )?Plugin not found \(Grafana v(?P<version>\d[\w.+-]*)"
                              r"|Failed to find requested plugin, check if the plugin_id is correct")


def not_in_catalogue(text: str) -> re.Match[str] | None:
    """grafana-cli's refusal of a plugin the catalogue does not have (with the Grafana version where it says it)."""
    return NOT_IN_CATALOGUE.search(text)


def not_in_catalogue_fix(version: str | None) -> str:
    grafana = f"Grafana v{version}" if version else "this Grafana"
    return ("Grafana's plugin install at start (GF_INSTALL_PLUGINS, which the image installs with grafana-cli before "
            f"Grafana starts) asked grafana.com for a plugin id, or an id and version, that its catalogue does not have "
            f"for {grafana}, and the container exits: a plugin renamed or withdrawn, a typo in its id, or a version "
            "built for other Grafana releases. grafana-cli does not say which plugin: look each id up at "
            "grafana.com/grafana/plugins/ID (its versions and the Grafana releases they need), or install them one at "
            "a time (`grafana-cli plugins install ID [VERSION]` in the image) to find it; then remove the plugin from "
            "GF_INSTALL_PLUGINS or correct its id or version. stackctl renders no plugin list and its dashboard needs no "
            "plugin: the list is in a compose override or Grafana's environment set by hand; then `stackctl up`")
