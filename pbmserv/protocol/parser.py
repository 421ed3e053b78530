"""One command line -> its command: a game's name leads to the per-game
commands, any other first word names a global command."""

from __future__ import annotations

from collections.abc import Collection

from pbmserv.protocol.arguments import shown
from pbmserv.protocol.commands import Command
from pbmserv.protocol.errors import EmptyCommand, UnknownCommand
from pbmserv.protocol.game_commands import parse_game_command
from pbmserv.protocol.global_commands import GLOBAL_VERBS
from pbmserv.protocol.syntax import Said, did_you_mean, listed


def parse_command(text: str, games: Collection[str]) -> Command:
    words = text.split()
    if not words:
        raise EmptyCommand(
            "The Subject line is empty, so there is no command to carry out.",
            "put a command in the Subject, e.g. 'help'",
        )
    verb = words[0].lower()
    known_games = {game.lower() for game in games}
    if verb in known_games:
        return parse_game_command(verb, words[1:], text)
    declared = GLOBAL_VERBS.get(verb)
    if declared is None or declared.read is None:
        commands = sorted(listed(GLOBAL_VERBS))
        raise UnknownCommand(
            f"'{shown(words[0])}' is neither a command nor a game.",
            did_you_mean(verb, [*commands, *known_games]) + "commands: " + ", ".join(commands) + "; games: "
            + (", ".join(sorted(known_games)) or "none installed")
            + "; send 'help' for the list",
        )
    return declared.read(Said(words[1:], text, declared.syntax))
