"""Bad mail at volume (issue 21, items 3 and 8): a flood of strangers' mail
does not hold players' mail back, and what the flood proof found wrong
in single bad mails."""

from __future__ import annotations

from sqlalchemy import select

from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.store import inbound
from pbmserv.store.database import writing
from pbmserv.store.models import Board, InboundMail, Move
from pbmserv.store.piped import PipedStore
from tests.mailtools import make_mail, send, send_raw


def store(runtime: Runtime, sender: str, subject: str) -> int:
    return runtime.intake.store(make_mail(sender, subject), sender)[0]


def taken_next(runtime: Runtime, most: int) -> list[int]:
    with writing(runtime.engine) as connection:
        return inbound.next_pending(connection, most)[0]


def test_under_a_backlog_players_mail_is_taken_first_and_the_rest_in_arrival_order(toy_boards: Runtime) -> None:
    strangers = [store(toy_boards, f"stranger{n % 3}@flood.example", "help") for n in range(8)]
    bob = store(toy_boards, "bob@example.org", "toy move 101 bob secret2 a1")
    alice = store(toy_boards, "alice@example.org", "toy games alice")
    assert taken_next(toy_boards, 4) == [bob, alice, *strangers[:2]]
    assert taken_next(toy_boards, 10) == [*strangers, bob, alice]  # no backlog: arrival order


def test_a_flood_of_strangers_does_not_hold_a_players_move_back(toy_boards: Runtime) -> None:
    for n in range(120):
        store(toy_boards, f"stranger{n}@flood.example", "help")
    move = store(toy_boards, "bob@example.org", "toy move 101 bob secret2 a1")
    done, more = toy_boards.processor.process_batch(most=50, seconds=60)
    assert (done, more) == (50, True)
    with toy_boards.sessions() as session:
        statuses = dict(session.execute(select(InboundMail.id, InboundMail.status)).tuples().all())
        assert session.scalars(select(Move.text).where(Move.number == 2)).all() == ["a1"]
    assert statuses[move] == "done"
    assert sorted(statuses.values()).count("pending") == 71
    toy_boards.processor.process_pending()


def test_a_players_mail_piped_in_or_spooled_is_in_the_players_lane(toy_boards: Runtime) -> None:
    """`receive`'s own SQL (`store.piped`: the spool on SQLite, admitted by
    the worker; `inbound_mails` on PostgreSQL) puts it in the lane too."""
    for n in range(3):
        store(toy_boards, f"stranger{n}@flood.example", "help")
    piped = PipedStore(toy_boards.settings)
    try:
        for sender in ("stranger9@flood.example", "bob@example.org"):
            piped.store(toy_boards.intake.arrival(make_mail(sender, "toy move 101 bob secret2 a1"), sender))
    finally:
        piped.close()
    assert toy_boards.processor.process_batch(most=1) == (1, True)
    with toy_boards.sessions() as session:
        done = session.scalars(select(InboundMail.envelope_sender).where(InboundMail.status == "done")).all()
    assert done[-1] == "bob@example.org"


def test_a_signup_does_not_put_its_sender_in_the_players_lane(toy_boards: Runtime) -> None:
    """A From line proves nothing: after a signup its sender's mail keeps its place among the strangers'."""
    store(toy_boards, "carol@example.org", "signup carol pw-carol")
    later = [store(toy_boards, f"stranger{n}@flood.example", "help") for n in range(3)]
    store(toy_boards, "carol@example.org", "toy games carol")
    toy_boards.processor.process_batch(most=1)
    assert taken_next(toy_boards, 2) == later[:2]


def test_a_players_challenge_taken_ahead_waits_for_the_confirmation_it_needs(toy_boards: Runtime) -> None:
    """Under a backlog alice's challenge would overtake carol's reply to her
    welcome: it is left pending, and processed in its turn, after the reply."""
    [(_, welcome)] = send(toy_boards, "carol@example.org", "signup carol pw-carol")
    for n in range(3):
        store(toy_boards, f"stranger{n}@flood.example", "help")
    confirmation = store(toy_boards, "carol@example.org", f"Re: {welcome['Subject']}")
    challenge = store(toy_boards, "alice@example.org", "toy challenge alice carol")
    assert toy_boards.processor.process_batch(most=2) == (2, True)  # the oldest mail, and alice's challenge taken ahead
    with toy_boards.sessions() as session:
        rows = {row.id: row for row in session.scalars(select(InboundMail))}
    assert rows[confirmation].status == "pending"
    assert (rows[challenge].status, rows[challenge].error) == ("pending", inbound.WAITS_ITS_TURN)
    assert taken_next(toy_boards, 2)[-1] != challenge, "not taken ahead again"
    toy_boards.processor.process_pending()
    with toy_boards.sessions() as session:
        assert session.get(InboundMail, challenge).status == "done"
        assert session.scalars(select(Board.seats).where(Board.game_type == "toy")).all()[-1] == ["alice", "carol"]


def test_a_board_number_too_large_for_the_database_is_refused_not_failed(toy_boards: Runtime) -> None:
    for subject in ("toy show 1000000000000000000000000000000", "toy show 101#99999999999999999999",
                    "toy move 10000000000 bob secret2 a1", "toy challenge --nagtime=\u00b2 alice bob"):
        replies = send(toy_boards, "stranger@flood.example", subject)
        assert [recipient for recipient, _ in replies] == ["stranger@flood.example"], subject
        assert "Error" in str(replies[0][1]["Subject"]), subject
    with toy_boards.sessions() as session:
        assert session.scalars(select(InboundMail.status).where(InboundMail.status == "failed")).all() == []


def test_an_address_is_never_read_from_an_encoded_word(runtime: Runtime) -> None:
    encoded_address = b"From: =?utf-8?q?victim=40victim.example?=\r\nTo: pbmserv@localhost\r\nSubject: help\r\n" \
        b"Message-ID: <encoded-address@flood.example>\r\n\r\nhelp\r\n"
    assert send_raw(runtime, encoded_address, "eve@flood.example") == []
    bcc_in_name = b"From: =?utf-8?q?Eve=0D=0ABcc:_victim@victim.example?= <eve@flood.example>\r\nTo: pbmserv@localhost\r\n" \
        b"Subject: help\r\nMessage-ID: <bcc-in-name@flood.example>\r\n\r\nhelp\r\n"
    assert [recipient for recipient, _ in send_raw(runtime, bcc_in_name, "eve@flood.example")] == ["eve@flood.example"]


def test_a_players_reply_is_sent_before_the_flood_replies_handed_over_before_it(toy_boards: Runtime) -> None:
    """The deliverer sends a batch a round, players' mail first: a reply to a
    player handed over now does not wait behind strangers' replies."""
    handed: list[int] = []
    for n in range(120):
        store(toy_boards, f"stranger{n}@flood.example", "help")
    while toy_boards.processor.process_batch(most=200, seconds=60, hand_over=handed.extend)[1]:
        pass
    delivery, backend = toy_boards.delivery, toy_boards.backend
    assert isinstance(backend, MemoryBackend)
    backend.sent.clear()  # what setting up the boards sent
    assert delivery.deliver_handed_over(handed) == delivery.batch == 50
    store(toy_boards, "bob@example.org", "toy games bob")
    handed.clear()
    toy_boards.processor.process_batch(hand_over=handed.extend)
    assert delivery.deliver_handed_over(handed) == 50
    assert [to for to, _ in backend.sent[49:52]] == ["stranger49@flood.example", "bob@example.org", "stranger50@flood.example"]
    assert delivery.deliver_handed_over([]) == 21 and not delivery.has_queued
    assert delivery.deliver_handed_over(handed) == 0
    assert sorted(to for to, _ in backend.sent) == sorted(["bob@example.org", *(f"stranger{n}@flood.example" for n in range(120))])
