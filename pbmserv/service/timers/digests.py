"""The daily digest (`notifications userid password digest HOUR`): once a
day, at the first timer pass at or after the player's hour in their time
zone, one mail with every running board in digest mode that waits for
their move, each as their own board mail shows it, with its clock, the
line to paste and its reply address; no mail on a day when none waits
(docs/decisions/0153-notifications.md)."""

from __future__ import annotations

from datetime import datetime

from pbmserv.service.play import board_mails, deadlines, notifications, views
from pbmserv.service.play.board import Board
from pbmserv.service.processing.context import Context, Reply, as_utc
from pbmserv.store import notifications as stored
from pbmserv.store import records
from pbmserv.store.records import Account
from pbmserv.store.states import Kind

#: the most boards one digest shows (a player may have hundreds waiting)
MOST_DIGEST_BOARDS = 50


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
            replies.append(digest(ctx, account, waiting, local_now))
            report.append(f"digest to {account.userid}: {len(waiting)} boards")
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


def digest(ctx: Context, account: Account, waiting: list[tuple[Board, int]], local_now: datetime) -> Reply:
    """One mail with the boards that wait: its Reply-To is the first board's reply address, which the mail says."""
    shown = waiting[:MOST_DIGEST_BOARDS]
    addresses = [
        board_mails.seat_address(ctx, board.game, board.record, seat, account) for board, seat in shown
    ]
    first = shown[0][0]
    count = f"{len(waiting)} board{'s' if len(waiting) != 1 else ''}"
    intro = [
        f"Your daily digest, {account.userid}: {count} wait{'s' if len(waiting) == 1 else ''} for your move "
        f"({local_now:%Y-%m-%d %H:%M} {account.timezone or 'UTC'}).",
        f"A reply to this mail plays {first.game.title} board {first.record.board}, the first below: write your "
        "move as its first line, as in a reply to one of its board mails. "
        + ("Each other board names its own reply address: mail your move there to play on it." if len(shown) > 1 else ""),
    ]
    rule = "-" * views.LINE_WIDTH
    sections = [board_mails.player_view(ctx, board, seat, account, reply_address=address) for (board, seat), address in zip(shown, addresses)]
    closing = []
    if len(waiting) > len(shown):
        closing.append(
            f"The first {len(shown)} are shown; {len(waiting) - len(shown)} more wait for you: 'all show "
            f"{account.userid} next' lists every board waiting for you."
        )
    closing.append(
        f"The digest comes once a day at {account.digest_hour:02d}:00 {account.timezone or 'UTC'}. "
        f"'notifications {account.userid} password every' brings back a mail for every change of a board; "
        f"'notifications {account.userid} password' mails what is in force."
    )
    body = (
        "\n\n".join(views.wrap(paragraph.strip(), hang="") for paragraph in intro)
        + "\n\n" + rule + "\n\n" + f"\n{rule}\n\n".join(sections) + "\n" + rule + "\n\n"
        + "\n\n".join(views.wrap(paragraph, hang="") for paragraph in closing) + "\n"
    )
    recipients = ctx.addresses([account.userid])[account.userid]
    return Reply(recipients, f"pbmserv digest {account.userid} {local_now:%Y-%m-%d}", body, Kind.BOARD, addresses[0])
