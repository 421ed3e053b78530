"""Parliament: Majority, official rules 2019 (the rules `parliament help` gives)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import cache

from games.parliament.board_text import board_text
from games.parliament.cascade import EMPTY, PREFERENCE, SEAT, SIDES, Event, settle
from games.parliament.chambers import LAYOUTS, Layout
from games.parliament.estimate import expected_seats
from games.parliament.moves import Claim, Preferences, read_claim, read_preferences
from games.parliament.state import State, determinize, known_to
from games.parliament.view import draw_state
from pbmserv.gamekit import Drawing, Game, IllegalMove, InvalidOption, Option, Outcome

ROUNDS = 3


def round_winner(layout: Layout, board: str) -> int | None:
    """The player holding an absolute majority on a finished board, if any."""
    for player, mark in enumerate(SEAT):
        if board.count(mark) < layout.total_needed:
            continue
        if layout.must_hold is not None and layout.must_hold.count(board, mark) < layout.must_hold.needed:
            continue
        return player
    return None


@cache
def _values(boards: str) -> tuple[tuple[Preferences, ...], tuple[Claim, ...]]:
    """The set-up's preferences (none, or one seat) and every seat's plain
    claim on the layout `boards`, made once: values never change, so every
    list of moves shares them."""
    seats = range(LAYOUTS[boards].size)
    return (Preferences(boards, ()), *(Preferences(boards, (s,)) for s in seats)), tuple(Claim(boards, s) for s in seats)


class Parliament(Game):
    name = "parliament"
    title = "Parliament"
    playout_moves = 0
    state_type = State
    draws = True  # after three hung rounds
    min_players = 2
    max_players = 2
    side_names = SIDES
    options = (
        Option(
            "boards",
            "both",
            ("upper", "lower", "both"),
            "which chambers are played: the Upper (76 seats), the Lower (150) or both",
        ),
    )

    # -- setting up ------------------------------------------------------
    def new(self, options: Mapping[str, str | None], players: Sequence[str]) -> State:
        values = self.resolve_options(options)
        if len(players) != 2:
            raise InvalidOption("Parliament is played by exactly two players: Red and Blue.")
        layout = LAYOUTS[values["boards"]]
        return State(
            players=tuple(players),
            boards=values["boards"],
            preferences=(None, None),
            board=EMPTY * layout.size,
        )

    # -- whose turn ------------------------------------------------------
    def to_move(self, state: State) -> frozenset[int]:
        if self.outcome(state) is not None:
            return frozenset()
        if state.in_setup:
            return frozenset(seat for seat in (0, 1) if state.preferences[seat] is None)
        return frozenset({state.next_seat})

    def outcome(self, state: State) -> Outcome | None:
        if not state.finished_rounds:
            return None
        layout = state.layout
        final = state.finished_rounds[-1]
        winner = round_winner(layout, final)
        if winner is None and len(state.finished_rounds) < ROUNDS:
            return None
        scores = (final.count(SEAT[0]), final.count(SEAT[1]))
        # the reason is a phrase for "Game won by alice: ..." (or "Game drawn: ..."),
        # hence short and without a full stop
        if winner is None:
            return Outcome((), scores, "three hung rounds, nobody won a majority")
        reason = f"{SIDES[winner]} holds {scores[winner]} of {layout.size} seats"
        chamber = layout.must_hold
        if chamber is not None:
            reason += f", {chamber.count(final, SEAT[winner])} of them {chamber.name}"
        return Outcome((winner,), scores, reason)

    # -- moves -----------------------------------------------------------
    def read_move(self, state: State, seat: int, text: str) -> Preferences | Claim:
        self._check_turn(state, seat)
        if state.in_setup:
            return read_preferences(state, text)
        return read_claim(state, seat, text)

    def apply(self, state: State, seat: int, move: Preferences | Claim) -> State:
        if isinstance(move, Preferences):
            preferences = tuple(move.seats if s == seat else p for s, p in enumerate(state.preferences))
            return State(
                players=state.players,
                boards=state.boards,
                preferences=preferences,
                board=state.board,
            )
        return self._claim(state, seat, move.seat, move.order)

    def _check_turn(self, state: State, seat: int) -> None:
        result = self.outcome(state)
        if result is not None:
            raise IllegalMove(f"The game is over: {result.reason}.")
        movers = self.to_move(state)
        if seat in movers:
            return
        if state.in_setup and seat in (0, 1):
            waiting = state.players[min(movers)]
            raise IllegalMove(f"You have already sent your preferences: the game waits for {waiting} to send theirs.")
        raise IllegalMove(f"It is not your turn: {state.players[state.next_seat]} is to move.")

    def _claim(self, state: State, seat: int, target: int, order: tuple[int, ...]) -> State:
        layout = state.layout
        board = list(state.board)
        hidden = state.hidden()
        if target in hidden:
            board[target] = hidden.pop(target)
            events: list[Event] = [("revealed", target, board[target])]
        else:
            board[target] = SEAT[seat]
            events = [("claim", target, board[target])]
        events += settle(layout.neighbours, board, hidden, seat, order, [target])
        if board.count(EMPTY) > len(hidden):
            return State(
                players=state.players,
                boards=state.boards,
                preferences=state.preferences,
                board="".join(board),
                next_seat=1 - seat,
                finished_rounds=state.finished_rounds,
                last_claimer=seat,
                last_events=tuple(events),
            )
        # the round is over: the hidden preferences show, and count as held seats
        revealed = sorted(hidden)
        for s in revealed:
            board[s] = hidden.pop(s)
            events.append(("round-end", s, board[s]))
        events += settle(layout.neighbours, board, hidden, seat, order, revealed)
        final = "".join(board)
        finished = state.finished_rounds + (final,)
        if round_winner(layout, final) is None and len(finished) < ROUNDS:
            board = [EMPTY] * layout.size
            for player in (0, 1):
                for s in state.live_preferences(player):
                    board[s] = PREFERENCE[player]
            events.append(("round", len(finished) + 1, ""))
            # seats surrounded by preferences alone take their colour at once;
            # Red, who claims first, counts as the claimer
            events += settle(layout.neighbours, board, {}, 0, (), range(layout.size))
            final = "".join(board)
        return State(
            players=state.players,
            boards=state.boards,
            preferences=state.preferences,
            board=final,
            next_seat=0,
            finished_rounds=finished,
            last_claimer=seat,
            last_events=tuple(events),
        )

    def moves(self, state: State, seat: int) -> list[Preferences] | list[Claim]:
        if seat not in self.to_move(state):
            return []
        preferences, claims = _values(state.boards)
        if state.in_setup:
            return list(preferences)
        own = set(state.live_preferences(seat))
        return [claims[s] for s in range(len(claims)) if state.board[s] == EMPTY and s not in own]

    def known_to(self, state: State, seat: int) -> State:
        return known_to(state, seat)

    def determinize(self, state: State, seat: int, rng: random.Random) -> State:
        return determinize(state, seat, rng)

    def tally(self, state: State) -> tuple[float, ...]:
        """Seats held in this round (preferences are no seats), the seats of
        a chamber the winner must also carry counting twice."""
        chamber = state.layout.must_hold
        return tuple(
            float(state.board.count(mark) + (chamber.count(state.board, mark) if chamber is not None else 0))
            for mark in SEAT
        )

    def judge(self, state: State) -> tuple[float, ...]:
        return expected_seats(state)

    # -- views -----------------------------------------------------------
    def draw(self, state: State, viewer: int | None) -> Drawing:
        return draw_state(state, viewer, self.outcome(state))

    def text(self, drawing: Drawing) -> str:
        return board_text(drawing)

    def help(self) -> str:
        return HELP


HELP = """\
Parliament - Majority, the official rules of 2019

Red and Blue compete for the seats of two chambers: the Upper chamber
(10 columns by 8 rows less its four corners, 76 seats) and the Lower
chamber (17 by 10 with its corners cut, 150 seats). A seat is written
with its chamber, column and row, like U:c4 or L:h5: columns a, b, ...
from the left, rows 1, 2, ... from the top. When only one chamber is
played the U: or L: may be left out.

Preferences. Before the first claim each player secretly names seats
that belong to them whatever happens: up to 7 in the two chambers
together (up to 3 when only the Upper chamber is played, up to 4 for
the Lower alone). Both players send them, in either order:
    prefer U:c4,L:h5        or        prefer none
A preference stays hidden from the opponent until it is revealed. If
both players named the same seat, the two preferences cancel and it is
an ordinary seat (each of the two is told).

Claims. Red claims first, then the players take turns; a turn claims
one empty seat:
    L:h5
You may not claim a seat holding your own preference. If you claim a
seat that is your opponent's hidden preference, it is revealed as
theirs and your turn is over.

Local majorities. The surrounding seats of a seat are its neighbours
in the same chamber, diagonals included (3 to 8 of them). As soon as
all the surrounding seats of a seat are held (a revealed preference
counts as held by its owner; a hidden one looks empty), the seat goes
to the colour that holds more than half of them, even if nobody had
claimed it; a tie changes nothing. Preferences never change colour: a
hidden preference whose surroundings are all held is revealed instead.
After a claim, seats are flipped one at a time and the board is looked
at again after each flip: first flips that help the player who
claimed, then flips that help the opponent. Seats of the same kind go
in reading order (Upper before Lower, top row first, left to right)
unless the claimer names an order with the claim:
    L:c4 then L:d5,L:e5
(among flips of the same kind, the seats named after then go first, in
that order; the others follow in reading order). This always comes to
an end.

The end of a round. When the only seats that look empty are hidden
preferences, those are revealed, the local majorities they complete
are applied, and the round ends. Preferences do not count as seats
won. A player holding more than half of all seats in play wins (114 of
226 with both chambers, 39 of 76 in the Upper, 76 of 150 in the
Lower); with both chambers the winner must also hold more than half of
the Upper chamber (39 seats). Otherwise the round is hung: the
chambers are cleared and played again with the same preferences, now
revealed and in place from the start, Red claiming first. After three
hung rounds the game is drawn. The score is the number of seats each
player holds at the end.

The board. R and B are seats held by Red and Blue, r and b their
revealed preferences, . an empty seat; you see your own hidden
preferences as r? or b?. The seat claimed last is marked < and seats
changed by the last turn *.

Option:
    -boards=upper|lower|both   the chambers played (default both)

Challenge:
    parliament challenge alice bob
    parliament challenge -boards=upper alice bob
(the first player named is Red and claims first)
"""

