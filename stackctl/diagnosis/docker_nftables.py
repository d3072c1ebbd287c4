"""iptables' nf_tables backend refusing Docker's chains when the daemon starts: read by the docker-nftables-*
signatures and by the fallback alike.

- "iptables v1.8.x (nf_tables): CHAIN_ADD failed (No such file or directory)": the nf_tables backend cannot
  create Docker's chain here, most often Docker in Docker, where a container's iptables-nft cannot program a host
  that uses nftables or lacks its modules (kamal#1762; docker-library/docker's image switches to iptables-legacy
  itself since docker-library/docker#465; a WSL kernel, docker/for-linux#1128): use iptables-legacy
  (`update-alternatives --set iptables /usr/sbin/iptables-legacy`, ip6tables too) where dockerd runs, or load
  nf_tables on the host (`modprobe nf_tables`). Not a rule's RULE_INSERT or RULE_APPEND failing the same way: a
  match's kernel module missing (xt_set: kernel_modules);
- "failed to create FILTER chain DOCKER: ... -N DOCKER: iptables v1.8.x (nf_tables): Chain already exists":
  Docker's chains are already there when the daemon starts, left by a daemon that did not clean up or restored
  by nftables.service or a firewall from a ruleset saved while Docker ran (jumpserver#5396: delete the docker0
  bridge; netavark#274: restart nftables); Docker's warning about a DOCKER-USER chain the user made is not this.
"""

from __future__ import annotations

import re

NFT_ADD_FAILED = re.compile(r"\(nf_tables\):\s+(?P<operation>CHAIN_ADD) failed "
                            r"\(No such file or directory\)")
CHAIN_EXISTS = re.compile(r"^(?!.*level=warn).*?(?:-N (?P<chain>DOCKER[\w-]*)|chain (?P<named>DOCKER[\w-]*)\b).*?"
                          r"iptables(?: v[\d.]+)?(?: \(nf_tables\))?: Chain already exists", re.IGNORECASE)


def nft_operation(text: str) -> str | None:
    match = NFT_ADD_FAILED.search(text)
    return match["operation"] if match else None


def existing_chain(text: str) -> str | None:
    match = CHAIN_EXISTS.search(text)
    return (match["chain"] or match["named"]) if match else None


def nft_add_fix(operation: str) -> str:
    return (f"iptables' nf_tables backend could not add Docker's rules ({operation} failed: No such file or directory): "
            "nf_tables is not usable where dockerd runs, most often Docker in Docker (a container's iptables-nft on a "
            "host that uses nftables or lacks its modules) or a kernel without nf_tables. Switch that system to legacy "
            "iptables: `update-alternatives --set iptables /usr/sbin/iptables-legacy` and `update-alternatives --set "
            "ip6tables /usr/sbin/ip6tables-legacy` (in the image that runs dockerd; a current docker:dind image does it "
            "itself where nf_tables is missing), or load the module on the host (`sudo modprobe nf_tables`); then "
            "start dockerd again (`sudo systemctl restart docker`) and `stackctl up`")


def chain_exists_fix(chain: str) -> str:
    return (f"Docker could not create its {chain} chain because one is already there: rules left by a daemon that did "
            "not clean up, or restored by nftables.service or a firewall from a ruleset saved while Docker ran. Clear "
            "them and start Docker again: `sudo systemctl restart nftables` (or `sudo nft flush ruleset`, and take "
            "Docker's chains out of /etc/nftables.conf so a reload does not bring them back), delete the stale bridge "
            "(`sudo ip link set docker0 down`, `sudo ip link delete docker0`, or `brctl delbr docker0`), then `sudo "
            "systemctl restart docker` and `stackctl up`")
