"""Command -> handler. Every handler returns the replies to send."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pbmserv.gamekit import Game
from pbmserv.protocol import commands as c
from pbmserv.service import accounts, boards, help, legal, pending, policies, proposals, ratings, showing, social, timers
from pbmserv.service.context import Context, Reply

# each handler takes the command type it is filed under, which a dict's type cannot say: hence Any
_GLOBAL: dict[type, Callable[[Context, Any], list[Reply]]] = {
    c.Help: help.help_command,
    c.Signup: accounts.signup,
    c.ChangePassword: accounts.change_password,
    c.ChangeAddress: accounts.change_address,
    c.Confirm: accounts.confirm,
    c.Signoff: accounts.signoff,
    c.ListGames: help.list_games,
    c.GameHelp: help.game_help,
    c.AllShow: showing.all_show,
    c.Message: social.message,
    c.Broadcast: social.broadcast,
    c.Vacation: timers.vacation,
}

_GAME: dict[type, Callable[[Context, Game, Any], list[Reply]]] = {
    c.Challenge: boards.challenge,
    c.Move: boards.move,
    c.Resign: boards.resign,
    c.Queue: pending.queue,
    c.Preview: pending.preview,
    c.Moves: legal.moves,
    c.Proposal: proposals.proposal,
    c.ShowBoards: showing.show_boards,
    c.ShowUsers: showing.show_users,
    c.ListBoards: showing.list_boards,
    c.ShowAs: showing.show_as,
    c.Subscribe: social.subscribe,
    c.Unsubscribe: social.unsubscribe,
    c.Notify: social.notify,
    c.Chat: social.chat,
    c.SetAccepting: policies.set_accepting,
    c.SetLimit: policies.set_limit,
    c.SetSeek: policies.set_seek,
    c.Standings: ratings.standings,
    c.History: ratings.history,
}


def execute(ctx: Context, command: c.Command) -> list[Reply]:
    handler = _GLOBAL.get(type(command))
    if handler is not None:
        return handler(ctx, command)
    assert isinstance(command, c.GameCommand)
    return _GAME[type(command)](ctx, ctx.catalog.get(command.game), command)
