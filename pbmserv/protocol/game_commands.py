"""The per-game commands: the words after `GAME` -> its command, read by the
verb's reader; the verbs in the order help lists them."""

from __future__ import annotations

from pbmserv.protocol.arguments import shown
from pbmserv.protocol.commands import Command
from pbmserv.protocol.errors import MissingArgument, UnknownCommand
from pbmserv.protocol.following_commands import FOLLOWING_VERBS
from pbmserv.protocol.play_commands import PLAY_VERBS
from pbmserv.protocol.player_commands import PLAYER_VERBS
from pbmserv.protocol.syntax import Said, by_word, did_you_mean, listed

GAME_VERBS = by_word(*PLAY_VERBS, *FOLLOWING_VERBS, *PLAYER_VERBS)


def parse_game_command(game: str, args: list[str], text: str) -> Command:
    if not args:
        raise MissingArgument(
            f"'{game}' must be followed by a command.",
            "; ".join(s.replace("GAME", game) for s in ("GAME help", "GAME challenge ...", "GAME move ...", "GAME show ...")),
            game=game,
        )
    verb = GAME_VERBS.get(args[0].lower())
    if verb is not None and verb.read is not None:
        return verb.read(Said(args[1:], text, verb.syntax_for(game), game))
    commands = sorted(listed(GAME_VERBS))
    raise UnknownCommand(
        f"'{shown(args[0])}' is not a {game} command.",
        f"{did_you_mean(args[0], commands)}{game} commands: {', '.join(commands)}; send '{game} help' for the rules",
        game=game,
    )
