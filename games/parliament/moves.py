"""Parliament's moves as values, and how a player's text is read into one:
the secret choice of preferences before the first claim, then claims."""

from __future__ import annotations

import re
from dataclasses import dataclass

from games.parliament.cascade import PREFERENCE, SEAT, SIDES
from games.parliament.chambers import LAYOUTS
from games.parliament.state import State
from pbmserv.gamekit import IllegalMove

_PREFER = re.compile(r"(?:prefer|preferences?)\b\s*:?\s*(.*)")
_SEAT_LIST = re.compile(r"[,\s]+")


@dataclass(frozen=True)
class Preferences:
    """A player's secret preference seats (indices in reading order; none is allowed)."""

    boards: str
    seats: tuple[int, ...]
    secret = True

    def __str__(self) -> str:
        labels = LAYOUTS[self.boards].shown
        return "prefer " + (",".join(labels[s] for s in self.seats) if self.seats else "none")


@dataclass(frozen=True)
class Claim:
    """A claim of one empty seat, and the seats the claimer wants flipped first."""

    boards: str
    seat: int
    order: tuple[int, ...] = ()
    secret = False

    def __str__(self) -> str:
        labels = LAYOUTS[self.boards].shown  # U:c4, as the board and help write seats
        if self.order:
            return f"{labels[self.seat]} then " + ",".join(labels[s] for s in self.order)
        return labels[self.seat]


def read_preferences(state: State, text: str) -> Preferences:
    layout = state.layout
    limit = layout.preference_limit
    example = "prefer U:c4,L:h5" if layout.prefixed else "prefer c4,h5"
    match = _PREFER.fullmatch(" ".join(text.lower().split()))
    if match is None:
        raise IllegalMove(
            f"First choose your secret preferences: send prefer and up to {limit} seats, "
            f"like {example}, or prefer none."
        )
    words = [w for w in _SEAT_LIST.split(re.sub(r"\s*:\s*", ":", match.group(1))) if w]
    if words == ["none"]:
        return Preferences(state.boards, ())
    if not words:
        raise IllegalMove(f"Name your preferences after prefer, like {example}, or send prefer none.")
    if "none" in words:
        raise IllegalMove(f"Write either prefer none or a list of seats like {example}, not both.")
    seats = [layout.parse(word) for word in words]
    for position, chosen in enumerate(seats):
        if chosen in seats[:position]:
            raise IllegalMove(f"{layout.shown[chosen]} is named twice: name each preference once.")
    if len(seats) > limit:
        where = "in the two chambers together" if layout.prefixed else f"in the {layout.chambers[0].name} chamber"
        raise IllegalMove(f"You named {len(seats)} preferences: at most {limit} are allowed {where}.")
    return Preferences(state.boards, tuple(sorted(seats)))


def read_claim(state: State, seat: int, text: str) -> Claim:
    layout = state.layout
    example = layout.example()
    words = " ".join(re.sub(r"\s*:\s*", ":", text.lower()).split())
    if _PREFER.fullmatch(words):
        raise IllegalMove(f"Preferences are chosen before the first claim; now claim an empty seat, like {example}.")
    words = re.sub(r"^claim\b\s*", "", words)
    parts = re.split(r"\bthen\b", words)
    if len(parts) > 2:
        raise IllegalMove(
            f"Write then only once, like {example} then {layout.example('d5')},{layout.example('e5')}."
        )
    head = [w for w in _SEAT_LIST.split(parts[0]) if w]
    if not head:
        raise IllegalMove(f"Send the seat you claim, like {example}.")
    claimed = [layout.parse(word) for word in head]
    if len(claimed) > 1:
        raise IllegalMove(
            f"Claim one seat per turn, like {example}; to choose the order of the flips "
            f"write {example} then {layout.example('d5')},{layout.example('e5')}."
        )
    order: list[int] = []
    if len(parts) == 2:
        named = [w for w in _SEAT_LIST.split(parts[1]) if w]
        if not named:
            raise IllegalMove(
                f"Name the seats to flip first after then, like {example} then "
                f"{layout.example('d5')},{layout.example('e5')}."
            )
        for word in named:
            flip = layout.parse(word)
            if flip in order:
                raise IllegalMove(f"{layout.shown[flip]} is named twice in the order of flips.")
            order.append(flip)
    target = claimed[0]
    shown = layout.shown[target]
    mark = state.board[target]
    if mark in SEAT:
        raise IllegalMove(f"{shown} is already held by {SIDES[SEAT.index(mark)]}: claim an empty seat.")
    if mark in PREFERENCE:
        owner = "your own" if PREFERENCE.index(mark) == seat else f"{SIDES[PREFERENCE.index(mark)]}'s"
        raise IllegalMove(f"{shown} is {owner} preference and cannot be claimed: claim an empty seat.")
    if target in state.live_preferences(seat):
        raise IllegalMove(f"{shown} holds your own hidden preference: you cannot claim it; claim another empty seat.")
    return Claim(state.boards, target, tuple(order))
