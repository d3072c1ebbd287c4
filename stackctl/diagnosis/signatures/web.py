"""nginx and certbot: a certificate nginx cannot load (missing, there but unreadable by its user, there
but not PEM, or one its key does not match), two server blocks claiming one listen socket, an upstream
(the filter-proxy) down, slow, unknown (a container's name, or a domain name: nginx_upstream_names) or sending
headers over nginx's buffer, a request body over
nginx's limit, and the ACME challenges certbot
cannot complete (port 80, or 443 for the old tls-sni challenge, taken; rate limited; what the CA
says about fetching the challenge is acme_challenges')."""

from __future__ import annotations

import re

from stackctl.diagnosis.acme_challenge_ports import tls_sni_challenge, tls_sni_fix
from stackctl.diagnosis.acme_rate_limits import (
    FAILED_VALIDATIONS,
    LIMIT_WORDS,
    failed_validations_fix,
    limit_wait,
    rate_limit,
)
from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.nginx_certificate_paths import container_path_fix, mounted_elsewhere
from stackctl.diagnosis.nginx_upstream_names import domain_fix, domain_name, unknown_upstream
from stackctl.diagnosis.signature import CONSEQUENCE, Signature, found, signature
from stackctl.diagnosis.stack_keys import nginx_port_key
from stackctl.diagnosis.upstream_header_buffers import header_buffers_fix, upstream_module
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix, Severity

_CERTIFICATE = re.compile(r"(?:cannot load certificate(?: key)? \"|BIO_new_file\(\")(?P<path>[^\"]+)\"")


# nginx's refusal of a TLS listener without a certificate: at `nginx -t` (a `listen ... ssl` in a server
# block that names no ssl_certificate) and, older releases, at the handshake on such a server.
_NO_CERTIFICATE_DIRECTIVE = r"no \"ssl_certificate\" is defined"
_LISTENER = re.compile(_NO_CERTIFICATE_DIRECTIVE + r"[^\n]*? in (?P<file>/[\w./@:+-]+?)(?::(?P<line>\d+))?(?:\s|$)")


def _nginx_certificate_missing(evidence: Evidence) -> Diagnosis:
    if re.search(_NO_CERTIFICATE_DIRECTIVE, evidence.line):
        return _nginx_certificate_directive_missing(evidence)
    path = evidence.read(_CERTIFICATE).get("path", "")
    root = mounted_elsewhere(path)
    if root is not None:
        return found(evidence, Cause.nginx_certificate_missing,
                     f"nginx is told to serve TLS with {path}, which is not there where nginx looks (a host path, or "
                     "a volume mounted elsewhere)", Fix(container_path_fix(path, root), key="letsencrypt_dir"),
                     certificate=path)
    # certbot's live/NAME/*.pem are links into archive/: a directory copied, restored or partly deleted
    # keeps the name and loses the files, which only a new certificate brings back.
    issued = "/letsencrypt/live/" in path
    reissue = ("the certificate's files are gone from certbot's directory (live/NAME links into archive/NAME; a "
               "copied, restored or partly deleted letsencrypt directory loses them), or the certificate was "
               "never issued: obtain the certificate again, a reissue, with `sudo certbot renew --force-renewal` "
               "(or `sudo certbot certonly --force-renewal -d HOSTNAME` for one name; delete a certificate whose "
               "files are gone with `sudo certbot delete --cert-name NAME` first). " if issued else "")
    return found(evidence, Cause.nginx_certificate_missing,
                 f"nginx is told to serve TLS with {path or 'a certificate'} that is not there",
                 Fix(f"{reissue}stackctl renders the HTTPS server only once certbot has a certificate for `hostname`: "
                     "run `stackctl up` again (it renders HTTP-only and lets certbot obtain the certificate), and "
                     "check that letsencrypt_dir in stack.yaml is where certbot writes (`sudo certbot certificates` "
                     "lists them)", key="letsencrypt_dir"), **({"certificate": path} if path else {}))


# The OS refusing nginx the file (EACCES, and EPERM where macOS or a sandbox refuses it): it is there.
_UNREADABLE = r"(?:Permission denied|Operation not permitted)"


def _nginx_certificate_unreadable(evidence: Evidence) -> Diagnosis:
    """The certificate or key is there but nginx's user may not read it. nginx reads both in its master
    process: as root in the official image (a refusal there is SELinux or a Docker whose root is not the
    host's), as the image's own user in non-root images (bitnami, nginx-unprivileged), and natively as
    whoever started it, while certbot keeps live/ and archive/ readable by root only."""
    path = evidence.read(_CERTIFICATE).get("path", "")
    what = "key" if "certificate key" in evidence.line else "certificate"
    named = path or f"the {what} file"
    return found(evidence, Cause.nginx_certificate_unreadable,
                 f"nginx finds the {what} {named} but may not read it (permission denied), so it does not start",
                 Fix(f"make {named} and every directory above it readable by the user nginx reads it as (check: `sudo "
                     f"namei -l {path or 'FILE'}`): an image that runs nginx as its own user (bitnami's uid 1001, "
                     "nginx-unprivileged's uid 101) needs the file owned by or shared with that user (`sudo chown "
                     "101:101 FILE`, or its group and `chmod 640`; a private key is never world-readable). Natively "
                     "stackctl's nginx runs as you, and certbot keeps letsencrypt_dir's live/ and archive/ readable by "
                     "root only: set letsencrypt_dir in stack.yaml to a directory you own and issue the certificate "
                     "there (`stackctl tls issue`), or give your group read access (`sudo chgrp -R GROUP "
                     "/etc/letsencrypt/live /etc/letsencrypt/archive` and `sudo chmod -R g+rX` them). Under Compose "
                     "stackctl's nginx image reads it as root: a refusal there is SELinux (`getenforce`; relabel the "
                     "directory for containers: `sudo chcon -Rt container_file_t DIR`) or a rootless or "
                     "userns-remapped Docker, whose root is not the host's; then `stackctl up`",
                     key="letsencrypt_dir"), **({"certificate": path} if path else {}))


# OpenSSL's refusals of a file that exists but holds no PEM block of the kind asked for: empty, DER, a key
# where the certificate belongs, or cut short (nginx's "cannot load certificate" and its older wording).
_NOT_PEM = r"PEM_read_bio_(?:X509(?:_AUX)?|PrivateKey)\(.*(?:no start line|bad end line|bad base64 decode)"
_PEM_PATH = re.compile(r"cannot load certificate(?P<key> key)? \"(?P<path>[^\"]+)\"|PEM_read_bio_\w+\(\"(?P<older>[^\"]+)\"\)")


def _nginx_certificate_invalid(evidence: Evidence) -> Diagnosis:
    """The certificate (or key) file is there but is not PEM: a request that failed half-way leaves an
    empty file behind, and a copy can put the key, a DER file or a directory's name in its place."""
    said = evidence.read(_PEM_PATH)
    path = said.get("path") or said.get("older") or ""
    what = "key" if said.get("key") or "PrivateKey" in evidence.line else "certificate"
    issued = "/letsencrypt/" in path or "/live/" in path  # certbot's own directory
    then = ("let certbot issue the certificate again: `sudo certbot delete --cert-name NAME` "
            "(NAME from `sudo certbot certificates`), then `stackctl up`, which renders HTTP-only until certbot has "
            "a certificate for `hostname` under letsencrypt_dir and then the HTTPS server (or `sudo certbot "
            "certonly --force-renewal -d HOSTNAME`)" if issued else
            "let what issued it (certbot, acme.sh, an application's ACME client) issue it again, or put the PEM file "
            "it should be in its place; stackctl's own certificate lives under letsencrypt_dir, where `stackctl up` "
            "lets certbot obtain it")
    given = f"the directory {path} where a {what} file belongs" if path.endswith("/") else \
        f"the {what} file {path or '(path not in the log)'}"
    return found(evidence, Cause.nginx_certificate_invalid,
                 f"nginx was given {given} but could not read a PEM {what} from it ('no start line'), so it does not "
                 "start",
                 Fix(f"the file is there but holds no PEM {what}: most often an empty certificate file (0 bytes, left by "
                     "a certificate request that failed half-way or a disk that filled up), otherwise a file in another "
                     "format (DER), the key and the certificate swapped, or a directory's name given for the file. "
                     f"Check it: `ls -l {path or 'FILE'}` and `openssl {'pkey' if what == 'key' else 'x509'} -noout -in "
                     f"{path or 'FILE'}`. Remove the empty or bad file (not the directory of others that are good), "
                     f"then {then}; ssl_certificate takes the chain (fullchain.pem, starting -----BEGIN CERTIFICATE-----) "
                     "and ssl_certificate_key the key (privkey.pem)", key="letsencrypt_dir"),
                 **({"certificate": path} if path else {}))


def _nginx_certificate_directive_missing(evidence: Evidence) -> Diagnosis:
    """A server block listens with `ssl` but names no certificate: the certificate directives were left
    out (commented out until certbot has run, or a site written for HTTP given `listen 443 ssl`)."""
    where = evidence.read(_LISTENER)
    site = where.get("file", "")
    return found(evidence, Cause.nginx_certificate_missing,
                 "nginx refuses a server block that listens with `ssl` but names no certificate"
                 + (f" ({site}{':' + where['line'] if where.get('line') else ''})" if site else ""),
                 Fix("add the missing ssl_certificate and ssl_certificate_key directives to that server block "
                     "(certbot's files: live/HOSTNAME/fullchain.pem and live/HOSTNAME/privkey.pem under "
                     "letsencrypt_dir in stack.yaml), or leave the `listen 443 ssl` server out until certbot has "
                     "the certificate; stackctl renders its HTTPS server, with both directives, only once certbot "
                     "has one: `stackctl up` renders it again (`sudo certbot certificates` lists them)",
                     key="letsencrypt_dir"), **({"site": site} if site else {}))


_SERVER_BLOCK_DOMAIN = re.compile(r"(?:matching server block for|VirtualHost matching domain) (?P<domain>\w[\w.-]*\w)")


def _certbot_no_server_block(evidence: Evidence) -> Diagnosis:
    """certbot's nginx installer (`certbot --nginx`) installs the certificate into the enabled server
    block whose server_name is the domain; with none, it obtains the certificate and cannot install it."""
    domain = evidence.read(_SERVER_BLOCK_DOMAIN).get("domain", "")
    return found(evidence, Cause.certbot_no_server_block,
                 f"certbot's nginx installer found no enabled server block whose server_name is "
                 f"{domain or 'the domain'}, so it cannot install the certificate there",
                 Fix("stackctl renders its nginx site (stackctl-site.conf) with `server_name` set to `hostname` in "
                     "stack.yaml: set hostname to the domain certbot asks the certificate for (its -d) and run "
                     "`stackctl up`, which renders the site and reloads nginx; with a site of your own, add "
                     "`server_name DOMAIN;` to its server block and enable it (symlink the site from "
                     "sites-available into sites-enabled), then `nginx -s reload` and certbot again",
                     key="hostname"), **({"domain": domain} if domain else {}))


_UPSTREAM = re.compile(r"upstream: \"(?P<upstream>[^\"]+)\"")


_LOOPBACK = re.compile(r"//(?:127\.|localhost\b|\[::1\])")
# nginx in a container of its own: Compose's log prefix ("nginx_1  |", "nginx.1 |") or a client
# address on a Docker bridge network (172.16.0.0/12), where Docker's gateway forwards the host's requests.
_IN_CONTAINER = re.compile(r"^\s*[\w.-]+(?:[._-]\d+)?\s+\|\s|client:? 172\.(?:1[6-9]|2\d|3[01])\.")
_CHECK_PROXY = ("check the filter-proxy (`stackctl status`, `stackctl logs filter-proxy --explain`); it listens on "
                "ports.proxy, and on a split edge/GPU stack on the GPU host's address from hosts: in stack.yaml "
                "(`stackctl doctor --host NAME` checks the peers)")
_CONTAINER_LOOPBACK = ("stackctl runs nginx and the proxy on the host network, where 127.0.0.1 is the host's loopback; "
                       "an nginx in a container of its own (a Compose network, an override without `network_mode: "
                       "host`) reaches only the container's own loopback at 127.0.0.1, not the host's: use the host "
                       "network or the host IP")


def _nginx_upstream_down(evidence: Evidence) -> Diagnosis:
    """Which address nginx was refused at says why: another host's or container's address (the service
    there listens on localhost only, or is not running), the loopback from inside a container (the
    container's own, not the host's), or neither named (the upstream is down)."""
    upstream = evidence.read(_UPSTREAM).get("upstream", "").strip()
    summary = (f"nginx could not reach its upstream{' ' + upstream if upstream else ''} (the filter-proxy): clients "
               "get 502 Bad Gateway")
    if upstream and "refused" in evidence.line and not _LOOPBACK.search(upstream) and "unix:" not in upstream:
        text = (f"nothing listens at {upstream} although its address answers: a service listening on localhost "
                "(127.0.0.1) only is refused at any other address, so it must listen on all interfaces (bind to "
                f"0.0.0.0) or on that address; a service that is not running is refused the same way: {_CHECK_PROXY}")
    elif upstream and _LOOPBACK.search(upstream) and any(_IN_CONTAINER.search(line) for line in evidence.lines):
        text = (f"nginx runs in a container, where {upstream} is the container's own loopback, not the host's: "
                f"{_CONTAINER_LOOPBACK}; then {_CHECK_PROXY}")
    else:
        text = f"{_CHECK_PROXY}. {_CONTAINER_LOOPBACK}"
    return found(evidence, Cause.nginx_upstream_down, summary, Fix(text, key="ports.proxy"),
                 severity=Severity.advisory, **({"upstream": upstream} if upstream else {}))


def _nginx_upstream_timeout(evidence: Evidence) -> Diagnosis:
    page = "504" in evidence.line and "timed out" not in evidence.line
    return found(evidence, Cause.nginx_upstream_timeout,
                 ("a client got nginx's 504 Gateway Time-out page: " if page else "")
                 + "the upstream (the filter-proxy, then vLLM) sent nothing within nginx's read timeout "
                 "(proxy_read_timeout)",
                 Fix("stackctl's nginx sets proxy_read_timeout (and proxy_send_timeout) to 3600 s in "
                     "nginx/stackctl-site.conf.j2, so a timeout there means the request stalled: check vLLM (`stackctl "
                     "logs vllm --explain`, `stackctl status`) and its queue (vllm:num_requests_waiting on the "
                     "dashboard); lower limits.max_concurrent in stack.yaml if requests pile up. A 504 after about "
                     "60 s comes from another nginx or proxy in front with the default proxy_read_timeout 60s: "
                     "raise it there (e.g. `proxy_read_timeout 3600s;` in the location that proxies to stackctl), "
                     "or stream the reply (stream: true) so bytes flow before the timeout",
                     key="limits.max_concurrent"), severity=Severity.advisory)


def _nginx_body_too_large(evidence: Evidence) -> Diagnosis:
    size = evidence.read(re.compile(r"too large body: (?P<bytes>\d+) bytes")).get("bytes")
    shown = f" ({int(size) // (1024 * 1024)} MiB)" if size else ""
    return found(evidence, Cause.nginx_body_too_large,
                 f"a client sent a request body{shown} larger than nginx accepts: it got 413",
                 Fix("stackctl's nginx accepts request bodies up to 64 MiB (client_max_body_size in "
                     "nginx/stackctl-site.conf.j2): send fewer or smaller images/files in one request, or raise "
                     "client_max_body_size there and `stackctl up`"), severity=Severity.advisory,
                 **({"bytes": int(size)} if size else {}))


def _nginx_upstream_host_unknown(evidence: Evidence) -> Diagnosis:
    host = evidence.read(re.compile(r"host not found in upstream \"(?P<host>[^\"]+)\"")).get("host", "")
    domain = domain_name(unknown_upstream(evidence.text) or "")
    if domain:
        upstream = unknown_upstream(evidence.text) or domain
        return found(evidence, Cause.nginx_upstream_host_unknown,
                     f"nginx cannot resolve its upstream {upstream}, a domain name, so it does not start",
                     Fix(domain_fix(domain, upstream), key="hosts"), upstream=upstream)
    name = host.rsplit(":", 1)[0] if host.rsplit(":", 1)[-1].isdigit() else host
    return found(evidence, Cause.nginx_upstream_host_unknown,
                 f"nginx cannot resolve its upstream {host}, so it does not start",
                 Fix(f"{f'{name} does not resolve here (`getent hosts {name}`): ' if host else ''}stackctl's "
                     "upstreams are addresses: on one box 127.0.0.1, on a split stack the GPU hosts' address under "
                     "hosts: in stack.yaml; use IP addresses there (or names this host resolves), then `stackctl up`. An "
                     "nginx in a Compose network of its own resolves a container name once, at start, and fails if "
                     "that container is not up yet, or is not in nginx's network: start nginx after it (`depends_on:` the app "
                     "container's service name in docker-compose.yml, the name the upstream must use), or use Docker's DNS resolver (`resolver 127.0.0.11 valid=10s;`) and a "
                     "variable in proxy_pass (`set $up http://NAME:PORT; proxy_pass $up;`) to resolve the upstream at "
                     "request time",
                     key="hosts"), **({"upstream": host} if host else {}))


_NO_RESOLVER = re.compile(r"no resolver defined to resolve \"?(?P<host>[\w.-]+?)\"?(?:host|,|\s|$)")


def _nginx_no_resolver(evidence: Evidence) -> Diagnosis:
    host = evidence.read(_NO_RESOLVER).get("host", "")
    return found(evidence, Cause.nginx_no_resolver,
                 f"nginx was asked to resolve {host or 'a name'} while running (a variable in proxy_pass, a Lua or njs "
                 "call) and no resolver is defined: that request fails",
                 Fix("nginx resolves names at run time only through a `resolver` directive: define a resolver in the "
                     "http (or server) block, the DNS server this nginx can reach: `resolver 127.0.0.11 valid=10s;` in "
                     "a Docker network (Docker's DNS, which knows host.docker.internal and the containers), or the "
                     "nameserver of /etc/resolv.conf on the host (OpenResty: `resolver local=on;`); or use an IP address "
                     "in place of the name. stackctl's own upstreams are addresses (127.0.0.1, or the GPU host's "
                     "address under hosts: in stack.yaml) and need no resolver", key="hosts"),
                 **({"host": host} if host else {}))


def _certbot_rate_limited(evidence: Evidence) -> Diagnosis:
    """Which limit the refusal names decides how long to wait: an hour for failed validations, hours for
    orders and accounts, a week for certificates of one name (acme_rate_limits)."""
    retry = evidence.read(re.compile(r"retry after (?P<after>[\d-]+ [\d:]+ UTC)")).get("after")
    limit = rate_limit(" ".join(evidence.lines[max(0, evidence.index - 3):evidence.index + 3]))
    keep = ("keep the certificates you have (letsencrypt_dir, kept across `stackctl down`) instead of requesting new "
            "ones")
    named = {"limit": limit.name} if limit else {}
    if limit is FAILED_VALIDATIONS:
        return found(evidence, Cause.certbot_rate_limited,
                     "Let's Encrypt refused another try for this name: too many of its validations failed in the last "
                     "hour", Fix(f"{failed_validations_fix()}; {keep}", key="letsencrypt_dir"),
                     **named, **({"retry_after": retry} if retry else {}))
    if retry or limit is None or limit.weekly:
        when = f"after {retry}" if retry else "later (Let's Encrypt's limits reset within a week)"
        text = f"retry {when}; {keep}, and test against the staging server"
    else:
        text = f"{limit_wait(limit)}, then retry; {keep}, and test against the staging server (--staging)"
    return found(evidence, Cause.certbot_rate_limited,
                 "Let's Encrypt refused another certificate for this name: its rate limit is reached",
                 Fix(text, key="letsencrypt_dir"), **named, **({"retry_after": retry} if retry else {}))


_LISTEN = re.compile(r"duplicate listen options for (?P<address>\S+) in (?P<file>[^:\s]+)(?::(?P<line>\d+))?")


def _nginx_duplicate_listen(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_LISTEN)
    address, file = values.get("address", ""), values.get("file", "")
    port = address.rsplit(":", 1)[-1] if address else ""
    return found(evidence, Cause.nginx_duplicate_listen,
                 f"two server blocks set options (ssl, http2, default_server, reuseport, ipv6only) on the one listen "
                 f"socket {address or '(address not in the log)'}{' in ' + file if file else ''}, so nginx does not start",
                 Fix("a listen socket's options may be set once: stackctl's site (nginx/stackctl-site.conf.j2) sets them "
                     f"on its `listen` lines for ports.http/ports.https; another site enabled in the same nginx "
                     f"(sites-enabled/, conf.d/) that listens on {port or 'the same port'} must use a plain `listen "
                     f"{port or 'PORT'};` without options, or be disabled; or move ports.http/ports.https in stack.yaml "
                     "to ports no other site uses, then `stackctl up` (`nginx -t` checks it)",
                     key=nginx_port_key(port)),
                 **({"address": address} if address else {}), **({"file": file} if file else {}))


def _nginx_header_too_big(evidence: Evidence) -> Diagnosis:
    """The buffer to raise is the one of the upstream's module, read from its scheme (upstream_header_buffers)."""
    upstream = evidence.read(_UPSTREAM).get("upstream", "").strip()
    module = upstream_module(evidence.line)
    return found(evidence, Cause.nginx_header_too_big,
                 f"the upstream answered with response headers larger than nginx's {module or 'proxy'}_buffer_size: "
                 "the client got 502 Bad Gateway", Fix(header_buffers_fix(module)),
                 severity=Severity.advisory, **({"upstream": upstream} if upstream else {}))


_KEY_FILE = re.compile(r"SSL_CTX_use_PrivateKey(?:_file)?\(\"(?P<path>[^\"]+)\"\)")


def _nginx_key_mismatch(evidence: Evidence) -> Diagnosis:
    path = evidence.read(_KEY_FILE).get("path", "")
    return found(evidence, Cause.nginx_key_mismatch,
                 f"the private key {path or '(path not in the log)'} does not belong to the certificate nginx is given, "
                 "so nginx does not start",
                 Fix("ssl_certificate and ssl_certificate_key must be the pair certbot issued together: fullchain.pem and "
                     "privkey.pem of the same live/HOSTNAME directory under letsencrypt_dir (stackctl's site uses "
                     "exactly those; `sudo certbot certificates` lists them); a key from another run or an account key "
                     "does not match. Check with `openssl x509 -noout -pubkey -in fullchain.pem` against `openssl pkey "
                     "-pubout -in privkey.pem`, or get a fresh pair with `stackctl tls issue`", key="letsencrypt_dir"),
                 **({"key_file": path} if path else {}))


_BUSY_PORT = re.compile(r"(?:(?:binding to port|bind TCP port|^Port|listening on TCP port) |Failed to bind to :)"
                        r"(?P<port>80|443)\b")
# certbot before 0.10 names who holds the port: "The program nginx (process ID 32742) is already
# listening on TCP port 443 ... Please stop the nginx program temporarily".
_HOLDER = re.compile(r"The program (?P<program>[\w.-]+) \(process ID (?P<pid>\d+)\)")


def _certbot_port_80_busy(evidence: Evidence) -> Diagnosis:
    # The port on the line, else on the lines the standalone server logged before it (acme.standalone's
    # "Failed to bind to :443"), else the one the challenge binds.
    tls_sni = tls_sni_challenge(evidence.lines)
    port = evidence.read(_BUSY_PORT).get("port") or next(iter(evidence.all_found(_BUSY_PORT, "port")), None) \
        or ("443" if tls_sni else "80")
    key = nginx_port_key(port)
    # tls-sni-01 binds 443: the renewal's challenge, not only what holds the port, is the fix.
    lead = f"{tls_sni_fix()}. As for port 443 itself: " if tls_sni and port == "443" else ""
    holder = evidence.read(_HOLDER)
    program, pid = holder.get("program", ""), holder.get("pid", "")
    challenge = " (the old tls-sni challenge binds port 443)" if port == "443" else ""
    webroot = ("use the webroot nginx serves (`certbot certonly --webroot -w ACME_ROOT`, what `stackctl tls issue` and "
               "stackctl's certbot service do) or the --nginx plugin; for an old standalone certificate set "
               "`authenticator = webroot` and `webroot_path` in /etc/letsencrypt/renewal/NAME.conf")
    if program and program != "nginx":
        # Not stackctl's nginx: a web server of the host's own holds the port stackctl's nginx needs too.
        return found(evidence, Cause.certbot_port_80_busy,
                     f"certbot's standalone server could not bind port {port}: {program} (process ID {pid}) already "
                     f"listens there{challenge}",
                     Fix(f"{lead}{program} is not stackctl's nginx, which needs port {port} itself ({key}) to serve the "
                         f"certificate challenge: stop {program} and keep it from starting again (`sudo systemctl "
                         f"disable --now {program}`), or move {key} in stack.yaml to a free port; then issue through "
                         f"stackctl's webroot (`stackctl tls issue`) instead of `certbot --standalone`: {webroot}",
                         key=key, flag="--webroot"),
                     port=int(port), program=program, pid=int(pid))
    holds = f"nginx (process ID {pid}) holds" if program else "another web server (here stackctl's nginx, which " \
                                                                 "serves ports 80 and 443) already listens"
    stop = ("stop nginx while certbot runs (stackctl's: `docker compose -p stackctl stop nginx`, the stack.yaml "
            "`project`, and `stackctl up` after; a distribution's: `sudo systemctl stop nginx`)" if program else
            f"stop what holds port {port} (`ss -ltnp 'sport = :{port}'`; stackctl's nginx listens on {key}) while "
            "certbot runs")
    return found(evidence, Cause.certbot_port_80_busy,
                 f"certbot's standalone server could not bind port {port}: {holds} port {port}{challenge}"
                 if program else
                 f"certbot's standalone server could not bind port {port}: {holds} there{challenge}",
                 Fix(f"{lead}don't run `certbot --standalone` (or renew a certificate first issued with it) while nginx holds "
                     f"port {port}: {webroot}. Otherwise {stop}; the port is already in use only while it does", key=key,
                     **({"flag": "--webroot"} if program else {})),
                 port=int(port), **({"program": program, "pid": int(pid)} if program else {}))


def _certbot_nginx_plugin_missing(evidence: Evidence) -> Diagnosis:
    """`certbot --nginx` (or a renewal of a certificate first issued with it) needs the nginx plugin,
    a separate package; stackctl itself issues through nginx's webroot and needs no plugin."""
    return found(evidence, Cause.certbot_nginx_plugin_missing,
                 "certbot was asked for its nginx plugin (--nginx, or a certificate first issued with it), which is "
                 "not installed",
                 Fix("install the nginx plugin beside certbot: `sudo apt install python3-certbot-nginx` (Debian and "
                     "Ubuntu; old releases name it python-certbot-nginx, some only in backports), `sudo dnf install "
                     "python3-certbot-nginx`, or certbot's snap, which ships it. stackctl needs no plugin: `stackctl "
                     "tls issue` uses the webroot nginx serves; for a certificate first issued with --nginx set "
                     "`authenticator = webroot` and `webroot_path` in /etc/letsencrypt/renewal/NAME.conf so renewals "
                     "need none either"))


SIGNATURES: tuple[Signature, ...] = (
    # A certificate or key there but refused to nginx's user (before the class of a file not there).
    signature(Cause.nginx_certificate_unreadable,
              r"(?:cannot load certificate|BIO_new_file\().*failed.*" + _UNREADABLE, _nginx_certificate_unreadable),
    # A certificate file that is not there, not one that is there but not PEM.
    signature(Cause.nginx_certificate_missing,
              r"cannot load certificate(?: key)? \"(?!.*PEM_read_bio_)|BIO_new_file\(\"\S+\"\) failed|"
              + _NO_CERTIFICATE_DIRECTIVE, _nginx_certificate_missing),
    signature(Cause.nginx_certificate_invalid, _NOT_PEM, _nginx_certificate_invalid),
    # certbot's nginx installer, in its wording since 0.23 and before it.
    signature(Cause.certbot_no_server_block,
              r"Could not automatically find a matching server block|Cannot find a VirtualHost matching domain",
              _certbot_no_server_block),
    signature(Cause.nginx_upstream_down,
              # Refused, no route, network unreachable: whatever call nginx names (connect() to a
              # socket, to an address, or cut from the paste), the upstream is not listening.
              r"\((?:111|113|101): [^)]*\) while connecting to upstream|no live upstreams while "
              r"connecting to upstream", _nginx_upstream_down),
    signature(Cause.nginx_upstream_timeout, r"upstream timed out \(110: [^)]*\) while reading", _nginx_upstream_timeout),
    # The page nginx's client gets (its status line or HTML title; openresty's too): a cause the
    # log names elsewhere wins over it.
    signature(Cause.nginx_upstream_timeout, r"\b504 \(?Gateway Time-?out\b", _nginx_upstream_timeout, CONSEQUENCE),
    signature(Cause.nginx_no_resolver, r"no resolver defined to resolve", _nginx_no_resolver),
    # nginx's own log, and the page its client gets (the 413 status line or its HTML title).
    signature(Cause.nginx_body_too_large, r"client intended to send too large body|\b413 Request Entity Too Large",
              _nginx_body_too_large),
    signature(Cause.nginx_upstream_host_unknown, r"host not found in upstream", _nginx_upstream_host_unknown),
    signature(Cause.certbot_rate_limited,
              r"too many certificates (?:\(\d+\) )?already issued|error:rateLimited|rateLimited ::|" + LIMIT_WORDS,
              _certbot_rate_limited),
    signature(Cause.nginx_duplicate_listen, r"duplicate listen options for", _nginx_duplicate_listen),
    signature(Cause.nginx_header_too_big, r"upstream sent too big header", _nginx_header_too_big),
    signature(Cause.nginx_key_mismatch, r"X509_check_private_key:key values mismatch", _nginx_key_mismatch),
    # certbot's standalone plugin in its words: the bind error, or its own port check before binding.
    signature(Cause.certbot_port_80_busy,
              r"Problem binding to port (?:80|443)|At least one of the required ports is already taken"
              # acme's standalone server itself: its bind refused on both address families.
              r"|acme\.standalone:Failed to bind to :(?:80|443) using|^(?:OSError|socket\.error|error): Could not bind "
              r"to IPv4 or IPv6"
              r"|Could not bind TCP port (?:80|443) because it is already in use|^Port (?:80|443) is already in use by "
              r"another process|is already listening on TCP port (?:80|443)\b", _certbot_port_80_busy),
    signature(Cause.certbot_nginx_plugin_missing, r"The requested nginx plugin does not appear to be installed",
              _certbot_nginx_plugin_missing),
)
