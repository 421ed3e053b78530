"""Game commands that show boards and change nothing: show, showas, games, and `all show`."""

from __future__ import annotations

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import AllShow, BoardRef, ListBoards, ShowAs, ShowBoards, ShowUsers
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import subscriptions, views
from pbmserv.service.play.board import Board, listed_position, load, playing_seat
from pbmserv.service.play.board_mails import moves_to_list, proven_reply_address, subject, thread_of
from pbmserv.service.processing.answers import MOST_MAIL_CHARS
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import records
from pbmserv.store.records import BoardRecord

#: the most boards one answer shows (`show userid`, `all show`), and the characters they may take
MOST_BOARDS_IN_A_MAIL = 20
SECTIONS_CHARS = MOST_MAIL_CHARS - 2_000


@handles(ShowBoards)
def show_boards(ctx: Context, game: Game, command: ShowBoards) -> list[Reply]:
    return [
        _position_reply(ctx, load(ctx.connection, game, ref.board), ref, None, f"{game.name} show {ref.board}#n")
        for ref in command.boards
    ]


@handles(ShowAs)
def show_as(ctx: Context, game: Game, command: ShowAs) -> list[Reply]:
    """Boards as the player sees them, hidden parts included; password required."""
    user = ctx.authenticate(command.userid, command.password)
    replies = []
    for ref in command.boards:
        board = load(ctx.connection, game, ref.board)
        seat = playing_seat(board, user.userid)
        usage = f"{game.name} showas {user.userid} password {board.record.board}#n"
        replies.append(_position_reply(ctx, board, ref, seat, usage, f"(As {user.userid} sees it.)"))
    return replies


def _position_reply(
    ctx: Context, loaded: Board, ref: BoardRef, viewer: int | None, usage: str, lead: str = "",
) -> Reply:
    """The board (at `ref.at_move`, if given) with its move list (as much of
    it as a list shows), to the sender, in the board's thread; with their
    reply address if the mail proved them one of its players."""
    game, board, at = loaded.game, loaded.record, ref.at_move
    check_position(game, board, at, usage)
    state, moves = listed_position(ctx.connection, loaded, at)
    leads = [lead, f"(The position after move {at} of {board.move_count}.)" if at is not None else ""]
    body = views.board_mail(
        game, board, moves, state, viewer, recent=None,
        lead="\n".join(line for line in leads if line),
        subscribers=subscriptions.listed_names(subscriptions.board_subscriptions(ctx, board)),
        page=views.board_page(ctx.settings, game, board, at),
    )
    return Reply(
        (ctx.sender,), subject(game, board), body, reply_to=proven_reply_address(ctx, game, board),
        thread=thread_of(game, board),
    )


def check_position(game: Game, board: BoardRecord, at: int | None, usage: str) -> None:
    if at is not None and not 0 <= at <= board.move_count:
        raise ServiceError(
            f"Board {board.board} has {board.move_count} moves, so there is no position after move {at}.",
            f"{usage} with n from 0 to {board.move_count}",
            game=game.name, board=board.board,
        )


@handles(AllShow)
def all_show(ctx: Context, command: AllShow) -> list[Reply]:
    """Every board of every game type where the user plays, in one mail."""
    ctx.known_user(command.userid)
    found = [board for game in ctx.catalog for board in boards_of(ctx, game, (command.userid,), command.which)]
    heading = {
        "active": f"Active boards of {command.userid} in every game",
        "next": f"Boards waiting for {command.userid} in every game",
    }[command.which]
    body = f"{heading}: {len(found) or 'none'}.\n" + _board_sections(ctx, found, "'GAME games userid' lists them")
    return [Reply((ctx.sender,), f"pbmserv all show {command.userid} {command.which}", body)]


def _board_sections(ctx: Context, boards: list[Board], where_all: str) -> str:
    """The boards one after another, at most MOST_BOARDS_IN_A_MAIL of them,
    and only as many as fit in SECTIONS_CHARS (a finished board lists its
    moves)."""
    if not boards:
        return ""
    rule = "-" * views.LINE_WIDTH
    sections: list[str] = []
    used = 0
    for board in boards[:MOST_BOARDS_IN_A_MAIL]:
        section = views.board_mail(
            board.game, board.record, moves_to_list(ctx, board.record), board.state, None, recent=ctx.settings.recent_moves,
            page=views.board_page(ctx.settings, board.game, board.record),
        )
        used += len(section) + len(rule) + 2
        if sections and used > SECTIONS_CHARS:
            break
        sections.append(section)
    if len(boards) > len(sections):
        sections.append(views.wrap(
            f"The first {len(sections)} are shown, {len(boards) - len(sections)} more are not: {where_all}.",
            hang="",
        ) + "\n")
    return "\n" + f"\n{rule}\n\n".join(sections)


def boards_of(ctx: Context, game: Game, userids: tuple[str, ...], which: str) -> list[Board]:
    for userid in userids:
        ctx.known_user(userid)
    status = {"active": "active", "next": "active", "inactive": "finished"}.get(which)
    boards = [
        Board.of(game, b) for b in records.boards_in_game(ctx.connection, game.name, status) if all(u in b.seats for u in userids)
    ]
    if which == "next":
        boards = [
            b for b in boards
            if any(b.record.seats[seat] in userids for seat in game.to_move(b.state))
            or (not userids and game.to_move(b.state))
        ]
    return boards


def _selection(userids: tuple[str, ...], which: str) -> str:
    who = f" of {views.names_and(list(userids))}" if userids else ""
    return {"active": f"active boards{who}", "inactive": f"finished boards{who}",
            "next": f"boards{who} waiting for {'them' if userids else 'a move'}", "all": f"all boards{who}"}[which]


@handles(ShowUsers)
def show_users(ctx: Context, game: Game, command: ShowUsers) -> list[Reply]:
    boards = boards_of(ctx, game, command.userids, command.which)
    heading = f"{game.title}: {_selection(command.userids, command.which)}"
    body = f"{heading}: {len(boards) or 'none'}.\n" + _board_sections(
        ctx, boards, f"'{game.name} games {' '.join(command.userids)}' lists them".replace("  ", " "),
    )
    return [Reply((ctx.sender,), f"{game.title} Boards {' '.join(command.userids)} {command.which}".replace("  ", " "), body)]


@handles(ListBoards)
def list_boards(ctx: Context, game: Game, command: ListBoards) -> list[Reply]:
    boards = boards_of(ctx, game, command.userids, command.which)
    heading = f"{game.title}: {_selection(command.userids, command.which)}"
    lines = [f"{heading}: {len(boards) or 'none'}."]
    if boards:
        lines += ["", f"{'Board':>5}  {'Moves':>5}  {'Last move':<10}  Players: state"]
        for board in boards:
            b = board.record
            lines.append(
                f"{b.board:>5}  {b.move_count:>5}  {b.updated_at:%Y-%m-%d}  "
                f"{' vs '.join(b.seats)}: {views.short_status(game, b, board.state)}"
            )
    return [Reply((ctx.sender,), f"{game.title} Games", "\n".join(lines) + "\n")]
