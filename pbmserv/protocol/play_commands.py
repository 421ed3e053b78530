"""The per-game commands that start and play a board (help, challenge, move, queue,
preview, resign, moves), each declared once as a `Verb` beside its reader."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from pbmserv.protocol.arguments import (
    BOARD_REF,
    WHOLE_NUMBER,
    at_most,
    board_ref_problem,
    exactly,
    need,
    read_board,
    read_board_ref,
    read_move,
    read_password,
    read_userid,
    shown,
)
from pbmserv.protocol.commands import (
    PROPOSAL_ACTIONS,
    Challenge,
    Command,
    GameHelp,
    ListOpen,
    Move,
    Moves,
    PostOpen,
    Preview,
    Proposal,
    Queue,
    Resign,
    TakeOpen,
    WithdrawOpen,
)
from pbmserv.protocol.errors import BadArgument, MissingArgument
from pbmserv.protocol.syntax import LONGEST_OPTION, MOST_OPTIONS, MOST_PREVIEW_MOVES, MOST_USERIDS, Said, Verb

TIMERS = ("nagtime", "forfeittime")

_GUARD = re.compile(r"^(.*?)\s*#\s*([0-9]{1,9})$", re.DOTALL)
_OPTION = re.compile(r"-([a-z][a-z0-9_]*)(?:=(.*))?", re.IGNORECASE)
_TIMER = re.compile(r"--([a-z]+)=(.*)", re.IGNORECASE)


def _game_help(said: Said) -> Command:
    return GameHelp(said.game)


def _challenge(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    at_most(sum(1 for arg in args if not arg.startswith("-")), MOST_USERIDS, "players", syntax, game)
    options, timers, userids = read_switches(args, syntax, game, lambda word: read_userid(word, syntax, game))
    if not userids:
        raise MissingArgument("A challenge needs the userids of the players.", syntax, game)
    return Challenge(game, tuple(userids), options, timers)


def _open(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    if not args:
        return ListOpen(game)
    userid, password = need(args, ("userid", "password"), syntax, game)
    options, timers, _ = read_switches(args[2:], syntax, game, partial(_no_player, syntax, game))
    return PostOpen(game, read_userid(userid, syntax, game), read_password(password, syntax, game), options, timers)


def _no_player(syntax: str, game: str, word: str) -> str:
    raise BadArgument(
        "An open challenge names no other player after the password: anyone may take it.",
        f"{syntax}; to name the players, send '{game} challenge'", game,
    )


def _number_and_player(said: Said) -> tuple[int, str, str]:
    """`GAME take|withdraw N userid password`: the open challenge's number, the userid and the password."""
    game, syntax = said.game, said.syntax
    number, userid, password = exactly(said.args, ("number of the open challenge", "userid", "password"), syntax, game)
    if not WHOLE_NUMBER.fullmatch(number.lstrip("#")):
        raise BadArgument(
            f"'{shown(number)}' is not the number of an open challenge: '{game} open' lists them with their numbers.",
            syntax, game,
        )
    return int(number.lstrip("#")), read_userid(userid, syntax, game), read_password(password, syntax, game)


def _take(said: Said) -> Command:
    return TakeOpen(said.game, *_number_and_player(said))


def _withdraw(said: Said) -> Command:
    return WithdrawOpen(said.game, *_number_and_player(said))


def read_switches(
    args: list[str], syntax: str, game: str, read_word: Callable[[str], str],
) -> tuple[tuple[tuple[str, str | None], ...], tuple[tuple[str, int], ...], list[str]]:
    """A challenge's game options (`-name=value`), its timers
    (`--nagtime=days`) and its other words (each as `read_word` reads it), in order."""
    options: list[tuple[str, str | None]] = []
    timers: list[tuple[str, int]] = []
    words: list[str] = []
    at_most(sum(1 for arg in args if arg.startswith("-")), MOST_OPTIONS, "options", syntax, game)
    for position, arg in enumerate(args):
        if arg.startswith("-") and len(arg) > LONGEST_OPTION:
            raise BadArgument(
                f"'{shown(arg)}' is not an option: an option with its value has at most {LONGEST_OPTION} characters.",
                syntax, game,
            )
        if arg.startswith("--"):
            match = _TIMER.fullmatch(arg)
            name = match.group(1).lower() if match else ""
            if match is None or name not in TIMERS:
                raise BadArgument(f"'{arg}' is not a timer option: use --nagtime=days or --forfeittime=days.", syntax, game)
            days = match.group(2)
            if not WHOLE_NUMBER.fullmatch(days) or not 1 <= int(days) <= 365:
                raise BadArgument(f"--{name} takes a whole number of days from 1 to 365, not '{days}'.", syntax, game)
            timers.append((name, int(days)))
        elif arg.startswith("-"):
            match = _OPTION.fullmatch(arg)
            if match is None:
                raise BadArgument(f"'{arg}' is not an option: write -name=value.", syntax, game)
            if match.group(2) is None and position + 1 < len(args):
                _value_apart(arg, args[position + 1], syntax, game)
            options.append((match.group(1).lower(), match.group(2)))
        else:
            words.append(read_word(arg))
    return tuple(options), tuple(timers), words


def _value_apart(option: str, word: str, syntax: str, game: str) -> None:
    """Refuses `-size 3`: a word after an option without `=value` that
    cannot be a userid, or is a number, is the option's value written apart."""
    if word.startswith("-") or (not word.isdigit() and _is_userid(word, syntax, game)):
        return
    raise BadArgument(
        f"'{option} {shown(word)}' writes an option apart from its value: write {option}={shown(word)}, one word.",
        f"{syntax}; an option that takes no value (a switch) stands alone, and a userid "
        "that is a number goes before the options",
        game,
    )


def _is_userid(word: str, syntax: str, game: str) -> bool:
    try:
        read_userid(word, syntax, game)
    except BadArgument:
        return False
    return True


def _rest_of_line(text: str) -> str:
    """What follows `GAME VERB board userid password`, as written: a move may hold spaces."""
    words = text.split(None, 5)
    return words[5].strip() if len(words) > 5 else ""


def _board_and_move(said: Said, what: str) -> tuple[int, str, str, str]:
    """`GAME VERB board userid password MOVE...`: the board number, the
    userid as written (read by the caller), the password and the move."""
    game, syntax = said.game, said.syntax
    board, userid, password = need(said.args, ("board number", "userid", "password"), syntax, game)
    board_number = read_board(board, syntax, game)
    password = read_password(password, syntax, game)
    return board_number, userid, password, read_move(_rest_of_line(said.text), what, syntax, game, board_number)


def _move(said: Said) -> Command:
    game, syntax = said.game, said.syntax
    board_number, userid, password, move_text = _board_and_move(said, "move")
    guard = None
    match = _GUARD.match(move_text.strip())
    if match is not None:
        move_text, guard = match.group(1), int(match.group(2))
    move_text = move_text.strip()
    if not move_text:
        raise MissingArgument("The move itself is missing after your password.", syntax, game, board_number)
    if move_text.lower() == "resign":
        return Resign(game, board_number, read_userid(userid, syntax, game), password, guard)
    if move_text.lower() in PROPOSAL_ACTIONS:
        return Proposal(game, board_number, read_userid(userid, syntax, game), password, move_text.lower(), guard)
    return Move(game, board_number, read_userid(userid, syntax, game), password, move_text, guard)


def _queue(said: Said) -> Command:
    game, syntax = said.game, said.syntax
    board_number, userid, password, move_text = _board_and_move(said, "move to queue")
    if not move_text:
        raise MissingArgument("The move to queue is missing after your password.", syntax, game, board_number)
    if move_text.lower() in ("resign", *PROPOSAL_ACTIONS):
        raise BadArgument(f"'{move_text}' cannot be queued: only a move of the game can.", syntax, game, board_number)
    return Queue(game, board_number, read_userid(userid, syntax, game), password, move_text)


def _preview(said: Said) -> Command:
    game, args, syntax, text = said.game, said.args, said.syntax, said.text
    board, userid, password = need(args, ("board number", "userid", "password"), syntax, game)
    match = BOARD_REF.fullmatch(board)
    if match is None:
        raise BadArgument(board_ref_problem(board), syntax, game)
    password = read_password(password, syntax, game)
    moves = tuple(move.strip() for move in _rest_of_line(text).split(";") if move.strip())
    if not moves:
        raise MissingArgument("The moves to preview are missing after your password.", syntax, game)
    at_most(len(moves), MOST_PREVIEW_MOVES, "moves to preview", syntax, game)
    for move in moves:
        read_move(move, "move to preview", syntax, game)
    return Preview(game, read_board_ref(match), read_userid(userid, syntax, game), password, moves)


def _resign(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    board, userid, password = need(args, ("board number", "userid", "password"), syntax, game)
    guard = None
    if len(args) > 3:
        guard = _guard_only(args[3:], syntax, game)
    return Resign(
        game, read_board(board, syntax, game), read_userid(userid, syntax, game), read_password(password, syntax, game),
        guard,
    )


def _guard_only(args: list[str], syntax: str, game: str) -> int:
    match = _GUARD.match(" ".join(args))
    if match is None or match.group(1):
        raise BadArgument("Only a move number guard like #12 may follow the password.", syntax, game)
    return int(match.group(2))


def _moves(said: Said) -> Command:
    """`GAME moves board` or `GAME moves board userid password`."""
    game, args, syntax = said.game, said.args, said.syntax
    if not args:
        raise MissingArgument("'moves' needs the board number.", syntax, game)
    board = read_board(args[0], syntax, game)
    if len(args) == 1:
        return Moves(game, board)
    if len(args) == 2:
        raise MissingArgument(
            "'moves' has a userid but no password after it: give both, or neither for a board with nothing hidden.",
            syntax, game, board,
        )
    if len(args) > 3:
        raise BadArgument(f"'{shown(args[3])}' is one word too many: 'moves' ends with the password.", syntax, game, board)
    return Moves(game, board, read_userid(args[1], syntax, game), read_password(args[2], syntax, game))


PLAY_VERBS = (
    Verb(
        "help", "GAME help",
        "Mails you help. Alone it lists every command; with a command word or a game name it explains that one.",
        _game_help,
    ),
    Verb(
        "challenge", "GAME challenge [-option=value...] [--nagtime=days] [--forfeittime=days] userid1 userid2",
        (
            "Starts a new board between the players you name (the first one moves first) and mails it to all of "
            "them. Options such as -size=5 change the game (see 'GAME help'); --nagtime=days and "
            "--forfeittime=days set how long the server waits for a move before reminding, and before forfeiting."
            " Name 'bot' as a player to play the server's bot ('majorities challenge alice bot'); -bot=easy, "
            "-bot=normal (the default) or -bot=strong sets how well it plays, and each strength has a rating of "
            "its own."
        ),
        _challenge,
    ),
    Verb(
        "open", "GAME open [userid password [-option=value...] [--nagtime=days] [--forfeittime=days]]",
        (
            "With your userid and password, posts an open challenge: a board of this game with the options and "
            "timers you give, that any other player may take; you have the first seat. It is numbered, lasts 7 "
            "days and you may have 3 at once. Alone, 'GAME open' lists the open challenges of the game."
        ),
        _open,
    ),
    Verb(
        "take", "GAME take number userid password",
        (
            "Takes the open challenge of that number ('GAME open' lists them): its board begins at once and both "
            "players get its first mail."
        ),
        _take,
    ),
    Verb(
        "withdraw", "GAME withdraw number userid password",
        "Takes back an open challenge you posted, before anyone takes it.",
        _withdraw,
    ),
    Verb(
        "move", "GAME move board userid password move[#n]",
        (
            "Makes your move on a board. The move is the rest of the line, written as the game's help explains. A"
            " trailing #n makes the server refuse the move unless it is move number n, so an old or repeated mail"
            " can never move twice. 'move ... resign' gives up the game. 'move ... propose' offers a draw where the "
            "game's rules have draws (its help says whether they do), and 'move ... undo' asks to take back your "
            "last move (and any made after it); every other player answers"
            " with 'move ... accept' or 'move ... reject' (the proposer may reject, too, to withdraw it). One "
            "offer is open at a time; it takes effect when all others have accepted, and lapses with the next "
            "move. Moves such as pass or swap exist where a game's help lists them."
        ),
        _move,
    ),
    Verb(
        "queue", "GAME queue board userid password move",
        (
            "Keeps your next move on a board while it is not your turn; the server plays it for you as soon as "
            "your turn comes, in the same step as your opponent's move, and marks it (Auto) in the move list. A "
            "new 'queue' replaces the earlier one. Nobody else sees it before it is played; if it is not legal "
            "then, it is dropped and you get a mail saying why."
        ),
        _queue,
    ),
    Verb(
        "preview", "GAME preview board[#n] userid password move[;move...]",
        (
            "Mails you the board as it would be after the moves you list (separated by ';'), starting from the "
            "board as it stands or from move n (101#12). Each move is made by you if it is your turn, else by the"
            " player to move. Nothing is saved. It needs your password because it shows the board as you see it, "
            "your own hidden parts included. Other players' hidden parts are unknown to it: in psychomachia and "
            "parliament it plays as if their hidden stones or preferences were not there; a game that cannot "
            "leave them out refuses it while other players' secret moves are not revealed."
        ),
        _preview,
    ),
    Verb(
        "resign", "GAME resign board userid password",
        "Gives up the game on that board; your opponent wins.",
        _resign,
    ),
    Verb(
        "moves", "GAME moves board [userid password]",
        (
            "Mails you the moves the player to move could make now, grouped to keep the list short: cells by "
            "their letters ('a: 1 2 4' means a1, a2 and a4), moves of several words by their first word, and "
            "where a turn places two stones on empty cells, those cells once, any two of which make a move. A "
            "long list is cut after 60 lines. On a board with hidden parts (psychomachia, parliament) only the "
            "player to move may ask, with their userid and password, and the list is for them alone; elsewhere "
            "anybody may ask without them, or name themselves to see only their own moves."
        ),
        _moves,
    ),
)
