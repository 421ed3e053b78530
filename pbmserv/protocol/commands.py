"""The commands a player can mail, as typed values."""

from __future__ import annotations

from dataclasses import dataclass

MASK = "********"


@dataclass(frozen=True)
class ReplyAddressProof:
    """What stands for the password of a command read from a mail to the
    player's genuine reply address: the address proves who wrote it
    (`protocol.reply`). A value of its own, which no word of a mail can be."""

    def __str__(self) -> str:
        return "(reply address)"


BY_REPLY_ADDRESS = ReplyAddressProof()
#: what proves a game command's player: their password, or the reply address the mail came to
Credential = str | ReplyAddressProof


@dataclass(frozen=True)
class Command:
    """A command read from a mail."""


# -- global commands --------------------------------------------------------
@dataclass(frozen=True)
class Help(Command):
    topic: tuple[str, ...] = ()


@dataclass(frozen=True)
class Signup(Command):
    userid: str
    password: str
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangePassword(Command):
    userid: str
    password: str
    new_password: str


@dataclass(frozen=True)
class ChangeAddress(Command):
    userid: str
    password: str
    addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Signoff(Command):
    userid: str
    password: str


@dataclass(frozen=True)
class Confirm(Command):
    userid: str
    code: str


@dataclass(frozen=True)
class ListGames(Command):
    games: tuple[str, ...] = ()


@dataclass(frozen=True)
class Message(Command):
    """`message uid pw to...`: the mail's body is relayed to the users named."""

    userid: str
    password: str
    to: tuple[str, ...]


@dataclass(frozen=True)
class Broadcast(Command):
    """`broadcast uid pw`: the mail's body goes to every user (admins only)."""

    userid: str
    password: str


#: which boards `all show uid ...` means
ALL_SHOW_FILTERS = ("active", "next")


@dataclass(frozen=True)
class AllShow(Command):
    """`all show uid [next|active]`: the user's boards of every game type."""

    userid: str
    which: str = "active"


@dataclass(frozen=True)
class Vacation(Command):
    """`vacation uid pw on|off`: no nags and no forfeits for the user while on."""

    userid: str
    password: str
    on: bool


@dataclass(frozen=True)
class Pictures(Command):
    """`pictures uid pw on|off` (from a seat's reply address `pictures on|off`):
    whether the player's board mails carry a picture of the board."""

    userid: str
    password: Credential
    on: bool


@dataclass(frozen=True)
class Timezone(Command):
    """`timezone uid pw ZONE` (from a seat's reply address `timezone ZONE`):
    the tz database zone the player's deadlines are also shown in."""

    userid: str
    password: Credential
    zone: str


#: which board mails a player gets (`notifications`; docs/decisions/0153-notifications.md): every
#: board mail, those that wait for their move, a daily digest of the boards that wait, the final ones
NOTIFICATION_MODES = ("every", "turn", "digest", "results")
#: `GAME notifications board ... default`: the board's mails as the account's own setting says
BOARD_DEFAULT = "default"


@dataclass(frozen=True)
class Notifications(Command):
    """`notifications uid pw [MODE [HOUR]]`: which board mails of their boards the
    player gets, and the hour of the digest (in their time zone); without a
    mode, only what is in force."""

    userid: str
    password: Credential
    mode: str | None = None
    hour: int | None = None


# -- per-game commands ------------------------------------------------------
@dataclass(frozen=True)
class GameCommand(Command):
    game: str


@dataclass(frozen=True)
class GameHelp(GameCommand):
    pass


@dataclass(frozen=True)
class Challenge(GameCommand):
    userids: tuple[str, ...]
    options: tuple[tuple[str, str | None], ...] = ()
    timers: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class PostOpen(GameCommand):
    """`GAME open uid pw [-options] [timers]`: a challenge anyone may take."""

    userid: str
    password: Credential
    options: tuple[tuple[str, str | None], ...] = ()
    timers: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class ListOpen(GameCommand):
    """`GAME open`: the open challenges of the game type."""


@dataclass(frozen=True)
class TakeOpen(GameCommand):
    """`GAME take N uid pw`: the player takes open challenge N; its board begins."""

    number: int
    userid: str
    password: Credential


@dataclass(frozen=True)
class WithdrawOpen(GameCommand):
    """`GAME withdraw N uid pw`: the poser takes back open challenge N."""

    number: int
    userid: str
    password: Credential


@dataclass(frozen=True)
class Move(GameCommand):
    board: int
    userid: str
    password: Credential
    move: str
    guard: int | None = None


#: `move ... WORD` words the server handles itself: a draw offer, an undo request and the answers
PROPOSAL_ACTIONS = ("propose", "undo", "accept", "reject")


@dataclass(frozen=True)
class Proposal(GameCommand):
    """`GAME move board uid pw propose|undo|accept|reject`: offer a draw, ask to
    take back the proposer's last move, or answer the open offer."""

    board: int
    userid: str
    password: Credential
    action: str
    guard: int | None = None


@dataclass(frozen=True)
class Queue(GameCommand):
    """`GAME queue board uid pw move`: the player's next move, played when their turn comes."""

    board: int
    userid: str
    password: Credential
    move: str


@dataclass(frozen=True)
class Resign(GameCommand):
    board: int
    userid: str
    password: Credential
    guard: int | None = None


@dataclass(frozen=True)
class BoardRef:
    board: int
    at_move: int | None = None  # `show 101#12`: the board as it was after move 12

    def __str__(self) -> str:
        return f"{self.board}" if self.at_move is None else f"{self.board}#{self.at_move}"


@dataclass(frozen=True)
class ShowBoards(GameCommand):
    boards: tuple[BoardRef, ...]


#: which of a user's boards `show uid ...` and `games uid ...` mean
BOARD_FILTERS = ("active", "inactive", "next", "all")


@dataclass(frozen=True)
class ShowUsers(GameCommand):
    userids: tuple[str, ...]
    which: str = "active"


@dataclass(frozen=True)
class ListBoards(GameCommand):
    userids: tuple[str, ...] = ()
    which: str = "active"


@dataclass(frozen=True)
class Preview(GameCommand):
    """`GAME preview board[#n] uid pw move[;move...]`: the board after these moves, saved nowhere."""

    board: BoardRef
    userid: str
    password: Credential
    moves: tuple[str, ...]


@dataclass(frozen=True)
class Moves(GameCommand):
    """`GAME moves board [uid pw]`: the legal moves of whoever is to move;
    on a board with hidden parts only the player to move may ask."""

    board: int
    userid: str | None = None
    password: Credential | None = None


@dataclass(frozen=True)
class Record(GameCommand):
    """`GAME record board`: the board's whole game as anybody may see it, as text and as a JSON attachment."""

    board: int


@dataclass(frozen=True)
class ShowAs(GameCommand):
    """`GAME showas uid pw board...`: boards as that player sees them."""

    userid: str
    password: Credential
    boards: tuple[BoardRef, ...]


@dataclass(frozen=True)
class Subscribe(GameCommand):
    """`GAME subscribe board|all uid pw`; board None means every future board."""

    board: int | None
    userid: str
    password: Credential


@dataclass(frozen=True)
class Unsubscribe(GameCommand):
    board: int | None
    userid: str
    password: Credential


@dataclass(frozen=True)
class Notify(GameCommand):
    """`GAME notify board uid pw`: only the final-result mail of the board."""

    board: int
    userid: str
    password: Credential


@dataclass(frozen=True)
class BoardNotifications(GameCommand):
    """`GAME notifications board uid pw MODE|default`: the player's mails of this one board."""

    board: int
    userid: str
    password: Credential
    mode: str


@dataclass(frozen=True)
class Chat(GameCommand):
    """`GAME chat board uid pw`: the mail's body goes to the board's players and subscribers."""

    board: int
    userid: str
    password: Credential


@dataclass(frozen=True)
class SetAccepting(GameCommand):
    """`GAME challenges uid pw on|off` (accepting: on), or its old words
    `GAME accept uid pw` and `GAME reject uid pw`."""

    userid: str
    password: Credential
    accepting: bool


@dataclass(frozen=True)
class SetLimit(GameCommand):
    """`GAME limit uid pw N`: at most N active games of this type, 0 = no limit."""

    userid: str
    password: Credential
    limit: int


@dataclass(frozen=True)
class SetSeek(GameCommand):
    """`GAME seek uid pw N [-bot=HOURS]`: the player looks for N more games of
    this type, and takes the bot after HOURS without a player (0: never)."""

    userid: str
    password: Credential
    count: int
    bot_after_hours: int = 0


@dataclass(frozen=True)
class Standings(GameCommand):
    """`GAME standings` (or `GAME ratings`): the rating table of the game type."""


@dataclass(frozen=True)
class History(GameCommand):
    """`GAME history [uid]`: finished boards, newest first."""

    userid: str | None = None
