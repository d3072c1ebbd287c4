"""node-exporter's collectors denied a file of /proc or /sys, read by the node signatures and by the fallback alike.

Those files are the kernel's (procfs, sysfs): the kernel sets their owner and mode, so neither chown nor chmod
applies, and the owner of a directory mounted over them does not matter. Some are readable by root alone: RAPL's
energy_uj since Linux 5.10 (the Platypus side-channel mitigation; intel/thermal_daemon#296, node_exporter#1892 and
#2090), cpufreq's cpuinfo_cur_freq (node_exporter#1176), and on a hardened kernel (OVH's, grsecurity) /proc/net and
/sys/class themselves (lest/prometheus-rpm#2 and node_exporter#467: "running as root fixes the errors", "it's because
I'm running a stupid OVH custom kernel"). A node_exporter run as another user than root gets "permission denied" from
those collectors and keeps serving the others. The fix is root (or the read capability, which only reaches a non-root
process as an ambient capability: a container's cap_add does not, rwlove/home-ops#11460), or those collectors off.

PID 1's /proc/1/mounts (the filesystem collector) has its own class: a PID namespace and SELinux label, not a user.
"""

from __future__ import annotations

import re

# node_exporter 0.x ("ERROR: sockstat collector failed after 0.000030s: couldn't get sockstats: open /proc/net/
# sockstat: permission denied") and 1.x (msg="collector failed" name=rapl ... err="open /sys/class/...: permission
# denied"): a file under /proc (not a process's /proc/PID) or /sys, whatever --path.procfs/--path.sysfs put before it.
DENIED = re.compile(r"(?:(?P<old>\w+) collector failed after [\d.]+s|msg=\"?collector failed\"? name=(?P<new>\w+))"
                    r"[^\n]*?\bopen (?P<path>\S*?/(?:proc/(?!\d+/|self/)|sys/)\S*?): permission denied")

_OWN_USERS = ("stackctl's node-exporter runs as its image's user, nobody, under Compose (`user: root` on the "
              "node-exporter service in an override file passed to `docker compose -f`), and natively as the user "
              "who runs `stackctl up`")


def denied(text: str) -> tuple[str, str] | None:
    """The collector and the kernel file `text` says node-exporter may not open; None where it says no such thing."""
    match = DENIED.search(text)
    return None if match is None else (match["old"] or match["new"], match["path"])


def denied_fix(denials: list[tuple[str, str]]) -> str:
    """What to do where node-exporter's collectors may not open these kernel files ((collector, path) pairs)."""
    collectors = list(dict.fromkeys(collector for collector, _path in denials))
    paths = ", ".join(dict.fromkeys(path for _collector, path in denials))
    flags = " ".join(f"--no-collector.{collector}" for collector in collectors)
    one = len({path for _collector, path in denials}) == 1
    return (f"{paths or 'those files'} {'is' if one else 'are'} the kernel's (procfs and sysfs): the kernel sets "
            f"{'its' if one else 'their'} owner and mode, so chown or chmod does not apply, and this kernel lets only "
            f"root read {'it' if one else 'them'} (RAPL's energy_uj since Linux 5.10, cpuinfo_cur_freq, and on a hardened kernel such as OVH's or "
            "grsecurity's /proc/net and /sys/class). Run node_exporter as root (its systemd unit: User=root; a "
            "container: `user: root`), or give the non-root process the read capability as an ambient one (its unit: "
            "AmbientCapabilities=CAP_DAC_READ_SEARCH; a container's cap_add does not reach a non-root user), or turn "
            f"{'that collector' if len(collectors) == 1 else 'those collectors'} off ({flags}): the exporter keeps "
            f"serving the others. {_OWN_USERS}")
