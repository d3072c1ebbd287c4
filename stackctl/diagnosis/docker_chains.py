"""Docker's iptables chains gone from under it: read by the docker-iptables-chain-missing signature
and by the fallback alike.

Docker creates its chains (DOCKER, DOCKER-USER, DOCKER-ISOLATION-STAGE-1/-2) once, when the daemon
starts; a firewall reload (firewalld, ufw, an iptables-restore, a firewall script) or a switch of the
iptables backend flushes them, and every later network or port rule that jumps to one fails:
"No chain/target/match by that name", nf_tables' "Chain 'X' does not exist", "Couldn't load target
`X'", "Unable to enable SKIP DNAT rule". Restarting the daemon creates them again.
"""

from __future__ import annotations

import re

# A rule that adds to or jumps to one of Docker's chains, refused because the chain is not there. Not
# iptables' "RULE_APPEND failed (No such file or directory)": the legacy and nf_tables backends mixed.
CHAIN_MISSING = re.compile(
    r"(?:-[AIC] |-j )(?P<chain>DOCKER[\w-]*)\b.*?(?:No chain/target/match by that name|Chain '[\w-]+' does not exist)"
    r"|Couldn't load target [`'\"](?P<target>DOCKER[\w-]*)'?\s*:\s*No such file or directory"
    # nf_tables' words name the chain itself (read alone where a terminal wrapped the command above it).
    r"|Chain 'DOCKER[\w-]*' does not exist"
    r"|Unable to enable SKIP DNAT rule")
_NAMED = re.compile(r"Chain '(?P<chain>DOCKER[\w-]*)' does not exist|target [`'\"](?P<target>DOCKER[\w-]*)")


def missing_chain(text: str) -> str:
    """The chain the refusal names (the one that does not exist where iptables says so), else DOCKER."""
    named = _NAMED.search(text)
    if named:
        return named["chain"] or named["target"]
    match = CHAIN_MISSING.search(text)
    return (match["chain"] if match and match["chain"] else None) or "DOCKER"


def chains_fix(chain: str) -> str:
    return (f"the iptables chains Docker creates when its daemon starts ({chain} among them; DOCKER, DOCKER-USER, "
            "DOCKER-ISOLATION-STAGE-1 and -2) are gone: something flushed the firewall after Docker started (a firewalld "
            "or ufw reload, an iptables-restore or firewall script, a switch between iptables-legacy and nftables). "
            "Restart the Docker daemon so it creates them again: `sudo systemctl restart docker`, then `stackctl up`; "
            "where a firewall service reloads its rules, restart Docker after it each time (start docker.service after "
            "firewalld or ufw). If a restart does not help and it began with an upgrade to Docker Engine 29 (`docker "
            "version` shows the server's), reports fix it by going back: downgrade to Docker Engine 28 (the 28.x "
            "docker-ce and docker-ce-cli packages) until a 29.x release fixes it, and read Docker 29's release notes "
            "on its firewall changes")
