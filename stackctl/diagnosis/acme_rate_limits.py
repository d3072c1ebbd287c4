"""Let's Encrypt's rate limits told apart by their words, each with the window it resets over.

A refusal names its limit, and the limits differ by what they count and for how long:

- "too many failed authorizations recently" (Boulder's newer "too many failed authorizations (5) for X in the
  last 1h0m0s"): the Failed Validation limit, 5 failures per account, per hostname, per hour, a sliding window;
  waiting an hour is enough, and the challenge must be fixed first or the next tries fail the same way
  (community.letsencrypt.org 81207, elabftw#3183: "limited to 5 requests per hour", acme.sh#1355,
  acme-dns-certbot-joohoi#30);
- "too many new orders recently" / "too many new orders (300)": 300 new orders per account per 3 hours;
- "too many registrations for this IP" / "too many new registrations (10)": 10 accounts per IP address per 3 hours;
- "too many currently pending authorizations": 300 pending authorizations per account, until they expire or
  are answered;
- "too many certificates (5) already issued for this exact set of domains/identifiers" ("for exact set of
  domains"): the Duplicate Certificate limit, 5 a week for the same set of names;
- "too many certificates (50) already issued for "example.com"" ("already issued for: example.com"):
  certificates per registered domain, 50 a week.

Only the last two reset over a week; the others within hours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class RateLimit:
    """One of Let's Encrypt's limits: what it counts and how long to wait once it is reached."""

    name: str  # short, for the diagnosis's values: "failed validations"
    counts: str  # what the limit counts, in a sentence
    wait: str  # how long before a retry can succeed
    weekly: bool = False  # reset over a week: the certificates of one name, not the tries


FAILED_VALIDATIONS = RateLimit(
    "failed validations",
    "Let's Encrypt's Failed Validation limit: 5 failed validations per account, per hostname, per hour, over a "
    "sliding window",
    "wait an hour (60 minutes after the last failures) before trying again")
_NEW_ORDERS = RateLimit("new orders", "Let's Encrypt's limit of 300 new orders per account per 3 hours",
                        "wait 3 hours (the window slides) before ordering again")
_REGISTRATIONS = RateLimit("registrations", "Let's Encrypt's limit of 10 new accounts per IP address per 3 hours",
                           "wait 3 hours, and reuse the account certbot already has (kept under letsencrypt_dir)")
_PENDING = RateLimit("pending authorizations",
                     "Let's Encrypt's limit of 300 pending authorizations per account (challenges asked for and never "
                     "answered)", "wait until they expire (about a week) or stop whatever creates orders it never "
                                  "completes")
_DUPLICATES = RateLimit("duplicate certificates",
                        "Let's Encrypt's Duplicate Certificate limit: 5 certificates a week for the same set of names",
                        "retry after the window (a week) frees a slot", weekly=True)
_REGISTERED_DOMAIN = RateLimit("certificates per registered domain",
                               "Let's Encrypt's limit of 50 certificates a week per registered domain",
                               "retry after the window (a week) frees a slot", weekly=True)

# The limit's own words, the most specific first (a duplicate's "exact set" before a domain's count).
_WORDS: tuple[tuple[re.Pattern[str], RateLimit], ...] = (
    (re.compile(r"too many failed authorizations", re.IGNORECASE), FAILED_VALIDATIONS),
    (re.compile(r"too many new orders", re.IGNORECASE), _NEW_ORDERS),
    (re.compile(r"too many (?:new )?registrations (?:for this IP|\(\d+\) from this IP)", re.IGNORECASE), _REGISTRATIONS),
    (re.compile(r"too many currently pending authorizations", re.IGNORECASE), _PENDING),
    (re.compile(r"too many certificates (?:\(\d+\) )?already issued for (?:this )?exact set", re.IGNORECASE),
     _DUPLICATES),
    (re.compile(r"too many certificates (?:\(\d+\) )?already issued for", re.IGNORECASE), _REGISTERED_DOMAIN),
)
# Words that name a rate limit on their own, for a trigger: the failed-validation, order and registration
# limits' refusals carry no "rateLimited" where certbot prints only its message.
LIMIT_WORDS = (r"too many failed authorizations|too many new orders|too many (?:new )?registrations (?:for this IP"
               r"|\(\d+\) from this IP)|too many currently pending authorizations")


def rate_limit(text: str) -> RateLimit | None:
    """The limit the refusal's words name; None where they name none (a bare "rateLimited")."""
    return next((limit for words, limit in _WORDS if words.search(text)), None)


def failed_validations_fix() -> str:
    """What to do about the hourly Failed Validation limit: wait, and fix the challenge before the next try."""
    return (f"{FAILED_VALIDATIONS.counts}: {FAILED_VALIDATIONS.wait}, and do not retry at once (each failed try "
            "counts again): fix what failed the challenge first (port 80 reachable from the internet and answered by "
            "nginx's webroot, the DNS record of hostname pointing at this host), and try it against the staging "
            "server (`--staging`, or `sudo certbot renew --dry-run`), whose limits are far higher, before asking the "
            "real one again; stop any loop or cron job that keeps retrying")


def limit_wait(limit: RateLimit) -> str:
    """The limit and how long to wait, in a clause."""
    return f"{limit.counts}: {limit.wait}"
