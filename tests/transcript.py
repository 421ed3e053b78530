"""Transcripts: readable mail conversations replayed against a fresh database.

A transcript file is a sequence of blocks:

    === in                      a mail to the server (RFC 5322 text; To, Date
    From: alice@example.org     and Message-ID are added when missing)
    Subject: signup alice pw

    --- out to alice@example.org    a mail the server sent in reply:
    Subject: pbmserv help           the headers that matter,
    In-Reply-To: <1@transcript>
                                    then the whole body
    Welcome, alice. ...

A line `=== bots` instead of a mail plays the bots' turns due now
(`pbmserv bots --once`, each search of a fixed size, so the moves are the
same in every run); the mails that follow are what they sent.
A line `=== cleanup after 7 days` (or `after 3 hours`) instead of a mail
moves the clock on by that much and runs one pass of reminders, forfeits
and digests (`pbmserv-admin cleanup`); the mails it sent follow as
`--- out` blocks.

A board mail with a picture (`pictures on`) shows its text, then, after a
line `--- beside it, as HTML, the picture inline:`, the words of its HTML
version, the picture as `[picture: its alt text]`. A mail with files
attached (`GAME record`) shows its text, then each file after a line
`--- attached: its filename (its type)`.

A board's first mail to an address shows its `Message-ID`, the root of
the board's thread there; `References` is shown where it says more than
`In-Reply-To` (docs/decisions/0144-one-thread-per-board.md).

A board mail to a player comes from their reply address, shown as
`Reply-To: pbmserv+toy-101-1-{alice:1}@pbmserv.example` (so too in a
body that names it, as a digest does): the code of the
first genuine reply address of alice's seat seen so far (a new password
gives `{alice:2}`); `{forged}` is a code that is not genuine. An `in` mail
whose To is such an address, written the same way, goes to that address
(the envelope recipient), with the real code in place of its name; one
that intake refuses (`pbmserv receive` exits 67, the SMTP listener
answers 550) shows as `--- refused: why`.

Lines starting with `#` before the first block describe the transcript; a
line `# games: majorities synch` names the games the server offers besides
the test game `toy` (so that installing a new game changes no transcript);
a line `# admins: root` names the server's admins (the setting `admins`);
a line `# limits: replies_per_hour=4` sets numbers of the `[limits]` settings.
Replaying feeds every `in` mail through store -> process -> deliver (the path
of `pbmserv receive`) and renders what was delivered the same way; the file
must come out unchanged. `PBMSERV_REGENERATE=1 pytest tests/test_transcripts.py`
rewrites the expectations and prints the diff of every change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from pbmserv.mail.backends import MemoryBackend
from pbmserv.mail.html_text import html_to_text
from pbmserv.runtime import Runtime
from pbmserv.service.bots.queue import play_due_turns
from pbmserv.service.intake.arrival import reply_address_of
from pbmserv.service.play.reply_addresses import ReplyToken, is_genuine
from pbmserv.store import users
from tests.conftest import FakeClock

IN = "=== in"
CLEANUP = re.compile(r"^=== cleanup after (\d+) (day|hour)s?$")
#: the bots' turns due now, each thought out with a fixed search size (`pbmserv bots --once`)
BOTS = "=== bots"
BOT_ITERATIONS = 300
OUT = re.compile(r"^--- out to (\S+)$")
SHOWN_HEADERS = ("Subject", "Reply-To", "Message-ID", "In-Reply-To", "References", "Auto-Submitted")
#: a Message-ID shown: a board thread's root, the same in every run (any other is new each time)
_ROOT_ID = re.compile(r"^<board\.")
REFUSED = re.compile(r"^--- refused: .*$")
_CODE = re.compile(r"(\+[a-z][a-z0-9_]*-\d+-\d+-)([a-z2-9]{16})(@)")
_NAMED = re.compile(r"(\+[a-z][a-z0-9_]*-\d+-\d+-)\{([a-z0-9]+:\d+)\}(@)")


class ReplyCodes:
    """The codes of the reply addresses seen in a replay, by readable name."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self.names: dict[str, str] = {}  # code -> "alice:1"

    def named(self, text: str) -> str:
        return _CODE.sub(lambda match: f"{match.group(1)}{{{self._name(match)}}}{match.group(3)}", text)

    def coded(self, text: str) -> str:
        codes = {name: code for code, name in self.names.items()}
        return _NAMED.sub(lambda match: match.group(1) + codes[match.group(2)] + match.group(3), text)

    def _name(self, match: re.Match[str]) -> str:
        code = match.group(2)
        if code in self.names:
            return self.names[code]
        token = ReplyToken.read(match.group(1)[1:] + code)
        assert token is not None
        with self.runtime.engine.connect() as connection:
            holder = users.seat_holder(connection, token.game, token.board, token.seat)
        if holder is None or not is_genuine(self.runtime.intake.key, token, *holder):
            return "forged"
        taken = sum(1 for name in self.names.values() if name.startswith(f"{holder[0]}:"))
        self.names[code] = f"{holder[0]}:{taken + 1}"
        return self.names[code]


@dataclass
class Transcript:
    preamble: list[str]
    inputs: list[str]  # the text of each incoming mail

    @property
    def games(self) -> list[str]:
        return self._listed("# games:")

    @property
    def admins(self) -> list[str]:
        return self._listed("# admins:")

    @property
    def limits(self) -> dict[str, Any]:  # Settings fields, for dataclasses.replace
        return {name: int(number) for name, number in (item.split("=", 1) for item in self._listed("# limits:"))}

    def _listed(self, prefix: str) -> list[str]:
        for line in self.preamble:
            if line.startswith(prefix):
                return line.split(":", 1)[1].split()
        return []


def read(text: str) -> Transcript:
    preamble: list[str] = []
    inputs: list[str] = []
    current: list[str] | None = None
    in_output = False
    for line in text.splitlines():
        if line in (IN, BOTS) or CLEANUP.match(line):
            current = []
            inputs.append("" if line == IN else line + "\n")
            in_output = False
            continue
        if OUT.match(line) or REFUSED.match(line):
            in_output = True
            continue
        if current is None:
            preamble.append(line)
        elif not in_output:
            inputs[-1] += line + "\n"
    return Transcript(preamble, [mail.rstrip("\n") + "\n" for mail in inputs])


def complete_mail(text: str, number: int, runtime: Runtime) -> bytes:
    headers, _, body = text.partition("\n\n")
    names = {line.split(":", 1)[0].lower() for line in headers.splitlines() if ":" in line}
    extra = []
    if "to" not in names:
        extra.append(f"To: {runtime.settings.address}")
    if "date" not in names:
        extra.append("Date: Mon, 05 Jan 2026 09:00:00 +0000")
    if "message-id" not in names:
        extra.append(f"Message-ID: <{number}@transcript>")
    full = "\n".join([headers.rstrip("\n"), *extra]) + "\n\n" + body
    return full.replace("\n", "\r\n").encode("utf-8")


def envelope_recipient(raw: bytes) -> str:
    """Where the mail goes, as an MTA would pass it: its To."""
    return str(BytesParser(policy=policy.default).parsebytes(raw, headersonly=True)["To"] or "")


def render_delivered(recipient: str, raw: bytes, codes: ReplyCodes) -> str:
    message = BytesParser(policy=policy.default).parsebytes(raw)
    lines = [f"--- out to {recipient}"]
    lines += [
        f"{name}: {codes.named(str(message[name]))}" for name in SHOWN_HEADERS
        if message[name] is not None and _shown(name, message)
    ]
    lines.append("")
    text = message.get_body(("plain",)) if message.is_multipart() else message
    assert text is not None, "every mail has its text"
    lines.append(codes.named(text.get_content().replace("\r\n", "\n").rstrip("\n")))
    if message.get_content_type() == "multipart/mixed":
        lines += render_attachments(message)
    elif message.is_multipart():
        lines += ["", *(codes.named(line) for line in render_html_version(message))]
    return "\n".join(lines)


def _shown(name: str, message: EmailMessage) -> bool:
    """Whether the header is shown: a Message-ID only if it is a board
    thread's root, References only where it says more than In-Reply-To."""
    if name == "Message-ID":
        return _ROOT_ID.match(str(message[name])) is not None
    return name != "References" or str(message[name]) != str(message["In-Reply-To"])


def render_attachments(message: EmailMessage) -> list[str]:
    """The files a mail carries after its text part, each under a line
    `--- attached: its filename (its type)`, as text."""
    text, *files = message.iter_parts()
    assert text.get_content_type() == "text/plain", "a mail with files attached has its text first"
    lines = []
    for part in files:
        assert part.get_content_disposition() == "attachment", "each file is an attachment"
        lines += ["", f"--- attached: {part.get_filename()} ({part.get_content_type()})", ""]
        lines.append(part.get_content().decode("utf-8").rstrip("\n"))
    return lines


def render_html_version(message: EmailMessage) -> list[str]:
    """The HTML version beside a board mail's text, as its words read (the
    picture shown as `[picture: its alt text]`, a `mailto:` link as `text [mailto:address]`),
    once its structure is checked: multipart/alternative of the text and a
    multipart/related of the HTML and the PNGs it shows by their Content-IDs
    (a board mail's one, a digest's one per board)."""
    text, related = message.iter_parts()
    html, *images = related.iter_parts()
    assert (message.get_content_type(), text.get_content_type(), related.get_content_type()) == (
        "multipart/alternative", "text/plain", "multipart/related",
    )
    assert html.get_content_type() == "text/html" and images
    assert all((image.get_content_type(), image.get_content_disposition()) == ("image/png", "inline") for image in images)
    source = html.get_content()
    shown = re.findall(r'<img src="cid:([^"]+)"', source)
    assert shown == [str(image["Content-ID"]).strip("<>") for image in images], "the HTML shows the pictures of the mail"
    pictured = re.sub(r'<img [^>]*alt="([^"]*)"[^>]*>', r"<p>[picture: \1]</p>", source)
    pictured = re.sub(r'<a href="mailto:([^"]*)">([^<]*)</a>', r"\2 [mailto:\1]", pictured)
    return ["--- beside it, as HTML, the picture inline:", "", html_to_text(pictured).rstrip("\n")]


def replay(transcript: Transcript, runtime: Runtime) -> str:
    backend = runtime.backend
    assert isinstance(backend, MemoryBackend)
    clock = runtime.clock
    assert isinstance(clock, FakeClock)
    codes = ReplyCodes(runtime)
    blocks = ["\n".join(transcript.preamble).rstrip("\n")]
    for number, mail in enumerate(transcript.inputs, start=1):
        clock.advance(minutes=10)  # stays under the hourly reply caps
        cleanup = CLEANUP.match(mail.splitlines()[0])
        if mail.splitlines()[0] == BOTS:
            assert runtime.catalog is not None
            play_due_turns(runtime.engine, runtime.intake, runtime.processor.catalog, clock, iterations=BOT_ITERATIONS)
            runtime.processor.process_pending()
            blocks.append(BOTS)
        elif cleanup:
            clock.advance(**{f"{cleanup.group(2)}s": int(cleanup.group(1))})
            runtime.processor.run_timers()
            blocks.append(cleanup.group(0))
        else:
            blocks.append(IN + "\n" + mail.rstrip("\n"))
            raw = complete_mail(codes.coded(mail), number, runtime)
            recipient = reply_address_of(raw, envelope_recipient(raw), runtime.settings.address)
            refusal = runtime.intake.recipient_problem(recipient) if recipient else None
            if refusal is not None:
                blocks.append(f"--- refused: {refusal}")
                continue
            runtime.intake.store(raw, None, recipient)
            runtime.processor.process_pending()
        backend.sent.clear()
        runtime.delivery.deliver_due()
        blocks += [render_delivered(recipient, raw, codes) for recipient, raw in backend.sent]
    return "\n\n".join(block for block in blocks if block) + "\n"
