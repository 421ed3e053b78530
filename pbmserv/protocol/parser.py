"""Subject and body text -> commands. Pure functions, no I/O.

The grammar follows the old pbmserv servers: the Subject holds one command
(the body is then a comment for the other players), unless the Subject says
`multiple`, in which case every body line is a command of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cached_property, partial

from pbmserv.protocol.commands import (
    ALL_SHOW_FILTERS,
    BOARD_FILTERS,
    PROPOSAL_ACTIONS,
    AllShow,
    BoardRef,
    Broadcast,
    Challenge,
    ChangeAddress,
    ChangePassword,
    Chat,
    Command,
    Confirm,
    GameHelp,
    Help,
    History,
    ListBoards,
    ListGames,
    Message,
    Move,
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
    Signoff,
    Signup,
    Standings,
    Subscribe,
    Unsubscribe,
    Vacation,
)
from pbmserv.protocol.errors import (
    BadArgument,
    EmptyCommand,
    MissingArgument,
    ParseError,
    UnknownCommand,
)
from pbmserv.protocol.mailbox import mailbox

#: the syntax of every global command, as help and error mails show it
GLOBAL_SYNTAX = {
    "help": "help [command or game]",
    "signup": "signup userid password [address...]",
    "add": "add userid password [address...]",
    "change": "change password userid oldpassword newpassword  |  change address userid password [address...]",
    "confirm": "confirm userid code   (the Subject of the mail that asks to confirm an address)",
    "signoff": "signoff userid password",
    "delete": "delete userid password",
    "list": "list [game...]",
    "message": "message userid password to-userid...   (the body is the message)",
    "broadcast": "broadcast userid password   (the body is the message; admins only)",
    "all": "all show userid [active|next]",
    "vacation": "vacation userid password on|off",
    "multiple": "multiple   (in the Subject; then one command per body line)",
}

#: the syntax of every per-game command; `GAME` stands for the game's name
GAME_SYNTAX = {
    "help": "GAME help",
    "challenge": "GAME challenge [-option=value...] [--nagtime=days] [--forfeittime=days] userid1 userid2",
    "move": "GAME move board userid password move[#n]",
    "queue": "GAME queue board userid password move",
    "preview": "GAME preview board[#n] userid password move[;move...]",
    "resign": "GAME resign board userid password",
    "show": "GAME show board[#n]...  |  GAME show userid... [active|inactive|next|all]",
    "games": "GAME games [userid...] [active|inactive|next|all]",
    "showas": "GAME showas userid password board[#n]...",
    "subscribe": "GAME subscribe board|all userid password",
    "unsubscribe": "GAME unsubscribe board|all userid password",
    "notify": "GAME notify board userid password",
    "chat": "GAME chat board userid password   (the body is the message)",
    "accept": "GAME accept userid password",
    "reject": "GAME reject userid password",
    "limit": "GAME limit userid password number",
    "seek": "GAME seek userid password number",
    "standings": "GAME standings",
    "ratings": "GAME ratings",
    "history": "GAME history [userid]",
}

#: the largest numbers `limit` and `seek` take
MAX_LIMIT = 999
MAX_SEEK = 99
#: the most commands read from one mail (`multiple`): a mail's work and its
#: answers stay bounded, and the lines beyond are only counted
MOST_COMMANDS = 20
#: the most of a comment that is passed on to others (and kept with a move)
MOST_COMMENT_LINES = 100
MOST_COMMENT_CHARS = 8_000
#: the most boards one `show` or `showas` names
MOST_BOARDS = 10

GLOBAL_ALIASES = {"add": "signup", "delete": "signoff"}
TIMERS = ("nagtime", "forfeittime")

_REPLY_PREFIX = re.compile(r"^\s*(?:(?:re|fwd?|aw|sv|wg)\s*(?:\[\d+\])?\s*:\s*)+", re.IGNORECASE)
_USERID = re.compile(r"[a-z0-9_.-]{2,20}")
_BOARD_REF = re.compile(r"(\d+)(?:#(\d+))?")
_GUARD = re.compile(r"^(.*?)\s*#\s*(\d+)$", re.DOTALL)
_OPTION = re.compile(r"-([a-z][a-z0-9_]*)(?:=(.*))?", re.IGNORECASE)
_TIMER = re.compile(r"--([a-z]+)=(.*)", re.IGNORECASE)


@dataclass(frozen=True)
class Line:
    """One command line of a mail: the command, or why it could not be read."""

    text: str
    command: Command | None = None
    error: ParseError | None = None


@dataclass(frozen=True)
class Request:
    lines: tuple[Line, ...]
    comment: str
    unread: tuple[str, ...] = ()  # command lines beyond MOST_COMMANDS, not read

    @cached_property
    def passwords(self) -> tuple[str, ...]:
        """The passwords of the mail's commands, to be masked wherever the
        mail is quoted, kept or passed on: those of each command that was
        read, and for a line that could not be read, every word that may be
        one (`probable_passwords`), as for every line not read."""
        found: list[str] = []
        for line in self.lines:
            if line.command is None:
                found += probable_passwords(line.text)
            else:
                found += [getattr(line.command, name) for name in ("password", "new_password") if hasattr(line.command, name)]
        for text in self.unread:
            found += probable_passwords(text)
        return tuple(found)


def clean_subject(subject: str) -> str:
    """The Subject without reply/forward prefixes and `**` markers."""
    text = _REPLY_PREFIX.sub("", subject)
    return " ".join(token for token in text.split() if token != "**")


def is_multiple(subject: str) -> bool:
    """Whether the mail's commands are its body lines."""
    words = clean_subject(subject).split()
    return bool(words) and words[0].lower() == "multiple"


def parse_request(subject: str, body: str, games: Collection[str]) -> Request:
    """Read a mail's commands: one from the Subject, or one per body line after `multiple`."""
    cleaned = clean_subject(subject)
    words = cleaned.split()
    if is_multiple(subject):
        rest = " ".join(words[1:])
        texts = [rest] if rest else []
        texts += [clean_subject(line) for line in body.splitlines()]
        texts = [text for text in texts if text]
        if not texts:
            return Request((Line(cleaned, error=EmptyCommand(
                "The mail says 'multiple' but its body holds no command.",
                "put one command on each line of the body, e.g. 'help'",
            )),), "")
        read = tuple(parse_line(text, games) for text in texts[:MOST_COMMANDS])
        return Request(read, "", unread=tuple(texts[MOST_COMMANDS:]))
    return Request((parse_line(cleaned, games),), bounded_comment(body.strip()))


def bounded_comment(comment: str) -> str:
    """The comment as passed on: its first MOST_COMMENT_LINES lines and
    MOST_COMMENT_CHARS characters, with a note of what was left out."""
    lines = comment.splitlines()
    kept = "\n".join(lines[:MOST_COMMENT_LINES])[:MOST_COMMENT_CHARS]
    if kept == comment:
        return comment
    left_out = len(lines) - len(kept.splitlines())
    return kept.rstrip() + f"\n[... the rest of the comment ({left_out} more lines) was left out]"


def parse_line(text: str, games: Collection[str]) -> Line:
    try:
        return Line(text, command=parse_command(text, games))
    except ParseError as error:
        return Line(text, error=error)


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
        return _parse_game_command(verb, words[1:], text)
    verb = GLOBAL_ALIASES.get(verb, verb)
    parser = _GLOBAL_PARSERS.get(verb)
    if parser is None:
        raise UnknownCommand(
            f"'{words[0]}' is neither a command nor a game.",
            "commands: " + ", ".join(sorted(GLOBAL_SYNTAX)) + "; games: "
            + (", ".join(sorted(known_games)) or "none installed")
            + "; send 'help' for the list",
        )
    return parser(words[1:])


#: where passwords stand in a command line, by its first words (0-based word index)
_PASSWORD_POSITIONS = {
    ("signup",): (2,), ("add",): (2,), ("signoff",): (2,), ("delete",): (2,),
    ("change", "password"): (3, 4), ("change", "address"): (3,),
    ("message",): (2,), ("broadcast",): (2,), ("vacation",): (2,),
}
_GAME_PASSWORD_POSITIONS = {
    "move": (4,), "queue": (4,), "preview": (4,), "resign": (4,), "subscribe": (4,), "unsubscribe": (4,), "notify": (4,), "chat": (4,),
    "showas": (3,), "accept": (3,), "reject": (3,), "limit": (3,), "seek": (3,),
}


def probable_passwords(text: str) -> tuple[str, ...]:
    """The words of a command line that could not be read that may be its
    password, to be masked in anything kept, quoted or passed on. A line
    goes wrong by a word left out, added or swapped, and which one cannot
    be told from the words alone (`toy move 101 pw b2` may lack the userid
    or the move), so every word from one before the password's place on
    is taken."""
    words = clean_subject(text).split()
    positions = _password_shape([word.lower() for word in words])
    return tuple(words[min(positions) - 1:]) if positions else ()


def _password_shape(lowered: list[str]) -> tuple[int, ...] | None:
    """Where the passwords of a command line that takes them stand (0-based
    word indexes); None for a line of no such command."""
    for prefix, positions in _PASSWORD_POSITIONS.items():
        if tuple(lowered[: len(prefix)]) == prefix:
            return positions
    if len(lowered) > 1 and lowered[1] in _GAME_PASSWORD_POSITIONS:
        # also for a misspelt game name: the password is still where it stands
        return _GAME_PASSWORD_POSITIONS[lowered[1]]
    if len(lowered) > 4 and lowered[2].isdigit():
        # any `GAME VERB board userid password ...` shape, even with a misspelt verb
        return (4,)
    return None


# -- global commands --------------------------------------------------------
def _help(args: list[str]) -> Command:
    return Help(tuple(arg.lower() for arg in args))


def _signup(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["signup"]
    userid, password = _need(args, ("userid", "password"), syntax)
    return Signup(_userid(userid, syntax), password, tuple(_address(a, syntax) for a in args[2:]))


def _change(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["change"]
    what = args[0].lower() if args else ""
    if what == "password":
        userid, old, new = _need(args[1:], ("userid", "old password", "new password"), syntax)
        if len(args) > 4:
            raise BadArgument("A password is one word: 'change password' takes exactly three words after it.", syntax)
        return ChangePassword(_userid(userid, syntax), old, new)
    if what == "address":
        userid, password = _need(args[1:], ("userid", "password"), syntax)
        return ChangeAddress(_userid(userid, syntax), password, tuple(_address(a, syntax) for a in args[3:]))
    raise BadArgument("'change' must be followed by 'password' or 'address'.", syntax)


def _signoff(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["signoff"]
    userid, password = _need(args, ("userid", "password"), syntax)
    if len(args) > 2:
        raise BadArgument("'signoff' takes only your userid and password.", syntax)
    return Signoff(_userid(userid, syntax), password)


def _confirm(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["confirm"]
    userid, code = _exactly(args, ("userid", "code"), syntax)
    return Confirm(_userid(userid, syntax), code.lower())


def _list(args: list[str]) -> Command:
    return ListGames(tuple(arg.lower() for arg in args))


def _message(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["message"]
    userid, password, _ = _need(args, ("userid", "password", "userid to send to"), syntax)
    to = tuple(dict.fromkeys(_userid(arg, syntax) for arg in args[2:]))
    return Message(_userid(userid, syntax), password, to)


def _broadcast(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["broadcast"]
    userid, password = _exactly(args, ("userid", "password"), syntax)
    return Broadcast(_userid(userid, syntax), password)


def _all(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["all"]
    if not args or args[0].lower() != "show":
        raise BadArgument("'all' must be followed by 'show'.", syntax)
    (userid,) = _need(args[1:], ("userid",), syntax)
    rest = [arg.lower() for arg in args[2:]]
    if len(rest) > 1 or (rest and rest[0] not in ALL_SHOW_FILTERS):
        raise BadArgument("'all show' takes one userid and then 'active' or 'next'.", syntax)
    return AllShow(_userid(userid, syntax), rest[0] if rest else "active")


def _vacation(args: list[str]) -> Command:
    syntax = GLOBAL_SYNTAX["vacation"]
    userid, password, switch = _exactly(args, ("userid", "password", "'on' or 'off'"), syntax)
    if switch.lower() not in ("on", "off"):
        raise BadArgument(f"'vacation' ends with 'on' or 'off', not '{switch}'.", syntax)
    return Vacation(_userid(userid, syntax), password, switch.lower() == "on")


_GLOBAL_PARSERS = {
    "help": _help,
    "signup": _signup,
    "change": _change,
    "confirm": _confirm,
    "signoff": _signoff,
    "list": _list,
    "message": _message,
    "broadcast": _broadcast,
    "all": _all,
    "vacation": _vacation,
}


# -- per-game commands --------------------------------------------------------
def _parse_game_command(game: str, args: list[str], text: str) -> Command:
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
        board, userid, password = _need(rest, ("board number", "userid", "password"), syntax, game)
        guard = None
        if len(rest) > 3:
            guard = _guard_only(rest[3:], syntax, game)
        return Resign(game, _board(board, syntax, game), _userid(userid, syntax, game), password, guard)
    if verb == "show":
        return _show(game, rest, syntax)
    if verb == "games":
        userids, which = _users_and_filter(game, rest, syntax)
        return ListBoards(game, userids, which)
    if verb in _GAME_PARSERS:
        return _GAME_PARSERS[verb](game, rest, syntax)
    commands = ", ".join(sorted(GAME_SYNTAX))
    raise UnknownCommand(
        f"'{args[0]}' is not a {game} command.",
        f"{game} commands: {commands}; send '{game} help' for the rules",
        game=game,
    )


def _challenge(game: str, args: list[str], syntax: str) -> Command:
    options: list[tuple[str, str | None]] = []
    timers: list[tuple[str, int]] = []
    userids: list[str] = []
    for arg in args:
        if arg.startswith("--"):
            match = _TIMER.fullmatch(arg)
            name = match.group(1).lower() if match else ""
            if match is None or name not in TIMERS:
                raise BadArgument(f"'{arg}' is not a timer option: use --nagtime=days or --forfeittime=days.", syntax, game)
            days = match.group(2)
            if not days.isdigit() or not 1 <= int(days) <= 365:
                raise BadArgument(f"--{name} takes a whole number of days from 1 to 365, not '{days}'.", syntax, game)
            timers.append((name, int(days)))
        elif arg.startswith("-"):
            match = _OPTION.fullmatch(arg)
            if match is None:
                raise BadArgument(f"'{arg}' is not an option: write -name=value.", syntax, game)
            options.append((match.group(1).lower(), match.group(2)))
        else:
            userids.append(_userid(arg, syntax, game))
    if not userids:
        raise MissingArgument("A challenge needs the userids of the players.", syntax, game)
    return Challenge(game, tuple(userids), tuple(options), tuple(timers))


def _rest_of_line(text: str) -> str:
    """What follows `GAME VERB board userid password`, as written: a move may hold spaces."""
    words = text.split(None, 5)
    return words[5].strip() if len(words) > 5 else ""


def _move(game: str, args: list[str], syntax: str, text: str) -> Command:
    board, userid, password = _need(args, ("board number", "userid", "password"), syntax, game)
    board_number = _board(board, syntax, game)
    move_text = _rest_of_line(text)
    guard = None
    match = _GUARD.match(move_text.strip())
    if match is not None:
        move_text, guard = match.group(1), int(match.group(2))
    move_text = move_text.strip()
    if not move_text:
        raise MissingArgument("The move itself is missing after your password.", syntax, game, board_number)
    if move_text.lower() == "resign":
        return Resign(game, board_number, _userid(userid, syntax, game), password, guard)
    if move_text.lower() in PROPOSAL_ACTIONS:
        return Proposal(game, board_number, _userid(userid, syntax, game), password, move_text.lower(), guard)
    return Move(game, board_number, _userid(userid, syntax, game), password, move_text, guard)


def _queue(game: str, args: list[str], syntax: str, text: str) -> Command:
    board, userid, password = _need(args, ("board number", "userid", "password"), syntax, game)
    board_number = _board(board, syntax, game)
    move_text = _rest_of_line(text)
    if not move_text:
        raise MissingArgument("The move to queue is missing after your password.", syntax, game, board_number)
    if move_text.lower() in ("resign", *PROPOSAL_ACTIONS):
        raise BadArgument(f"'{move_text}' cannot be queued: only a move of the game can.", syntax, game, board_number)
    return Queue(game, board_number, _userid(userid, syntax, game), password, move_text)


def _preview(game: str, args: list[str], syntax: str, text: str) -> Command:
    board, userid, password = _need(args, ("board number", "userid", "password"), syntax, game)
    match = _BOARD_REF.fullmatch(board)
    if match is None:
        raise BadArgument(f"'{board}' is not a board number like 101 or 101#12.", syntax, game)
    moves = tuple(move.strip() for move in _rest_of_line(text).split(";") if move.strip())
    if not moves:
        raise MissingArgument("The moves to preview are missing after your password.", syntax, game)
    return Preview(game, _board_ref(match), _userid(userid, syntax, game), password, moves)


def _guard_only(args: list[str], syntax: str, game: str) -> int:
    match = _GUARD.match(" ".join(args))
    if match is None or match.group(1):
        raise BadArgument("Only a move number guard like #12 may follow the password.", syntax, game)
    return int(match.group(2))


def _show(game: str, args: list[str], syntax: str) -> Command:
    if not args:
        raise MissingArgument("'show' needs board numbers or userids.", syntax, game)
    refs = [_BOARD_REF.fullmatch(arg) for arg in args]
    if all(refs):
        _at_most_boards(len(refs), "show", syntax, game)
        return ShowBoards(game, tuple(_board_ref(m) for m in refs if m))
    if any(refs):
        raise BadArgument("'show' takes either board numbers or userids, not both.", syntax, game)
    userids, which = _users_and_filter(game, args, syntax)
    return ShowUsers(game, userids, which)


def _showas(game: str, args: list[str], syntax: str) -> Command:
    userid, password, _ = _need(args, ("userid", "password", "board number"), syntax, game)
    boards = []
    for arg in args[2:]:
        match = _BOARD_REF.fullmatch(arg)
        if match is None:
            raise BadArgument(f"'{arg}' is not a board number like 101 or 101#12.", syntax, game)
        boards.append(_board_ref(match))
    _at_most_boards(len(boards), "showas", syntax, game)
    return ShowAs(game, _userid(userid, syntax, game), password, tuple(boards))


def _at_most_boards(count: int, verb: str, syntax: str, game: str) -> None:
    if count > MOST_BOARDS:
        raise BadArgument(
            f"'{verb}' names {count} boards, more than the {MOST_BOARDS} it shows at a time.", syntax, game,
        )


def _on_board(command: Callable[[str, int, str, str], Command], game: str, args: list[str], syntax: str) -> Command:
    """`GAME VERB board userid password`."""
    board, userid, password = _exactly(args, ("board number", "userid", "password"), syntax, game)
    return command(game, _board(board, syntax, game), _userid(userid, syntax, game), password)


def _on_board_or_all(
    command: Callable[[str, int | None, str, str], Command], game: str, args: list[str], syntax: str
) -> Command:
    """`GAME VERB board userid password`, where `all` (None) may stand for the board."""
    board, userid, password = _exactly(args, ("board number or 'all'", "userid", "password"), syntax, game)
    number = None if board.lower() == "all" else _board(board, syntax, game)
    return command(game, number, _userid(userid, syntax, game), password)


def _accepting(accepting: bool, game: str, args: list[str], syntax: str) -> Command:
    userid, password = _exactly(args, ("userid", "password"), syntax, game)
    return SetAccepting(game, _userid(userid, syntax, game), password, accepting)


def _limit(game: str, args: list[str], syntax: str) -> Command:
    userid, password, number = _exactly(args, ("userid", "password", "number"), syntax, game)
    limit = _count(number, MAX_LIMIT, "'limit' takes the most active games you want, 0 for no limit", syntax, game)
    return SetLimit(game, _userid(userid, syntax, game), password, limit)


def _seek(game: str, args: list[str], syntax: str) -> Command:
    userid, password, number = _exactly(args, ("userid", "password", "number"), syntax, game)
    count = _count(number, MAX_SEEK, "'seek' takes how many more games you are looking for", syntax, game)
    return SetSeek(game, _userid(userid, syntax, game), password, count)


def _standings(game: str, args: list[str], syntax: str) -> Command:
    if args:
        raise BadArgument(f"'{args[0]}' is one word too many: the table has every player.", syntax, game)
    return Standings(game)


def _history(game: str, args: list[str], syntax: str) -> Command:
    if len(args) > 1:
        raise BadArgument(f"'{args[1]}' is one word too many: 'history' takes at most one userid.", syntax, game)
    return History(game, _userid(args[0], syntax, game) if args else None)


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
    "standings": _standings,
    "ratings": _standings,
    "history": _history,
}


def _board_ref(match: re.Match[str]) -> BoardRef:
    return BoardRef(int(match.group(1)), int(match.group(2)) if match.group(2) else None)


def _users_and_filter(game: str, args: list[str], syntax: str) -> tuple[tuple[str, ...], str]:
    which = "active"
    if args and args[-1].lower() in BOARD_FILTERS:
        which = args[-1].lower()
        args = args[:-1]
    return tuple(_userid(arg, syntax, game) for arg in args), which


# -- arguments ----------------------------------------------------------------
def _need(args: list[str], names: tuple[str, ...], syntax: str, game: str | None = None) -> list[str]:
    if len(args) < len(names):
        missing = names[len(args)]
        raise MissingArgument(f"The {missing} is missing.", syntax, game)
    return args[: len(names)]


def _exactly(args: list[str], names: tuple[str, ...], syntax: str, game: str | None = None) -> list[str]:
    found = _need(args, names, syntax, game)
    if len(args) > len(names):
        raise BadArgument(f"'{args[len(names)]}' is one word too many: nothing follows the {names[-1]}.", syntax, game)
    return found


def _count(word: str, most: int, what: str, syntax: str, game: str) -> int:
    if not word.isdigit() or int(word) > most:
        raise BadArgument(f"{what}: a whole number from 0 to {most}, not '{word}'.", syntax, game)
    return int(word)


def _userid(word: str, syntax: str, game: str | None = None) -> str:
    userid = word.lower()
    if not _USERID.fullmatch(userid):
        raise BadArgument(
            f"'{word}' is not a userid: a userid has 2 to 20 letters, digits, '-', '_' or '.'.",
            syntax,
            game,
        )
    return userid


def _board(word: str, syntax: str, game: str) -> int:
    if not word.isdigit():
        raise BadArgument(f"'{word}' is not a board number: board numbers are whole numbers like 101.", syntax, game)
    return int(word)


def _address(word: str, syntax: str) -> str:
    address = mailbox(word.rstrip(",;").removeprefix("<").removesuffix(">"))
    if address is None:
        raise BadArgument(f"'{word}' is not a mail address like alice@example.org.", syntax)
    return address
