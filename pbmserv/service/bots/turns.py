"""The bots' turns, outside the mail worker: which boards wait for a bot,
its move thought out within the strength's time budget (or its
resignation, `service.bot_manners`), and the move sent the way a player
sends one, as a mail to the bot's reply address; likewise its answer to a
draw offer or an undo request made to it.

Nothing here writes a board. The mail is stored by intake like any other
and played by the worker, so a bot move is stored, played once and
mailed to the players as every move is. Its Message-ID names the board
as it stands (its move number and when it last changed: a move taken
back and made again is a turn of its own) and the move: storing it twice
(a restart, two runners) stores it once, and its `#N` guard lets only one
move be played for a turn however often it is thought out again. An
answer's Message-ID names the board and the proposal, not the answer, so
a proposal is answered once however often it is judged. The sender is
an address in `.invalid` (RFC 2606), to which nothing is ever sent
(`service.output`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime
from typing import TYPE_CHECKING

from pbmserv.gamekit import Game
from pbmserv.gamekit.search import STRENGTHS
from pbmserv.mail.outbound import message_bytes
from pbmserv.service.bots import manners as bot_manners
from pbmserv.service.bots import seats as bots
from pbmserv.service.bots.manners import SearchClock
from pbmserv.service.play import reply_addresses
from pbmserv.service.play.board import Board
from pbmserv.service.processing.catalog import Catalog
from pbmserv.store import records
from pbmserv.store.database import reading
from pbmserv.store.key import ServerKey
from pbmserv.store.records import Account, BoardRecord

if TYPE_CHECKING:
    from pbmserv.store.handles import Connection, Engine

#: where the bots' mails come from: a domain that cannot exist
BOT_DOMAIN = "bots.invalid"
RESIGN = "resign"


@dataclass(frozen=True)
class Turn:
    """A bot's seat on a board, as the board stood when it was read: a turn
    to move, or a proposal to answer."""

    board: Board
    seat: int
    reply_to: str  # the bot's reply address on this board

    @property
    def game(self) -> Game:
        return self.board.game

    @property
    def record(self) -> BoardRecord:
        return self.board.record

    @property
    def userid(self) -> str:
        return self.record.seats[self.seat]

    @property
    def player(self) -> str:
        """The account that waits for the bot: the board's player ("" on a
        board of bots alone, which a challenge no longer makes)."""
        return next((userid for userid in self.record.seats if not bots.is_bot(userid)), "")

    @property
    def cost(self) -> float:
        """What the bot's think costs at most: its strength's seconds."""
        return STRENGTHS[bots.strength_of(self.userid)].seconds

    @property
    def number(self) -> int:
        """The number the bot's move will have."""
        return self.record.move_count + 1

    @property
    def key(self) -> str:
        """The board as it stands, for the bot's seat: what a mail of the
        bot names (a board changes when a move is made or taken back, or a
        proposal made)."""
        stamp = self.record.updated_at.strftime("%Y%m%d%H%M%S%f")
        return f"{self.game.name}.{self.record.board}.{self.seat + 1}.{self.number}.{stamp}"

    @property
    def answer_key(self) -> str:
        """The proposal waiting for the bot: who made it, of what, on the board as it stands."""
        proposal = self.record.proposal
        assert proposal is not None, "a proposal waits for the bot"
        return f"{self.key}.{proposal['kind']}.{proposal['by'] + 1}"

    @property
    def answers_proposal(self) -> bool:
        """Whether a proposal open on the board waits for the bot's answer."""
        proposal = self.record.proposal
        return proposal is not None and self.seat not in proposal["accepted"]

    @property
    def moves(self) -> bool:
        """Whether the bot is to move, and has no proposal to answer first (a move would let it lapse)."""
        return not self.answers_proposal and self.seat in self.game.to_move(self.board.state)

    @property
    def due_key(self) -> str:
        """What the bot owes now: the answer to the proposal waiting for it, else its move."""
        return self.answer_key if self.answers_proposal else self.key


def bot_seats(connection: Connection, catalog: Catalog, key: ServerKey, server_address: str) -> list[Turn]:
    """Every bot's seat on every running board, oldest board first."""
    seats = []
    accounts: dict[str, Account | None] = {}
    for record in records.running_boards_seating(connection, "bot"):
        if record.game_type not in catalog:
            continue
        board = Board.of(catalog.get(record.game_type), record)
        for seat, userid in enumerate(record.seats):
            if bots.is_bot(userid) and userid not in accounts:
                accounts[userid] = records.find_account(connection, userid)
            bot = accounts.get(userid)
            if bot is not None:
                address = reply_addresses.seat_address(key, server_address, record.game_type, record.board, seat, bot)
                seats.append(Turn(board, seat, address))
    return seats


def due(connection: Connection, catalog: Catalog, key: ServerKey, server_address: str) -> list[Turn]:
    """Every running board's bots that owe something now: an answer to a proposal, or a move."""
    return [turn for turn in bot_seats(connection, catalog, key, server_address) if turn.answers_proposal or turn.moves]


def due_turns(connection: Connection, catalog: Catalog, key: ServerKey, server_address: str) -> list[Turn]:
    """Every running board's bots that are to move (`Turn.moves`), oldest board first."""
    return [turn for turn in bot_seats(connection, catalog, key, server_address) if turn.moves]


def due_answers(connection: Connection, catalog: Catalog, key: ServerKey, server_address: str) -> list[Turn]:
    """Every running board's bots that have a proposal to answer, whoever is to move."""
    return [turn for turn in bot_seats(connection, catalog, key, server_address) if turn.answers_proposal]


def think(turn: Turn, engine: Engine, *, iterations: int | None = None, clock: SearchClock = time.perf_counter) -> str:
    """The bot's move within its strength's budget (seconds on `clock`),
    from what its seat may know only (the search draws the other players'
    secrets anew, `Game.determinize`), or `resign` when it cannot save the
    game (`bot_manners.resigns`). The random choices are seeded by the
    board and the move number; with `iterations`, so is the move."""
    game, board = turn.game, turn.record
    decision = bot_manners.turn_decision(game, board, turn.board.state, turn.seat, turn.number, iterations, clock)

    def board_moves() -> list[records.MoveRecord]:
        with reading(engine) as connection:
            return records.board_moves(connection, board.id)

    return RESIGN if bot_manners.resigns(game, board, turn.seat, decision, board_moves, iterations, clock) else str(decision.move)


def judge_proposal(turn: Turn, *, iterations: int | None = None, clock: SearchClock = time.perf_counter) -> str:
    """`accept` or `reject`: the bot's answer to the proposal waiting for it."""
    return bot_manners.answer(turn.game, turn.record, turn.board.state, turn.seat, f"answer/{turn.key}", iterations, clock)


def _bot_mail(turn: Turn, message_id: str, body: str, now: datetime) -> bytes:
    headers = [
        ("From", f"{turn.userid}@{BOT_DOMAIN}"),
        ("To", turn.reply_to),
        ("Subject", f"Re: {turn.game.title} Board {turn.record.board}"),
        ("Date", format_datetime(now)),
        ("Message-ID", f"<{message_id}@{BOT_DOMAIN}>"),
    ]
    return message_bytes(headers, body)


def turn_mail(turn: Turn, move: str, now: datetime) -> bytes:
    """The bot's move as the mail a player would send to their reply
    address; a resignation with the bot's polite comment below it."""
    digest = hashlib.sha256(move.encode()).hexdigest()[:12]
    comment = f"{bot_manners.RESIGN_COMMENT}\n" if move == RESIGN else ""
    return _bot_mail(turn, f"{turn.key}.{digest}", f"{move} #{turn.number}\n{comment}", now)


def answer_mail(turn: Turn, answer: str, now: datetime) -> bytes:
    """The bot's answer to the proposal waiting for it, as a player's reply.
    The Message-ID names the proposal (who made it, of what, on the board as
    it stands) and not the answer: one answer is stored, however often and
    however differently it is thought out."""
    return _bot_mail(turn, turn.answer_key, f"{answer} #{turn.number}\n", now)
