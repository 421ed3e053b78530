"""The contract between the server and a game plugin.

A game is a stateless object; all of a board's facts live in its state value,
which the game creates (`new`), advances (`play`) and (de)serialises
(`encode`/`decode`). The server never looks inside a state.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from pbmserv.gamekit.drawing import Drawing, plain_text
from pbmserv.gamekit.refusals import IllegalMove, InvalidOption
from pbmserv.gamekit.stored import from_data, to_data

__all__ = ["Game", "IllegalMove", "InvalidOption", "Move", "Option", "Outcome", "TextMove"]


class Move(Protocol):
    """A move as its game has read it: a frozen value of the game's own
    whose `str()` is the canonical text (what the move list shows, and what
    `read_move` reads back into an equal value) and which knows whether the
    other players may only see it as `(secret)`. Two moves are equal
    exactly when their texts are: the bots compare the moves of different
    drawn states, and key their tree on them."""

    @property
    def secret(self) -> bool: ...


@dataclass(frozen=True)
class TextMove:
    """The move of a game with no move value of its own: its words,
    lower-cased and single-spaced."""

    text: str
    secret: bool = False

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended: `winners` is empty for a draw."""

    winners: tuple[int, ...]
    scores: tuple[float, ...] | None
    reason: str


@dataclass(frozen=True)
class Option:
    """One challenge option, written `-name=value` (or `-name` for a flag).

    The type of `default` decides how a value is read: bool options are flags,
    int options take a whole number from `allowed`, str options a word from
    `allowed`.
    """

    name: str
    default: bool | int | str
    allowed: tuple[Any, ...] = ()
    description: str = ""

    def parse(self, raw: str | None) -> bool | int | str:
        if isinstance(self.default, bool):
            if raw is None:
                return True
            word = raw.strip().lower()
            if word in ("1", "yes", "true", "on"):
                return True
            if word in ("0", "no", "false", "off"):
                return False
            raise InvalidOption(f"-{self.name} is a switch: write -{self.name} (or -{self.name}=no).")
        if raw is None or raw.strip() == "":
            raise InvalidOption(f"-{self.name} needs a value: {self.syntax()}.")
        if isinstance(self.default, int):
            try:
                value: int | str = int(raw.strip())
            except ValueError:
                raise InvalidOption(
                    f"-{self.name}={raw} is not a number: {self.syntax()}."
                ) from None
        else:
            value = raw.strip().lower()
        if self.allowed and value not in self.allowed:
            raise InvalidOption(f"-{self.name}={raw} is not allowed: {self.syntax()}.")
        return value

    def allowed_text(self) -> str:
        if isinstance(self.default, bool):
            return "on or off"
        values = list(self.allowed)
        if values and all(isinstance(v, int) for v in values) and len(values) > 3:
            step = values[1] - values[0]
            if all(b - a == step for a, b in zip(values, values[1:])):
                if step == 1:
                    return f"{values[0]}..{values[-1]}"
                return f"{values[0]}..{values[-1]} in steps of {step}"
        words = [str(v) for v in values]
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]

    def syntax(self) -> str:
        if isinstance(self.default, bool):
            return f"-{self.name} (off unless given)"
        if isinstance(self.default, int):
            return f"-{self.name}=N where N is {self.allowed_text()} (default {self.default})"
        return f"-{self.name}={'|'.join(str(v) for v in self.allowed)} (default {self.default})"


class Game:
    """Base class of every game plugin. Subclasses fill in the class
    attributes and the methods below; see docs/games.md."""

    name: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    side_names: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[tuple[Option, ...]] = ()
    #: options this game name fixes (e.g. `psychomachia` is `majority -hidden`)
    fixed_options: ClassVar[Mapping[str, str | None]] = {}
    #: random moves a bot's search plays on from a new position before the
    #: tally scores it: 0 where the tally already reads a position well,
    #: more where what is still to be won matters more than what is held
    playout_moves: ClassVar[int] = 400
    #: whether the rules can end a game drawn: only then may the players
    #: agree a draw (`move ... propose`) and a bot accept one
    draws: ClassVar[bool] = False
    #: the frozen dataclass of the game's states, for the default `decode`
    state_type: ClassVar[type[Any] | None] = None

    # -- options ---------------------------------------------------------
    def resolve_options(self, given: Mapping[str, str | None]) -> dict[str, Any]:
        """Typed values for every declared option, defaults filled in.

        Raises InvalidOption for unknown names and bad values.
        """
        by_name = {option.name: option for option in self.options}
        merged = dict(given)
        merged.update(self.fixed_options)
        values = {option.name: option.default for option in self.options}
        for raw_name, raw_value in merged.items():
            name = raw_name.lower()
            if name not in by_name:
                if by_name:
                    known = ", ".join(f"-{o.name}" for o in self.options)
                    raise InvalidOption(f"{self.name} has no option -{name}; its options are {known}.")
                raise InvalidOption(f"{self.name} has no option -{name}; it takes no options.")
            values[name] = by_name[name].parse(raw_value)
        return values

    # -- the game ----------------------------------------------------------
    def new(self, options: Mapping[str, str | None], players: Sequence[str]) -> Any:
        raise NotImplementedError

    def to_move(self, state: Any) -> frozenset[int]:
        raise NotImplementedError

    def read_move(self, state: Any, seat: int, text: str) -> Move:
        """The move `seat` sent as `text`, read once into the game's own
        value; raises IllegalMove when it cannot be read or is not legal
        here. The server calls this once per move and hands the value to
        `apply`."""
        return TextMove(" ".join(text.lower().split()))

    def apply(self, state: Any, seat: int, move: Any) -> Any:
        """The state after `seat` plays `move` (a value from `read_move` or
        `moves`);
        raises IllegalMove and leaves `state` as it was when the rules
        forbid it."""
        raise NotImplementedError

    def play(self, state: Any, seat: int, text: str) -> Any:
        """`read_move` and `apply` in one call, for replays of stored text."""
        return self.apply(state, seat, self.read_move(state, seat, text))

    def moves(self, state: Any, seat: int) -> Sequence[Move]:
        """Every move `seat` may play now, each once, as values `apply`
        takes: what the bots search. A game implements this or
        `legal_moves`; by default each of `legal_moves` read by `read_move`."""
        if type(self).legal_moves is Game.legal_moves:
            raise NotImplementedError(f"{self.name} implements neither moves nor legal_moves")
        return [self.read_move(state, seat, text) for text in self.legal_moves(state, seat)]

    def legal_moves(self, state: Any, seat: int) -> list[str]:
        """`moves` as canonical text, in the same order: what the move list
        offers a player. A game that knows its moves only as text
        implements this instead of `moves`."""
        if type(self).moves is Game.moves:
            raise NotImplementedError(f"{self.name} implements neither moves nor legal_moves")
        return [str(move) for move in self.moves(state, seat)]

    def example_move(self, state: Any, seat: int) -> str:
        """A move `seat` may play now, as canonical text ("" if none): the
        first of `legal_moves`, made from the first of `moves` where the
        game lists values (not every move turned into text). The server
        shows it under every board mail to the player to move, so a game
        whose list is costly gives that same first move a cheaper way."""
        if type(self).moves is Game.moves:  # a game that knows its moves as text
            texts = self.legal_moves(state, seat)
            return texts[0] if texts else ""
        moves = self.moves(state, seat)
        return str(moves[0]) if moves else ""

    def outcome(self, state: Any) -> Outcome | None:
        raise NotImplementedError

    def draw(self, state: Any, viewer: int | None) -> Drawing:
        """The position as `viewer` (a seat, or None for the public) may see
        it: the game's observer, the one place that decides what a viewer
        is shown (`pbmserv.gamekit.drawing`). The text board and the
        pictures are both made from it."""
        raise NotImplementedError

    def text(self, drawing: Drawing) -> str:
        """The text board of `drawing`, as board mails print it; by default
        the plainest layout (`drawing.plain_text`). A game with a layout of
        its own overrides this, reading nothing but `drawing`."""
        return plain_text(drawing)

    def render(self, state: Any, viewer: int | None) -> str:
        """The text board as `viewer` may see it: `text` of `draw`. Games
        do not override this, so that what a viewer sees is decided in
        `draw` alone."""
        return self.text(self.draw(state, viewer))

    def move_hint(self, state: Any) -> str:
        """One line under the board telling whoever is to move how to write
        their move ("" for none). The server shows it only while the board
        runs: a board ended by resignation or forfeit is over though its
        state is not."""
        return ""

    def viewpoint(self, state: Any, viewer: int | None) -> int | None:
        """A viewer whose `render` is the same text as `viewer`'s: None (the
        public board) where `viewer` sees nothing that everybody else does
        not. The server renders a board once for all who share a viewpoint.
        `viewer` itself is always right; a game overrides this only where
        boards are the same for all."""
        return viewer

    def encode(self, state: Any) -> Any:
        """`state` as JSON-compatible data, what the server stores; by
        default a frozen dataclass's fields by their names (`gamekit.stored`)."""
        return to_data(state)

    def decode(self, data: Any) -> Any:
        """The state `encode` gave `data` for; by default the `state_type`
        read back from its fields' type hints."""
        if self.state_type is None:
            raise NotImplementedError(f"{self.name} gives no state_type for the default decode")
        return from_data(self.state_type, data)

    def help(self) -> str:
        raise NotImplementedError

    # -- what one player can know -----------------------------------------
    def known_to(self, state: Any, seat: int) -> Any | None:
        """The state as `seat` can know it, for a `preview` from their own
        side: their own secrets kept, every other player's secrets taken out
        in the way the game's rules make a what-if meaningful, so that
        nothing played or rendered on it depends on what `seat` cannot see.
        None (the default) gives no such view: the server then previews on
        the whole state and refuses while other players' secret moves are
        not revealed."""
        return None

    # -- how the move list reads -------------------------------------------
    def move_rounds(self, state: Any, texts: Sequence[str]) -> list[tuple[str, int]]:
        """The move list in rounds, a line each: (label, how many moves)
        for each round in `texts`, oldest first, the newest round last; a
        round that `texts` holds only in part because they begin inside
        it is left out. `texts` are the last moves that led to `state`,
        as everybody sees them (a secret one as `(secret)`). [] (the
        default): no rounds, the moves run in columns."""
        return []

    def determinize(self, state: Any, seat: int, rng: random.Random) -> Any:
        """A full state consistent with everything `seat` can know (what
        `render(state, seat)` shows and the public move list), every other
        player's secret drawn at random among the possibilities; the default
        returns the state itself (no hidden information)."""
        return state

    def tally(self, state: Any) -> tuple[float, ...] | None:
        """Each seat's standing now, as the running tallies of the public
        board show it (higher is better, comparable between seats; a
        handicap such as a komi left out, so a new game is even): what the
        bots score a playout by when it stops before the end. None (the
        default): the game keeps no such tally."""
        return None

    def judge(self, state: Any) -> tuple[float, ...] | None:
        """How the bots judge an unfinished position for each seat, on the
        tally's scale: the tally itself (the default), or a game's own
        estimate of how the game will end where the tally of an open
        position says little about that."""
        return self.tally(state)
