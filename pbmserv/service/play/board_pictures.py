"""The HTML version of a board mail to a player who asked for pictures
(`pictures on`): the picture of the board as that seat sees it, inline,
with the tallies as a table, the last move, the move list, the comment,
the line to paste and the board's page on the web. Beside it the mail
keeps the text every player gets (docs/decisions/0143-pictures-in-mail.md).

The picture is made from the seat's own drawing (`Game.draw(state, seat)`),
the one place that decides what the seat may see, so it shows that seat's
secrets and no other's."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from html import escape
from typing import Any

from pbmserv import pictures
from pbmserv.gamekit import Game
from pbmserv.gamekit.drawing import Drawing, Tally
from pbmserv.mail.outbound import HtmlVersion, Picture
from pbmserv.service.play import views
from pbmserv.store.records import BoardRecord, MoveRecord


@dataclass(frozen=True)
class Words:
    """What a board mail says besides the board, as `views.board_mail` takes it."""

    subject: str
    recent: int | None
    comment: str = ""
    commenter: str = ""
    lead: str = ""
    subscribers: tuple[str, ...] = ()
    page: str = ""


def html_version(
    game: Game, board: BoardRecord, moves: list[MoveRecord], state: Any, seat: int, words: Words, domain: str,
    reply_address: str = "",
) -> HtmlVersion | None:
    """The HTML version of the board mail to `seat`, None for a game that
    does not draw its boards; `reply_address` named (a `mailto:` link) as
    the address to move by, in a mail about several boards."""
    try:
        drawing = game.draw(state, seat)
    except NotImplementedError:  # a game plugin written before drawings: its players get text
        return None
    picture = Picture(
        pictures.png(drawing), f"board-{game.name}-{board.board}-{board.move_count}-{seat}@{domain}",
        f"{game.name}-{board.board}.png",
    )
    return HtmlVersion(words.subject, _body(game, board, moves, state, seat, drawing, picture, words, reply_address), (picture,))


def _body(
    game: Game, board: BoardRecord, moves: list[MoveRecord], state: Any, seat: int, drawing: Drawing,
    picture: Picture, words: Words, reply_address: str,
) -> str:
    running = board.result is None
    parts = [f"<h1 style=\"font-size:1.3em\">{escape(views.title_line(game, board))}</h1>"]
    if words.lead:
        parts.append(_lines(words.lead.splitlines()))
    parts.append(f"<p><strong>{escape(views.status_line(game, board, state))}</strong></p>")
    if ratings := views.rating_lines(board):
        parts.append(_lines(ratings))
    if drawing.header:
        parts.append(_lines(drawing.header))
    width, height = struct.unpack(">II", picture.png[16:24])  # the PNG's IHDR chunk
    parts.append(
        f'<p><img src="cid:{escape(picture.content_id)}" alt="{escape(drawing.title)}" width="{width}" '
        f'height="{height}" style="max-width:100%;height:auto"></p>'
    )
    if drawing.tally is not None:
        parts.append(_table(drawing.tally))
    if drawing.last_move:
        parts.append(f"<p>Last move: {escape(drawing.last_move)}</p>")
    if drawing.notes:
        parts.append(_lines(drawing.notes))
    if running and (hint := game.move_hint(state)):
        parts.append(f"<p>{escape(hint)}</p>")
    listed = views.move_list(game, board, moves, state, seat, words.recent if running else None)
    parts.append(f"<pre>{escape(listed)}</pre>")
    if words.subscribers:
        parts.append(f"<p>Subscribers: {escape(', '.join(words.subscribers))}.</p>")
    if words.comment.strip():
        parts.append(f"<p>{escape(words.commenter)} writes:</p>")
        parts.append(f'<pre style="white-space:pre-wrap">{escape(words.comment.strip())}</pre>')
    if running and seat in game.to_move(state):
        reply, head, line = views.paste_parts(game, board, state, seat, reply_address)
        reply_html = escape(reply).replace(escape(reply_address), mailto(reply_address)) if reply_address else escape(reply)
        parts.append(f"<p>{reply_html}</p>\n<p>{escape(head)}</p>\n<pre>  {escape(line)}</pre>")
    if words.page:
        parts.append(f'<p>The board on the web: <a href="{escape(words.page)}">{escape(words.page)}</a></p>')
    return "\n".join(parts) + "\n"


def mailto(address: str) -> str:
    """A link that starts a mail to `address`."""
    return f'<a href="mailto:{escape(address)}">{escape(address)}</a>'


def _lines(lines: list[str] | tuple[str, ...]) -> str:
    return "<p>" + "<br>\n".join(escape(line) for line in lines) + "</p>"


def _table(tally: Tally) -> str:
    cell = 'style="padding:2px 8px;text-align:right"'
    head = "".join(f"<th {cell}>{escape(heading)}</th>" for heading in tally.columns)
    rows = "".join(
        f'<tr><th style="padding:2px 8px;text-align:left">{escape(label)}</th>'
        + "".join(f"<td {cell}>{escape(value)}</td>" for value in values) + "</tr>\n"
        for label, values in tally.rows
    )
    return f'<table style="border-collapse:collapse">\n<tr><th></th>{head}</tr>\n{rows}</table>'
