"""The per-game commands' parsers: the words after `GAME` -> its command."""

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
    read_count,
    read_move,
    read_password,
    read_userid,
    shown,
)
from pbmserv.protocol.commands import (
    BOARD_FILTERS,
    PROPOSAL_ACTIONS,
    Challenge,
    Chat,
    Command,
    GameHelp,
    History,
    ListBoards,
    Move,
    Moves,
    Notify,
    Preview,
    Proposal,
    Queue,
    Resign,
    SetAccepting,
    SetLimit,
    SetSeek,
    ShowAs,
    ShowBoards,
    ShowUsers,
    Standings,
    Subscribe,
    Unsubscribe,
)
from pbmserv.protocol.errors import BadArgument, MissingArgument, UnknownCommand
from pbmserv.protocol.syntax import (
    GAME_SYNTAX,
    LONGEST_OPTION,
    MAX_LIMIT,
    MAX_SEEK,
    MOST_BOARDS,
    MOST_OPTIONS,
    MOST_PREVIEW_MOVES,
    MOST_USERIDS,
)

TIMERS = ("nagtime", "forfeittime")

_GUARD = re.compile(r"^(.*?)\s*#\s*([0-9]{1,9})$", re.DOTALL)
_OPTION = re.compile(r"-([a-z][a-z0-9_]*)(?:=(.*))?", re.IGNORECASE)
_TIMER = re.compile(r"--([a-z]+)=(.*)", re.IGNORECASE)


def parse_game_command(game: str, args: list[str], text: str) -> Command:
    if not args:
        raise MissingArgument(
            f"'{game}' must be followed by a command.",
            "; ".join(s.replace("GAME", game) for s in ("GAME help", "GAME challenge ...", "GAME move ...", "GAME show ...")),
            game=game,
        )
    verb = args[0].lower()
    syntax = GAME_SYNTAX.get(verb, "").replace("GAME", game)
    rest = args[1:]
    if verb == "help":
        return GameHelp(game)
    if verb == "challenge":
        return _challenge(game, rest, syntax)
    if verb == "move":
        return _move(game, rest, syntax, text)
    if verb == "queue":
        return _queue(game, rest, syntax, text)
    if verb == "preview":
        return _preview(game, rest, syntax, text)
    if verb == "resign":
        board, userid, password = need(rest, ("board number", "userid", "password"), syntax, game)
        guard = None
        if len(rest) > 3:
            guard = _guard_only(rest[3:], syntax, game)
        return Resign(
            game, read_board(board, syntax, game), read_userid(userid, syntax, game), read_password(password, syntax, game),
            guard,
        )
    if verb == "show":
        return _show(game, rest, syntax)
    if verb == "games":
        userids, which = _users_and_filter(game, rest, syntax)
        return ListBoards(game, userids, which)
    if verb in _GAME_PARSERS:
        return _GAME_PARSERS[verb](game, rest, syntax)
    commands = ", ".join(sorted(GAME_SYNTAX))
    raise UnknownCommand(
        f"'{shown(args[0])}' is not a {game} command.",
        f"{game} commands: {commands}; send '{game} help' for the rules",
        game=game,
    )


def _challenge(game: str, args: list[str], syntax: str) -> Command:
    options: list[tuple[str, str | None]] = []
    timers: list[tuple[str, int]] = []
    userids: list[str] = []
    switches = [arg for arg in args if arg.startswith("-")]
    at_most(len(switches), MOST_OPTIONS, "options", syntax, game)
    at_most(len(args) - len(switches), MOST_USERIDS, "players", syntax, game)
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
            userids.append(read_userid(arg, syntax, game))
    if not userids:
        raise MissingArgument("A challenge needs the userids of the players.", syntax, game)
    return Challenge(game, tuple(userids), tuple(options), tuple(timers))


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


def _move(game: str, args: list[str], syntax: str, text: str) -> Command:
    board, userid, password = need(args, ("board number", "userid", "password"), syntax, game)
    board_number = read_board(board, syntax, game)
    password = read_password(password, syntax, game)
    move_text = read_move(_rest_of_line(text), "move", syntax, game, board_number)
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


def _queue(game: str, args: list[str], syntax: str, text: str) -> Command:
    board, userid, password = need(args, ("board number", "userid", "password"), syntax, game)
    board_number = read_board(board, syntax, game)
    password = read_password(password, syntax, game)
    move_text = read_move(_rest_of_line(text), "move to queue", syntax, game, board_number)
    if not move_text:
        raise MissingArgument("The move to queue is missing after your password.", syntax, game, board_number)
    if move_text.lower() in ("resign", *PROPOSAL_ACTIONS):
        raise BadArgument(f"'{move_text}' cannot be queued: only a move of the game can.", syntax, game, board_number)
    return Queue(game, board_number, read_userid(userid, syntax, game), password, move_text)


def _preview(game: str, args: list[str], syntax: str, text: str) -> Command:
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


def _guard_only(args: list[str], syntax: str, game: str) -> int:
    match = _GUARD.match(" ".join(args))
    if match is None or match.group(1):
        raise BadArgument("Only a move number guard like #12 may follow the password.", syntax, game)
    return int(match.group(2))


def _show(game: str, args: list[str], syntax: str) -> Command:
    if not args:
        raise MissingArgument("'show' needs board numbers or userids.", syntax, game)
    refs = [BOARD_REF.fullmatch(arg) for arg in args]
    if all(refs):
        _at_most_boards(len(refs), "show", syntax, game)
        return ShowBoards(game, tuple(read_board_ref(m) for m in refs if m))
    if any(refs):
        for arg, ref in zip(args, refs):
            if ref is None and arg.replace("#", "").isdigit():  # a number, too long
                raise BadArgument(board_ref_problem(arg), syntax, game)
        raise BadArgument("'show' takes either board numbers or userids, not both.", syntax, game)
    userids, which = _users_and_filter(game, args, syntax)
    return ShowUsers(game, userids, which)


def _showas(game: str, args: list[str], syntax: str) -> Command:
    userid, password, _ = need(args, ("userid", "password", "board number"), syntax, game)
    password = read_password(password, syntax, game)
    _at_most_boards(len(args) - 2, "showas", syntax, game)
    boards = []
    for arg in args[2:]:
        match = BOARD_REF.fullmatch(arg)
        if match is None:
            raise BadArgument(board_ref_problem(arg), syntax, game)
        boards.append(read_board_ref(match))
    return ShowAs(game, read_userid(userid, syntax, game), password, tuple(boards))


def _at_most_boards(count: int, verb: str, syntax: str, game: str) -> None:
    if count > MOST_BOARDS:
        raise BadArgument(
            f"'{verb}' names {count} boards, more than the {MOST_BOARDS} it shows at a time.", syntax, game,
        )


def _on_board(command: Callable[[str, int, str, str], Command], game: str, args: list[str], syntax: str) -> Command:
    """`GAME VERB board userid password`."""
    board, userid, password = exactly(args, ("board number", "userid", "password"), syntax, game)
    return command(
        game, read_board(board, syntax, game), read_userid(userid, syntax, game), read_password(password, syntax, game),
    )


def _on_board_or_all(
    command: Callable[[str, int | None, str, str], Command], game: str, args: list[str], syntax: str
) -> Command:
    """`GAME VERB board userid password`, where `all` (None) may stand for the board."""
    board, userid, password = exactly(args, ("board number or 'all'", "userid", "password"), syntax, game)
    number = None if board.lower() == "all" else read_board(board, syntax, game)
    return command(game, number, read_userid(userid, syntax, game), read_password(password, syntax, game))


def _accepting(accepting: bool, game: str, args: list[str], syntax: str) -> Command:
    userid, password = exactly(args, ("userid", "password"), syntax, game)
    return SetAccepting(game, read_userid(userid, syntax, game), read_password(password, syntax, game), accepting)


def _limit(game: str, args: list[str], syntax: str) -> Command:
    userid, password, number = exactly(args, ("userid", "password", "number"), syntax, game)
    limit = read_count(number, MAX_LIMIT, "'limit' takes the most active games you want, 0 for no limit", syntax, game)
    return SetLimit(game, read_userid(userid, syntax, game), read_password(password, syntax, game), limit)


def _seek(game: str, args: list[str], syntax: str) -> Command:
    userid, password, number = exactly(args, ("userid", "password", "number"), syntax, game)
    count = read_count(number, MAX_SEEK, "'seek' takes how many more games you are looking for", syntax, game)
    return SetSeek(game, read_userid(userid, syntax, game), read_password(password, syntax, game), count)


def _moves(game: str, args: list[str], syntax: str) -> Command:
    """`GAME moves board` or `GAME moves board userid password`."""
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


def _standings(game: str, args: list[str], syntax: str) -> Command:
    if args:
        raise BadArgument(f"'{shown(args[0])}' is one word too many: the table has every player.", syntax, game)
    return Standings(game)


def _history(game: str, args: list[str], syntax: str) -> Command:
    if len(args) > 1:
        raise BadArgument(f"'{shown(args[1])}' is one word too many: 'history' takes at most one userid.", syntax, game)
    return History(game, read_userid(args[0], syntax, game) if args else None)


_GAME_PARSERS: dict[str, Callable[[str, list[str], str], Command]] = {
    "showas": _showas,
    "subscribe": partial(_on_board_or_all, Subscribe),
    "unsubscribe": partial(_on_board_or_all, Unsubscribe),
    "notify": partial(_on_board, Notify),
    "chat": partial(_on_board, Chat),
    "accept": partial(_accepting, True),
    "reject": partial(_accepting, False),
    "limit": _limit,
    "seek": _seek,
    "moves": _moves,
    "standings": _standings,
    "ratings": _standings,
    "history": _history,
}



def _users_and_filter(game: str, args: list[str], syntax: str) -> tuple[tuple[str, ...], str]:
    which = "active"
    if args and args[-1].lower() in BOARD_FILTERS:
        which = args[-1].lower()
        args = args[:-1]
    at_most(len(args), MOST_USERIDS, "players", syntax, game)
    return tuple(read_userid(arg, syntax, game) for arg in args), which
