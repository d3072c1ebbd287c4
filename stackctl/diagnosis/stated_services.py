"""Causes an error line states about the program or the service beside it, whatever program says
them, for the fallback to name the fix of:

- a program built for another CPU architecture than this host's ("exec /usr/bin/python3: exec format
  error", Docker's "The requested image's platform (linux/arm64) does not match the detected host
  platform (linux/amd64/v3)");
- nothing listening where a connection was refused (nginx's "connect() failed (111: Connection refused)
  while connecting to upstream", Go's "dial tcp ADDR:PORT: connect: connection refused", urllib3's
  HTTPConnectionPool(host=..., port=...) ... [Errno 111], Node's "connect ECONNREFUSED ADDR:PORT");
- an upstream's response headers larger than nginx's buffer ("upstream sent too big header");
- a listen address this host does not have ("listen tcp 172.17.0.1:9100: bind: cannot assign requested
  address", uvicorn's and nginx's "(99: Cannot assign requested address)"): listen_addresses.
"""

from __future__ import annotations

import re

from stackctl.diagnosis.listen_addresses import NOT_ON_HOST, listen_address, not_on_host
from stackctl.diagnosis.stack_keys import SERVICE_PORT_KEYS
from stackctl.diagnosis.stated_cause import StatedCause
from stackctl.diagnosis.verdict import DiagnosisContext

_ENGINE_SERVICES = frozenset({"vllm", "ray-head", "ray-worker"})
_DOCKER_SERVICES = frozenset({"docker", "compose"})
# Which service a stack.yaml port key is (ports.proxy: the filter-proxy).
_PORT_OWNERS = {key: service for service, key in SERVICE_PORT_KEYS.items() if service != "certbot"}


def services_around(line: str, context: DiagnosisContext) -> list[StatedCause]:
    return [*_other_architecture(line, context), *_nothing_listens(line, context), *_header_too_big(line),
            *_address_not_here(line, context)]


def _address_not_here(line: str, context: DiagnosisContext) -> list[StatedCause]:
    """A listen address no interface of this host carries."""
    if not NOT_ON_HOST.search(line):
        return []
    address, port = listen_address(line)
    said = not_on_host(address, port, context.service)
    return [StatedCause(f"listen address: {address or 'unnamed'}", said.text, said.key, flag=said.flag)]


# --- a program built for another CPU architecture ------------------------------------------------

# The kernel refuses to run a binary of another architecture with ENOEXEC, which Go and runc say as
# "exec format error"; Docker names both platforms where it can read them.
_EXEC_FORMAT = re.compile(r"\bexec format error\b", re.IGNORECASE)
_PLATFORMS = re.compile(r"image's platform \((?P<image>[^)]+)\) does not match the detected host platform "
                        r"\((?P<host>[^)]+)\)")


def _other_architecture(line: str, context: DiagnosisContext) -> list[StatedCause]:
    platforms = _PLATFORMS.search(line)
    if not platforms and not _EXEC_FORMAT.search(line):
        return []
    service = context.service
    key = None if service in _DOCKER_SERVICES else ("images.vllm" if service in _ENGINE_SERVICES else f"images.{service}")
    said = (f"the image is built for {platforms['image']} and this host is {platforms['host']}" if platforms else
            "a program in the image is built for another CPU architecture than this host's (exec format error)")
    which = (f"set {key} in stack.yaml to" if key else "use, in the images entry of the service that would not start,")
    return [StatedCause("another architecture", (
        f"{said}: {which} an image built for this host's architecture (`uname -m`: x86_64 needs an amd64 image, "
        "aarch64, as on DGX Spark GB10, an arm64 image): a multi-arch tag or one for that architecture; "
        "`docker image inspect --format '{{.Architecture}}' IMAGE` shows which one an image is. An image built on "
        "another machine must be built again here (or with `docker buildx build --platform`); running it "
        "emulated (qemu binfmt) is slow"), key)]


# --- nothing listening where a connection was refused --------------------------------------------

_REFUSED = (
    # nginx names the upstream it was refused at on the same line: upstream: "http://172.19.0.3:80/".
    re.compile(r"(?:connect\(\) )?failed \(111: Connection refused\) while connecting to upstream"
               r"(?:.*?upstream:? \"?(?:\w+://)?(?P<nginx>[^/\"\s,]+))?", re.IGNORECASE),
    re.compile(r"\bdial tcp (?P<go>\S+?): connect: connection refused"),
    re.compile(r"HTTPS?ConnectionPool\(host='(?P<host>[^']+)', port=(?P<port>\d+)\).*(?:Connection refused"
               r"|\[Errno 111\])"),
    re.compile(r"\bECONNREFUSED (?P<node>\S+:\d+)"),
    re.compile(r"curl: \(7\) Failed (?:to )?connect to (?P<host>[\w.-]+)(?::| port )(?P<port>\d+)\b.*Connection refused"),
)
# Where an exporter's or Prometheus's listen address is set: a typo there listens elsewhere.
_LISTEN_FLAG = {"node-exporter": "--web.listen-address", "gpu-exporter": "--web.listen-address",
                "prometheus": "--web.listen-address"}
_PORT = re.compile(r":(?P<port>\d+)$")


def _nothing_listens(line: str, context: DiagnosisContext) -> list[StatedCause]:
    match = next((found for pattern in _REFUSED if (found := pattern.search(line))), None)
    if match is None or "unix:" in line:
        # A unix socket refused is its server's (stated_causes' sockets).
        return []
    groups = match.groupdict()
    address = (f"{groups['host']}:{groups['port']}" if groups.get("host") else
               next((value for name, value in groups.items() if name in ("nginx", "go", "node") and value), ""))
    port = _PORT.search(address)
    upstream = "while connecting to upstream" in line
    # stackctl's nginx has one upstream, the filter-proxy, whatever port the log names.
    key = "ports.proxy" if upstream else (context.port_keys.get(int(port["port"])) if port else None)
    owner = _PORT_OWNERS.get(key or "")
    where = address or ("its upstream" if upstream else "that address")
    text = (f"nothing listens on {where} (connection refused): the service there is not running, or it listens on "
            "another address or port")
    flag = _LISTEN_FLAG.get(context.service)
    if flag:
        text += f" (the address {context.service}'s {flag} names: check it for a typo)"
    if owner:
        text += (f"; here that is the {owner} ({key}): `stackctl status` shows whether it runs and `stackctl logs "
                 f"{owner} --explain` why it stopped")
    text += (f"; `ss -ltnp 'sport = :{port['port'] if port else 'PORT'}'` shows what listens; a service listening on "
             "127.0.0.1 only refuses every other address (bind it to 0.0.0.0 or to that address), and inside a "
             "container 127.0.0.1 is the container's own loopback, not the host's (stackctl's services run on the "
             "host's network)")
    return [StatedCause(f"nothing listens: {where}", text, key)]


# --- an upstream's headers larger than nginx's buffer --------------------------------------------

_HEADER_TOO_BIG = re.compile(r"upstream sent too big header while reading response header from upstream")


def _header_too_big(line: str) -> list[StatedCause]:
    if not _HEADER_TOO_BIG.search(line):
        return []
    return [StatedCause("upstream header too big", (
        "the upstream's response headers (large cookies or tokens, most often) do not fit nginx's proxy_buffer_size "
        "(one memory page, 4k or 8k, by default), so nginx answers 502: raise it in the location that proxies, "
        "e.g. `proxy_buffer_size 16k; proxy_buffers 8 16k; proxy_busy_buffers_size 32k;` (fastcgi_buffer_size and "
        "fastcgi_buffers for a FastCGI upstream), then `nginx -t` and reload; stackctl's own site proxies to the "
        "filter-proxy, whose headers are small"))]
