"""The rating table of a game type (`standings`, also called `ratings`) and
its finished boards (`history`)."""

from __future__ import annotations

from datetime import timedelta

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import History, Standings
from pbmserv.service.commands import policies
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import views
from pbmserv.service.play.ratings import INACTIVE_DAYS, PROVISIONAL_GAMES, START_RATING
from pbmserv.service.processing.context import Context, Reply, as_utc
from pbmserv.store import following, records

_COLUMNS = f"  {'Player':<20} {'Rating':>6} {'Won':>5} {'Lost':>5} {'Drawn':>5} {'Active':>7} {'Seeking':>7}"


@handles(Standings)
def standings(ctx: Context, game: Game, command: Standings) -> list[Reply]:
    """Every rated player of the game type and every player seeking games, by
    rating, in three groups: established, provisional, inactive."""
    rated = following.ratings_in_game(ctx.connection, game.name)
    policy_of = following.policies_in_game(ctx.connection, game.name)
    seekers = [userid for userid, p in policy_of.items() if p.seeking > 0 and userid not in rated]
    playing: dict[str, int] = {}
    for board in records.running_boards(ctx.connection, game.name):
        for userid in board.seats:
            playing[userid] = playing.get(userid, 0) + 1
    inactive_since = ctx.now - timedelta(days=INACTIVE_DAYS)
    groups: dict[str, list[str]] = {"established": [], "provisional": [], "inactive": []}
    entries = [(r.rating, userid, r) for userid, r in rated.items()] + [(START_RATING, u, None) for u in seekers]
    for rating, userid, row in sorted(entries, key=lambda e: (-e[0], e[1])):
        policy = policy_of.get(userid)
        limit = policy.game_limit if policy and policy.game_limit else "-"
        record = (row.won, row.lost, row.drawn) if row else (0, 0, 0)
        line = (
            f"  {userid:<20} {rating:>6} {record[0]:>5} {record[1]:>5} {record[2]:>5} "
            f"{f'{playing.get(userid, 0)}/{limit}':>7} {policy.seeking if policy else 0:>7}"
        )
        if row is not None and as_utc(row.last_game_at) < inactive_since:
            groups["inactive"].append(line)
        elif row is not None and row.games >= PROVISIONAL_GAMES:
            groups["established"].append(line)
        else:
            groups["provisional"].append(line)
    headings = {
        "established": f"Established ({PROVISIONAL_GAMES} or more rated games):",
        "provisional": f"Provisional (fewer than {PROVISIONAL_GAMES} rated games):",
        "inactive": f"Inactive (no finished game for {INACTIVE_DAYS} days):",
    }
    lines = [f"{game.title} standings: {policies.counted(len(entries), 'player')}.", "", _COLUMNS]
    for group, found in groups.items():
        lines += ["", headings[group], *(found or ["  none"])]
    lines += ["", views.wrap(
        f"Everybody starts at {START_RATING}. Active is active games/limit ('-' = no limit); "
        f"Seeking is how many more games the player looks for ('{game.name} seek').", hang="",
    )]
    return [Reply((ctx.sender,), f"{game.title} standings", "\n".join(lines) + "\n")]


@handles(History)
def history(ctx: Context, game: Game, command: History) -> list[Reply]:
    """The finished boards of the type (of one player, if named), newest first."""
    if command.userid is not None:
        ctx.known_user(command.userid)
    finished = [
        b for b in records.finished_boards(ctx.connection, game.name) if command.userid is None or command.userid in b.seats
    ]
    who = f" of {command.userid}" if command.userid else ""
    lines = [f"{game.title}: finished boards{who}, newest first: {len(finished) or 'none'}."]
    if finished:
        lines += ["", f"{'Board':>5}  {'Ended':<10}  Players: result"]
        for b in finished:
            result = f"{views.short_status(game, b, None)} ({views.end_reason(b)})"
            lines.append(views.wrap(f"{b.board:>5}  {b.updated_at:%Y-%m-%d}  {' vs '.join(b.seats)}: {result}", hang=" " * 19))
    subject = f"{game.title} history {command.userid or ''}".rstrip()
    return [Reply((ctx.sender,), subject, "\n".join(lines) + "\n")]
