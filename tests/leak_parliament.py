"""The swap test's game of Parliament (the rules `parliament help` gives): alice prefers the
seats S in run A and T in run B (disjoint, 0 to 3 each, not both empty);
every other move is the same in both runs and claims no seat of S or T.
Until a seat of S or T is claimed or flipped in a run, or a round ends (which
reveals every preference), bob's and carol's mails must be the same."""

from __future__ import annotations

import random
from typing import Any

from games.parliament.cascade import EMPTY as EMPTY_SEAT
from pbmserv.gamekit import get_game
from tests.leak_match import Match
from tests.leak_pairs import FIXED_EXAMPLES, Pair, move_subject, start, subscribe_carol

GAME = "parliament"


def prefer(seats: list[str]) -> str:
    return "prefer " + (",".join(seats) if seats else "none")


def play_parliament(pair: Pair, rng: random.Random, options: dict[str, str]) -> Match:
    """One game through both servers; returns it for its counts."""
    game = get_game(GAME)
    start(pair)
    owner = rng.randrange(2)  # alice: Red or Blue
    players = ["alice", "bob"] if owner == 0 else ["bob", "alice"]
    rival = 1 - owner
    first = game.new(options, players)
    labels = list(first.layout.shown)  # as moves name them: "b1", or "U:b1" with both chambers
    pool = [s for s in labels if s.split(":")[-1] not in FIXED_EXAMPLES]
    rng.shuffle(pool)
    if rng.random() < 0.4:
        # secrets on the top rows: edge seats, and the first seats in reading
        # order, which the "Next: ..., like b1" example names once h5 is taken
        pool.sort(key=lambda label: int(label.split(":")[-1][1:]) > 2)
    # S and T: disjoint, of 0 to 3 seats each, not both empty ("prefer none" is a secret too)
    size_s, size_t = rng.choice([(a, b) for a in range(4) for b in range(4) if a + b > 0])
    s_seats, t_seats = pool[:size_s], pool[size_s : size_s + size_t]
    # bob's own preferences stay apart from S and T: a seat both name cancels, and both are told
    p_seats = pool[size_s + size_t : size_s + size_t + rng.randint(0, 3)]
    pair.secrets = (frozenset(s.lower() for s in s_seats), frozenset(t.lower() for t in t_seats))
    untouchable = set(s_seats) | set(t_seats)
    index = {label: i for i, label in enumerate(labels)}
    safe_labels = [s for s in labels if s not in untouchable]
    neighbours = first.layout.neighbours
    around = {n for s in untouchable for n in neighbours[index[s]]}
    #: the seats two steps from S and T: claiming them surrounds the seats next to S and T
    ring = {n for s in around for n in neighbours[s]} - around - {index[s] for s in untouchable}

    def touched(states: list[Any]) -> bool:
        """A seat of S or T is no longer empty in a run, or a round ended (which reveals all)."""
        return any(
            state.finished_rounds or any(state.board[index[s]] != EMPTY_SEAT for s in untouchable)
            for state in states
        )

    match = Match(pair, game, rng, owner, [first, game.new(options, players)], shows_secret=touched, untouchable=untouchable)

    def bob_errs() -> None:
        state = match.states[0]
        to_move = game.to_move(state)
        held = [labels[i] for i, mark in enumerate(state.board) if mark in "RBrb"]
        candidates = [
            move_subject(GAME, "bob", "k99"),
            move_subject(GAME, "bob", "a1"),  # a cut-off corner
            move_subject(GAME, "bob", ",".join(rng.sample(safe_labels, 2))),
            move_subject(GAME, "bob", rng.choice(safe_labels), guard=match.moves_made + 1 + rng.randint(1, 5)),
        ]
        if rival not in to_move:
            candidates.append(move_subject(GAME, "bob", rng.choice(safe_labels)))
        elif state.in_setup:
            candidates.append(move_subject(GAME, "bob", rng.choice(safe_labels)))
            candidates.append(move_subject(GAME, "bob", prefer(rng.sample(safe_labels, first.layout.preference_limit + 1))))
        else:
            candidates.append(move_subject(GAME, "bob", prefer(rng.sample(safe_labels, 1))))
            candidates.append(move_subject(GAME, "bob", f"{rng.choice(safe_labels)} then"))
            if held:
                candidates.append(move_subject(GAME, "bob", rng.choice(held)))
            own_hidden = [s for s in p_seats if state.board[index[s]] == EMPTY_SEAT]
            if own_hidden:
                candidates.append(move_subject(GAME, "bob", rng.choice(own_hidden)))
        pair.expect_error("bob", rng.choice(candidates))

    pair.send("alice" if rng.random() < 0.5 else "carol", f"{GAME} challenge -boards={options['boards']} {' '.join(players)}")
    subscribe_carol(pair)
    bob_errs()
    for seat in rng.sample([owner, rival], 2):
        if seat == owner:
            match.move(owner, prefer(s_seats), text_b=prefer(t_seats), subject_b=move_subject(GAME, "alice", prefer(t_seats)))
        else:
            match.move(rival, prefer(p_seats))
        match.interlude(bob_errs, 0.5)

    while not match.over:
        match.interlude(bob_errs, 0.25)
        if match.over:
            break
        (seat,) = match.to_move()
        choices = match.common_moves(seat)
        if not choices:
            break  # only S and T are left
        # often next to S or T, or two steps away: then seats whose neighbours are
        # all held but a hidden S or T seat (and which would flip were it an
        # ordinary seat) come up in most games, before S or T is surrounded
        roll = rng.random()
        near = [m for m in choices if index[m] in (around if roll < 0.25 else ring)]
        move = rng.choice(near if near and roll < 0.6 else choices)
        if rng.random() < 0.1:  # name an order for the flips (any seats may be named)
            move += " then " + ",".join(rng.sample(safe_labels, rng.randint(1, 2)))
        guard = match.moves_made + 1 if rng.random() < 0.2 else None
        comment = f"{match.userid(seat)} says: move {match.moves_made + 1}." if rng.random() < 0.1 else ""
        spelled = move.upper() if rng.random() < 0.2 else move
        # a claim that reveals (or flips) a seat of S or T in a run is not compared
        if match.move(seat, move, comment, subject=move_subject(GAME, match.userid(seat), spelled, guard)):
            break
    match.finish()
    return match
