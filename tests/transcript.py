"""Transcripts: readable mail conversations replayed against a fresh database.

A transcript file is a sequence of blocks:

    === in                      a mail to the server (RFC 5322 text; To, Date
    From: alice@example.org     and Message-ID are added when missing)
    Subject: signup alice pw

    --- out to alice@example.org    a mail the server sent in reply:
    Subject: pbmserv signup alice   the headers that matter,
    In-Reply-To: <1@transcript>
                                    then the whole body
    Welcome, alice. ...

A line `=== cleanup after 7 days` instead of a mail moves the clock on by
that many days and runs one pass of reminders and forfeits (`pbmserv-admin
cleanup`); the mails it sent follow as `--- out` blocks.

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
from email.parser import BytesParser
from typing import Any

from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from tests.conftest import FakeClock

IN = "=== in"
CLEANUP = re.compile(r"^=== cleanup after (\d+) days?$")
OUT = re.compile(r"^--- out to (\S+)$")
SHOWN_HEADERS = ("Subject", "In-Reply-To", "Auto-Submitted")


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
        if line == IN or CLEANUP.match(line):
            current = []
            inputs.append("" if line == IN else line + "\n")
            in_output = False
            continue
        if OUT.match(line):
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


def render_delivered(recipient: str, raw: bytes) -> str:
    message = BytesParser(policy=policy.default).parsebytes(raw)
    lines = [f"--- out to {recipient}"]
    lines += [f"{name}: {message[name]}" for name in SHOWN_HEADERS if message[name] is not None]
    lines.append("")
    lines.append(message.get_content().replace("\r\n", "\n").rstrip("\n"))
    return "\n".join(lines)


def replay(transcript: Transcript, runtime: Runtime) -> str:
    backend = runtime.backend
    assert isinstance(backend, MemoryBackend)
    clock = runtime.clock
    assert isinstance(clock, FakeClock)
    blocks = ["\n".join(transcript.preamble).rstrip("\n")]
    for number, mail in enumerate(transcript.inputs, start=1):
        clock.advance(minutes=10)  # stays under the hourly reply caps
        cleanup = CLEANUP.match(mail.splitlines()[0])
        if cleanup:
            clock.advance(days=int(cleanup.group(1)))
            runtime.processor.run_timers()
            blocks.append(cleanup.group(0))
        else:
            runtime.intake.store(complete_mail(mail, number, runtime))
            runtime.processor.process_pending()
            blocks.append(IN + "\n" + mail.rstrip("\n"))
        backend.sent.clear()
        runtime.delivery.deliver_due()
        blocks += [render_delivered(recipient, raw) for recipient, raw in backend.sent]
    return "\n\n".join(block for block in blocks if block) + "\n"
