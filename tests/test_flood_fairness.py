"""Bad mail at volume (issue 21, items 3 and 8): a flood of strangers' mail
does not hold players' mail back, and what the flood proof found wrong
in single bad mails."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import select

from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.play.reply_addresses import seat_address
from pbmserv.service.processing.batches import BatchDone, DeliveryOrder
from pbmserv.store import inbound, records
from pbmserv.store.database import writing
from pbmserv.store.models import Board, InboundMail, Move
from pbmserv.store.piped import PipedStore
from tests.mailtools import make_mail, send, send_raw


def store(runtime: Runtime, sender: str, subject: str, recipient: str = "") -> int:
    return runtime.intake.store(make_mail(sender, subject), sender, recipient)[0]


def taken_next(runtime: Runtime, most: int) -> list[int]:
    with writing(runtime.engine) as connection:
        return inbound.next_pending(connection, most)[0]


def bobs_reply_address(runtime: Runtime) -> str:
    """The reply address of bob's board mails on board 101."""
    with runtime.engine.connect() as connection:
        bob = records.find_account(connection, "bob")
    assert bob is not None
    return seat_address(runtime.processor.key, runtime.settings.address, "toy", 101, 1, bob)


def trusting(runtime: Runtime, authserv_id: str) -> Runtime:
    """The runtime with a mail server it trusts to vouch for a mail's From."""
    runtime.settings = replace(runtime.settings, trusted_authserv_id=authserv_id)
    runtime.intake.settings = runtime.processor.settings = runtime.settings
    return runtime


def vouched(sender: str, subject: str, authserv_id: str = "mx.example.org") -> bytes:
    """A mail whose Authentication-Results header (of `authserv_id`) says its From passed DMARC."""
    domain = sender.rpartition("@")[2]
    header = f"{authserv_id}; dkim=pass header.d={domain}; dmarc=pass header.from={domain}"
    return make_mail(sender, subject, headers={"Authentication-Results": header})


def test_proven_mail_is_taken_first_and_the_rest_in_arrival_order(toy_boards: Runtime) -> None:
    """Proven: to a player's reply address. The From line proves nothing: alice's mail waits in arrival order."""
    address = bobs_reply_address(toy_boards)
    strangers = [store(toy_boards, f"stranger{n % 3}@flood.example", "help") for n in range(8)]
    bob = store(toy_boards, "bob@example.org", "Re: Toy Board 101 bob", address)
    alice = store(toy_boards, "alice@example.org", "toy games alice")
    assert taken_next(toy_boards, 4) == [bob, *strangers[:3]]
    assert taken_next(toy_boards, 11) == [bob, *strangers, alice]


def test_a_stream_of_proven_mail_leaves_the_rest_a_share(toy_boards: Runtime) -> None:
    address = bobs_reply_address(toy_boards)
    stranger = store(toy_boards, "stranger@flood.example", "help")
    bob = [store(toy_boards, "bob@example.org", f"Re: Toy Board 101 bob {n}", address) for n in range(5)]
    assert taken_next(toy_boards, 3) == [*bob[:2], stranger]


def test_a_flood_of_strangers_does_not_hold_a_players_reply_back(toy_boards: Runtime) -> None:
    address = bobs_reply_address(toy_boards)
    for n in range(120):
        store(toy_boards, f"stranger{n}@flood.example", "help")
    move = toy_boards.intake.store(make_mail("bob@example.org", "Re: Toy Board 101 bob", "a1"), None, address)[0]
    assert toy_boards.processor.process_batch(most=50, seconds=60) == BatchDone(50, True)
    with toy_boards.sessions() as session:
        statuses = dict(session.execute(select(InboundMail.id, InboundMail.status)).tuples().all())
        assert session.scalars(select(Move.text).where(Move.number == 2)).all() == ["a1"]
    assert statuses[move] == "done"
    assert sorted(statuses.values()).count("pending") == 71
    toy_boards.processor.process_pending()


def test_a_forged_from_does_not_put_a_mail_in_the_players_lane(toy_boards: Runtime) -> None:
    """F2: mail forged from a player's address used to go before everybody's."""
    strangers = [store(toy_boards, f"stranger{n}@flood.example", "help") for n in range(3)]
    forged = store(toy_boards, "bob@example.org", "toy moves 101")
    assert taken_next(toy_boards, 2) == strangers[:2]
    assert forged not in taken_next(toy_boards, 3)


def test_a_reply_piped_in_or_spooled_is_in_the_players_lane(toy_boards: Runtime) -> None:
    """`receive`'s own SQL (`store.piped`: the spool on SQLite, admitted by
    the worker; `inbound_mails` on PostgreSQL) puts it in the lane too."""
    address = bobs_reply_address(toy_boards)
    for n in range(3):
        store(toy_boards, f"stranger{n}@flood.example", "help")
    piped = PipedStore(toy_boards.settings)
    try:
        piped.store(toy_boards.intake.arrival(make_mail("bob@example.org", "toy move 101 bob secret2 a1"), None))
        piped.store(toy_boards.intake.arrival(make_mail("bob@example.org", "Re: Toy Board 101 bob", "a1"), None, address))
    finally:
        piped.close()
    assert toy_boards.processor.process_batch(most=1) == BatchDone(1, True)
    with toy_boards.sessions() as session:
        newest = session.execute(select(InboundMail.status, InboundMail.reply_token).order_by(InboundMail.id.desc()).limit(2))
        (reply, token), (password_mail, _) = newest.tuples().all()
    assert (reply, password_mail) == ("done", "pending") and token, "the reply went first"


def test_a_signup_does_not_put_its_sender_in_the_players_lane(toy_boards: Runtime) -> None:
    """A From line proves nothing: after a signup its sender's mail keeps its place among the strangers'."""
    store(toy_boards, "carol@example.org", "signup carol pw-carol")
    later = [store(toy_boards, f"stranger{n}@flood.example", "help") for n in range(3)]
    store(toy_boards, "carol@example.org", "toy games carol")
    toy_boards.processor.process_batch(most=1)
    assert taken_next(toy_boards, 2) == later[:2]


def test_a_players_challenge_taken_ahead_waits_for_the_confirmation_it_needs(toy_boards: Runtime) -> None:
    """alice's challenge, vouched for by the trusted mail server, would
    overtake carol's reply to her welcome: it is left pending, and
    processed in its turn, after the reply."""
    trusting(toy_boards, "mx.example.org")
    [(_, welcome)] = send(toy_boards, "carol@example.org", "signup carol pw-carol")
    for n in range(3):
        store(toy_boards, f"stranger{n}@flood.example", "help")
    confirmation = store(toy_boards, "carol@example.org", f"Re: {welcome['Subject']}")
    challenge = toy_boards.intake.store(vouched("alice@example.org", "toy challenge alice carol"))[0]
    assert toy_boards.processor.process_batch(most=2, seconds=60) == BatchDone(2, True)  # alice's challenge taken ahead, and the oldest mail
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
    more = True
    while more:
        batch = toy_boards.processor.process_batch(most=200, seconds=60, order=DeliveryOrder())
        handed += batch.answered
        more = batch.more
    delivery, backend = toy_boards.delivery, toy_boards.backend
    assert isinstance(backend, MemoryBackend)
    backend.sent.clear()  # what setting up the boards sent
    assert delivery.deliver_handed_over(handed) == delivery.batch == 50
    store(toy_boards, "bob@example.org", "toy games bob")
    handed.clear()
    handed += toy_boards.processor.process_batch(order=DeliveryOrder()).answered
    assert delivery.deliver_handed_over(handed) == 50
    assert [to for to, _ in backend.sent[49:52]] == ["stranger49@flood.example", "bob@example.org", "stranger50@flood.example"]
    assert delivery.deliver_handed_over([]) == 21 and not delivery.has_queued
    assert delivery.deliver_handed_over(handed) == 0
    assert sorted(to for to, _ in backend.sent) == sorted(["bob@example.org", *(f"stranger{n}@flood.example" for n in range(120))])
