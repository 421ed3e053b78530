"""The bad mail of `bad_mail_flood.py`: a deterministic stream of generated
hostile mails of many kinds, built on the hostile corpus
(`tests/hostile_corpus.py`): its mail builders, its fuzz lines, and its
attacks themselves, each copy with Message-IDs of its own.

Every automatic mail (bounce, Auto-Submitted, list, bulk) has a
Message-ID starting `<auto-`, so that a reply to one is recognised by its
In-Reply-To; header-injection attempts name addresses at
`victim.example`, which no mail may ever reach."""

from __future__ import annotations

import base64
import random
from collections.abc import Iterator
from dataclasses import dataclass

from tests.hostile_corpus import _FUZZ_BYTES, _FUZZ_COMMANDS, ATTACKS, SERVER, raw_mail

#: the real accounts, in pairs that play a board each in turn (a long run makes more new boards an hour than
#: the production cap lets name one player: 10), whose passwords the flood guesses
PLAYERS = {name: f"{name}@example.org" for name in ("alice", "bob", *(f"player{number}" for number in range(3, 25)))}
#: a mail to any address here is a header injection that worked
VICTIM_DOMAIN = "victim.example"
#: strangers' addresses the flood comes from: some send many mails, most few
STRANGERS = 5000


@dataclass(frozen=True)
class BadMail:
    kind: str
    raw: bytes
    envelope_sender: str  # "" for a bounce (MAIL FROM:<>)
    automatic: bool = False


#: kind -> weight in the mix
KINDS = {
    "random bytes": 10, "truncated MIME": 8, "nested MIME": 3, "many parts": 3, "absurd charset": 9, "huge headers": 3,
    "huge body": 3, "NUL bytes": 8, "multiple, hundreds of lines": 8, "wrong password": 10, "header injection": 12,
    "automatic": 12, "unknown commands": 9, "hostile corpus": 2,
}


class FloodMails:
    """Bad mails, numbered from 1; the same seed gives the same bytes."""

    def __init__(self, seed: int, max_bytes: int, board: int = 101):
        self.random = random.Random(seed)
        self.max_bytes = max_bytes
        self.board = board
        self.kinds, self.weights = list(KINDS), list(KINDS.values())
        self.corpus = [mail for attack in ATTACKS for mail in attack().mails]
        self.number = 0
        self.seed = seed

    def __iter__(self) -> Iterator[BadMail]:
        while True:
            yield self.next()

    def next(self) -> BadMail:
        self.number += 1
        kind = self.random.choices(self.kinds, self.weights)[0]
        return getattr(self, "_" + kind.split(",")[0].replace(" ", "_").lower())(kind)

    # -- helpers --------------------------------------------------------------------
    def _id(self, prefix: str = "flood") -> str:
        return f"{prefix}-{self.seed}-{self.number}@flood.example"

    def _stranger(self) -> str:
        # a few heavy senders, a long tail of light ones
        number = int(self.random.paretovariate(1.2)) % STRANGERS if self.random.random() < 0.5 else self.random.randrange(STRANGERS)
        return f"stranger{number}@flood.example"

    def _mail(
        self, kind: str, subject: str, body: str | bytes = "", *, headers: tuple[tuple[str, str], ...] = (),
        content_type: str = "text/plain; charset=us-ascii",
    ) -> BadMail:
        sender = self._stranger()
        raw = raw_mail(sender, subject, body, message_id=self._id(), headers=headers, content_type=content_type)
        return BadMail(kind, raw, sender)

    def _size(self) -> int:
        """A large size, up to the limit, skewed towards the smaller."""
        return int(self.max_bytes * (0.1 + 0.85 * self.random.random() ** 2))

    def _junk_line(self) -> bytes:
        if self.random.random() < 0.4:
            return self.random.choice(_FUZZ_COMMANDS).format(n=self.number).encode()
        return bytes(self.random.choice(_FUZZ_BYTES) for _ in range(self.random.randint(1, 120)))

    # -- the kinds ------------------------------------------------------------------
    def _random_bytes(self, kind: str) -> BadMail:
        raw = self.random.randbytes(self.random.randint(20, 8000))
        if self.random.random() < 0.8:  # in lines SMTP takes (at most 1,000 octets), mostly
            raw = b"\r\n".join(raw[at:at + 200] for at in range(0, len(raw), 200))
        if self.random.random() < 0.5:  # some look like a mail at first
            raw = f"From: {self._stranger()}\r\nSubject: help\r\n".encode() + raw
        return BadMail(kind, raw, self._stranger())

    def _truncated_mime(self, kind: str) -> BadMail:
        parts = "".join(
            f"--cut\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
            f"{base64.b64encode(self.random.randbytes(300)).decode()}\r\n"
            for _ in range(self.random.randint(1, 5))
        )
        body = parts[: self.random.randint(10, len(parts))]  # cut anywhere: in a header, in base64, before the end
        return self._mail(kind, "help", body, content_type='multipart/mixed; boundary="cut"')

    def _nested_mime(self, kind: str) -> BadMail:
        depth = self.random.choice((10, 99, 100, 101, 500, 2000))
        if self.random.random() < 0.5:
            head = "".join(f"--b{n}\r\nContent-Type: multipart/mixed; boundary=\"b{n + 1}\"\r\n\r\n" for n in range(depth))
            tail = "" if self.random.random() < 0.3 else "".join(f"--b{n}--\r\n" for n in reversed(range(depth + 1)))
            body = head + f"--b{depth}\r\nContent-Type: text/plain\r\n\r\nhelp\r\n" + tail
            return self._mail(kind, "help", body[: self.max_bytes - 1000], content_type='multipart/mixed; boundary="b0"')
        body = "Content-Type: message/rfc822\r\n\r\n" * depth + "Subject: help\r\n\r\nhelp\r\n"
        return self._mail(kind, "help", body[: self.max_bytes - 1000], content_type="message/rfc822")

    def _many_parts(self, kind: str) -> BadMail:
        count = min(self.random.choice((50, 101, 1000, 5000)), self._size() // 40)
        parts = "".join(f"--s\r\nContent-Type: text/plain\r\n\r\nmajorities show {self.board} {n}\r\n" for n in range(count))
        return self._mail(kind, "multiple", parts + "--s--\r\n", content_type='multipart/mixed; boundary="s"')

    def _absurd_charset(self, kind: str) -> BadMail:
        charset = self.random.choice((
            "x-unknown-999", "utf-7", "utf-8''", "\"\"", "iso-2022-jp-2004", "ebcdic-cp-us", "cp65001", "utf-32", "a" * 300,
            "utf-8; charset=latin-1", "unicode-1-1-utf-7", "x-user-defined",
        ))
        encoded_word = f"=?{charset}?b?{base64.b64encode(self.random.randbytes(20)).decode()}?="
        body = b"\r\n".join(self.random.randbytes(70) for _ in range(self.random.randint(1, 60)))
        encoding = self.random.choice(("8bit", "base64", "quoted-printable", "x-uuencode", "bogus"))
        return self._mail(
            kind, f"help {encoded_word}", body, content_type=f"text/plain; charset={charset}",
            headers=(("Content-Transfer-Encoding", encoding), ("Comments", encoded_word)),
        )

    def _huge_headers(self, kind: str) -> BadMail:
        size = self._size() - 2000
        if self.random.random() < 0.5:  # thousands of headers
            headers = tuple((f"X-Junk-{n}", "x" * 30) for n in range(size // 42))
            return self._mail(kind, "help", "help", headers=headers)
        words = " ".join("w" * self.random.randint(1, 70) for _ in range(size // 40))  # one huge folded header
        return self._mail(kind, words[: size], "help")

    def _huge_body(self, kind: str) -> BadMail:
        size = self._size() - 1000
        line = self.random.choice(("x", "a comment of the kind nobody writes " * 5, f"majorities show {self.board}"))
        body = (line + "\n") * (size // (len(line) + 2))
        return self._mail(kind, self.random.choice(("help", f"majorities show {self.board}", "list")), body)

    def _nul_bytes(self, kind: str) -> BadMail:
        where = self.random.choice(("body", "body", "subject", "from", "envelope"))
        sender = self._stranger()
        body = "help\x00\x00 with NULs\x00\n" * self.random.randint(1, 50)
        subject = "help\x00" if where == "subject" else "help"
        from_ = f"nul\x00{sender}" if where == "from" else sender
        envelope = f"nul\x00{sender}" if where == "envelope" else sender
        return BadMail(kind, raw_mail(from_, subject, body.encode("latin-1"), message_id=self._id()), envelope)

    def _multiple(self, kind: str) -> BadMail:
        count = self.random.randint(100, 900)
        body = b"\r\n".join(self._junk_line() for _ in range(count)) + b"\r\n"
        return self._mail(kind, "multiple", body, headers=(("Content-Transfer-Encoding", "8bit"),),
                          content_type="text/plain; charset=utf-8")

    def _wrong_password(self, kind: str) -> BadMail:
        userid = self.random.choice(list(PLAYERS))
        guess = f"guess{self.number}"
        subject = self.random.choice((
            f"majorities move {self.board} {userid} {guess} a1", f"change password {userid} {guess} new{self.number}",
            f"signoff {userid} {guess}", f"majorities resign {self.board} {userid} {guess}",
            f"message {userid} {guess} {userid}", f"change address {userid} {guess} me{self.number}@flood.example",
        ))
        if self.random.random() < 0.02:  # forged as the player: always checked (argon2), answered to the player
            address = PLAYERS[userid]
            return BadMail(kind, raw_mail(address, subject, message_id=self._id()), address)
        return self._mail(kind, subject)

    def _header_injection(self, kind: str) -> BadMail:
        victim = f"v{self.number}@{VICTIM_DOMAIN}"
        sender = self._stranger()
        hidden = base64.b64encode(f"{sender}\r\nBcc: {victim}".encode()).decode()
        field, value = self.random.choice((
            ("Subject", f"help\r\nBcc: {victim}"), ("Subject", f"help\rBcc: {victim}"), ("Subject", f"help\nBcc: {victim}"),
            ("Subject", f"=?utf-8?q?help=0D=0ABcc:_{victim}?="), ("Subject", f"=?utf-8?b?{hidden}?="),
            ("From", f"{sender}\rBcc: {victim}"), ("From", f"\"Eve\r\nBcc: {victim}\" <{sender}>"),
            ("From", f"=?utf-8?q?Eve=0D=0ABcc:_{victim}?= <{sender}>"), ("From", f"=?utf-8?q?{victim.replace('@', '=40')}?="),
            ("Reply-To", f"=?utf-8?b?{hidden}?="), ("Reply-To", f"\"x\nBcc: {victim}\" <{sender}>"),
            ("Reply-To", f"{sender}\r\n\tBcc: {victim}"), ("Message-ID", f"<{self._id()}>\r\n Bcc: {victim}"),
            ("In-Reply-To", f"<x@flood.example>\r\n Bcc: {victim}"), ("References", f"=?utf-8?q?<x@y>=0D=0ABcc:_{victim}?="),
        ))
        headers = {"From": sender, "To": SERVER, "Subject": "help", "Message-ID": f"<{self._id()}>", field: value}
        raw = "".join(f"{name}: {text}\r\n" for name, text in headers.items()) + "\r\nhelp\r\n"
        return BadMail(kind, raw.encode("latin-1"), sender)

    def _automatic(self, kind: str) -> BadMail:
        sender = self._stranger()
        subject = self.random.choice(("help", "list", f"majorities show {self.board}", "Out of office: help"))
        message_id = self._id("auto")
        how = self.random.choice(("bounce", "auto-submitted", "precedence", "list-id", "suppress", "daemon"))
        headers: tuple[tuple[str, str], ...] = {
            "auto-submitted": (("Auto-Submitted", self.random.choice(("auto-replied", "auto-generated", "auto-notified"))),),
            "precedence": (("Precedence", self.random.choice(("bulk", "junk", "list"))),),
            "list-id": (("List-Id", "<games.flood.example>"),),
            "suppress": (("X-Auto-Response-Suppress", "All"),),
        }.get(how, ())
        if how == "daemon":
            sender = "MAILER-DAEMON@flood.example"
        raw = raw_mail(sender, subject, "Your mail could not be delivered.\n", message_id=message_id, headers=headers)
        return BadMail(kind, raw, "" if how == "bounce" else sender, automatic=True)

    def _unknown_commands(self, kind: str) -> BadMail:
        subject = self.random.choice((
            "hello", "Re: Re: Fwd: your account", f"majorities move {self.board}", "majorities move x y z w",
            f"majorities show {10 ** 30}", "signup", "help " * 200, "list " + "majorities " * 50, "\t\t\t",
        ))
        return self._mail(kind, subject.strip() or "x", "\n".join(self._junk_line().decode("latin-1") for _ in range(5)))

    def _hostile_corpus(self, kind: str) -> BadMail:
        mail = self.random.choice(self.corpus)
        raw = mail.raw.replace(b"@hostile.example", f".{self.seed}-{self.number}@hostile.example".encode())
        automatic = b"Auto-Submitted:" in raw.partition(b"\r\n\r\n")[0]
        if automatic:
            raw = raw.replace(b"Message-ID: <", b"Message-ID: <auto-", 1)
        return BadMail(kind, raw, mail.envelope_sender, automatic=automatic)

