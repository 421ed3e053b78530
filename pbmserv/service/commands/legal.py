"""`GAME moves board [uid pw]`: the legal moves of whoever is to move, grouped.

The list comes from the game's `legal_moves`; this module knows no game's
rules, only the shapes moves are written in:

- a cell is letters then digits (`a1`, `b10`, `U:e5` with a chamber);
  cells are grouped by their letters: `a: 1 2 4` stands for a1, a2, a4;
- moves of two or more words (`hide e5`, `prefer none`) are grouped by
  their first word, and what follows it is grouped as above;
- when the moves are exactly every pair of some cells (majorities' two
  stones), the cells are listed once as "any two of these";
- anything else (`reveal`, `pass`) is listed as it is, first.

Groups go in alphabetical order, numbers from the lowest.

A list longer than MOST_LINES lines is cut there, saying how much is left
out. On a board with hidden parts (the game's `viewpoint` for the seat to
move is not None) only that player may ask, with their password: the
list is theirs and may tell their secrets.
"""

from __future__ import annotations

import re
from typing import Any

from pbmserv.gamekit import Game
from pbmserv.protocol.commands import Moves
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import views
from pbmserv.service.play.board import check_running, load, playing_seat
from pbmserv.service.processing import memo
from pbmserv.service.processing.context import Context, Reply
from pbmserv.service.processing.errors import ServiceError
from pbmserv.service.processing.memo import Memo
from pbmserv.store.records import BoardRecord

#: the most lines of moves one answer lists
MOST_LINES = 60
#: the lists made, kept for the next mail that asks for the same position
LISTS = Memo(4_000_000)

_CELL = re.compile(r"((?:[a-z]+:)?[a-z]+)(\d+)", re.IGNORECASE)
_PAIR = re.compile(r"([^\s,]+)[\s,]+([^\s,]+)")


@handles(Moves)
def moves(ctx: Context, game: Game, command: Moves) -> list[Reply]:
    loaded = load(ctx.connection, game, command.board)
    board, state = loaded.record, loaded.state
    check_running(loaded)
    usage = f"{game.name} moves {board.board} userid password"
    seats = sorted(game.to_move(state))
    hidden = any(game.viewpoint(state, seat) is not None for seat in seats)
    if command.userid is None or command.password is None:
        if hidden:
            raise ServiceError(
                f"{game.title} board {board.board} has hidden parts, so only the player to move may see "
                "their legal moves, and only with their password.",
                usage, game=game.name, board=board.board,
            )
    else:
        user = ctx.authenticate(command.userid, command.password)
        seat = playing_seat(loaded, user.userid)
        if seat not in seats:
            raise ServiceError(
                f"It is not your turn on {game.title} board {board.board}: "
                f"{views.names_and([board.seats[s] for s in seats])} {'is' if len(seats) == 1 else 'are'} to move.",
                f"send '{usage}' when it is your turn; '{game.name} queue' keeps a move for then",
                game=game.name, board=board.board,
            )
        seats = [seat]
    sections = [_section(game, board, state, seat, hidden) for seat in seats]
    body = "\n\n".join(sections) + "\n"
    return [Reply((ctx.sender,), f"{game.title} Board {board.board} moves", body)]


def _section(game: Game, board: BoardRecord, state: Any, seat: int, hidden: bool) -> str:
    userid = board.seats[seat]
    first, listed = _listed(game, board, state, seat)
    mine = " (as you see it; nobody else gets this list)" if hidden else ""
    head = f"Legal moves of {userid} on {game.title} board {board.board}, move {board.move_count + 1}{mine}:"
    lines = [views.wrap(head, hang="")]
    if not listed:
        lines.append("  none")
    else:
        lines.append(listed)
        lines.append(views.wrap(
            f"Send one as: {game.name} move {board.board} {userid} PASSWORD {first}", hang="    ",
        ))
    return "\n".join(lines)


def _listed(game: Game, board: BoardRecord, state: Any, seat: int) -> tuple[str, str]:
    """The first of the seat's legal moves and all of them as `moves_lines`
    ("" if it has none), made once for each state and seat: the worker
    keeps them (`LISTS`), keyed by the game, the stored state and the seat,
    all that they follow from. Who may see them is checked before."""
    key = memo.digest(game.name, board.state, seat)
    kept = LISTS.get(key)
    if kept is None:
        legal = game.legal_moves(state, seat)
        kept = "\n".join([legal[0], *moves_lines(legal)]) if legal else ""
        LISTS.put(key, kept)
    first, _, listed = kept.partition("\n")
    return first, listed


def compact(legal: list[str]) -> list[str]:
    """The moves as indented lines, grouped as the module says."""
    pair = _any_two(legal)
    if pair is not None:
        return [f"  any two of these, such as {legal[0]}:", *_grouped(pair, "    ")]
    return _grouped(legal, "  ")


def _any_two(legal: list[str]) -> list[str] | None:
    """The cells, when `legal` is every pair of them and nothing else."""
    cells: dict[str, None] = {}
    pairs = set()
    for text in legal:
        match = _PAIR.fullmatch(text)
        if match is None or match.group(1) == match.group(2):
            return None
        cells.update(dict.fromkeys(match.groups()))
        pairs.add(frozenset(match.groups()))
    count = len(cells)
    if count < 3 or len(pairs) != len(legal) or len(pairs) != count * (count - 1) // 2:
        return None
    return list(cells)


def _grouped(moves: list[str], indent: str) -> list[str]:
    by_word: dict[str, list[str]] = {}
    lines: list[str] = []
    singles: list[str] = []
    for text in moves:
        first, _, rest = text.partition(" ")
        if rest:
            by_word.setdefault(first, []).append(rest)
    cells: dict[str, list[str]] = {}
    for text in moves:
        if " " in text:
            continue
        match = _CELL.fullmatch(text)
        if match is None:
            singles.append(text)
        else:
            cells.setdefault(match.group(1), []).append(match.group(2))
    if singles:
        lines.append(views.wrap(", ".join(singles), indent))
    lines += [
        views.wrap(f"{letters}: {' '.join(sorted(numbers, key=int))}", indent, "      ")
        for letters, numbers in sorted(cells.items(), key=lambda item: (len(item[0]), item[0]))
    ]
    for word, rests in by_word.items():
        lines.append(f"{indent}{word} ...")
        lines += _grouped(rests, indent + "  ")
    return [line for block in lines for line in block.split("\n")]


def moves_lines(legal: list[str]) -> list[str]:
    """`compact`, cut after MOST_LINES lines."""
    lines = compact(legal)
    if len(lines) <= MOST_LINES:
        return lines
    return [*lines[:MOST_LINES], f"  ... and {len(lines) - MOST_LINES} more lines, not listed here."]
