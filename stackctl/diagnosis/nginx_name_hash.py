"""nginx's server-name hash that does not fit, read by its signature and by the fallback alike.

nginx keeps its server names in a hash whose bucket size defaults to the CPU's cache line (32, 64 or 128 bytes); a
server_name longer than a bucket holds (a long host name alone can be) makes nginx refuse to start: "could not build
server_names_hash, you should increase server_names_hash_bucket_size: 32" (A-Zuro/Secret-Sing-Box#39,
mailcow/mailcow-dockerized#472: `server_names_hash_bucket_size 64;`; cloudfoundry/prometheus-boshrelease#327 at 64;
certbot#922, older nginx: "could not build the server_names_hash"). Many names outgrow the hash instead: "you should
increase either server_names_hash_max_size: 512 or server_names_hash_bucket_size: 64", where nginx's docs raise the
max size first. Both directives belong in the http block; nginx takes a power of two for the bucket size.
"""

from __future__ import annotations

import re

HASH_TOO_SMALL = re.compile(r"could not build (?:the )?server_names_hash, you should increase (?:either "
                            r"server_names_hash_max_size: (?P<max_size>\d+) or )?server_names_hash_bucket_size: "
                            r"(?P<bucket>\d+)")


def hash_too_small(text: str) -> re.Match[str] | None:
    return HASH_TOO_SMALL.search(text)


def next_power_of_two(size: int) -> int:
    """The smallest power of two above `size`: 32 -> 64, 64 -> 128, 48 -> 64."""
    power = 1
    while power <= size:
        power *= 2
    return power


def bucket_size(match: re.Match[str]) -> int:
    """The bucket size to set: the next power of two above the one nginx names."""
    return next_power_of_two(int(match["bucket"]))


def hash_fix(match: re.Match[str]) -> str:
    bucket = int(match["bucket"])
    larger = bucket_size(match)
    directive = f"`server_names_hash_bucket_size {larger};`"
    if match["max_size"]:
        max_size = int(match["max_size"])
        change = (f"there are more server names than the hash holds: raise its size first, `server_names_hash_max_size "
                  f"{max_size * 2};`, and if nginx still refuses, {directive} as well")
    else:
        change = (f"a server_name is longer than a hash bucket holds: set {directive} (the next power of two above the "
                  f"{bucket} nginx names)")
    return (f"nginx could not build its hash of server names, so it does not start: {change}, in the http block "
            "(nginx.conf's `http { }`, or a file included inside it such as /etc/nginx/conf.d/*.conf; nginx refuses it "
            "in a server block), then `nginx -t`. stackctl's own site names one server_name, stack.yaml's hostname, and "
            "sets no hash size: where its rendered configuration is the one that fails (a long hostname), add the "
            "directive in an http-level include and report it; then `stackctl up`")
