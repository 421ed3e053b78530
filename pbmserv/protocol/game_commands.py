"""The per-game commands' words, each declared once (`Verb`: its syntax line,
its help, its reader), and their readers: the words after `GAME` -> its command."""

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
    LONGEST_OPTION,
    MAX_LIMIT,
    MAX_SEEK,
    MOST_BOARDS,
    MOST_OPTIONS,
    MOST_PREVIEW_MOVES,
    MOST_USERIDS,
    Said,
    Verb,
    by_word,
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
    verb = GAME_VERBS.get(args[0].lower())
    if verb is not None and verb.read is not None:
        return verb.read(Said(args[1:], text, verb.syntax_for(game), game))
    commands = ", ".join(sorted(GAME_VERBS))
    raise UnknownCommand(
        f"'{shown(args[0])}' is not a {game} command.",
        f"{game} commands: {commands}; send '{game} help' for the rules",
        game=game,
    )


def _game_help(said: Said) -> Command:
    return GameHelp(said.game)


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


def _games(said: Said) -> Command:
    userids, which = _users_and_filter(said.game, said.args, said.syntax)
    return ListBoards(said.game, userids, which)


def _challenge(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
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


def _move(said: Said) -> Command:
    game, args, syntax, text = said.game, said.args, said.syntax, said.text
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


def _queue(said: Said) -> Command:
    game, args, syntax, text = said.game, said.args, said.syntax, said.text
    board, userid, password = need(args, ("board number", "userid", "password"), syntax, game)
    board_number = read_board(board, syntax, game)
    password = read_password(password, syntax, game)
    move_text = read_move(_rest_of_line(text), "move to queue", syntax, game, board_number)
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


def _guard_only(args: list[str], syntax: str, game: str) -> int:
    match = _GUARD.match(" ".join(args))
    if match is None or match.group(1):
        raise BadArgument("Only a move number guard like #12 may follow the password.", syntax, game)
    return int(match.group(2))


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


def _accepting(accepting: bool, said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    userid, password = exactly(args, ("userid", "password"), syntax, game)
    return SetAccepting(game, read_userid(userid, syntax, game), read_password(password, syntax, game), accepting)


def _limit(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    userid, password, number = exactly(args, ("userid", "password", "number"), syntax, game)
    limit = read_count(number, MAX_LIMIT, "'limit' takes the most active games you want, 0 for no limit", syntax, game)
    return SetLimit(game, read_userid(userid, syntax, game), read_password(password, syntax, game), limit)


def _seek(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    userid, password, number = exactly(args, ("userid", "password", "number"), syntax, game)
    count = read_count(number, MAX_SEEK, "'seek' takes how many more games you are looking for", syntax, game)
    return SetSeek(game, read_userid(userid, syntax, game), read_password(password, syntax, game), count)


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


def _standings(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    if args:
        raise BadArgument(f"'{shown(args[0])}' is one word too many: the table has every player.", syntax, game)
    return Standings(game)


def _history(said: Said) -> Command:
    game, args, syntax = said.game, said.args, said.syntax
    if len(args) > 1:
        raise BadArgument(f"'{shown(args[1])}' is one word too many: 'history' takes at most one userid.", syntax, game)
    return History(game, read_userid(args[0], syntax, game) if args else None)


def _users_and_filter(game: str, args: list[str], syntax: str) -> tuple[tuple[str, ...], str]:
    which = "active"
    if args and args[-1].lower() in BOARD_FILTERS:
        which = args[-1].lower()
        args = args[:-1]
    at_most(len(args), MOST_USERIDS, "players", syntax, game)
    return tuple(read_userid(arg, syntax, game) for arg in args), which


GAME_VERBS = by_word(
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
        "move", "GAME move board userid password move[#n]",
        (
            "Makes your move on a board. The move is the rest of the line, written as the game's help explains. A"
            " trailing #n makes the server refuse the move unless it is move number n, so an old or repeated mail"
            " can never move twice. 'move ... resign' gives up the game. 'move ... propose' offers a draw and "
            "'move ... undo' asks to take back your last move (and any made after it); every other player answers"
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
        "chat", "GAME chat board userid password   (the body is the message)",
        (
            "Sends the body of your mail to the players and subscribers of a board; you get a copy. Only its "
            "players and subscribers may chat on a board."
        ),
        partial(_on_board, Chat),
    ),
    Verb(
        "accept", "GAME accept userid password",
        "Accepts challenges to this game again (the default).",
        partial(_accepting, True),
    ),
    Verb(
        "reject", "GAME reject userid password",
        (
            "Refuses every challenge to this game that names you, with the reason; to start a game yourself, send"
            " 'accept' first."
        ),
        partial(_accepting, False),
    ),
    Verb(
        "limit", "GAME limit userid password number",
        (
            "Sets the most active games of this game you play at once; a challenge that would go over it is "
            "refused. 0 means no limit (the default)."
        ),
        _limit,
    ),
    Verb(
        "seek", "GAME seek userid password number",
        (
            "Says how many more games of this game you are looking for; each new game you start or are challenged"
            " to counts one off."
        ),
        _seek,
    ),
    Verb(
        "standings", "GAME standings",
        (
            "Mails you the rating table of this game: established players (20 or more rated games), provisional "
            "ones and inactive ones (no finished game for 180 days), with rating, games won, lost and drawn, "
            "active games and limit, and how many games each seeks. Everybody starts at 1600; a game's final mail"
            " shows the rating changes. A game counts once each player has made 2 moves (a resignation not "
            "counted)."
        ),
        _standings,
    ),
    Verb(
        "ratings", "GAME ratings",
        "Another name for 'standings'.",
        _standings,
    ),
    Verb(
        "history", "GAME history [userid]",
        (
            "Mails you the finished boards of this game, newest first, with players, result and date; name a "
            "player to see only theirs."
        ),
        _history,
    ),
)
