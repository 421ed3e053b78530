"""The daily digest (`notifications userid password digest HOUR`): once a
day, at the first timer pass at or after the player's hour in their time
zone, one mail with every running board in digest mode that waits for
their move, each as their own board mail shows it, with its clock, the
line to paste and its reply address; no mail on a day when none waits
(docs/decisions/0153-notifications.md)."""

from __future__ import annotations

from datetime import datetime
from html import escape

from pbmserv.mail.outbound import HtmlVersion, Picture
from pbmserv.service.commands.policies import counted
from pbmserv.service.play import board_mails, board_pictures, deadlines, notifications, views
from pbmserv.service.play.board import Board
from pbmserv.service.processing.context import Context, Reply, as_utc
from pbmserv.store import notifications as stored
from pbmserv.store import records
from pbmserv.store.records import Account
from pbmserv.store.states import Kind

#: the most boards one digest shows (a player may have hundreds waiting)
MOST_DIGEST_BOARDS = 50
#: the most boards a digest's HTML version shows with their pictures (some 10 to 50 KB each)
MOST_DIGEST_PICTURES = 10


def send_digests(ctx: Context) -> tuple[list[Reply], list[str]]:
    """The digests due now, each marked sent for the player's day (also when no board waits, which sends none)."""
    replies, report = [], []
    for reader in stored.digest_readers(ctx.connection):
        account = ctx.known_user(reader.userid)
        zone = deadlines.zone_of(account.timezone)
        local_now = as_utc(ctx.now).astimezone(zone)
        if local_now.hour < account.digest_hour:
            continue
        if reader.digest_sent_at is not None and as_utc(reader.digest_sent_at).astimezone(zone).date() == local_now.date():
            continue
        if not stored.take_digest_day(ctx.connection, account.id, reader.digest_sent_at, ctx.now):
            continue
        waiting = waiting_boards(ctx, account)
        recipients = ctx.addresses([account.userid])[account.userid]
        if waiting and recipients:
            replies.append(digest(ctx, account, recipients, waiting, local_now))
            report.append(f"digest to {account.userid}: {counted(len(waiting), 'board')}")
    return replies, report


def waiting_boards(ctx: Context, account: Account) -> list[tuple[Board, int]]:
    """The player's running boards in digest mode that wait for their move, with their seat, by game and number."""
    chosen = {(mode.game_type, mode.board): mode.mode for mode in stored.running_board_modes(ctx.connection, account.id)}
    waiting = []
    for record in records.running_boards_of_all(ctx.connection, [account.userid]):
        if record.game_type not in ctx.catalog:
            continue
        if chosen.get((record.game_type, record.board), account.notifications) != notifications.DIGEST:
            continue
        board = Board.of(ctx.catalog.get(record.game_type), record)
        seat = record.seats.index(account.userid)
        if seat in board.game.to_move(board.state):
            waiting.append((board, seat))
    return waiting


def digest(
    ctx: Context, account: Account, recipients: tuple[str, ...], waiting: list[tuple[Board, int]], local_now: datetime,
) -> Reply:
    """One mail with the boards that wait: its Reply-To is the first board's
    reply address, which the mail says; with pictures on, an HTML version too."""
    shown = waiting[:MOST_DIGEST_BOARDS]
    addresses = [board_mails.seat_address(ctx, board.game, board.record, seat, account) for board, seat in shown]
    first = shown[0][0]
    count = counted(len(waiting), "board")
    subject = f"pbmserv digest {account.userid} {local_now:%Y-%m-%d}"
    intro = [
        f"Your daily digest, {account.userid}: {count} wait{'s' if len(waiting) == 1 else ''} for your move "
        f"({local_now:%Y-%m-%d %H:%M} {account.timezone or 'UTC'}).",
        f"A reply to this mail plays {first.game.title} board {first.record.board}, the first below: write your "
        "move as its first line, as in a reply to one of its board mails."
        + (" Each other board names its own reply address: mail your move there to play on it." if len(shown) > 1 else ""),
    ]
    sections = [board_mails.player_view(ctx, board, seat, account, reply_address=address) for (board, seat), address in zip(shown, addresses)]
    closing = []
    if len(waiting) > len(shown):
        more = len(waiting) - len(shown)
        closing.append(
            f"The first {len(shown)} are shown; {more} more wait{'s' if more == 1 else ''} for you: 'all show "
            f"{account.userid} next' lists every board waiting for you."
        )
    closing.append(
        f"The digest comes once a day at {account.digest_hour:02d}:00 {account.timezone or 'UTC'}. "
        f"'notifications {account.userid} password every' brings back a mail for every change of a board; "
        f"'notifications {account.userid} password' mails what is in force."
    )
    rule = "-" * views.LINE_WIDTH
    body = (
        "\n\n".join(views.wrap(paragraph, hang="") for paragraph in intro)
        + "\n\n" + rule + "\n\n" + f"\n{rule}\n\n".join(sections) + "\n" + rule + "\n\n"
        + "\n\n".join(views.wrap(paragraph, hang="") for paragraph in closing) + "\n"
    )
    html = html_digest(ctx, account, shown, addresses, sections, subject, intro, closing) if account.pictures else None
    return Reply(recipients, subject, body, Kind.BOARD, addresses[0], html)


def html_digest(
    ctx: Context, account: Account, shown: list[tuple[Board, int]], addresses: list[str], sections: list[str],
    subject: str, intro: list[str], closing: list[str],
) -> HtmlVersion | None:
    """The digest's HTML version: each of the first MOST_DIGEST_PICTURES
    boards as the HTML of its board mail shows it, with its picture and
    its reply address as a `mailto:` link, the others as their text with
    the link. None if no board could be drawn."""
    boards: list[str] = []
    pictures: list[Picture] = []
    for (board, seat), address, section in zip(shown, addresses, sections):
        html = None
        if len(boards) < MOST_DIGEST_PICTURES:
            due = board_mails.closing_lines(ctx, board, seat, account)[0]
            words = board_pictures.Words(subject, ctx.settings.recent_moves, page=views.board_page(ctx.settings, board.game, board.record))
            html = board_mails.player_html(ctx, board, seat, board_mails.moves_to_list(ctx, board.record), words, due, address)
        if html is None:
            boards.append(f"<pre>{escape(section)}</pre>\n<p>Its reply address: {board_pictures.mailto(address)}</p>\n")
        else:
            boards.append(html.body)
            pictures += html.pictures
    if not pictures:
        return None
    body = (
        "".join(f"<p>{escape(paragraph)}</p>\n" for paragraph in intro)
        + f"<p>Reply address of the first board: {board_pictures.mailto(addresses[0])}</p>\n<hr>\n"
        + "<hr>\n".join(boards) + "<hr>\n"
        + "".join(f"<p>{escape(paragraph)}</p>\n" for paragraph in closing)
    )
    return HtmlVersion(subject, body, tuple(pictures))
