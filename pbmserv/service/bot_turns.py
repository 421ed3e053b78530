"""The bots' turns, outside the mail worker: which boards wait for a bot,
its move thought out within the strength's time budget, and the move
sent the way a player sends one, as a mail to the bot's reply address.

Nothing here writes a board. The mail is stored by intake like any other
and played by the worker, so a bot move is stored, played once and
mailed to the players as every move is. Its Message-ID names the board,
the move number and the move: storing it twice (a restart, two runners)
stores it once, and its `#N` guard lets only one move be played for a
turn however often it is thought out again. Its sender is an address in
`.invalid` (RFC 2606), to which nothing is ever sent (`service.output`).
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime
from typing import TYPE_CHECKING, Any

from pbmserv.gamekit import Game
from pbmserv.gamekit.search import choose_move
from pbmserv.mail.outbound import message_bytes
from pbmserv.service import bots, reply_addresses
from pbmserv.service.catalog import Catalog
from pbmserv.service.intake import Clock, Intake
from pbmserv.store import records
from pbmserv.store.database import reading
from pbmserv.store.key import ServerKey
from pbmserv.store.records import BoardRecord

if TYPE_CHECKING:
    from pbmserv.store.handles import Connection, Engine

log = logging.getLogger(__name__)

#: where the bots' mails come from: a domain that cannot exist
BOT_DOMAIN = "bots.invalid"


@dataclass(frozen=True)
class Turn:
    """A bot to move on a board, as the board stood when it was read."""

    game: Game
    board: BoardRecord
    seat: int
    reply_to: str  # the bot's reply address on this board

    @property
    def userid(self) -> str:
        return self.board.seats[self.seat]

    @property
    def number(self) -> int:
        """The number the bot's move will have."""
        return self.board.move_count + 1


def due_turns(connection: Connection, catalog: Catalog, key: ServerKey, server_address: str) -> list[Turn]:
    """Every running board's bots that are to move, oldest board first."""
    turns = []
    for board in records.running_boards_seating(connection, "bot"):
        if board.game_type not in catalog:
            continue
        game = catalog.get(board.game_type)
        for seat in sorted(game.to_move(game.decode(board.state))):
            bot = records.find_account(connection, board.seats[seat]) if bots.is_bot(board.seats[seat]) else None
            if bot is not None:
                turns.append(Turn(game, board, seat, reply_addresses.seat_address(key, server_address, game.name, board.board, seat, bot)))
    return turns


def think(turn: Turn, *, iterations: int | None = None) -> str:
    """The bot's move within its strength's budget, from what its seat may
    know only (the search draws the other players' secrets anew,
    `Game.determinize`). The random choices are seeded by the board and
    the move number; with `iterations`, so is the move."""
    state: Any = turn.game.decode(turn.board.state)
    rng = random.Random(f"{turn.game.name}/{turn.board.board}/{turn.number}")
    strength = bots.strength_of(turn.userid)
    seconds = None if iterations is None else 3600.0
    return choose_move(turn.game, state, turn.seat, strength=strength, seconds=seconds, iterations=iterations, rng=rng)


def turn_mail(turn: Turn, move: str, now: datetime) -> bytes:
    """The bot's move as the mail a player would send to their reply address."""
    digest = hashlib.sha256(move.encode()).hexdigest()[:12]
    headers = [
        ("From", f"{turn.userid}@{BOT_DOMAIN}"),
        ("To", turn.reply_to),
        ("Subject", f"Re: {turn.game.title} Board {turn.board.board}"),
        ("Date", format_datetime(now)),
        ("Message-ID", f"<{turn.game.name}.{turn.board.board}.{turn.number}.{digest}@{BOT_DOMAIN}>"),
    ]
    return message_bytes(headers, f"{move} #{turn.number}\n")


def play_due_turns(
    engine: Engine, intake: Intake, catalog: Catalog, clock: Clock, *, iterations: int | None = None,
    skip: set[tuple[str, int, int]] | None = None,
) -> int:
    """Think out every bot turn due now and hand each move in as a mail
    (intake: the arrival spool on SQLite, else the database; the worker
    plays it); returns how many. `iterations` (tests, transcripts) fixes
    the search's size, and with it the moves. `skip` holds the turns
    (game, board, move number) handed in before and not to be thought out
    again, and gets those handed in now."""
    with reading(engine) as connection:
        turns = due_turns(connection, catalog, intake.key, intake.settings.address)
    if skip is not None:
        turns = [turn for turn in turns if (turn.game.name, turn.board.board, turn.number) not in skip]
    for turn in turns:
        started = time.monotonic()
        move = think(turn, iterations=iterations)
        log.info(
            "%s on %s board %s, move %s: %s (thought %.2f s)",
            turn.userid, turn.game.name, turn.board.board, turn.number, move, time.monotonic() - started,
        )
        intake.accept([(turn_mail(turn, move, clock()), None, turn.reply_to)])
        if skip is not None:
            skip.add((turn.game.name, turn.board.board, turn.number))
    return len(turns)
