"""Mail addresses as RFC 5321 mailboxes: the only shape of address the
server takes from a mail (where replies go, the addresses of an account)
and so the only one it ever mails to."""

from __future__ import annotations

import re

_ATOM = r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_MAILBOX = re.compile(rf"(?P<local>{_ATOM}(?:\.{_ATOM})*)@{_LABEL}(?:\.{_LABEL})*", re.ASCII | re.IGNORECASE)
#: RFC 5321 section 4.5.3.1: a local part of 64 octets, a path of 256 with its brackets
LONGEST_LOCAL_PART = 64
LONGEST_MAILBOX = 254


def mailbox(text: str) -> str | None:
    """`text`, in lower case, if it is a mailbox: a dot-string local part
    and a domain of host name labels (quoted local parts, address literals
    and anything with spaces, commas, colons or comments are not); else None."""
    match = _MAILBOX.fullmatch(text)
    if match is None or len(match["local"]) > LONGEST_LOCAL_PART or len(text) > LONGEST_MAILBOX:
        return None
    return text.lower()


def mailbox_problem(text: str) -> str | None:
    """Why `text` is not a mailbox, or None if it is one."""
    if mailbox(text) is not None:
        return None
    if len(text) > LONGEST_MAILBOX:
        return f"is longer than {LONGEST_MAILBOX} characters"
    if len(text.rpartition("@")[0]) > LONGEST_LOCAL_PART:
        return f"has more than {LONGEST_LOCAL_PART} characters before the @"
    return "is not a plain mail address (local-part@domain, without a name, quotes, brackets or spaces)"
