"""An iptables table the kernel does not have: read by the docker-kernel-module-missing signature and
by the fallback alike. Apart from Docker's chains flushed under it (docker_chains): there the table is
there and a chain in it is gone.

Legacy iptables (`iptables -V` says "(legacy)") needs a kernel module per table (ip_tables, then
iptable_filter, iptable_nat, iptable_raw; ip6_tables and ip6table_* for IPv6) and says "can't initialize
iptables table `X': Table does not exist (do you need to insmod?)" where one is missing; modprobe's
"Module ip_tables not found in directory /lib/modules/..." means the running kernel was built without it.
- `raw`: Docker 28 and later add a DROP rule in the raw table's PREROUTING for every container address
  ("Unable to enable DIRECT ACCESS FILTERING - DROP rule"), which kernels without iptable_raw
  (CONFIG_IP_NF_RAW: Synology's, Jetson's L4T) cannot take: load or install the module, switch to
  iptables-nft where the kernel has nf_tables (moby#49557), or stay on Docker 27.5.1.
- `nat`, `filter`: recent kernel configurations build legacy iptables only behind
  CONFIG_IP_NF_IPTABLES_LEGACY and CONFIG_NETFILTER_XTABLES_LEGACY (Linux 7.0 in Actions-bbr-v3#30), and
  minimal kernels leave it out: load the modules, or switch to iptables-nft.
"""

from __future__ import annotations

import re

TABLE_MISSING = re.compile(
    r"can't initialize (?P<tool>ip6?tables) table [`'\"](?P<table>\w+)'?\s*:\s*Table does not exist"
    r"|Unable to enable DIRECT ACCESS FILTERING"
    r"|Module (?P<module>ip6?_tables|ip6?table_\w+) not found in directory")
_DIRECT_ACCESS = re.compile(r"DIRECT ACCESS FILTERING|-t raw\b")
_MODULE_OF = {"raw": "iptable_raw", "nat": "iptable_nat", "filter": "iptable_filter", "mangle": "iptable_mangle"}


def missing_table(text: str) -> str:
    """The table the refusal names ("raw" for Docker's direct access filtering), else "nat" where only
    modprobe's missing ip_tables is stated (Docker's first table)."""
    tables = [match["table"] for match in TABLE_MISSING.finditer(text) if match["table"]]
    if tables:
        return tables[0]
    return "raw" if _DIRECT_ACCESS.search(text) else "nat"


def table_modules(table: str, text: str = "") -> list[str]:
    """The modules that give legacy iptables `table`, IPv6's too where the log names ip6tables."""
    modules = ["ip_tables", _MODULE_OF.get(table, f"iptable_{table}")]
    if "ip6tables" in text or "ip6table" in text:
        modules += ["ip6_tables", f"ip6{modules[1]}"]
    return modules


def table_fix(table: str, modules: list[str]) -> str:
    listed = " ".join(modules)
    load = (f"load the kernel module{'s' if len(modules) > 1 else ''} legacy iptables needs for its `{table}` table: "
            f"`sudo modprobe {listed}`, kept loaded at boot by listing them in /etc/modules-load.d/docker.conf, then "
            "`sudo systemctl restart docker` and `stackctl up`; where modprobe says \"not found\" the running kernel "
            "was built without them")
    if table == "raw":
        return (f"{load} (CONFIG_IP_NF_RAW; NAS and board kernels such as Synology's or Jetson's L4T): Docker 28 and "
                "later put a DROP rule for each container in the raw table (direct access filtering), so install "
                "modules built for this kernel (on Synology, synology-docker's install_iptables_modules.sh), or switch "
                "iptables to the nf_tables backend where the kernel has it (`sudo update-alternatives --set iptables "
                "/usr/sbin/iptables-nft` and `--set ip6tables /usr/sbin/ip6tables-nft`), or stay on (downgrade "
                "Docker to) 27.5.1, which adds no raw rules. dockerd's DOCKER_INSECURE_NO_IPTABLES_RAW=1 "
                "(moby#49621) skips those rules, but lets other hosts on the LAN reach published ports directly")
    return (f"{load} (legacy iptables behind CONFIG_IP_NF_IPTABLES_LEGACY and CONFIG_NETFILTER_XTABLES_LEGACY in recent "
            "kernels; a custom or minimal kernel may lack them): switch iptables to the nf_tables backend, which "
            "such kernels have (`iptables -V` says \"(legacy)\" now: `sudo update-alternatives --set iptables "
            "/usr/sbin/iptables-nft` and `--set ip6tables /usr/sbin/ip6tables-nft`, then restart Docker), or boot a "
            "kernel built with the legacy iptables modules (the distribution's)")
