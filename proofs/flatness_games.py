"""The games and mails of proofs/cost_flatness.py: random games of the five
games played once as templates (each stored board is one of them cut at
some move, so its state is a real one and its next moves are legal), and
the mail a player sends to move: a reply to their reply address that
quotes the board mail, as a mail program writes it."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from pbmserv.gamekit import Game, Outcome, get_game

#: the five games; psychomachia is majority with a hidden stone and shares its code
GAMES = ("majorities", "majority", "parliament", "plurality", "synch")
#: games whose random games run past move 200
LONG_GAMES = ("parliament", "synch")
#: the number of the move that the long games are measured at, against move 1
DEEP_MOVE = 200
PLAYERS = ("alice", "bob")


@dataclass
class Played:
    """One random game played to its end: its moves and the encoded state after each."""

    game: Game
    moves: list[tuple[int, str, bool]]  # seat, canonical text, secret
    states: list[Any]  # states[k]: game.encode of the state after k moves
    outcome: Outcome

    def result(self, seats: list[str]) -> dict[str, Any]:
        """The board's result as `service.ratings.finish` keeps it."""
        return _result(list(self.outcome.winners), list(self.outcome.scores) if self.outcome.scores else None,
                       self.outcome.reason, seats)


def _result(winners: list[int], scores: list[Any] | None, reason: str, seats: list[str]) -> dict[str, Any]:
    ratings = [{"userid": userid, "before": 1500, "after": 1516 if seat in winners else 1484, "provisional": False}
               for seat, userid in enumerate(seats)]
    return {"winners": winners, "scores": scores, "reason": reason, "ratings": ratings}


def resigned_result(seat: int, seats: list[str]) -> dict[str, Any]:
    """The result of a board that `seat` resigned."""
    return _result([s for s in range(len(seats)) if s != seat], None, f"{seats[seat]} resigned", seats)


@dataclass
class Templates:
    """Random games of each game, several each (and long ones of the long games)."""

    games: dict[str, list[Played]] = field(default_factory=dict)

    def long_games(self, name: str) -> list[Played]:
        return [played for played in self.games[name] if len(played.moves) > DEEP_MOVE + 2]


def play_templates(per_game: int, seed: int = 21) -> Templates:
    """`per_game` random games of each game, with at least two long ones of each long game."""
    rng = random.Random(seed)
    templates = Templates()
    for name in GAMES:
        game = get_game(name)
        played: list[Played] = []
        while len(played) < per_game or (
            name in LONG_GAMES and sum(len(p.moves) > DEEP_MOVE + 2 for p in played) < 2
        ):
            played.append(_random_game(game, rng))
        templates.games[name] = played
    return templates


def _random_game(game: Game, rng: random.Random) -> Played:
    state = game.new({}, list(PLAYERS))
    moves: list[tuple[int, str, bool]] = []
    states = [game.encode(state)]
    while (outcome := game.outcome(state)) is None:
        seat = rng.choice(sorted(game.to_move(state)))
        move = game.read_move(state, seat, rng.choice(game.legal_moves(state, seat)))
        state = game.apply(state, seat, move)
        moves.append((seat, str(move), move.secret))
        states.append(game.encode(state))
    return Played(game, moves, states, outcome)


def player_mail(
    sender: str, reply_to: str, subject: str, move: str, number: int, quoted: str, now: datetime, message_id: str,
) -> bytes:
    """A player's move as a reply to their board mail: the move and its
    guard on the first line, the board mail quoted below, the headers a
    mail program and two MTAs on the way add."""
    mail = EmailMessage()
    mail["Received"] = f"from mx.example.org (mx.example.org [192.0.2.25]) by pbmserv.example.net; {format_datetime(now)}"
    mail["Received"] = f"from [198.51.100.7] by mx.example.org with ESMTPSA id {message_id[:12]}; {format_datetime(now)}"
    mail["From"] = sender
    mail["To"] = reply_to
    mail["Subject"] = f"Re: {subject}"
    mail["Date"] = format_datetime(now)
    mail["Message-ID"] = f"<{message_id}@example.org>"
    mail["In-Reply-To"] = f"<board.{message_id[12:24]}@pbmserv.example.net>"
    mail["References"] = f"<board.{message_id[12:24]}@pbmserv.example.net>"
    mail["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.5.0"
    quote = "\n".join(f"> {line}".rstrip() for line in quoted.splitlines())
    mail.set_content(f"{move} #{number}\n\nOn {format_datetime(now)}, pbmserv wrote:\n{quote}\n")
    return bytes(mail)
