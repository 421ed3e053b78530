"""Help and list: the server explains itself by mail."""

from __future__ import annotations

from pbmserv.gamekit import Game
from pbmserv.protocol import GAME_SYNTAX, GLOBAL_SYNTAX
from pbmserv.protocol.commands import GameHelp, Help, ListGames
from pbmserv.service.context import Context, Reply
from pbmserv.service.errors import ServiceError
from pbmserv.service.views import syntax_lines, wrap

COMMAND_HELP = {
    "help": "Mails you help. Alone it lists every command; with a command word or a game name it explains that one.",
    "signup": "Creates your account. The userid has 2 to 20 letters, digits, '-', '_' or '.'; the password 4 to 128 characters and no spaces. Mail goes to the address you mail from, or to the addresses you list (at most 5): each one, yours too, gets a mail asking to confirm it (yours is the welcome), and no other mail until it is confirmed; nobody can challenge you before one is. 'add' is another name for it.",
    "add": "Another name for 'signup'.",
    "change": "'change password' replaces your password (old one first). 'change address' replaces the addresses your mail goes to (at most 5); without addresses it uses the one you mail from. A new address, the one you mail from too, gets mail only once it is confirmed.",
    "confirm": "Confirms that an address may get the mail of an account. The server mails a new address this command, with its code, as the Subject: reply to that mail keeping the Subject, or send it yourself.",
    "signoff": "Deletes your account. Every game you are still playing is forfeited to your opponents. 'delete' is another name for it.",
    "delete": "Another name for 'signoff'.",
    "list": "Lists the games this server runs, with their options. Name games to see only those.",
    "multiple": "Put 'multiple' in the Subject and one command on each line of the body (at most 20); each line is carried out in turn and answered on its own, and the lines that could not be carried out are answered together in one mail.",
    "challenge": "Starts a new board between the players you name (the first one moves first) and mails it to all of them. Options such as -size=5 change the game (see 'GAME help'); --nagtime=days and --forfeittime=days set how long the server waits for a move before reminding, and before forfeiting. Name 'bot' as a player to play the server's bot ('majorities challenge alice bot'); -bot=easy, -bot=normal (the default) or -bot=strong sets how well it plays, and each strength has a rating of its own.",
    "move": "Makes your move on a board. The move is the rest of the line, written as the game's help explains. A trailing #n makes the server refuse the move unless it is move number n, so an old or repeated mail can never move twice. 'move ... resign' gives up the game. 'move ... propose' offers a draw and 'move ... undo' asks to take back your last move (and any made after it); every other player answers with 'move ... accept' or 'move ... reject' (the proposer may reject, too, to withdraw it). One offer is open at a time; it takes effect when all others have accepted, and lapses with the next move. Moves such as pass or swap exist where a game's help lists them.",
    "queue": "Keeps your next move on a board while it is not your turn; the server plays it for you as soon as your turn comes, in the same step as your opponent's move, and marks it (Auto) in the move list. A new 'queue' replaces the earlier one. Nobody else sees it before it is played; if it is not legal then, it is dropped and you get a mail saying why.",
    "preview": "Mails you the board as it would be after the moves you list (separated by ';'), starting from the board as it stands or from move n (101#12). Each move is made by you if it is your turn, else by the player to move. Nothing is saved. It needs your password because it shows the board as you see it, your own hidden parts included. Other players' hidden parts are unknown to it: in psychomachia and parliament it plays as if their hidden stones or preferences were not there; a game that cannot leave them out refuses it while other players' secret moves are not revealed.",
    "moves": "Mails you the moves the player to move could make now, grouped to keep the list short: cells by their letters ('a: 1 2 4' means a1, a2 and a4), moves of several words by their first word, and where a turn places two stones on empty cells, those cells once, any two of which make a move. A long list is cut after 60 lines. On a board with hidden parts (psychomachia, parliament) only the player to move may ask, with their userid and password, and the list is for them alone; elsewhere anybody may ask without them, or name themselves to see only their own moves.",
    "resign": "Gives up the game on that board; your opponent wins.",
    "show": "Mails you boards as anybody may see them: by number (101#12 is board 101 as it stood after move 12) or every board of the players you name (active, inactive = finished, next = waiting for them, all).",
    "games": "Lists boards in a table: all of them, or those of the players you name, filtered like 'show'.",
    "message": "Sends the body of your mail to the players you name (by userid); you get a copy. Put the command in the Subject, not in a 'multiple' mail.",
    "broadcast": "Sends the body of your mail to every player on this server. Only the server's admins may broadcast.",
    "all": "'all show userid' mails you every active board of that player in every game on this server, as anybody may see them; 'all show userid next' only the boards waiting for their move.",
    "showas": "Mails you your boards as you see them, hidden parts (such as your secret squares) included; 101#12 is the board as it stood after move 12. Only you get the mail, so it needs your password.",
    "subscribe": "Sends you every mail of a board you do not play on, from now until it ends, as anybody may see it. 'subscribe all' does this for every new board of the game from the next challenge on. Board mails list the subscribers.",
    "unsubscribe": "Ends your subscription (or 'notify') to a board. 'unsubscribe all' ends every subscription to the game's boards, and the subscription to new boards.",
    "notify": "Sends you only the final mail of a board (the result) and nothing before it. 'notify' on a board you subscribe to stops the other mails.",
    "chat": "Sends the body of your mail to the players and subscribers of a board; you get a copy. Only its players and subscribers may chat on a board.",
    "accept": "Accepts challenges to this game again (the default).",
    "reject": "Refuses every challenge to this game that names you, with the reason; to start a game yourself, send 'accept' first.",
    "limit": "Sets the most active games of this game you play at once; a challenge that would go over it is refused. 0 means no limit (the default).",
    "vacation": "Pauses reminders and forfeits on all your boards while you are away ('on'), until you send 'off'. Each player has a number of vacation days per calendar year (30 unless the server says otherwise); every started day counts, and a vacation ends by itself when they are used up.",
    "standings": "Mails you the rating table of this game: established players (20 or more rated games), provisional ones and inactive ones (no finished game for 180 days), with rating, games won, lost and drawn, active games and limit, and how many games each seeks. Everybody starts at 1600; a game's final mail shows the rating changes. A game counts once each player has made 2 moves (a resignation not counted).",
    "ratings": "Another name for 'standings'.",
    "history": "Mails you the finished boards of this game, newest first, with players, result and date; name a player to see only theirs.",
    "seek": "Says how many more games of this game you are looking for; each new game you start or are challenged to counts one off.",
}

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


def _indent(items: dict[str, str], skip: tuple[str, ...] = ()) -> str:
    return "\n".join(syntax_lines(text) for name, text in items.items() if name not in skip)


def overview() -> str:
    return OVERVIEW.format(
        global_commands=_indent(GLOBAL_SYNTAX, skip=("add", "delete")),
        game_commands=_indent(GAME_SYNTAX),
    )


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
    usage = "\n".join(syntax_lines(syntax.replace("GAME", game.name)) for syntax in GAME_SYNTAX.values())
    return f"{game.help().strip()}\n\nCommands:\n{usage}\n"


def help_command(ctx: Context, command: Help) -> list[Reply]:
    if not command.topic:
        return [Reply((ctx.sender,), "pbmserv help", overview())]
    topic = command.topic[0]
    if topic in ctx.catalog:
        return game_help(ctx, GameHelp(topic))
    if topic in COMMAND_HELP:
        syntax = GLOBAL_SYNTAX.get(topic) or GAME_SYNTAX[topic]
        body = f"{syntax_lines(syntax, '')}\n\n{wrap(COMMAND_HELP[topic], hang='')}\n"
        return [Reply((ctx.sender,), f"pbmserv help {topic}", body)]
    raise ServiceError(
        f"There is no help on '{topic}'.",
        "send 'help' for the list of commands, or 'help GAME' for a game: "
        + ", ".join(ctx.catalog.names()),
    )


def game_help(ctx: Context, command: GameHelp) -> list[Reply]:
    game = ctx.catalog.get(command.game)
    return [Reply((ctx.sender,), f"{game.title} help", game_help_text(game))]


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
