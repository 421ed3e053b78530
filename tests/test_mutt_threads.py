"""One thread per board, as mutt sees it (docs/decisions/0144-one-thread-per-board.md):
a whole game's mails, written by the server into a real maildir, read by
mutt in thread view. Every mail of a board to one address sits in that
board's one thread: the new-board mail, the board mails after each move
(by the opponent, by reply, by the bot), the chat and the answer to it, a
reminder, `show`, the mail after a password change and the final mail,
and the subscriber's copies."""

from __future__ import annotations

from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

from pbmserv.mail.backends import MaildirBackend, MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.bots.queue import play_due_turns
from tests import mutt
from tests.conftest import FakeClock
from tests.mailtools import make_mail, send, send_raw, signup


@dataclass
class TeeBackend(MemoryBackend):
    """Mail kept for the test's eyes and written into a real maildir for mutt's."""

    maildir: MaildirBackend | None = None

    def send(self, sender: str, recipient: str, raw: bytes, mail_key: str = "") -> None:
        super().send(sender, recipient, raw)
        assert self.maildir is not None
        self.maildir.send(sender, recipient, raw)

    def close(self) -> None:
        assert self.maildir is not None
        self.maildir.close()


def mail_to(mails: list[tuple[str, EmailMessage]], recipient: str) -> EmailMessage:
    found = [message for to, message in mails if to == recipient]
    assert found, f"no mail to {recipient}"
    return found[-1]


def reply(runtime: Runtime, sender: str, answered: EmailMessage, text: str) -> list[tuple[str, EmailMessage]]:
    """A reply from a mail client: to the Reply-To, answering the mail's Message-ID."""
    references = f"{answered['References'] or ''} {answered['Message-ID']}".strip()
    raw = make_mail(sender, f"Re: {answered['Subject']}", text, headers={
        "In-Reply-To": str(answered["Message-ID"]), "References": references,
    })
    return send_raw(runtime, raw, to=str(answered["Reply-To"]))


def test_mutt_shows_each_board_as_one_thread(runtime: Runtime, clock: FakeClock, tmp_path: Path) -> None:
    mutt.require_mutt()
    outbox = tmp_path / "outbox"
    backend = runtime.delivery.backend = runtime.backend = TeeBackend(maildir=MaildirBackend(outbox))
    for userid in ("alice", "bob", "carol"):
        signup(runtime, userid, f"{userid}-pw")
    started = send(runtime, "alice@example.org", "toy challenge alice bob")
    send(runtime, "carol@example.org", "toy subscribe 101 carol carol-pw")
    send(runtime, "alice@example.org", "toy move 101 alice alice-pw b2", "Centre first.")
    board_mail = mail_to(started, "bob@example.org")
    reply(runtime, "bob@example.org", board_mail, "a1")
    reply(runtime, "bob@example.org", board_mail, "show")
    chats = send(runtime, "alice@example.org", "toy chat 101 alice alice-pw", "Good luck, Bob.")
    answered = reply(runtime, "bob@example.org", mail_to(chats, "bob@example.org"), "Thanks, and to you.")
    assert "Thanks, and to you." in str(mail_to(answered, "alice@example.org").get_content())
    clock.advance(days=4)
    runtime.processor.run_timers()  # alice is reminded
    runtime.delivery.deliver_due()
    changed = send(runtime, "alice@example.org", "change password alice alice-pw alice-new")
    moved = reply(runtime, "alice@example.org", mail_to(changed, "alice@example.org"), "b1")
    reply(runtime, "bob@example.org", mail_to(moved, "bob@example.org"), "a2")
    final = send(runtime, "alice@example.org", "toy move 101 alice alice-new b3")
    assert "Game won by alice" in str(mail_to(final, "carol@example.org").get_content())

    latest = mail_to(send(runtime, "alice@example.org", "majority challenge -size=6 -stones=6 alice bot"), "alice@example.org")
    for square in ("b6", "d6", "f6"):
        reply(runtime, "alice@example.org", latest, square)
        backend.sent.clear()
        play_due_turns(runtime.engine, runtime.intake, runtime.processor.catalog, clock, iterations=50)
        runtime.processor.process_pending()
        runtime.delivery.deliver_due()
        latest = mail_to([(to, BytesParser(policy=policy.default).parsebytes(raw)) for to, raw in backend.sent], "alice@example.org")

    work = tmp_path / "mutt"
    for recipient, board in [
        ("alice@example.org", "Toy Board 101"), ("bob@example.org", "Toy Board 101"),
        ("carol@example.org", "Toy Board 101"), ("alice@example.org", "Majority Board 101"),
    ]:
        # the board's own mails, not the answers about it ("Toy Board 101 Error"); no `^`: a pushed `^T` is Ctrl-T
        pattern = f'~t {recipient} ~s "{board}" !~s "{board} "'
        every = mutt.matching(outbox, pattern, work)
        thread = mutt.first_thread(outbox, pattern, work)
        assert len(every) >= 4, f"{recipient} got {len(every)} mails of {board}"
        assert sorted(str(m["Message-ID"]) for m in thread) == sorted(str(m["Message-ID"]) for m in every), (
            f"mutt puts {len(thread)} of the {len(every)} mails of {board} to {recipient} in its first thread"
        )
