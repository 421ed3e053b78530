"""Someone to play with (`GAME seek`): a player who seeks games is paired at
once with another who seeks a game of the same type and whose rating is
close, and after the wait they chose (`-bot=HOURS`) with the bot; each
pairing starts a board the way a challenge does and is announced in its
first mail. See docs/decisions/0151-pairing-seekers.md."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import SetSeek
from pbmserv.service.bots import seats as bots
from pbmserv.service.commands import policies
from pbmserv.service.commands.boards import start_board, syntax
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import views
from pbmserv.service.play.board import Board
from pbmserv.service.play.board_mails import mails_to_players
from pbmserv.service.play.ratings import START_RATING, rating_of
from pbmserv.service.processing.context import Context, Reply, as_utc
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import following, users
from pbmserv.store.following import PolicyRecord
from pbmserv.store.records import Account
from pbmserv.store.states import Kind

#: the widest rating gap a pairing bridges: at 200 points the stronger
#: player is expected to score 0.76, a game still worth playing for both
WINDOW = 200
#: the seat order of players who waited equally long, and of seeks older than the wait's record
_LONG_AGO = datetime.min.replace(tzinfo=UTC)


def pairs_players(game: Game) -> bool:
    """Whether seekers of the game are paired: two players must be able to
    play a board of it (every game on the server is for two; a rule for how
    close a group of three must be has no use yet)."""
    return game.min_players <= 2 <= game.max_players


@dataclass(frozen=True)
class Seeker:
    """A player who seeks a game of the type: their rating in it, since when
    they wait, and whether the server may start a board for them now."""

    userid: str
    rating: int
    since: datetime
    free: bool


def partner(seeker: Seeker, others: list[Seeker]) -> Seeker | None:
    """Whom the seeker is paired with: among the others who are free and
    within WINDOW of the seeker's rating, the one who has waited longest
    (then the closest in rating, then by userid); None if nobody is."""
    close = [
        other for other in others
        if other.free and other.userid != seeker.userid and abs(other.rating - seeker.rating) <= WINDOW
    ]
    return min(close, key=lambda other: (other.since, abs(other.rating - seeker.rating), other.userid), default=None)


def seat_order(first: Seeker, second: Seeker) -> list[Seeker]:
    """Who waited longer sits first (by userid if they waited equally long)."""
    return sorted([first, second], key=lambda seeker: (seeker.since, seeker.userid))


def why_not_paired(ctx: Context, game: Game, user: Account, policy: PolicyRecord) -> str:
    """Why no board may be started for the seeker now ("" if one may): a
    board nobody may be reminded on would stand still, so a player on
    vacation is not paired either."""
    if any(vacation.ended_at is None for vacation in users.vacations_of(ctx.connection, user.id)):
        return f"{user.userid} is on vacation ('vacation {user.userid} password off' ends it)"
    return policies.why_not_free(ctx, game, user, policy)


def seekers(ctx: Context, game: Game) -> dict[str, Seeker]:
    """Everyone who seeks a game of the type, by userid."""
    rated = following.ratings_in_game(ctx.connection, game.name)
    found = {}
    for userid, policy in following.policies_in_game(ctx.connection, game.name).items():
        if policy.seeking <= 0:
            continue
        user = ctx.known_user(userid)
        since = as_utc(policy.seeking_since) if policy.seeking_since else _LONG_AGO
        rating = rated[userid].rating if userid in rated else START_RATING
        found[userid] = Seeker(userid, rating, since, not why_not_paired(ctx, game, user, policy))
    return found


# -- the command ---------------------------------------------------------------
@handles(SetSeek)
def set_seek(ctx: Context, game: Game, command: SetSeek) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    policy = policies.policy_for(ctx, user, game.name)
    seeking = command.count > 0
    still_since = policy.seeking_since if policy.seeking > 0 else None
    following.save_policy(ctx.connection, replace(
        policy, seeking=command.count, seeking_since=(still_since or ctx.now) if seeking else None,
        bot_after_hours=command.bot_after_hours if seeking else 0,
    ))
    started = _pair(ctx, game, user.userid)
    policy = policies.policy_for(ctx, user, game.name)
    answer = "\n\n".join(
        views.wrap(f"Paired with {_other(board, user.userid)}: {game.title} board {board.record.board} has begun; "
                   "its first mail follows.", hang="")
        for board, _ in started
    )
    if policy.seeking:
        answer += ("\n\n" if answer else "") + _still_seeking(ctx, game, user.userid, policy.bot_after_hours)
    mails = [mail for board, lead in started for mail in mails_to_players(ctx, board, first=True, lead=lead, commenter=user.userid)]
    return [policies.policy_reply(ctx, game, user, policy, answer), *mails]


def _pair(ctx: Context, game: Game, userid: str) -> list[tuple[Board, str]]:
    """Start a board between the seeker and each close seeker in turn, as
    long as they seek more and are free; each with its lead line."""
    started: list[tuple[Board, str]] = []
    while pairs_players(game):
        found = seekers(ctx, game)
        seeker = found.get(userid)
        other = partner(seeker, list(found.values())) if seeker is not None and seeker.free else None
        if seeker is None or other is None:
            return started
        seated = seat_order(seeker, other)
        users = [ctx.known_user(player.userid) for player in seated]
        board = start_board(ctx, game, users, {}, {}, syntax(game.name, "seek"))
        first, second = seated
        lead = views.wrap(
            f"Paired by '{game.name} seek': {first.userid} ({first.rating}) and {second.userid} ({second.rating}) both "
            f"sought a {game.title} game, their ratings within {WINDOW} points; {first.userid} waited longer and has "
            "the first seat.", hang="",
        )
        started.append((board, lead))
    return started


def _other(board: Board, userid: str) -> str:
    return next(player for player in board.record.seats if player != userid)


def _still_seeking(ctx: Context, game: Game, userid: str, bot_after_hours: int) -> str:
    """What the answer to a seek says when the player still seeks: why no
    board began, and what comes next."""
    if not pairs_players(game):
        return views.wrap(
            f"{game.title} is played by {game.min_players} or more players: its seekers are listed in "
            f"'{game.name} standings', not paired.", hang="",
        )
    seeker = seekers(ctx, game)[userid]
    if not seeker.free:
        user = ctx.known_user(userid)
        why = why_not_paired(ctx, game, user, policies.policy_for(ctx, user, game.name))
        others = "a close seeker or the bot" if bot_after_hours else "a close seeker"
        text = f"No board can begin for you now: {why}. You stay seeking: once that has changed, {others} can be paired with you."
        return views.wrap(text, hang="")
    text = (
        f"No one close to your rating ({seeker.rating}, within {WINDOW} points) seeks a {game.title} game now; "
        "you will get the board mail when someone does."
    )
    if bot_after_hours:
        text += f" Without a player by {seeker.since + timedelta(hours=bot_after_hours):%Y-%m-%d %H:%M} UTC, the bot takes the game."
    return views.wrap(text, hang="")


# -- the timer pass ----------------------------------------------------------------
def bots_due(ctx: Context) -> tuple[list[Reply], list[str]]:
    """Start a board against the bot for each free seeker whose wait for a
    player has passed. One the bot cannot take (the player has as many bot
    boards as the server allows) is told why, and waits no more for it."""
    replies: list[Reply] = []
    report: list[str] = []
    for game in filter(pairs_players, ctx.catalog):
        for userid, policy in following.policies_in_game(ctx.connection, game.name).items():
            if policy.seeking <= 0 or not policy.bot_after_hours or policy.seeking_since is None:
                continue
            if as_utc(policy.seeking_since) + timedelta(hours=policy.bot_after_hours) > ctx.now:
                continue
            user = ctx.known_user(userid)
            if why_not_paired(ctx, game, user, policy):
                continue
            waited = policies.counted(policy.bot_after_hours, "hour")
            usage = syntax(game.name, "seek")
            try:
                players, _ = bots.seat_bots(ctx, game, [userid, "bot"], (), usage)
            except ServiceError as error:
                following.save_policy(ctx.connection, replace(policy, bot_after_hours=0))
                text = views.wrap(
                    f"Your seek for a {game.title} game has waited {waited} for a player, but the bot cannot take the "
                    f"game. {error.message} You stay seeking a player; to have the bot after a wait again, seek again "
                    "with -bot=HOURS once that has changed.", hang="",
                )
                replies.append(Reply(ctx.addresses([userid])[userid], f"{game.title} seek {userid}", text + "\n", Kind.BOARD))
                report.append(f"{game.name}: no bot for {userid}: {error.message}")
                continue
            board = start_board(ctx, game, [user, ctx.known_user(players[1])], {}, {}, usage)
            lead = views.wrap(
                f"Paired by '{game.name} seek': no player within {WINDOW} rating points of {userid} "
                f"({rating_of(ctx, userid, game.name)}) sought a {game.title} game in {waited}, so the bot takes the "
                f"game, as {userid} asked with -bot={policy.bot_after_hours}.", hang="",
            )
            replies += mails_to_players(ctx, board, first=True, lead=lead)
            report.append(f"{game.name} board {board.record.board}: {userid} paired with the bot after waiting")
    return replies, report
