"""Ratings per game type, pbmserv style: every player starts at 1600; their
first 20 finished boards of a type are provisional (the USCF performance
average), after that Elo with K = 32; a board rated as it finishes."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from pbmserv.service.bots.seats import is_bot
from pbmserv.service.play import views
from pbmserv.service.play.board import Board, played_moves
from pbmserv.service.play.replays import SERVER_MOVES
from pbmserv.service.processing.context import Context, as_utc
from pbmserv.store import following, records
from pbmserv.store.following import RatingRecord
from pbmserv.store.handles import Connection
from pbmserv.store.records import BoardRecord

START_RATING = 1600
#: the moves each player must have made on a board (a resignation or forfeit not counted) for it to be rated
RATED_MOVES_EACH = 2
PROVISIONAL_GAMES = 20
K_FACTOR = 32
#: a player without a finished board of the type for this long is listed as inactive
INACTIVE_DAYS = 180


def expected_score(rating: float, opponent: float) -> float:
    return 1 / (1 + 10 ** ((opponent - rating) / 400))


def new_rating(rating: int, games: int, results: list[tuple[int, float]]) -> int:
    """The rating after one board. `games` is how many rated boards the player
    finished before it, `results` holds (opponent's rating, score: 1 won,
    0.5 drawn, 0 lost) against each opponent on the board.

    Provisional (fewer than 20 games before): the average of the earlier
    rating, weighted by its games plus one (the start rating counts as one
    game played at 1600, which keeps the first results from swinging the
    rating by 400), and this board's performance (the opponents' average
    rating, +400 for a win, -400 for a loss); a win never lowers and a loss
    never raises it. Established: Elo, K = 32 shared
    among the opponents."""
    if games < PROVISIONAL_GAMES:
        performance = sum(opponent + 400 * (2 * score - 1) for opponent, score in results) / len(results)
        value = (rating * (games + 1) + performance) / (games + 2)
        net = sum(2 * score - 1 for _, score in results)
        if net > 0:
            value = max(value, rating)
        elif net < 0:
            value = min(value, rating)
    else:
        value = rating + K_FACTOR / len(results) * sum(
            score - expected_score(rating, opponent) for opponent, score in results
        )
    return round(value)


def explained(rating: int, games: int, results: list[tuple[int, float]]) -> str:
    """Why one board moves a rating as `new_rating` does (its arguments),
    for the final mail: the formula with this board's numbers in it
    (`how_ratings_change` gives it in words). It changes with `new_rating`."""
    after = new_rating(rating, games, results)
    if games < PROVISIONAL_GAMES:
        performance = sum(opponent + 400 * (2 * score - 1) for opponent, score in results) / len(results)
        steps = ", ".join(f"{opponent} {_PERFORMANCE_STEP[score]}" for opponent, score in results)
        average = round((rating * (games + 1) + performance) / (games + 2))
        text = (
            f"provisional, {games} rated {'game' if games == 1 else 'games'} before: ({rating} x {games + 1} + "
            f"performance {performance:g}) / {games + 2} = {average}"
        )
        if average != after:
            text += f", but a {'win never lowers' if after > average else 'loss never raises'} a provisional rating: it stays {after}"
        opponents = "the opponent's" if len(results) == 1 else "the average of the opponents'"
        return f"{text}; performance = {opponents} {steps}."
    expected = sum(expected_score(rating, opponent) for opponent, _ in results)
    scored = sum(score for _, score in results)
    share = K_FACTOR if len(results) == 1 else f"{K_FACTOR}/{len(results)}"
    opponents = ", ".join(str(opponent) for opponent, _ in results)
    return f"Elo: {rating} + {share} x (score {scored:g} - expected {expected:.2f} against {opponents}) = {after}."


_PERFORMANCE_STEP = {1.0: "+400 for a win", 0.5: "+0 for a draw", 0.0: "-400 for a loss"}


def how_ratings_change() -> str:
    """The formulas of `new_rating`, for `help ratings`."""
    return (
        f"How a rating changes. Everybody starts at {START_RATING}. A player's first {PROVISIONAL_GAMES} rated games"
        " of a game are provisional: the new rating is the average of the old one, counted as one game more than"
        " the rated games before, and the game's performance, the opponent's rating +400 for a win, -400 for a"
        " loss, +0 for a draw: new = (old x (n + 1) + performance) / (n + 2), n = rated games before. So a first"
        " game moves a rating by 200 against an equal opponent, and by less as games add up; a win never lowers"
        f" and a loss never raises a provisional rating. From the {PROVISIONAL_GAMES + 1}st game on: Elo,"
        f" new = old + {K_FACTOR} x (score - expected), score 1 for a win, 0.5 for a draw, 0 for a loss,"
        " expected = 1 / (1 + 10^((opponent - old) / 400)). With more than two players each is rated against each"
        " other one (a winner beats a non-winner), the performances averaged, or K shared. The two sides of one"
        " game can move by different amounts, as each side's change depends on its own number of games. A"
        " game's final mail shows each change with these numbers in it."
    )


def pair_score(seat: int, other: int, winners: list[int]) -> float:
    """The score of `seat` against `other`: a winner beats a non-winner; otherwise a draw."""
    return 0.5 + ((seat in winners) - (other in winners)) / 2


def finish(ctx: Context, board: Board, winners: list[int], scores: list[Any] | None, reason: str) -> Board:
    """The board over, with the rating changes it caused (or why it is not rated)."""
    unrated = _unrated_because(ctx, board)
    rating = {"ratings": _rate_board(ctx, board.record, winners)} if unrated is None else {"unrated": unrated}
    return board.finish(winners, scores, reason, rating)


def _unrated_because(ctx: Context, board: Board) -> str | None:
    """Why the finished board does not count towards ratings, or None if it
    does. Only a game played counts: each player made RATED_MOVES_EACH moves
    of their own (a board resigned at once says nothing of strength, and is
    the cheapest way to feed one account's rating from others), and every
    player but the bots has an address that a reply proved theirs."""
    seats = board.record.seats
    humans = [userid for userid in seats if not is_bot(userid)]
    unconfirmed = [userid for userid, addresses in ctx.addresses(humans).items() if not addresses]
    if unconfirmed:
        return f"{views.names_and(unconfirmed)} has no confirmed address"
    made = Counter(seat for seat, text in played_moves(ctx.connection, board) if text not in SERVER_MOVES)
    if any(made[seat] < RATED_MOVES_EACH for seat in range(len(seats))):
        return f"a board counts once each player has made {RATED_MOVES_EACH} moves"
    return None


def _rate_board(ctx: Context, board: BoardRecord, winners: list[int]) -> list[dict[str, Any]]:
    """Rate the finished board (a resignation or forfeit is a loss); returns
    each player's rating before and after, as the board's result keeps them."""
    rows = [_rating_of(ctx, userid, board.game_type) for userid in board.seats]
    seats = range(len(board.seats))
    results = [[(rows[o].rating, pair_score(s, o, winners)) for o in seats if o != s] for s in seats]
    after = [new_rating(row.rating, row.games, results[s]) for s, row in zip(seats, rows)]
    changes = []
    for seat, row in enumerate(rows):
        if not winners or len(winners) == len(rows):
            counted = replace(row, drawn=row.drawn + 1)
        elif seat in winners:
            counted = replace(row, won=row.won + 1)
        else:
            counted = replace(row, lost=row.lost + 1)
        rated = replace(counted, rating=after[seat], last_game_at=ctx.now)
        following.save_rating(ctx.connection, rated)
        changes.append({
            "userid": board.seats[seat], "before": row.rating, "after": rated.rating,
            "provisional": rated.games < PROVISIONAL_GAMES, "why": explained(row.rating, row.games, results[seat]),
        })
    return changes


def rating_of(ctx: Context, userid: str, game_type: str) -> int:
    """The player's rating in the game type, the start rating if they have none."""
    return _rating_of(ctx, userid, game_type).rating


def _rating_of(ctx: Context, userid: str, game_type: str) -> RatingRecord:
    """The player's rating in the game type; the start rating (not stored yet) if they have none."""
    user = ctx.known_user(userid)
    return following.find_rating(ctx.connection, user.id, game_type) or RatingRecord(
        id=None, user_id=user.id, game_type=game_type, rating=START_RATING, won=0, lost=0, drawn=0, last_game_at=ctx.now,
    )


# -- standings -------------------------------------------------------------------
@dataclass(frozen=True)
class Standing:
    """One line of a game type's standings: a rated player, or one seeking
    games who has no rating yet (at the start rating, no games)."""

    userid: str
    rating: int
    won: int
    lost: int
    drawn: int
    #: the player's running boards of the type, and the most they take at once (0: no limit)
    active: int
    limit: int
    seeking: int


#: the groups of the standings, in order, and what puts a player in each
STANDING_GROUPS = {
    "established": f"Established ({PROVISIONAL_GAMES} or more rated games)",
    "provisional": f"Provisional (fewer than {PROVISIONAL_GAMES} rated games)",
    "inactive": f"Inactive (no finished game for {INACTIVE_DAYS} days)",
}


def standings(connection: Connection, game_type: str, now: datetime) -> dict[str, list[Standing]]:
    """Every rated player of the game type and every player seeking games,
    by rating, in the groups of STANDING_GROUPS."""
    rated = following.ratings_in_game(connection, game_type)
    policy_of = following.policies_in_game(connection, game_type)
    seekers = [userid for userid, p in policy_of.items() if p.seeking > 0 and userid not in rated]
    playing: Counter[str] = Counter(userid for board in records.running_boards(connection, game_type) for userid in board.seats)
    inactive_since = now - timedelta(days=INACTIVE_DAYS)
    groups: dict[str, list[Standing]] = {group: [] for group in STANDING_GROUPS}
    entries = [(r.rating, userid, r) for userid, r in rated.items()] + [(START_RATING, u, None) for u in seekers]
    for rating, userid, row in sorted(entries, key=lambda e: (-e[0], e[1])):
        policy = policy_of.get(userid)
        won, lost, drawn = (row.won, row.lost, row.drawn) if row else (0, 0, 0)
        standing = Standing(
            userid, rating, won, lost, drawn, playing[userid], policy.game_limit if policy else 0, policy.seeking if policy else 0,
        )
        if row is not None and as_utc(row.last_game_at) < inactive_since:
            groups["inactive"].append(standing)
        elif row is not None and row.games >= PROVISIONAL_GAMES:
            groups["established"].append(standing)
        else:
            groups["provisional"].append(standing)
    return groups

