"""An image with no build for this host's platform: "no matching manifest for linux/arm64/v8 in the manifest list
entries", Docker's refusal to pull a multi-platform image whose list names other platforms only. Read by the
wrong-architecture signature and by the fallback alike.

mysql:5.7 is the usual one on an arm64 host (Apple silicon, a Raspberry Pi 4 on a 64-bit OS, Graviton, DGX Spark's
GB10): its builds are amd64 only (docker/getting-started#233: `--platform linux/amd64`; docker-library/mysql#838:
mariadb, or mysql 8's -oracle variants, have arm64 builds; MobMin/digital_atlas#37: `platform: linux/amd64` in the
Compose file). An image or tag with a build for the host runs natively; the other platform's build runs under QEMU
emulation, much slower, where binfmt handlers are installed.
"""

from __future__ import annotations

import re

NO_MATCHING_MANIFEST = re.compile(r"no matching manifest for (?P<platform>[\w.-]+(?:/[\w.-]+)*?)(?: in the manifest "
                                  r"list entries|\s*$|[.,;])")
# The architecture `uname -m` prints for a platform's CPU.
_UNAME = {"arm64": "aarch64", "amd64": "x86_64", "arm": "armv7l", "386": "i686", "ppc64le": "ppc64le",
          "s390x": "s390x", "riscv64": "riscv64"}


def missing_platform(text: str) -> str | None:
    """The platform (os/arch[/variant]) Docker found no build of, or None."""
    match = NO_MATCHING_MANIFEST.search(text)
    return match["platform"] if match else None


def missing_platform_fix(platform: str, images_entry: str) -> str:
    parts = platform.split("/")
    architecture = parts[1] if len(parts) > 1 else platform
    emulated = "linux/arm64" if architecture == "amd64" else "linux/amd64"
    uname = _UNAME.get(architecture, architecture)
    examples = (" (mysql:5.7 is amd64 only: mysql:8.0 and later, or mariadb, have arm64 builds)"
                if architecture == "arm64" else "")
    return (f"the image has no build for {platform}, this host's platform (`uname -m` says {uname}): its manifest list "
            f"names other platforms only (`docker manifest inspect IMAGE` lists them). Use an image or tag that has a "
            f"{platform} build{examples}, or run the {emulated} build under emulation: `platform: {emulated}` on that "
            f"service in docker-compose.yml (`docker run --platform {emulated}`), which needs QEMU's binfmt handlers "
            f"(`docker run --privileged --rm tonistiigi/binfmt --install {emulated.split('/')[1]}`) and runs much "
            f"slower. For a stackctl service set {images_entry} in stack.yaml to a multi-arch image or one built for "
            f"{architecture} (on DGX Spark, aarch64, NVIDIA's NGC images are multi-arch); then `stackctl up`")
