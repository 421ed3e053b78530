"""Help and list: the server explains itself by mail."""

from __future__ import annotations

from pbmserv.gamekit import Game
from pbmserv.protocol import GAME_VERBS, GLOBAL_VERBS, Verb
from pbmserv.protocol.commands import GameHelp, Help, ListGames
from pbmserv.protocol.syntax import did_you_mean, listed
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import ratings
from pbmserv.service.play.views import syntax_lines, wrap
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError

OVERVIEW = """\
pbmserv plays board games by mail. Put a command in the Subject of a
mail to this address; anything you write in the body of a move goes to
your opponent with the board.

Getting started:
  signup alice mypassword          create your account, then reply
                                   to the welcome to confirm it
  list                             the games on this server
  majorities help                  the rules of one game
  majorities challenge alice bob   start a game (alice moves first)
  majorities move 101 alice mypassword c1
                                   make a move on board 101

Commands for everybody:
{global_commands}

Commands for each game (replace GAME by its name):
{game_commands}

Verbs and userids may be in any case; passwords may not. Re: and Fwd: in
front of a Subject are ignored.

The quickest way to move: reply to the board mail and write just your
move as the first line (e.g. c1, or resign, show, undo, accept, chat).
Each board mail comes from a reply address of your own, which stands for
your password on that board; a new password makes the old ones stop
working. 'help COMMAND' explains one command, 'help GAME' one game.
"""


def _indent(verbs: dict[str, Verb]) -> str:
    return "\n".join(syntax_lines(verb.syntax) for verb in listed(verbs).values())


def overview() -> str:
    return OVERVIEW.format(global_commands=_indent(GLOBAL_VERBS), game_commands=_indent(GAME_VERBS))


def options_text(game: Game, indent: str = "") -> str:
    """The game's challenge options, every line (its `indent` included)
    within the mail line width."""
    if not game.options:
        return f"{indent}Options: none."
    lines = [f"{indent}Options (at challenge):"]
    for option in game.options:
        if option.name in game.fixed_options:
            continue
        lines.append(wrap(option.syntax(), indent + "  "))
        if option.description:
            lines.append(wrap(option.description, indent + "      ", ""))
    return "\n".join(lines)


def game_help_text(game: Game) -> str:
    usage = "\n".join(syntax_lines(verb.syntax_for(game.name)) for verb in listed(GAME_VERBS).values())
    return f"{game.help().strip()}\n\nCommands:\n{usage}\n\n{wrap(_proposals_text(game), hang='')}\n"


def _proposals_text(game: Game) -> str:
    undo = f"'{game.name} move board userid password undo' asks to take back your last move"
    if game.draws:
        return f"'{game.name} move board userid password propose' offers a draw, and {undo}."
    return f"{game.title} has no draws, so there is no draw offer; {undo}."


@handles(Help)
def help_command(ctx: Context, command: Help) -> list[Reply]:
    if not command.topic:
        return [Reply((ctx.sender,), "pbmserv help", overview())]
    topic = command.topic[0]
    if topic in ctx.catalog:
        return game_help(ctx, ctx.catalog.get(topic), GameHelp(topic))
    if topic in ("standings", "ratings"):  # one table by two names; help on either is help on ratings
        table = GAME_VERBS["standings"]
        body = (
            f"{syntax_lines(table.syntax, '')}\n{syntax_lines(GAME_VERBS['ratings'].syntax, '')}\n\n"
            f"{wrap(table.help, hang='')}\n\n{wrap(ratings.how_ratings_change(), hang='')}\n"
        )
        return [Reply((ctx.sender,), f"pbmserv help {topic}", body)]
    verb = GLOBAL_VERBS.get(topic) or GAME_VERBS.get(topic)
    if verb is not None:
        body = f"{syntax_lines(verb.syntax, '')}\n\n{wrap(verb.help, hang='')}\n"
        return [Reply((ctx.sender,), f"pbmserv help {topic}", body)]
    raise ServiceError(
        f"There is no help on '{topic}'.",
        did_you_mean(topic, [*listed(GLOBAL_VERBS), *listed(GAME_VERBS), *ctx.catalog.names()])
        + "send 'help' for the list of commands, or 'help GAME' for a game: " + ", ".join(ctx.catalog.names()),
    )


@handles(GameHelp)
def game_help(ctx: Context, game: Game, command: GameHelp) -> list[Reply]:
    return [Reply((ctx.sender,), f"{game.title} help", game_help_text(game))]


@handles(ListGames)
def list_games(ctx: Context, command: ListGames) -> list[Reply]:
    unknown = [name for name in command.games if name not in ctx.catalog]
    if unknown:
        raise ServiceError(
            f"This server has no game called '{unknown[0]}'.",
            "send 'list' for every game: " + ", ".join(ctx.catalog.names()),
        )
    games = [ctx.catalog.get(name) for name in command.games] or list(ctx.catalog)
    sections = []
    for game in games:
        players = f"{game.min_players}" if game.min_players == game.max_players else f"{game.min_players}-{game.max_players}"
        sections.append(f"{game.name:<14} {game.title}, {players} players\n{options_text(game, '    ')}")
    body = "Games on this server:\n\n" + "\n\n".join(sections) + "\n\n'GAME help' explains a game's rules and moves.\n"
    return [Reply((ctx.sender,), "pbmserv list", body)]
