"""TLS files nginx finds but cannot use, read by their signatures and by the fallback alike.

- An encrypted private key: nginx started without a terminal cannot ask for its passphrase ("Enter PEM pass
  phrase:", then 'cannot load certificate key "X": PEM_read_bio_PrivateKey() failed (... problems getting
  password ... bad password read)'; before nginx 1.11 'SSL_CTX_use_PrivateKey_file("X") failed'; "bad decrypt"
  where ssl_password_file holds the wrong one; only nginx's own wordings: another program's "bad password read" is
  its own key's): jumpserver#14463, mailcow-dockerized#3361,
  openresty#923 (ssl_password_file). Remove the passphrase (`openssl rsa -in KEY -out KEY.unencrypted`) or give
  nginx `ssl_password_file`.
- An empty or malformed Diffie-Hellman parameters file ('PEM_read_bio_DHparams("X") failed (... no start
  line:Expecting: DH PARAMETERS)'): a file left empty, or read while `openssl dhparam` still writes it
  (boa#1627, boa#1330, boa#1381, dokku-letsencrypt#182). Regenerate it (`openssl dhparam -out FILE 2048`) or
  drop ssl_dhparam.

stackctl's own HTTPS server serves certbot's files (live/HOSTNAME/fullchain.pem and privkey.pem under
letsencrypt_dir, a key certbot writes unencrypted) and sets no ssl_dhparam: such a file was put in by hand.
"""

from __future__ import annotations

import re

ENCRYPTED_KEY = re.compile(
    r"(?:cannot load certificate key \"(?P<path>[^\"]+)\"|SSL_CTX_use_PrivateKey_file\(\"(?P<older>[^\"]+)\"\))"
    r".*?(?:bad password read|problems getting password|bad decrypt)")
DHPARAM_INVALID = re.compile(
    r"PEM_read_bio_DHparams\(\"(?P<path>[^\"]+)\"\) failed.*?(?:no start line|bad base64 decode|bad end line"
    r"|Expecting: DH PARAMETERS)")


def encrypted_key(text: str) -> str | None:
    """The key `text` says nginx could not decrypt ("" where it names no file), or None."""
    match = ENCRYPTED_KEY.search(text)
    return None if match is None else match["path"] or match["older"] or ""


def encrypted_key_fix(path: str) -> str:
    key = path or "KEY"
    return (f"the private key {path or 'nginx was given'} is encrypted (a passphrase protects it: "
            "-----BEGIN ENCRYPTED PRIVATE KEY----- or Proc-Type: 4,ENCRYPTED), and nginx, started without a terminal, "
            "cannot ask for it ('Enter PEM pass phrase:'), or the passphrase it was given is wrong ('bad decrypt'): "
            f"write an unencrypted copy once, `openssl rsa -in {key} -out {key}.unencrypted` (`openssl pkey` for a "
            "key that is not RSA; it asks for the passphrase), point ssl_certificate_key at it and keep it readable by "
            "nginx's user only (chmod 600); or give nginx the passphrase in a file, `ssl_password_file FILE;` beside "
            "ssl_certificate_key. stackctl's own HTTPS server serves certbot's key (live/HOSTNAME/privkey.pem under "
            "letsencrypt_dir), which certbot writes unencrypted: an encrypted key there was put in by hand (a "
            "certificate bought or issued elsewhere): put its unencrypted key there, or let certbot issue the "
            "certificate again (`sudo certbot certonly --force-renewal -d HOSTNAME`); then `stackctl up`")


def invalid_dhparam(text: str) -> str | None:
    """The Diffie-Hellman parameters file `text` says nginx could not read, or None."""
    match = DHPARAM_INVALID.search(text)
    return None if match is None else match["path"]


def dhparam_fix(path: str) -> str:
    return (f"the ssl_dhparam file {path} holds no PEM 'DH PARAMETERS' block: most often it is empty (0 bytes: an "
            "`openssl dhparam` run that was stopped, or is still running on a slow machine, or a disk that filled "
            f"up), otherwise something else copied there. Check it: `ls -l {path}` and `openssl dhparam -in {path} "
            f"-noout -text`. Regenerate it: `openssl dhparam -out {path} 2048` (a minute or more; 4096 bits takes far "
            "longer), or drop the ssl_dhparam line (nginx then offers no DHE ciphers, which ECDHE makes needless). "
            "stackctl's own HTTPS server sets no ssl_dhparam: the line comes from a site or snippet added by hand, or "
            "from `certbot --nginx`, which writes `ssl_dhparam /etc/letsencrypt/ssl-dhparams.pem` (certbot ships "
            "that file; restore it from another host or with `openssl dhparam`); then `stackctl up`")
