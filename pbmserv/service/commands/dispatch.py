"""Runs a command's handler (`handling.handles`): a global command's with
the context, a per-game command's with its game as well. The modules of
the command families are imported for the handlers they bind."""

from __future__ import annotations

from pbmserv.protocol.commands import Command, GameCommand
from pbmserv.service.commands import (  # noqa: F401  (each binds its handlers)
    accounts,
    boards,
    game_records,
    help,
    legal,
    notifications,
    open_challenges,
    pending,
    pictures,
    policies,
    proposals,
    seeking,
    showing,
    social,
    standings,
    timezones,
    vacations,
)
from pbmserv.service.commands.handling import HANDLERS
from pbmserv.service.processing.context import Context, Reply


def execute(ctx: Context, command: Command) -> list[Reply]:
    handler = HANDLERS[type(command)]
    if isinstance(command, GameCommand):
        return handler(ctx, ctx.catalog.get(command.game), command)
    return handler(ctx, command)
