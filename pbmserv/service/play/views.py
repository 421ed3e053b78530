"""The text of board mails: title, state line, move list, board, subscribers, comment."""

from __future__ import annotations

import textwrap
from typing import Any

from pbmserv.config import Settings
from pbmserv.gamekit import Game
from pbmserv.store.records import BoardRecord, MoveRecord

LINE_WIDTH = 72
SECRET = "(secret)"
AUTO = "(Auto)"
#: the most moves one move list shows: the earlier ones are in the list of `show N#k`
MOST_LISTED_MOVES = 300
#: and the most characters it may take, whatever the moves' texts
MOST_LIST_CHARS = 16_000


def wrap(text: str, indent: str = "", hang: str = "    ") -> str:
    """A paragraph filled to the mail line width; continuation lines hang."""
    return textwrap.fill(
        text, LINE_WIDTH, initial_indent=indent, subsequent_indent=indent + hang,
        break_long_words=False, break_on_hyphens=False,
    )


def syntax_lines(syntax: str, indent: str = "  ") -> str:
    """A command's syntax, one alternative per line, each wrapped."""
    return "\n".join(wrap(alternative.strip(), indent) for alternative in syntax.split("  |  "))


def title_line(game: Game, board: BoardRecord) -> str:
    sides = game.side_names
    players = [
        f"{userid} ({sides[seat]})" if seat < len(sides) else userid
        for seat, userid in enumerate(board.seats)
    ]
    return f"{game.title} Board {board.board}: {' vs '.join(players)}"


def names_and(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def to_move_names(game: Game, board: BoardRecord, state: Any) -> list[str]:
    return [board.seats[seat] for seat in sorted(game.to_move(state))]


def status_line(game: Game, board: BoardRecord, state: Any) -> str:
    if board.result is not None:
        winners = [board.seats[seat] for seat in board.result["winners"]]
        reason = board.result["reason"]
        if not winners:
            return f"Game drawn: {reason}."
        return f"Game won by {names_and(winners)}: {reason}."
    names = to_move_names(game, board, state)
    return f"It is {names_and([name + chr(39) + 's' for name in names])} turn."


def rating_lines(board: BoardRecord) -> list[str]:
    """The rating changes a finished board caused: "alice 1600 -> 1616 (+16)";
    or why it was not rated."""
    result = board.result or {}
    if "unrated" in result:
        return [f"Not rated: {result['unrated']}."]
    changes = result.get("ratings", [])
    if not changes:
        return []
    lines = ["Rating changes:"]
    for c in changes:
        lines.append(
            f"  {c['userid']} {c['before']} -> {c['after']} ({c['after'] - c['before']:+d}"
            + (", provisional)" if c["provisional"] else ")")
        )
        if "why" in c:  # boards rated before issue 38 keep no explanation
            lines.append(wrap(c["why"], "    ", ""))
    return lines


def short_status(game: Game, board: BoardRecord, state: Any) -> str:
    if board.result is not None:
        winners = [board.seats[seat] for seat in board.result["winners"]]
        return f"won by {names_and(winners)}" if winners else "drawn"
    return f"{names_and(to_move_names(game, board, state))} to move"


def move_text_for(move: MoveRecord, viewer: int | None, game_over: bool) -> str:
    text = SECRET if move.secret and not game_over and move.seat != viewer else move.text
    return f"{text} {AUTO}" if move.auto else text


def move_list(
    game: Game, board: BoardRecord, moves: list[MoveRecord], state: Any, viewer: int | None, recent: int | None,
) -> str:
    """Moves oldest first, a line per round where the game plays in rounds
    (`Game.move_rounds`), else in columns; only the last `recent` (whole
    rounds) unless None, and never more than MOST_LISTED_MOVES moves or
    MOST_LIST_CHARS characters: a list cut says where the rest is (in the
    list of `show N#k`, the position after move k). `state` is the
    position the moves led to, `moves` the last of them (at least as many
    as are listed)."""
    if not moves:
        return "No moves yet."
    over = board.result is not None
    total = moves[-1].number
    moves = moves[-(MOST_LISTED_MOVES if recent is None else min(recent, MOST_LISTED_MOVES)):]
    rounds = game.move_rounds(state, [SECRET if move.secret and not over else move.text for move in moves])
    if rounds:
        if recent is not None:
            rounds = last_rounds(rounds, recent)
        moves = moves[len(moves) - sum(count for _, count in rounds):]
    entries = [
        f"{move.number:>3}. {board.seats[move.seat]} {move_text_for(move, viewer, over)}"
        for move in moves
    ]
    width = max(len(entry) for entry in entries) + 3
    rows: list[tuple[str, int]] = []  # each line, and how many moves it lists
    if rounds:
        label_width = max(len(label) for label, _ in rounds)
        start = 0
        for label, count in rounds:
            halves = "".join(entry.ljust(width) for entry in entries[start : start + count])
            rows.append((f"  {label.ljust(label_width)} {halves}".rstrip(), count))
            start += count
    else:
        columns = max(1, LINE_WIDTH // width)
        for start in range(0, len(entries), columns):
            row = entries[start : start + columns]
            rows.append(("".join(entry.ljust(width) for entry in row).rstrip(), len(row)))
    rows = _last_rows_within(rows, MOST_LIST_CHARS)
    shown = sum(count for _, count in rows)
    header = "Moves:"
    if shown < total and recent is not None:
        more = "all" if total <= MOST_LISTED_MOVES else "more"
        header = f"Moves (the last {shown} of {total}; 'show {board.board}' lists {more}):"
    elif shown < total:
        header = f"Moves (the last {shown} of {total}; '{game.name} show {board.board}#{total - shown}' lists the ones before):"
    return "\n".join([header, *(line for line, _ in rows)])


def _last_rows_within(rows: list[tuple[str, int]], most: int) -> list[tuple[str, int]]:
    """The last rows whose lines take at most `most` characters (the last one at least)."""
    kept, used = 0, 0
    for line, _ in reversed(rows):
        if kept and used + len(line) + 1 > most:
            break
        kept, used = kept + 1, used + len(line) + 1
    return rows[len(rows) - kept:]


def last_rounds(rounds: list[tuple[str, int]], most: int) -> list[tuple[str, int]]:
    """The last whole rounds holding at most `most` moves (at least one round)."""
    kept, moves = 0, 0
    for _, count in reversed(rounds):
        if kept and moves + count > most:
            break
        kept, moves = kept + 1, moves + count
    return rounds[-kept:]


def proposal_noun(proposal: dict[str, Any]) -> str:
    return "draw offer" if proposal["kind"] == "draw" else "undo request"


def whose_proposal(proposal: dict[str, Any], board: BoardRecord) -> str:
    """ "alice's draw offer" / "alice's undo request" """
    return f"{board.seats[proposal['by']]}'s {proposal_noun(proposal)}"


def position(game: Game, board: BoardRecord, state: Any, viewer: int | None) -> str:
    """The board as `viewer` sees it and, while the board runs, how to move."""
    text = game.render(state, viewer).rstrip("\n")
    hint = game.move_hint(state) if board.result is None else ""
    return f"{text}\n{hint}" if hint else text


def board_page(settings: Settings, game: Game, board: BoardRecord, at_move: int | None = None) -> str:
    """The address of the board's page on the web site (`/GAME/BOARD`, at an
    earlier move `?move=K`): under `[web] base_url`, else `http://` and
    `[web] listen`; "" when the server has no web site."""
    base = settings.web_base_url.rstrip("/") or (f"http://{settings.web_listen}" if settings.web_listen else "")
    if not base:
        return ""
    return f"{base}/{game.name}/{board.board}" + ("" if at_move is None else f"?move={at_move}")


def page_line(page: str) -> str:
    return f"The board on the web: {page}"


def board_mail(
    game: Game,
    board: BoardRecord,
    moves: list[MoveRecord],
    state: Any,
    viewer: int | None,
    *,
    recent: int | None,
    comment: str = "",
    commenter: str = "",
    lead: str = "",
    subscribers: tuple[str, ...] = (),
    page: str = "",
) -> str:
    """The text of a board mail; `page` is the board's page on the web
    (`board_page`), shown under the board ("": none)."""
    parts = [title_line(game, board)]
    if lead:
        parts.append(lead)
    parts.append(status_line(game, board, state))
    parts += rating_lines(board)
    parts.append("")
    parts.append(move_list(game, board, moves, state, viewer, None if board.result is not None else recent))
    parts.append("")
    parts.append(position(game, board, state, viewer))
    if page:
        parts.append("")
        parts.append(page_line(page))
    if subscribers:
        parts.append("")
        parts.append(wrap(f"Subscribers: {', '.join(subscribers)}."))
    if comment.strip():
        parts.append("")
        parts.append(f"{commenter} writes:")
        parts.append("")
        parts.append(comment.strip())
    return "\n".join(parts) + "\n"


def example_move(game: Game, state: Any, seat: int) -> str:
    """A move `seat` may play now, for the command line to paste ("" if the
    game cannot give one). Only ever shown to `seat` itself."""
    try:
        return game.example_move(state, seat)
    except NotImplementedError:  # a game without `legal_moves`
        return ""


def paste_parts(game: Game, board: BoardRecord, state: Any, seat: int, reply_address: str = "") -> tuple[str, str, str]:
    """What `command_to_paste` says, unwrapped: how to answer with the move
    alone (by a reply to the mail, or to `reply_address` named), what to
    send instead, and the command line itself."""
    userid = board.seats[seat]
    move = example_move(game, state, seat)
    example = f" (e.g. {move})" if move else ""
    if reply_address:
        reply = (
            f"To move, mail just your move{example} as the first line to this board's reply address, {reply_address}: "
            "it is yours alone and stands for your password (until you change it)."
        )
    else:
        reply = (
            f"To move, reply to this mail with just your move{example} as the first line: "
            "its reply address is yours alone and stands for your password (until you change it)."
        )
    if move:
        head = "Or send this line as the Subject, your password in place of PASSWORD and your move in place of the example (a move legal now):"
    else:
        head = "Or send this line as the Subject, your password in place of PASSWORD and your move in place of MOVE:"
        move = "MOVE"
    return reply, head, f"{game.name} move {board.board} {userid} PASSWORD {move}"


def command_to_paste(game: Game, board: BoardRecord, state: Any, seat: int, reply_address: str = "") -> str:
    """The end of a board mail to a player who is to move: how to answer
    it with the move alone (its reply address is the player's; named, in a
    mail about several boards), and the exact command line to send
    instead, PASSWORD standing for their password and, where the game
    gives one, a move that is legal now."""
    reply, head, line = paste_parts(game, board, state, seat, reply_address)
    return f"{wrap(reply, hang='')}\n{wrap(head, hang='')}\n  {line}\n"


def end_reason(board: BoardRecord) -> str:
    """How an ended board ended ("alice resigned", ...)."""
    assert board.result is not None, "an ended board has its result"
    return str(board.result["reason"])
