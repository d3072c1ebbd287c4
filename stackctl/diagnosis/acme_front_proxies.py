"""A cache or proxy in front of nginx, or a site that forces HTTPS, answering the HTTP-01 challenge in nginx's place.

Let's Encrypt fetches http://NAME/.well-known/acme-challenge/TOKEN on port 80 and follows redirects. Where Varnish,
a CDN (Cloudflare's "Always Use HTTPS", its WAF) or the site itself ("force SSL" in a CMS or control panel, an
.htaccess rewrite) turns that request into a redirect to https, the fetch ends at a server that does not hold the
token (a 403 or 404 page, an error page of the cache: s55ma.radioamater.si's renewal, Varnish and a forced SSL;
certbot#6529, "we redirect to https since we use varnish"; openaustralia/infrastructure#621, Cloudflare's edge
redirecting to HTTPS and then answering 403). The challenge path must reach the webroot over plain HTTP: exempt
/.well-known/acme-challenge/ from the redirect in the cache or proxy (Varnish: pass it to the backend before the
rule that redirects; Cloudflare: a rule that skips the redirect and security checks for that path, or DNS-01), and in
the site's own force-HTTPS setting.
"""

from __future__ import annotations

import re

# The answer's page as the CA quotes it: Varnish's own error page ("Error 403 Forbidden", "Guru Meditation"), or
# a CDN's.
_FRONT_PAGES = (("Varnish", re.compile(r"\bvarnish\b|Guru Meditation|<h1>Error \d{3} ", re.IGNORECASE)),
                ("Cloudflare", re.compile(r"cloudflare|cf-ray|\battention required\b", re.IGNORECASE)))


def front_named(text: str) -> str | None:
    """The cache or CDN whose page answered the challenge, where the quoted page shows it, or None."""
    return next((name for name, page in _FRONT_PAGES if page.search(text)), None)


def front_proxy_fix(named: str | None) -> str:
    who = f"{named} answered the challenge (its page is the one the CA quotes)" if named else (
        "a cache or proxy in front of nginx (Varnish, a CDN such as Cloudflare) or the site itself forcing HTTPS (a "
        "\"force SSL\" setting, a redirect to https in the application or an .htaccess) answers before nginx's "
        "challenge location")
    return (f"{who}: the challenge must reach certbot's webroot over plain HTTP, so exempt /.well-known/acme-challenge/ "
            "from the redirect to https there (Varnish: pass that path to nginx before the rule that redirects; "
            "Cloudflare: a rule that skips \"Always Use HTTPS\" and its security checks for that path, or the proxy "
            "off while certbot runs, or a DNS-01 challenge; a CMS's or control panel's force SSL setting: an "
            "exception for the path)")
