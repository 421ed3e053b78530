"""RFC 3834: which mails a robot must never answer."""

from __future__ import annotations

from pbmserv.mail.inbound import IncomingMail

ROBOT_LOCAL_PARTS = ("mailer-daemon", "postmaster")


def no_reply_reason(mail: IncomingMail, envelope_sender: str | None) -> str | None:
    """Why this mail must not be answered, or None if it may be."""
    headers = mail.headers
    if envelope_sender is not None and envelope_sender.strip("<> ") == "":
        return "empty return path (a bounce)"
    auto = headers.get("auto-submitted", "").strip().lower()
    if auto and auto != "no":
        return f"Auto-Submitted: {auto}"
    precedence = headers.get("precedence", "").strip().lower()
    if precedence in ("bulk", "junk", "list"):
        return f"Precedence: {precedence}"
    if "list-id" in headers:
        return "List-Id header (mailing list)"
    if "x-auto-response-suppress" in headers:
        return "X-Auto-Response-Suppress header"
    for address in (mail.sender, (envelope_sender or "").strip("<> ").lower()):
        if address.partition("@")[0] in ROBOT_LOCAL_PARTS:
            return f"sent by {address}"
    if not mail.sender:
        return "no usable From or Reply-To address"
    return None
