"""The swap test's machinery, shared by tests/test_leaks.py and
proofs/leak_proof.py: two servers (run A and run B) fed the same mails, but
for the owner's secret; everything the opponent (bob) and a bystander (carol)
receive is compared between the runs.

A mail counts as the same in both runs when its recipient, Subject, text,
every header but the Message-ID, and the length of its body as delivered
(after the transfer encoding) are equal; and no secret square or seat of a
run may appear as a word in it. A difference raises `Leak`.
"""

from __future__ import annotations

import difflib
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field, replace
from email.message import Message
from email.parser import BytesParser
from email.policy import compat32
from functools import cached_property
from itertools import count
from pathlib import Path
from typing import Protocol, runtime_checkable

from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.intake.arrival import Clock
from tests.mailtools import feed

PASSWORDS = {"alice": "secret1", "bob": "secret2", "carol": "secret3"}
OBSERVERS = ("bob", "carol")
BOARD = 101
#: squares and seats the games print as fixed examples ("like e5"); kept out
#: of the secrets so that the word check below needs no exceptions for them
FIXED_EXAMPLES = frozenset({"c4", "d5", "e5", "h5"})
#: a square or seat, with its chamber in Parliament's two-chamber game ("u:b1")
LABEL = re.compile(r"\b(?:[a-z]:)?[a-z][0-9]{1,2}\b")
#: "..., like b1." — an example the game picks from the public board (the
#: parliament `Next:` line), and the example move of the line to paste at
#: the end of a board mail ("... PASSWORD b1" and "(e.g. b1)", from the
#: board and the player's own knowledge); their independence of the secret
#: is what the comparison of the two runs checks, so the word check skips them
EXAMPLE_PHRASE = re.compile(r"\b(?:like|PASSWORD|e\.g\.)\s+\S+", re.IGNORECASE)
#: headers that differ between any two deliveries
VOLATILE_HEADERS = frozenset({"message-id"})
#: the MAC of a reply address (Reply-To), made with the account's reply secret,
#: which every signup draws anew: the same length in both runs, never the same code
REPLY_MAC = re.compile(r"(\+[a-z][a-z0-9_]*-\d{1,9}-\d{1,2}-)[a-z2-9]{16}@", re.IGNORECASE)

_numbers = count(1)


class Leak(AssertionError):
    """A mail to bob or carol depends on alice's secret."""


@runtime_checkable
class Advancing(Protocol):
    def advance(self, **kwargs: float) -> None: ...


def address(userid: str) -> str:
    return f"{userid}@example.org"


def label_words(text: str) -> set[str]:
    return set(LABEL.findall(EXAMPLE_PHRASE.sub("like", text).lower()))


def fresh_copy(template: Path, path: Path) -> str:
    """A copy of the empty database `template` at `path`, with nothing left of
    an earlier one there (its WAL, its arrival spool); its URL."""
    for old in path.parent.glob(f"{path.name}*"):
        old.unlink()
    shutil.copyfile(template, path)
    return f"sqlite:///{path}"


def twin_of(runtime: Runtime, template: Path, path: Path, clock: Clock) -> Runtime:
    """A second server like `runtime`, on a fresh copy of the empty database `template` at `path`."""
    url = fresh_copy(template, path)
    settings = replace(runtime.settings, database_url=url)
    return Runtime(settings, catalog=runtime.processor.catalog, clock=clock, backend=MemoryBackend())


# -- one mail in, its replies out ------------------------------------------------------
@dataclass
class Sent:
    """One delivered mail, read only as far as it is looked at (compat32: the
    headers as delivered, without the header registry's cost)."""

    recipient: str
    raw: bytes

    @cached_property
    def message(self) -> Message:
        return BytesParser(policy=compat32).parsebytes(self.raw)

    @property
    def subject(self) -> str:
        return str(self.message["Subject"])

    @cached_property
    def text(self) -> str:
        payload = self.message.get_payload(decode=True)
        assert isinstance(payload, bytes), "a reply is one text/plain part"
        return payload.decode(self.message.get_content_charset() or "ascii").replace("\r\n", "\n")

    @property
    def headers(self) -> list[tuple[str, str]]:
        return [
            (name, REPLY_MAC.sub(r"\1MAC@", str(value)))
            for name, value in self.message.items() if name.lower() not in VOLATILE_HEADERS
        ]

    @property
    def body_length(self) -> int:
        """The length of the body as delivered, in its transfer encoding."""
        end = self.raw.find(b"\r\n\r\n")
        return len(self.raw) - (end + 4) if end >= 0 else len(self.raw[self.raw.find(b"\n\n") + 2 :])

    @property
    def is_error(self) -> bool:
        return self.subject.endswith("Error")


def make_mail(sender: str, subject: str, text: str, message_id: str) -> bytes:
    """A plain mail, written out directly (the players' mails are ASCII and short)."""
    head = f"From: {sender}\r\nTo: pbmserv@localhost\r\nSubject: {subject}\r\nMessage-ID: {message_id}\r\n"
    mime = 'MIME-Version: 1.0\r\nContent-Type: text/plain; charset="us-ascii"\r\nContent-Transfer-Encoding: 7bit\r\n'
    return f"{head}{mime}\r\n{text or ''}\r\n".encode("ascii")


def deliver(runtime: Runtime, raw: bytes) -> list[Sent]:
    """Feed one mail in as `pbmserv receive` does; the mails delivered in reply."""
    return [Sent(recipient, data) for recipient, data in feed(runtime, raw)]


#: the moves that are not the game's ("GAME move board userid password propose")
SERVER_MOVES = frozenset({"propose", "undo", "accept", "reject", "resign"})


def kind_of(subject: str) -> str:
    """The command word of a mail sent ("move", "show", "all show", "signup"; "move undo")."""
    words = subject.lower().split()
    if len(words) > 1 and words[0] == "all":
        return "all show"
    if len(words) > 5 and words[1] == "move" and words[5] in SERVER_MOVES:
        return f"move {words[5]}"
    return words[1] if len(words) > 1 and words[0] in ("psychomachia", "parliament") else words[0]


# -- the two runs ------------------------------------------------------------------------
@dataclass
class Pair:
    """Run A and run B, fed the same mails."""

    a: Runtime
    b: Runtime
    game: str
    #: the labels that are secret in run A and in run B
    secrets: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    compared: int = 0  # observer mails found equal
    errors: int = 0  # refused commands of bob's and carol's
    #: the observer mails found equal, by the command that caused them ("move", "show error", ...)
    kinds: Counter[str] = field(default_factory=Counter)
    log: list[str] = field(default_factory=list)

    def send(self, sender: str, subject: str, text: str = "", *, subject_b: str | None = None,
             compare: bool = True) -> tuple[list[Sent], list[Sent]]:
        for runtime in (self.a, self.b):
            assert isinstance(runtime.clock, Advancing)
            runtime.clock.advance(minutes=10)  # under the hourly reply caps
        message_id = f"<leak-{next(_numbers)}@example.org>"
        raw_a = make_mail(address(sender), subject, text, message_id)
        raw_b = raw_a if subject_b is None else make_mail(address(sender), subject_b, text, message_id)
        self.log.append(subject if subject_b is None else f"{subject}   |   run B: {subject_b}")
        out_a, out_b = deliver(self.a, raw_a), deliver(self.b, raw_b)
        if compare:
            self.check(out_a, out_b, kind_of(subject), named=label_words(f"{subject}\n{text}"))
        return out_a, out_b

    def check(self, out_a: list[Sent], out_b: list[Sent], kind: str, named: set[str]) -> None:
        """`named`: the labels the mail sent names itself, left out of the word
        check. A preview is not word-checked: it plays on bob's view, where the
        secret squares and seats are empty ones that his moves may fill or flip
        (in both runs alike, which the comparison checks)."""
        history = "\n".join(self.log[-12:])
        if [s.recipient for s in out_a] != [s.recipient for s in out_b]:
            raise Leak(
                f"different recipients after\n{history}\nrun A: {[s.recipient for s in out_a]}\n"
                f"run B: {[s.recipient for s in out_b]}"
            )
        observers = {address(userid) for userid in OBSERVERS}
        seen = [(sa, sb) for sa, sb in zip(out_a, out_b) if sa.recipient in observers]
        for run, secret in (("A", self.secrets[0]), ("B", self.secrets[1])) if kind != "preview" else ():
            for pair in seen:
                sent = pair[0] if run == "A" else pair[1]
                found = label_words(f"{sent.subject}\n{sent.text}") & (secret - named)
                if found:
                    raise Leak(
                        f"run {run}: the secret {sorted(found)} is named in a mail to {sent.recipient} after\n"
                        f"{history}\n\nSubject: {sent.subject}\n\n{sent.text}"
                    )
        for sa, sb in seen:
            if (sa.subject, sa.text) != (sb.subject, sb.text):
                diff = "".join(difflib.unified_diff(
                    f"Subject: {sa.subject}\n\n{sa.text}".splitlines(keepends=True),
                    f"Subject: {sb.subject}\n\n{sb.text}".splitlines(keepends=True),
                    "run A", "run B",
                ))
                raise Leak(f"the mail to {sa.recipient} depends on the secret, after\n{history}\n\n{diff}")
            if sa.headers != sb.headers:
                raise Leak(f"the headers of the mail to {sa.recipient} differ, after\n{history}\n{sa.headers}\n{sb.headers}")
            if sa.body_length != sb.body_length:
                raise Leak(
                    f"the mail to {sa.recipient} is {sa.body_length} bytes long in run A and {sb.body_length} "
                    f"in run B, after\n{history}"
                )
            self.kinds[f"{kind} error" if sa.is_error else kind] += 1
        self.compared += len(seen)

    def expect_error(self, sender: str, subject: str) -> None:
        out_a, _ = self.send(sender, subject)
        assert [(s.recipient, s.is_error) for s in out_a] == [(address(sender), True)], (
            f"{subject!r} was not refused with one error mail: {[(s.recipient, s.subject) for s in out_a]}"
        )
        self.errors += 1

    def expect_move(self, sender: str, subject: str, *, text: str = "", subject_b: str | None = None,
                    compare: bool = True) -> tuple[list[Sent], list[Sent]]:
        out_a, out_b = self.send(sender, subject, text, subject_b=subject_b, compare=compare)
        for out in (out_a, out_b):
            assert out and not any(s.is_error for s in out), f"{subject!r} was refused: {out[0].text if out else 'no mail'}"
        return out_a, out_b

    def show_differs(self) -> bool:
        out_a, out_b = self.send("carol", f"{self.game} show {BOARD}", compare=False)
        return out_a[0].text != out_b[0].text


def start(pair: Pair) -> None:
    """Everyone signs up and confirms the address by replying to the welcome."""
    for userid, password in PASSWORDS.items():
        out_a, _ = pair.send(userid, f"signup {userid} {password}")
        [welcome] = [sent.subject for sent in out_a if sent.subject.startswith(f"confirm {userid} ")]
        pair.send(userid, f"Re: {welcome}")


def subscribe_carol(pair: Pair) -> None:
    """carol follows the board: every board mail reaches her too (the public view)."""
    pair.send("carol", f"{pair.game} subscribe {BOARD} carol {PASSWORDS['carol']}")


def command(game: str, verb: str, userid: str, rest: str = "") -> str:
    """`GAME verb 101 userid password rest`."""
    return f"{game} {verb} {BOARD} {userid} {PASSWORDS[userid]} {rest}".rstrip()


def move_subject(game: str, userid: str, move: str, guard: int | None = None) -> str:
    tail = f" #{guard}" if guard is not None else ""
    return command(game, "move", userid, move) + tail
