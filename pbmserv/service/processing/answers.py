"""The answers the server composes about a mail itself: what was refused
and how to do it right, that it could not be read, that the server failed
on it; each quoting the sender's mail with its passwords masked."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING

from pbmserv.mail.inbound import IncomingMail, parse_headers
from pbmserv.mail.mime import Unreadable
from pbmserv.protocol import Request, probable_passwords
from pbmserv.refusal import Refusal
from pbmserv.service.intake.masking import mask, masked_copy, nothing_kept
from pbmserv.service.play.reply_addresses import mask_addresses
from pbmserv.service.play.views import wrap
from pbmserv.service.processing.context import Reply
from pbmserv.service.processing.rates import Pause
from pbmserv.store.states import Kind

if TYPE_CHECKING:
    from pbmserv.service.processing.catalog import Catalog

log = logging.getLogger(__name__)

#: how much of a mail an answer quotes
QUOTED_LINES = 40
QUOTED_LINE_CHARS = 200
#: the most characters of one mail's text: what is longer is cut (`within_bounds`)
MOST_MAIL_CHARS = 64_000



@dataclass(frozen=True)
class Skipped:
    """The commands of a mail from number `first` on were not carried out, and why."""

    first: int
    reason: str



def error_subject(error: Refusal, catalog: Catalog) -> str:
    if error.game and error.game in catalog:
        title = catalog.get(error.game).title
        if error.board is not None:
            return f"{title} Board {error.board} Error"
        return f"{title} Error"
    return "pbmserv Error"



def error_reply(mail: IncomingMail, error: Refusal, catalog: Catalog, secrets: tuple[str, ...]) -> Reply:
    return Reply(
        (mail.sender,), error_subject(error, catalog), "\n".join([*_error_text(error, secrets), "", quote(mail, secrets)]),
        Kind.ERROR,
    )



def refusals_reply(
    mail: IncomingMail, refusals: list[tuple[int, str, Refusal]], skipped: Skipped | None,
    total: int, catalog: Catalog, secrets: tuple[str, ...],
) -> Reply:
    """One answer for every command of a `multiple` mail that was not carried out."""
    missed = commands_missed(refusals, skipped, total)
    parts = [wrap(f"{missed} of the {total} commands of your mail {'was' if missed == 1 else 'were'} not carried out.", hang="")]
    for number, text, error in refusals:
        parts += ["", f"Command {number}: {mask(text, secrets)}", *_error_text(error, secrets)]
    if skipped is not None:
        which = f"Command {total}" if skipped.first == total else f"Commands {skipped.first} to {total}"
        parts += ["", wrap(f"{which}: not carried out: {skipped.reason}; send them again in another mail.", hang="")]
    parts += ["", quote(mail, secrets)]
    subjects = {error_subject(error, catalog) for _, _, error in refusals}
    return Reply((mail.sender,), subjects.pop() if len(subjects) == 1 else "pbmserv Error", "\n".join(parts), Kind.ERROR)



def commands_missed(refusals: list[tuple[int, str, Refusal]], skipped: Skipped | None, total: int) -> int:
    """How many of a `multiple` mail's commands were not carried out."""
    return len(refusals) + (total - skipped.first + 1 if skipped is not None else 0)



def _error_text(error: Refusal, secrets: tuple[str, ...]) -> list[str]:
    """What was wrong, how to do it right, and the board where a move was refused."""
    parts = [wrap(mask(error.message, secrets), hang="")]
    if error.fix:
        parts.append(wrap(f"How to do it right: {error.fix}"))
    if error.board_text:
        parts += ["", error.board_text.rstrip("\n")]
    return parts



def read_headers(raw: bytes) -> IncomingMail | None:
    """What can be read of a mail that could not be read whole: its
    headers, or None if not even they can be."""
    try:
        return parse_headers(raw)
    except Exception:
        log.exception("a mail's headers could not be read")
        return None



def unreadable_reply(error: Unreadable) -> Callable[[IncomingMail, tuple[str, ...]], Reply]:
    def answer(mail: IncomingMail, secrets: tuple[str, ...]) -> Reply:
        return Reply((mail.sender,), "pbmserv Error", (
            wrap(f"The server could not read your mail: {error.reason}. Nothing in it was carried out.", hang="")
            + "\n" + wrap(
                "How to do it right: send your command as a plain text mail, the command in the Subject "
                "line (or 'multiple' there and one command on each line of the body), without attachments."
            ) + "\n\n" + quote(mail, secrets)
        ), Kind.ERROR)
    return answer



def failed_copy(mail: IncomingMail | None, request: Request | None) -> bytes:
    """What is kept of a failed mail: its masked copy. Where its commands
    could not be read, nothing tells where its passwords stand, so only its
    headers are kept (the Subject masked where a password would stand)."""
    if mail is None:
        return nothing_kept("not kept: the mail could not be read")
    if request is not None:
        return masked_copy(mail, request.passwords)
    headers_only = replace(mail, text="", body="")
    return masked_copy(
        headers_only, probable_passwords(mail.subject), state="passwords removed; its text was not kept",
    )



def apology(mail: IncomingMail, secrets: tuple[str, ...]) -> Reply:
    """The answer to a mail the server failed on: nothing in it was done."""
    return Reply((mail.sender,), "pbmserv Error", (
        "The server failed while handling your mail; nothing in it was carried out.\n"
        "The operator has been told. Please try again later.\n\n" + quote(mail, secrets)
    ), Kind.ERROR)



def pause_notice(pause: Pause) -> str:
    """What the last mail before a pause tells its recipient: that such
    mails stop, until when, and what still goes on."""
    until = pause.until.replace(second=0, microsecond=0)
    if until < pause.until:  # the minute it may go again, not one before
        until += timedelta(minutes=1)
    if pause.what == "replies":
        counted, after = "replies", (
            "what you send is still carried out (your moves are made, and board mails still go to you and to "
            "your opponents), but answers and error mails to this address are not sent, not even later; "
            "except that mail that proves it is yours (sent to the reply address of one of your board mails, "
            "or with your password) is answered within as many again."
        )
    elif pause.what == "replies to your own mail":
        counted, after = "replies to your own mail", (
            "what you send is still carried out (your moves are made, and board mails still go to you and to "
            "your opponents), but not answered, not even later."
        )
    elif pause.what == "board mails":
        counted, after = "board mails", (
            "moves are still made on all your boards and your opponents still get their board mails, but no "
            "board mail comes to this address, not even later: 'GAME show N' shows a board as it stands."
        )
    else:
        counted, after = "error mails", (
            "what you send is still carried out and answered (your moves are made, and board mails still go "
            "to you and to your opponents), but a command that is refused gets no error mail, not even later."
        )
    most = f"{pause.most_bytes:,} bytes of {counted}" if pause.by_bytes else f"{pause.most} {counted}"
    return wrap(
        f"{pause.what.capitalize()} to this address are paused until {until:%Y-%m-%d %H:%M} UTC: the server sends "
        f"one address at most {most} an hour, and this is the last of them. Until then {after}",
        hang="",
    )


def within_bounds(text: str) -> str:
    """A mail's text, cut after its last line within MOST_MAIL_CHARS
    characters, with a line saying so: a bound on every mail, whatever
    made it (a move list, a board and a comment are bounded each)."""
    if len(text) <= MOST_MAIL_CHARS:
        return text
    end = text.rfind("\n", 0, MOST_MAIL_CHARS - 200) + 1 or MOST_MAIL_CHARS - 200  # a line that long is cut itself
    kept, left_out = text[:end], len(text[end:].splitlines())
    kept += "" if kept.endswith("\n") else "\n"
    return kept + wrap(
        f"[... {left_out} more {'line' if left_out == 1 else 'lines'} left out: a mail from this server holds at most "
        f"{MOST_MAIL_CHARS:,} characters.]",
        hang="",
    ) + "\n"



def quote(mail: IncomingMail, secrets: tuple[str, ...]) -> str:
    """The sender's mail as an answer quotes it: passwords masked, at most
    QUOTED_LINES lines of at most QUOTED_LINE_CHARS characters (an error
    must not carry a stranger's text to whoever a forged sender names)."""
    lines = [
        f"Subject: {mask(mail.subject, secrets)}",
        *([""] + mask_addresses(mask(mail.body, secrets)).splitlines() if mail.body else []),
    ]
    quoted = [f"> {_cut(line, QUOTED_LINE_CHARS)}".rstrip() for line in lines[:QUOTED_LINES]]
    if len(lines) > QUOTED_LINES:
        quoted.append(f"> [... {len(lines) - QUOTED_LINES} more lines]")
    return "Your mail:\n" + "\n".join(quoted)



def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most] + " [...]"
