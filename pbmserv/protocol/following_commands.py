"""The per-game commands that look at boards and follow them (show, games, showas,
subscribe, unsubscribe, notify, notifications, chat), each declared once as a `Verb` beside its reader."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from pbmserv.protocol.arguments import (
    BOARD_REF,
    at_most,
    board_ref_problem,
    exactly,
    need,
    read_board,
    read_board_ref,
    read_mode,
    read_password,
    read_userid,
)
from pbmserv.protocol.commands import (
    BOARD_DEFAULT,
    BOARD_FILTERS,
    NOTIFICATION_MODES,
    BoardNotifications,
    Chat,
    Command,
    ListBoards,
    Notify,
    Record,
    ShowAs,
    ShowBoards,
    ShowUsers,
    Subscribe,
    Unsubscribe,
)
from pbmserv.protocol.errors import BadArgument, MissingArgument
from pbmserv.protocol.syntax import MOST_BOARDS, MOST_USERIDS, Said, Verb


def _show(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
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


def _games(said: Said) -> Command:
    userids, which = _users_and_filter(said.game, said.args, said.syntax)
    return ListBoards(said.game, userids, which)


def _showas(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
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


def _record(said: Said) -> Command:
    (board,) = exactly(said.args, ("board number",), said.syntax, said.game)
    return Record(said.game, read_board(board, said.syntax, said.game))


def _at_most_boards(count: int, verb: str, syntax: str, game: str) -> None:
    if count > MOST_BOARDS:
        raise BadArgument(
            f"'{verb}' names {count} boards, more than the {MOST_BOARDS} it shows at a time.", syntax, game,
        )


def _on_board(command: Callable[[str, int, str, str], Command], said: Said) -> Command:
    """`GAME VERB board userid password`."""
    game, args, syntax = said.game, said.args, said.syntax
    board, userid, password = exactly(args, ("board number", "userid", "password"), syntax, game)
    return command(
        game, read_board(board, syntax, game), read_userid(userid, syntax, game), read_password(password, syntax, game),
    )


def _on_board_or_all(command: Callable[[str, int | None, str, str], Command], said: Said) -> Command:
    """`GAME VERB board userid password`, where `all` (None) may stand for the board."""
    game, args, syntax = said.game, said.args, said.syntax
    board, userid, password = exactly(args, ("board number or 'all'", "userid", "password"), syntax, game)
    number = None if board.lower() == "all" else read_board(board, syntax, game)
    return command(game, number, read_userid(userid, syntax, game), read_password(password, syntax, game))


def _notifications(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    if len(args) == 5 and args[3].lower() == "digest":
        raise BadArgument(
            "The digest's hour is the account's, for all its boards: 'notifications userid password digest HOUR' "
            "sets it.", syntax, game,
        )
    board, userid, password, mode = exactly(args, ("board number", "userid", "password", "mode"), syntax, game)
    return BoardNotifications(
        game, read_board(board, syntax, game), read_userid(userid, syntax, game), read_password(password, syntax, game),
        read_mode(mode, (*NOTIFICATION_MODES, BOARD_DEFAULT), syntax, game),
    )


def _users_and_filter(game: str, args: list[str], syntax: str) -> tuple[tuple[str, ...], str]:
    which = "active"
    if args and args[-1].lower() in BOARD_FILTERS:
        which = args[-1].lower()
        args = args[:-1]
    at_most(len(args), MOST_USERIDS, "players", syntax, game)
    return tuple(read_userid(arg, syntax, game) for arg in args), which


FOLLOWING_VERBS = (
    Verb(
        "show", "GAME show board[#n]...  |  GAME show userid... [active|inactive|next|all]",
        (
            "Mails you boards as anybody may see them: by number (101#12 is board 101 as it stood after move 12) "
            "or every board of the players you name (active, inactive = finished, next = waiting for them, all)."
        ),
        _show,
    ),
    Verb(
        "games", "GAME games [userid...] [active|inactive|next|all]",
        "Lists boards in a table: all of them, or those of the players you name, filtered like 'show'.",
        _games,
    ),
    Verb(
        "showas", "GAME showas userid password board[#n]...",
        (
            "Mails you your boards as you see them, hidden parts (such as your secret squares) included; 101#12 "
            "is the board as it stood after move 12. Only you get the mail, so it needs your password."
        ),
        _showas,
    ),
    Verb(
        "record", "GAME record board",
        (
            "Mails you the whole game of a board, running or over, to keep or pass on: every move with its number, "
            "player and time, as text and as a JSON file attached for programs. Secret moves read (secret) until "
            "the game is over, for you as for anybody: 'showas' shows you your own."
        ),
        _record,
    ),
    Verb(
        "subscribe", "GAME subscribe board|all userid password",
        (
            "Sends you every mail of a board you do not play on, from now until it ends, as anybody may see it. "
            "'subscribe all' does this for every new board of the game from the next challenge on. Board mails "
            "list the subscribers."
        ),
        partial(_on_board_or_all, Subscribe),
    ),
    Verb(
        "unsubscribe", "GAME unsubscribe board|all userid password",
        (
            "Ends your subscription (or 'notify') to a board. 'unsubscribe all' ends every subscription to the "
            "game's boards, and the subscription to new boards."
        ),
        partial(_on_board_or_all, Unsubscribe),
    ),
    Verb(
        "notify", "GAME notify board userid password",
        (
            "Sends you only the final mail of a board (the result) and nothing before it. 'notify' on a board you"
            " subscribe to stops the other mails."
        ),
        partial(_on_board, Notify),
    ),
    Verb(
        "notifications", "GAME notifications board userid password MODE|default",
        (
            "Chooses which mails one of your boards sends you, in place of what 'notifications' chose for all "
            "of them: 'every', 'turn', 'digest' or 'results' as there; 'default' goes back to that choice."
        ),
        _notifications,
    ),
    Verb(
        "chat", "GAME chat board userid password   (the body is the message)",
        (
            "Sends the body of your mail to the players and subscribers of a board; you get a copy. Only its "
            "players and subscribers may chat on a board."
        ),
        partial(_on_board, Chat),
    ),
)
