"""Who vouches for a mail's author: the Authentication-Results headers
(RFC 8601) that mail servers write after checking a mail's DKIM
signatures and its From domain's DMARC policy.

A From line proves nothing: anyone can write any address there. A mail
server that checked DMARC can vouch for the From's domain, and says so
in an Authentication-Results header under its name (its authserv-id).
Anyone can write such a header too, so the service trusts only the one
server its operator names (`[mail] trusted_authserv_id`), which must
remove headers under its name that a sender wrote (RFC 8601, section 5).
The headers are read with `authres`."""

from __future__ import annotations

from collections import defaultdict
from email.utils import getaddresses

import authres

from pbmserv.mail.mime import RawHeaders, unfolded
from pbmserv.mailbox import mailbox


def author(headers: RawHeaders) -> str:
    """The mail's author: the mailbox of its one From header, if it names
    exactly one; else "" (DMARC vouches for the From domain only then)."""
    froms = headers.get("from", [])
    if len(froms) != 1 or not froms[0].isascii():
        return ""
    addresses = [address for _, address in getaddresses([unfolded(froms[0])]) if address]
    return (mailbox(addresses[0].strip()) or "") if len(addresses) == 1 else ""


def vouchers(headers: RawHeaders, author: str) -> frozenset[str]:
    """The authserv-ids (lower case) of the mail servers whose headers say
    that `author`'s domain passed DMARC, or that a DKIM signature of it (or
    of a parent domain) was verified, and report no DMARC failure for it."""
    if not author:
        return frozenset()
    domain = author.rpartition("@")[2]
    verdicts: defaultdict[str, set[str]] = defaultdict(set)
    for value in headers.get("authentication-results", ()):
        try:
            header = authres.AuthenticationResultsHeader.parse_value(unfolded(value))
        except Exception:  # a header that cannot be read vouches for nothing
            continue
        verdicts[str(header.authserv_id).lower()].update(_verdicts(header, domain))
    return frozenset(server for server, found in verdicts.items() if "pass" in found and "fail" not in found)


def _verdicts(header: authres.AuthenticationResultsHeader, domain: str) -> set[str]:
    """"pass" for a DMARC pass of `domain` or an aligned DKIM pass, "fail" for a DMARC verdict that is not a pass."""
    found = set()
    for result in header.results:
        properties = {(p.type, p.name): str(p.value).lower() for p in result.properties}
        verdict = str(result.result).lower()
        if result.method == "dmarc" and properties.get(("header", "from"), domain) == domain and verdict != "none":
            found.add("pass" if verdict == "pass" else "fail")
        elif result.method == "dkim" and verdict == "pass":
            signer = properties.get(("header", "d"), "")
            if signer and (domain == signer or domain.endswith(f".{signer}")):
                found.add("pass")
    return found
