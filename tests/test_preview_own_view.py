"""`preview` in psychomachia and parliament plays from the previewer's own
view (`Game.known_to`): their own secrets known, the opponent's left out.
It answers where it used to be refused, and its answer is the same whatever
the opponent's secrets are."""

from __future__ import annotations

import random
from typing import Any

import pytest

from games.majority import MajorityState, Psychomachia
from games.parliament import Parliament
from pbmserv.gamekit import Game
from pbmserv.runtime import Runtime
from tests.mailtools import body, send, signup

PSYCHE = Psychomachia()
PARLIAMENT = Parliament()
PLAYERS = ["alice", "bob"]
UNKNOWN_TO_IT = "The other players' hidden parts are unknown to the preview"


def flat(text: str) -> str:
    """`text` with its lines joined, for sentences that a mail wraps."""
    return " ".join(text.split())


def sign_up(runtime: Runtime) -> None:
    for userid in PLAYERS:
        signup(runtime, userid, f"{userid}-pw")


def play(runtime: Runtime, game: str, board: int, moves: list[tuple[str, str]]) -> None:
    for userid, move in moves:
        replies = send(runtime, f"{userid}@example.org", f"{game} move {board} {userid} {userid}-pw {move}")
        assert all("Error" not in message["Subject"] for _, message in replies), move


def preview(runtime: Runtime, game: str, board: int, userid: str, moves: str) -> tuple[str, str]:
    """The subject and body of the one reply to a preview, board numbers written as 101."""
    [(to, message)] = send(runtime, f"{userid}@example.org", f"{game} preview {board} {userid} {userid}-pw {moves}")
    assert to == f"{userid}@example.org"
    as_101 = f"{board}", "101"
    return str(message["Subject"]).replace(*as_101), body(message).replace(*as_101)


# -- psychomachia -------------------------------------------------------------------------
def psychomachia_board(runtime: Runtime, alice_hides: str) -> int:
    """alice (White) and bob (Black) have hidden their stones and placed a few;
    bob is to move. Returns the board's number."""
    [(_, message), _] = send(runtime, "alice@example.org", "psychomachia challenge -size=6 -stones=6 alice bob")
    board = int(str(message["Subject"]).split()[-1])
    play(runtime, "psychomachia", board, [
        ("bob", "hide d5"), ("alice", f"hide {alice_hides}"), ("alice", "c1"), ("bob", "b1"), ("alice", "b2"),
    ])
    return board


def test_psychomachia_previews_answer_while_the_opponent_s_stone_is_hidden(runtime: Runtime) -> None:
    sign_up(runtime)
    board = psychomachia_board(runtime, "a1")
    subject, text = preview(runtime, "psychomachia", board, "bob", "f1; e1")
    assert subject == "Psychomachia Board 101 preview"
    assert UNKNOWN_TO_IT in flat(text)
    assert "It would be bob's turn." in text
    # bob's own hidden stone is there (b, to him), alice's is not: e1 does not complete row 1 for her
    assert "5 : . : b : . 5  ." in text and "1 : B W . W<B 1  ." in text
    # alice's own view keeps her own stone: she may not play on it, and with it e1 completes row 1
    _, refused = preview(runtime, "psychomachia", board, "alice", "f1; a1")
    assert "a1 holds your hidden stone" in flat(refused)
    _, completed = preview(runtime, "psychomachia", board, "alice", "f1; e1")
    assert "1 w B W . W<B 1  w" in completed


def test_a_preview_cannot_reveal_the_opponent_s_stone(runtime: Runtime) -> None:
    sign_up(runtime)
    board = psychomachia_board(runtime, "a1")
    subject, text = preview(runtime, "psychomachia", board, "bob", "f1; reveal,e1")
    assert subject == "Psychomachia Board 101 Error"
    assert "Preview move 2 ('reveal,e1', by alice) is not legal: alice's hidden stone is on a square this preview" in flat(text)


PSYCHOMACHIA_PREVIEWS = (
    "f1; e1",  # the real e1 is alice's hidden stone on one board, completes row 1 on the other
    "f1; a1; d1",
    "f1; reveal",
    "f1; e1; d1; a3; a2; c3; c2; e3; reveal,e2",  # to the end of the game
    "reveal; f1; e1",
)


def test_psychomachia_previews_tell_nothing_of_the_opponent_s_hidden_stone(runtime: Runtime) -> None:
    sign_up(runtime)
    first, second = psychomachia_board(runtime, "a1"), psychomachia_board(runtime, "e1")
    for moves in PSYCHOMACHIA_PREVIEWS:
        assert preview(runtime, "psychomachia", first, "bob", moves) == preview(runtime, "psychomachia", second, "bob", moves)
    # the last preview but one plays to the end: alice's stone is never revealed there, nor scored
    _, text = preview(runtime, "psychomachia", first, "bob", PSYCHOMACHIA_PREVIEWS[-2])
    assert "The game would be won by" in text and "alice's hidden stone is not revealed yet." in flat(text)


# -- parliament ---------------------------------------------------------------------------
def parliament_board(runtime: Runtime, alice_prefers: str) -> int:
    """alice (Red) and bob (Blue) have chosen preferences (g7 cancels) and
    claimed a seat each; alice is to move. Returns the board's number."""
    [(_, message), _] = send(runtime, "alice@example.org", "parliament challenge -boards=upper alice bob")
    board = int(str(message["Subject"]).split()[-1])
    play(runtime, "parliament", board, [
        ("bob", "prefer d4,g7"), ("alice", f"prefer {alice_prefers}"), ("alice", "e4"), ("bob", "f5"),
    ])
    return board


def test_parliament_previews_answer_while_the_opponent_s_preferences_are_hidden(runtime: Runtime) -> None:
    sign_up(runtime)
    board = parliament_board(runtime, "c4,h5,g7")
    subject, text = preview(runtime, "parliament", board, "bob", "e5; h5")
    assert subject == "Parliament Board 101 preview"
    assert UNKNOWN_TO_IT in flat(text)
    assert "It would be alice's turn." in text
    # h5, alice's hidden preference, is an ordinary seat to bob's preview; his own d4 is his
    assert "5 .  .  .  .  R  B  .  B< .  .  5" in text and "4 .  .  .  b? R  .  .  .  .  .  4" in text
    assert "Named as a preference by both players, so an ordinary seat: g7." in text
    # alice's own view keeps her preferences: she may not claim one, and bob claiming one reveals it
    _, refused = preview(runtime, "parliament", board, "alice", "h5")
    assert "h5 holds your own hidden preference" in flat(refused)
    _, revealed = preview(runtime, "parliament", board, "alice", "e5; h5")
    assert "claimed h5, a hidden preference of alice: it is revealed" in flat(revealed)


PARLIAMENT_PREVIEWS = (
    "e5; h5",  # h5 is alice's hidden preference on one board only
    "c4",  # alice's own preference on one board: refused there in a real move
    "b2; i6; g7",
    "e5; d4",  # bob's own preference: claimed by alice, it is revealed
    "e5; e5",
)


def test_parliament_previews_tell_nothing_of_the_opponent_s_preferences(runtime: Runtime) -> None:
    sign_up(runtime)
    first, second = parliament_board(runtime, "c4,h5,g7"), parliament_board(runtime, "b2,i6,g7")
    for moves in PARLIAMENT_PREVIEWS:
        assert preview(runtime, "parliament", first, "bob", moves) == preview(runtime, "parliament", second, "bob", moves)


def test_a_preview_in_the_set_up_does_not_cancel_against_the_opponent_s_choice(runtime: Runtime) -> None:
    sign_up(runtime)
    previews: list[tuple[str, str]] = []
    for alice_prefers in ("h5", "none"):
        send(runtime, "alice@example.org", "parliament challenge -boards=upper alice bob")
        board = 101 + len(previews)
        play(runtime, "parliament", board, [("alice", f"prefer {alice_prefers}")])
        previews.append(preview(runtime, "parliament", board, "bob", "prefer h5; h5"))
    assert previews[0] == previews[1]
    # alice's h5, if she named it, is unknown: bob's own h5 stands, and her claim there reveals it
    assert "claimed h5, a hidden preference of bob: it is revealed as Blue's" in flat(previews[0][1])


# -- the games' own view, over random games ----------------------------------------------------
def random_record(game: Game, options: dict[str, str], seed: int) -> list[tuple[int, str]]:
    rng = random.Random(seed)
    state = game.new(options, PLAYERS)
    record = []
    while game.outcome(state) is None:
        seat = rng.choice(sorted(game.to_move(state)))
        move = rng.choice(game.legal_moves(state, seat))
        record.append((seat, move))
        state = game.play(state, seat, move)
    return record


def still_secret(state: Any, owner: int) -> bool:
    """Whether `owner`'s secret set-up move is still hidden from the opponent."""
    if isinstance(state, MajorityState):
        return state.revealed_at[owner] is None
    return set(state.live_preferences(owner)) <= set(state.hidden()) or state.in_setup


def twins(game: Game, options: dict[str, str], seed: int, owner: int) -> list[tuple[Any, Any]]:
    """The positions of a random game, each beside the same position with
    `owner`'s secret set-up move changed to one naming a square or seat
    nobody plays, as long as that secret is hidden in both."""
    record = random_record(game, options, seed)
    secret = next(index for index, (seat, _) in enumerate(record) if seat == owner)
    named = {word for _, move in record for word in move.replace(",", " ").split()}
    other = random.Random(seed).choice([
        move for move in game.legal_moves(game.new(options, PLAYERS), owner) if move.split()[-1] not in named
    ])
    pairs = []
    first = second = game.new(options, PLAYERS)
    for index, (seat, move) in enumerate(record):
        first, second = game.play(first, seat, move), game.play(second, seat, other if index == secret else move)
        if not (still_secret(first, owner) and still_secret(second, owner)):
            break
        pairs.append((first, second))
    return pairs


@pytest.mark.parametrize(("game", "options"), [
    (PSYCHE, {"size": "6", "stones": "10"}), (PSYCHE, {}), (PARLIAMENT, {"boards": "upper"}), (PARLIAMENT, {"boards": "both"}),
], ids=["psychomachia-6", "psychomachia-10", "parliament-upper", "parliament-both"])
@pytest.mark.parametrize("seed", range(4))
def test_the_known_state_is_what_the_viewer_sees_and_the_same_whatever_the_opponent_s_secret(
    game: Game, options: dict[str, str], seed: int,
) -> None:
    owner = seed % 2
    viewer = 1 - owner
    pairs = twins(game, options, seed, owner)
    assert len(pairs) > 2
    for first, second in pairs:
        known = game.known_to(first, viewer)
        assert known == game.known_to(second, viewer)
        assert game.render(known, viewer) == game.render(first, viewer)
        assert game.known_to(known, viewer) == known
        for mover in sorted(game.to_move(known)):
            for move in game.legal_moves(known, mover)[:6]:
                game.render(game.play(known, mover, move), viewer)
