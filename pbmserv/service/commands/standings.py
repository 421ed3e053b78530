"""The rating table of a game type (`standings`, also called `ratings`) and
its finished boards (`history`)."""

from __future__ import annotations

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import History, Standings
from pbmserv.service.commands import policies
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import ratings, views
from pbmserv.service.play.ratings import START_RATING
from pbmserv.service.processing.context import Context, Reply
from pbmserv.store import records

_COLUMNS = f"  {'Player':<20} {'Rating':>6} {'Won':>5} {'Lost':>5} {'Drawn':>5} {'Active':>7} {'Seeking':>7}"


@handles(Standings)
def standings(ctx: Context, game: Game, command: Standings) -> list[Reply]:
    """Every rated player of the game type and every player seeking games, by
    rating, in three groups: established, provisional, inactive."""
    groups = ratings.standings(ctx.connection, game.name, ctx.now)
    entries = sum(len(found) for found in groups.values())
    lines = [f"{game.title} standings: {policies.counted(entries, 'player')}.", "", _COLUMNS]
    for group, found in groups.items():
        lines += ["", f"{ratings.STANDING_GROUPS[group]}:", *([_line(standing) for standing in found] or ["  none"])]
    lines += ["", views.wrap(
        f"Everybody starts at {START_RATING}. Active is active games/limit ('-' = no limit); "
        f"Seeking is how many more games the player looks for ('{game.name} seek').", hang="",
    )]
    return [Reply((ctx.sender,), f"{game.title} standings", "\n".join(lines) + "\n")]


def _line(s: ratings.Standing) -> str:
    active = f"{s.active}/{s.limit or '-'}"
    return f"  {s.userid:<20} {s.rating:>6} {s.won:>5} {s.lost:>5} {s.drawn:>5} {active:>7} {s.seeking:>7}"


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
