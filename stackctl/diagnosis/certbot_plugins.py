"""A certbot plugin the certbot that ran does not load: read by the certbot-plugin-not-loaded signature and by
the fallback alike.

- its options refused: "certbot: error: unrecognized arguments: --dns-X-credentials ..." (or a third-party
  plugin's prefixed `--certbot-dns-X:...` options): certbot adds a plugin's options only where it loads the plugin,
  so these are the words of a certbot that does not see it. The plugin was installed for another certbot or
  Python: pip as a user and certbot run with sudo or from cron (certbot-dns-cpanel#5, certbot#5898), pip beside a
  snap or distribution certbot (a snap certbot loads only plugin snaps: `snap set certbot trust-plugin-with-root=ok`,
  `snap connect certbot:plugin PLUGIN`), a container image without it (nginx-proxy-manager#4040: reinstalled with
  pip in the container); `certbot plugins` lists what the certbot run sees (certbot-dns-domeneshop#12,
  certbot-dns-hetzner#30, certbot-plugin-gandi#20);
- its entry point skipped: "PluginEntryPoint#dns-X does not provide IPluginFactory, skipping": the plugin is
  found but written for a newer certbot than the one run (Debian 11's certbot 1.12.0 with a plugin from pip:
  certbot-dns-transip#57 "the version of certbot was too old", certbot_dns_porkbun#51,
  certbot-dns-infomaniak#26): upgrade certbot.

Only certbot's own argparse words count ("certbot: error:"): another program's refused flag is its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# certbot's refusal of a plugin's options: `--dns-X...`, `--X:Y-...` (a third-party plugin's prefixed
# options, older certbot), `--certbot-dns-X...`, `--authenticator`-style plugin names are not refused here.
PLUGIN_ARGUMENTS = re.compile(r"certbot: error: unrecognized arguments?: .*?(?P<option>--(?:[\w-]+:[\w-]+|dns-[\w-]+|"
                              r"certbot-dns-[\w-]+|certbot-plugin-[\w-]+))")
ENTRY_POINT_SKIPPED = re.compile(r"PluginEntryPoint#(?P<plugin>[\w:.-]+) does not provide IPluginFactory, skipping")
# The plugin an option belongs to: `--certbot-dns-transip:dns-transip-credentials` -> certbot-dns-transip,
# `--dns-cloudflare-credentials` -> dns-cloudflare.
_PLUGIN_OF = re.compile(r"--(?P<prefixed>[\w-]+):|--(?P<dns>dns-[a-z0-9]+(?:-[a-z0-9]+)*?)"
                        r"(?=-(?:credentials|propagation|api|token|key|secret|config|ttl)|$)")


@dataclass(frozen=True)
class PluginNotLoaded:
    kind: str  # "options" (its options refused) or "entry point" (skipped by an older certbot)
    plugin: str  # as the line names it: certbot-dns-transip, dns-cloudflare, dns-transip


def plugin_not_loaded(text: str) -> PluginNotLoaded | None:
    """How `text` says certbot did not load a plugin, or None."""
    if (skipped := ENTRY_POINT_SKIPPED.search(text)) is not None:
        return PluginNotLoaded("entry point", skipped["plugin"].split(":")[-1])
    if (refused := PLUGIN_ARGUMENTS.search(text)) is not None:
        option = refused["option"]
        named = _PLUGIN_OF.match(option)
        plugin = (named["prefixed"] or named["dns"]) if named else option.lstrip("-")
        return PluginNotLoaded("options", plugin)
    return None


_STACKCTL = ("stackctl's own certbot (images.certbot, or Debian's natively) obtains certificates through nginx "
             "(webroot on ports.http) and needs no DNS plugin; a DNS-01 run is one of your own")


def plugin_fix(plugin: PluginNotLoaded) -> str:
    if plugin.kind == "entry point":
        return (f"certbot found the {plugin.plugin} plugin but skipped it: the plugin is written for a newer certbot "
                "than this one (`certbot --version`; Debian 11's certbot 1.12.0 is too old for current DNS plugins). "
                "Upgrade certbot: the snap (`snap install --classic certbot`, then the plugin's snap with `snap set "
                "certbot trust-plugin-with-root=ok` and `snap connect certbot:plugin PLUGIN`), or certbot and the plugin "
                "together with pip in one virtual environment; or pin a plugin release made for this certbot. "
                + _STACKCTL)
    return (f"certbot refuses the {plugin.plugin} plugin's options because the certbot that ran does not load that "
            "plugin: it is installed for another certbot or Python than the one run (pip as your user but certbot run "
            "with sudo or from cron; pip beside a snap or distribution certbot; a container image without it). "
            "`certbot plugins`, run exactly as the failing command runs (same user, same path: `which certbot`), "
            "lists what it sees. Install the plugin into the same environment as that certbot: `sudo pip3 install` "
            "for a system or root certbot, the same virtual environment for a pip certbot, for the snap the "
            "plugin's snap (`snap set certbot trust-plugin-with-root=ok`, `snap connect certbot:plugin PLUGIN`), "
            "in Docker an image that ships it (certbot/dns-PROVIDER); an old certbot (`certbot --version`) may also "
            "predate the plugin: upgrade it. " + _STACKCTL)
