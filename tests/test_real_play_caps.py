"""Caps that never silence a player in real play (issue 38, item 5): a
player in three boards at once who, every turn of each, moves, asks for
`moves` and chats, all by replying to the board mails, keeps every answer
and every chat through a whole game on each board within the hour, while
a stranger's caps stay as they were."""

from __future__ import annotations

from email.message import EmailMessage

from sqlalchemy import select

from pbmserv.runtime import Runtime
from pbmserv.service.play.reply_addresses import seat_address
from pbmserv.store import records
from pbmserv.store.models import InboundMail
from tests.conftest import FakeClock
from tests.mailtools import body, make_mail, send, send_raw, signup

OPPONENTS = ("bob", "carol", "dave")
#: every stone of both players on the largest board: 98 turns of each player on each board
GAME = "majority"
OPTIONS = "-size=14 -stones=98"
TURNS = 98
SECONDS_A_ROUND = 30  # a turn on each of the three boards every half minute: all of it within one hour


def reply(runtime: Runtime, userid: str, board: int, seat: int, text: str) -> list[tuple[str, EmailMessage]]:
    """`text` sent by `userid` as a reply to their board mail of `board` (to their reply address)."""
    with runtime.engine.connect() as connection:
        account = records.find_account(connection, userid)
    assert account is not None
    address = seat_address(runtime.processor.key, runtime.settings.address, GAME, board, seat, account)
    mail = make_mail(f"{userid}@example.org", f"Re: Majority Board {board}", text)
    return send_raw(runtime, mail, to=address)


def a_legal_move(runtime: Runtime, board: int, seat: int) -> str:
    game = runtime.processor.catalog.get(GAME)
    with runtime.engine.connect() as connection:
        record = records.find_board(connection, GAME, board)
    assert record is not None
    return game.legal_moves(game.decode(record.state), seat)[0]


def test_a_player_of_three_boards_who_moves_asks_and_chats_every_turn_is_never_capped(runtime: Runtime) -> None:
    clock = runtime.clock
    assert isinstance(clock, FakeClock)
    for userid in ("alice", *OPPONENTS):
        signup(runtime, userid, f"{userid}-pw")
    boards = []
    for opponent in OPPONENTS:
        [(_, started), *_] = send(runtime, "alice@example.org", f"{GAME} challenge alice {opponent} {OPTIONS}")
        boards.append(int(str(started["Subject"]).split("Board ")[1].split()[0]))
    answers = chats = 0
    for _ in range(TURNS):
        clock.advance(seconds=SECONDS_A_ROUND)
        for board, opponent in zip(boards, OPPONENTS):
            [(_, listed)] = reply(runtime, "alice", board, 0, "moves")
            assert "Error" not in str(listed["Subject"]), body(listed)
            answers += 1
            to_alice = reply(runtime, "alice", board, 0, a_legal_move(runtime, board, 0))
            assert "alice@example.org" in [recipient for recipient, _ in to_alice], "her board mail"
            talk = reply(runtime, "alice", board, 0, "chat\nYour move.")
            assert sorted(recipient for recipient, _ in talk) == ["alice@example.org", f"{opponent}@example.org"]
            chats += 1
            reply(runtime, opponent, board, 1, a_legal_move(runtime, board, 1))
    with runtime.sessions() as session:
        noted = [error for error in session.scalars(select(InboundMail.error)) if error]
    assert noted == [], "no mail held back by a cap"
    assert (answers, chats) == (3 * TURNS, 3 * TURNS)
    for board in boards:
        with runtime.engine.connect() as connection:
            record = records.find_board(connection, GAME, board)
        assert record is not None and record.result is not None, "every game played to its end"


def test_a_stranger_still_gets_thirty_answers_an_hour(runtime: Runtime) -> None:
    answered = [send(runtime, "stranger@example.net", "help") for _ in range(31)]
    assert [len(replies) for replies in answered] == [1] * 30 + [0]
