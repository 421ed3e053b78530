"""Challenge policy per game type: accept or reject challenges, a limit on
active games, and how many more games a player seeks."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import Credential, SetAccepting, SetLimit
from pbmserv.service.commands.handling import handles
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import following, records
from pbmserv.store.following import PolicyRecord
from pbmserv.store.records import Account


def find_policy(ctx: Context, user: Account, game_type: str) -> PolicyRecord | None:
    return following.find_policy(ctx.connection, user.id, game_type)


def policy_for(ctx: Context, user: Account, game_type: str) -> PolicyRecord:
    """The user's policy for the game type: the defaults if there is none yet (stored by `following.save_policy`)."""
    return find_policy(ctx, user, game_type) or PolicyRecord(id=None, user_id=user.id, game_type=game_type)


def counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def active_games(ctx: Context, game: Game, userid: str) -> int:
    """The player's running boards of the type: read from their own boards, not every board of the type
    (`seeking.seekers` asks it of every seeker)."""
    return sum(1 for board in records.running_boards_of_all(ctx.connection, [userid]) if board.game_type == game.name)


def check_challenge(ctx: Context, game: Game, players: list[Account]) -> None:
    """Refuse a challenge that names a player who rejects challenges of this
    type or who already plays as many games as their limit. A challenge
    needs no password, so nothing tells who sent it: a sender address
    anybody can write cannot lift a player's `reject`."""
    for user in players:
        policy = find_policy(ctx, user, game.name)
        if policy is None:
            continue
        if not policy.accepts_challenges:
            raise ServiceError(
                f"{user.userid} does not accept {game.title} challenges.",
                f"challenge somebody else; {user.userid} can change this with "
                f"'{game.name} challenges {user.userid} password on' (also to start a game of their own)",
                game=game.name,
            )
        playing = active_games(ctx, game, user.userid)
        if policy.game_limit and playing >= policy.game_limit:
            raise ServiceError(
                f"{user.userid} already plays {counted(playing, f'active {game.title} game')}, "
                f"the most {user.userid} has chosen to play at once.",
                f"wait until one of them ends, or ask {user.userid} to raise the limit with "
                f"'{game.name} limit {user.userid} password number'",
                game=game.name,
            )


def game_started(ctx: Context, game: Game, players: list[Account]) -> None:
    """A new board counts against what each player seeks; the wait for the
    next game sought (and for the bot) starts anew."""
    for user in players:
        policy = find_policy(ctx, user, game.name)
        if policy is not None and policy.seeking > 0:
            left = policy.seeking - 1
            following.save_policy(ctx.connection, replace(
                policy, seeking=left, seeking_since=ctx.now if left else None, bot_after_hours=policy.bot_after_hours if left else 0,
            ))


def why_not_free(ctx: Context, game: Game, user: Account, policy: PolicyRecord) -> str:
    """Why the server may not start a board for the player now: an account
    disabled or with no confirmed address, challenges refused, the limit
    reached; "" if it may."""
    if user.disabled_at is not None:
        return f"the account {user.userid} is disabled"
    if not ctx.addresses([user.userid])[user.userid]:
        return f"{user.userid} has not confirmed an address yet (reply to the welcome mail of the signup)"
    if not policy.accepts_challenges:
        return f"{user.userid} refuses {game.title} challenges ('{game.name} challenges {user.userid} password on' takes them)"
    playing = active_games(ctx, game, user.userid)
    if policy.game_limit and playing >= policy.game_limit:
        return f"{user.userid} already plays {counted(playing, f'active {game.title} game')}, the limit {user.userid} chose"
    return ""


# -- commands ------------------------------------------------------------------
@handles(SetAccepting)
def set_accepting(ctx: Context, game: Game, command: SetAccepting) -> list[Reply]:
    return _change_policy(ctx, game, command.userid, command.password, accepts_challenges=command.accepting)


@handles(SetLimit)
def set_limit(ctx: Context, game: Game, command: SetLimit) -> list[Reply]:
    return _change_policy(ctx, game, command.userid, command.password, game_limit=command.limit)


def _change_policy(ctx: Context, game: Game, userid: str, password: Credential, **change: Any) -> list[Reply]:
    user = ctx.authenticate(userid, password)
    policy = replace(policy_for(ctx, user, game.name), **change)
    following.save_policy(ctx.connection, policy)
    return [policy_reply(ctx, game, user, policy)]


def policy_reply(ctx: Context, game: Game, user: Account, policy: PolicyRecord, after: str = "") -> Reply:
    """The player's policy as it stands, then `after` (a paragraph)."""
    playing = active_games(ctx, game, user.userid)
    accepting = "accepted" if policy.accepts_challenges else f"refused ('{game.name} challenges ... on' takes them again)"
    limit = counted(policy.game_limit, "active game") if policy.game_limit else "none"
    body = (
        f"The {game.title} challenge policy of {user.userid}:\n"
        f"  challenges:  {accepting}\n"
        f"  limit:       {limit} (playing {playing} now)\n"
        f"  seeking:     {counted(policy.seeking, 'more game')}\n"
    )
    if policy.seeking and policy.bot_after_hours:
        body += f"  the bot:     after {counted(policy.bot_after_hours, 'hour')} without a player\n"
    return Reply((ctx.sender,), f"{game.title} policy {user.userid}", body + (f"\n{after}\n" if after else ""))
