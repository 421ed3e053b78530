"""The swap test's game of Psychomachia (the rules `psychomachia help` gives): alice hides her
stone on X in run A and on Y in run B; every other move is the same in both
runs and touches neither X nor Y. Until alice reveals (on her n-th turn, or
only at the end), bob's and carol's mails must be the same in both runs."""

from __future__ import annotations

import random

from pbmserv.gamekit import get_game
from tests.leak_match import Match
from tests.leak_pairs import FIXED_EXAMPLES, Pair, move_subject, start, subscribe_carol

GAME = "psychomachia"


def options_for(rng: random.Random, size: int) -> dict[str, str]:
    """A board of `size`; the stones drawn (or left to the default, 40 or four fifths)."""
    if rng.random() < 0.3:
        return {"size": str(size)}
    most = size * size // 2 - 1
    return {"size": str(size), "stones": str(rng.randint(max(1, most // 4), min(most, 40)))}


def play_psychomachia(pair: Pair, rng: random.Random, options: dict[str, str]) -> Match:
    """One game through both servers; returns it for its counts."""
    game = get_game(GAME)
    start(pair)
    owner = rng.randrange(2)  # alice: White or Black
    players = ["alice", "bob"] if owner == 0 else ["bob", "alice"]
    rival = 1 - owner
    first = game.new(options, players)
    stones = first.stones
    match = Match(pair, game, rng, owner, [first, game.new(options, players)], shows_secret=lambda states: any(
        state.revealed_at[owner] is not None or game.outcome(state) is not None for state in states
    ))
    own_squares = [m.split()[1] for m in game.legal_moves(first, owner)]
    rival_squares = [m.split()[1] for m in game.legal_moves(first, rival)]
    x, y = rng.sample([s for s in own_squares if s not in FIXED_EXAMPLES], 2)
    z = rng.choice(rival_squares)
    pair.secrets = (frozenset({x}), frozenset({y}))
    match.untouchable = {x, y}

    def bob_errs() -> None:
        """bob sends a move the server must refuse."""
        state = match.states[0]
        to_move = game.to_move(state)
        wrong_colour = [s for s in own_squares if s not in match.untouchable]
        candidates = [
            move_subject(GAME, "bob", rng.choice(wrong_colour)),
            move_subject(GAME, "bob", f"{rng.choice(rival_squares)},{rng.choice(rival_squares)}"),
            move_subject(GAME, "bob", "pass"),
            move_subject(GAME, "bob", "z99"),
            move_subject(GAME, "bob", rng.choice(rival_squares), guard=match.moves_made + 1 + rng.randint(1, 5)),
        ]
        if rival not in to_move:  # out of turn (also while waiting for alice to hide)
            candidates.append(move_subject(GAME, "bob", rng.choice(rival_squares)))
            candidates.append(move_subject(GAME, "bob", f"hide {rng.choice(rival_squares)}"))
        elif match.moves_made < 2:  # bob has not hidden yet
            candidates.append(move_subject(GAME, "bob", "reveal"))
            candidates.append(move_subject(GAME, "bob", f"hide {rng.choice(wrong_colour)}"))
        else:
            candidates.append(move_subject(GAME, "bob", f"hide {rng.choice(rival_squares)}"))
            candidates.append(move_subject(GAME, "bob", z))  # his own hidden stone
            taken = [s for s in rival_squares if s not in game.legal_moves(state, rival) and s != z]
            if taken:  # a square holding his own stone
                candidates.append(move_subject(GAME, "bob", rng.choice(taken)))
            if "reveal" not in game.legal_moves(state, rival):
                candidates.append(move_subject(GAME, "bob", "reveal"))
        pair.expect_error("bob", rng.choice(candidates))

    challenge = " ".join(f"-{name}={value}" for name, value in options.items())
    pair.send("alice" if rng.random() < 0.5 else "carol", f"{GAME} challenge {challenge} {' '.join(players)}")
    subscribe_carol(pair)
    bob_errs()

    # the set-up, in either order; the hide is the one mail that differs
    for seat in rng.sample([owner, rival], 2):
        if seat == owner:
            match.move(owner, f"hide {x}", text_b=f"hide {y}", subject_b=move_subject(GAME, "alice", f"hide {y}"))
        else:
            match.move(rival, f"hide {z}")
        match.interlude(bob_errs, 0.5)

    # alice reveals on her n-th turn, or (half the games) only at the end
    reveal_turn = rng.randint(stones // 2, stones - 1) if rng.random() < 0.5 else None
    owner_turns = 0
    while not match.over:
        match.interlude(bob_errs, 0.35)
        if match.over:
            break
        (seat,) = match.to_move()
        choices = match.common_moves(seat)
        squares = [m for m in choices if not m.startswith("reveal")]
        if not squares:
            break  # only the secret squares are left for alice: the comparison ends here
        if seat == owner:
            # mostly on the lines of X and Y, so that alice often completes a
            # trick with her hidden stone (a secret completion) before revealing
            near = [m for m in squares if any(m[0] == s[0] or m[1:] == s[1:] for s in match.untouchable)]
            wants_reveal = owner_turns == reveal_turn
            owner_turns += 1
        else:
            near = []
            wants_reveal = rng.random() < 0.15
        if "reveal" in choices and wants_reveal:
            move = "reveal" if rng.random() < 0.5 else f"reveal,{rng.choice(squares)}"
        else:
            move = rng.choice(near if near and rng.random() < 0.6 else squares)
        subject, comment = turn_mail(rng, match.userid(seat), move, match.moves_made)
        # alice revealing, or the last stone (the final reveal): her stone shows
        # now, on X in run A and on Y in run B, so this mail is not compared
        if match.move(seat, move, comment, subject=subject):
            break
    match.finish()
    return match


def turn_mail(rng: random.Random, userid: str, move: str, moves_made: int) -> tuple[str, str]:
    """The subject of a move mail (sometimes with the #n guard, the move
    spelled in capitals) and its text (sometimes a comment)."""
    guard = moves_made + 1 if rng.random() < 0.2 else None
    comment = f"{userid} says: move {moves_made + 1}." if rng.random() < 0.1 else ""
    spelled = move.upper() if rng.random() < 0.2 else move
    return move_subject(GAME, userid, spelled, guard), comment
