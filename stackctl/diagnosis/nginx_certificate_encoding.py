"""A PEM file nginx finds whose contents do not decode, read by its signature and by the fallback alike.

OpenSSL reads the base64 between a "-----BEGIN CERTIFICATE-----" line and its "-----END CERTIFICATE-----" and
decodes it as ASN.1; where those bytes are not a certificate it refuses with ASN.1's words, not PEM's "no start line"
(an empty file, nginx_certificate_invalid's first reading): 'SSL_CTX_use_certificate_chain_file("X") failed (SSL:
error:0D0680A8:asn1 encoding routines:ASN1_CHECK_TLEN:wrong tag error:0D07803A:asn1 encoding routines:
ASN1_ITEM_EX_D2I:nested asn1 error error:0906700D:PEM routines:PEM_ASN1_read_bio:ASN1 lib ... PEM lib)' (nginx
before 1.11; later 'cannot load certificate "X": PEM_read_bio_X509() failed (... wrong tag ...)', OpenSSL 3
"asn1 encoding routines::wrong tag", "header too long"). The file's text was edited or pasted into: a line of
other text (a comment, an instruction left by whoever sent it) beside or inside the blocks (guardian/frontend#2560:
"Remove extra text from nginx/frontend.crt"), two blocks run together on one line, a block cut short, or another
object (a private key, a request) where a certificate belongs. Keep only the PEM blocks, each complete on lines of
its own, and check with `openssl x509 -in FILE -noout`.
"""

from __future__ import annotations

import re

ASN1_REFUSED = re.compile(
    r"(?:SSL_CTX_use_(?P<object>certificate|PrivateKey)(?:_chain)?(?:_file)?\(\"(?P<path>[^\"]+)\"\) failed"
    r"|cannot load certificate(?P<key> key)? \"(?P<loaded>[^\"]+)\": PEM_read_bio_\w+\(\) failed)"
    r".*?asn1 encoding routines:(?:\w*:)*(?:wrong tag|nested asn1 error|header too long|too long)")


def asn1_refused(text: str) -> re.Match[str] | None:
    """nginx's refusal of a certificate (or key) file whose PEM blocks do not decode, or None."""
    return ASN1_REFUSED.search(text)


def refused_file(match: re.Match[str]) -> tuple[str, str]:
    """(the file's path, "certificate" or "key")."""
    is_key = match["object"] == "PrivateKey" or bool(match["key"])
    return match["path"] or match["loaded"] or "", "key" if is_key else "certificate"


def asn1_refused_fix(path: str, what: str) -> str:
    file = path or "FILE"
    block = "PRIVATE KEY" if what == "key" else "CERTIFICATE"
    check = f"openssl {'pkey' if what == 'key' else 'x509'} -in {file} -noout"
    return (f"the {what} file {path or 'nginx was given'} holds PEM markers, but what lies between or around them is "
            f"not a {what}: most often extra text in the file (trailing text after an -----END {block}----- line, a "
            "comment or a line of instructions pasted in with it), two blocks run together on one line, a block cut "
            f"short or edited, or another object (a private key, a certificate request) where a {what} belongs. Keep "
            f"only the PEM blocks, each from its -----BEGIN {block}----- line to its -----END {block}----- line on lines "
            f"of their own, nothing else (`grep -n -- '-----' {file}` lists the markers); `{check}` must read it "
            "without error, then `nginx -t`. stackctl's own HTTPS server reads certbot's fullchain.pem and privkey.pem "
            "under letsencrypt_dir, which certbot writes whole: a file edited by hand, or another site's, is the one "
            "to correct")
