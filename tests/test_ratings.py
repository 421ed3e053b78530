"""Ratings: the formulas, the commands, and at the service level what the transcript does
not show — established players, draws, forfeits by signing off, inactive
players, and nothing changed by a refused command."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from pbmserv.protocol import ParseError, parse_command, probable_passwords
from pbmserv.protocol.commands import History, Standings
from pbmserv.runtime import Runtime
from pbmserv.service.play.ratings import explained, new_rating, pair_score
from pbmserv.store.models import Rating, User
from tests.conftest import FakeClock
from tests.mailtools import body, send, signup

DRAWN_GAME = ("a3", "b3", "c3", "a2", "b2", "a1", "c2", "c1", "b1")


# -- formulas ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rating", "games", "results", "expected"),
    [
        (1600, 20, [(1600, 1.0)], 1616),  # Elo, K = 32
        (1600, 20, [(1600, 0.0)], 1584),
        (1600, 20, [(1600, 0.5)], 1600),
        (1600, 25, [(2000, 1.0)], 1629),  # an upset wins more
        (2000, 25, [(1600, 1.0)], 2003),
        (1600, 0, [(1600, 1.0)], 1800),  # provisional: (1600 + 2000) / 2
        (1600, 0, [(1600, 0.0)], 1400),
        (1600, 0, [(1600, 0.5)], 1600),
        (1800, 1, [(1400, 1.0)], 1800),  # a win never lowers a provisional rating
        (1400, 1, [(1800, 0.0)], 1400),  # a loss never raises it
        (1500, 4, [(1700, 0.5)], 1533),  # (1500 * 5 + 1700) / 6
        (1600, 0, [(1600, 1.0), (1600, 0.5)], 1700),  # three players: the average performance
    ],
)
def test_new_rating(rating: int, games: int, results: list[tuple[int, float]], expected: int) -> None:
    assert new_rating(rating, games, results) == expected


@given(
    st.integers(100, 3000), st.integers(0, 60),
    st.lists(st.tuples(st.integers(100, 3000), st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=5),
)
def test_the_explanation_of_a_change_ends_on_the_new_rating(rating: int, games: int, results: list[tuple[int, float]]) -> None:
    why = explained(rating, games, results)
    after = new_rating(rating, games, results)
    if games < 20:
        assert why.startswith(f"provisional, {games} rated game")
        assert f"({rating} x {games + 1} + performance " in why
        assert f"= {after}" in why or f"it stays {after}" in why
    else:
        assert why.startswith(f"Elo: {rating} + 32") and why.endswith(f") = {after}.")


@pytest.mark.parametrize(("rating", "games", "results", "why"), [
    (1600, 0, [(1600, 1.0)], "provisional, 0 rated games before: (1600 x 1 + performance 2000) / 2 = 1800; "
     "performance = the opponent's 1600 +400 for a win."),
    (2100, 5, [(1400, 1.0)], "provisional, 5 rated games before: (2100 x 6 + performance 1800) / 7 = 2057, but a win "
     "never lowers a provisional rating: it stays 2100; performance = the opponent's 1400 +400 for a win."),
    (1650, 25, [(1600, 0.0)], "Elo: 1650 + 32 x (score 0 - expected 0.57 against 1600) = 1632."),
])
def test_a_change_is_explained_with_its_numbers(rating: int, games: int, results: list[tuple[int, float]], why: str) -> None:
    assert explained(rating, games, results) == why


def test_pair_scores() -> None:
    assert (pair_score(0, 1, [0]), pair_score(1, 0, [0])) == (1.0, 0.0)
    assert pair_score(0, 1, []) == 0.5
    assert (pair_score(0, 1, [0, 1]), pair_score(0, 2, [0, 1])) == (0.5, 1.0)


# -- commands ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("toy standings", Standings("toy")),
        ("toy RATINGS", Standings("toy")),
        ("toy history", History("toy", None)),
        ("toy history Alice", History("toy", "alice")),
    ],
)
def test_parses(text: str, expected: object) -> None:
    assert parse_command(text, ("toy",)) == expected


@pytest.mark.parametrize(
    "text", ["toy standings all", "toy history alice bob", "toy history a"],
)
def test_refuses(text: str) -> None:
    with pytest.raises(ParseError):
        parse_command(text, ("toy",))


def test_no_passwords_in_the_queries() -> None:
    assert probable_passwords("toy history alice") == ()
    assert probable_passwords("toy standings") == ()


# -- the service ------------------------------------------------------------------
@pytest.fixture
def players(runtime: Runtime) -> Runtime:
    for userid in ("alice", "bob", "carol"):
        signup(runtime, userid, f"{userid}-pw")
    return runtime


#: two moves each and nobody wins yet: enough for a board to be rated
OPENING = ("a1", "b1", "c1", "b2")


def open_board(runtime: Runtime, board: int, first: str, second: str) -> None:
    for number, square in enumerate(OPENING):
        who = (first, second)[number % 2]
        send(runtime, f"{who}@example.org", f"toy move {board} {who} {who}-pw {square}")


def ratings_of(runtime: Runtime) -> dict[str, tuple[int, int, int, int]]:
    with runtime.sessions() as session:
        return {r.user.userid: (r.rating, r.won, r.lost, r.drawn) for r in session.scalars(select(Rating))}


def test_established_players_get_elo(players: Runtime) -> None:
    with players.sessions.begin() as session:
        for user in session.scalars(select(User).where(User.userid.in_(["alice", "bob"]))):
            session.add(Rating(user_id=user.id, game_type="toy", rating=1600, won=10, lost=10, drawn=0,
                               last_game_at=players.clock()))
    send(players, "alice@example.org", "toy challenge alice bob")
    open_board(players, 101, "alice", "bob")
    replies = dict(send(players, "bob@example.org", "toy resign 101 bob bob-pw"))
    assert (
        "alice 1600 -> 1616 (+16)\n"
        "    Elo: 1600 + 32 x (score 1 - expected 0.50 against 1600) = 1616.\n"
        "  bob 1600 -> 1584 (-16)\n"
        "    Elo: 1600 + 32 x (score 0 - expected 0.50 against 1600) = 1584.\n"
    ) in body(replies["alice@example.org"])
    assert ratings_of(players) == {"alice": (1616, 11, 10, 0), "bob": (1584, 10, 11, 0)}
    [(_, table)] = send(players, "carol@example.org", "toy standings")
    established = body(table).split("Established")[1].split("Provisional")[0]
    assert "alice" in established and "bob" in established


def test_boards_given_up_at_once_do_not_farm_a_rating(runtime: Runtime) -> None:
    """F12: one player's 15 other accounts each challenged and resigned at once: the farmer topped the standings."""
    sybils = [f"sybil{n}" for n in range(15)]
    for userid in ["farmer", *sybils]:
        signup(runtime, userid, f"{userid}-pw", f"{userid}@attacker.example")
    for number, sybil in enumerate(sybils, start=101):
        send(runtime, "farmer@attacker.example", f"toy challenge farmer {sybil}")
        send(runtime, f"{sybil}@attacker.example", f"toy move {number} {sybil} {sybil}-pw resign")
    assert ratings_of(runtime) == {}
    [(_, table)] = send(runtime, "farmer@attacker.example", "toy standings")
    assert "farmer" not in body(table)


def test_a_draw_counts_half(players: Runtime) -> None:
    send(players, "alice@example.org", "toy challenge alice bob")
    for number, square in enumerate(DRAWN_GAME):
        who = ("alice", "bob")[number % 2]
        replies = dict(send(players, f"{who}@example.org", f"toy move 101 {who} {who}-pw {square}"))
    assert "Game drawn" in body(replies["bob@example.org"])
    assert "alice 1600 -> 1600 (+0, provisional)" in body(replies["bob@example.org"])
    assert ratings_of(players) == {"alice": (1600, 0, 0, 1), "bob": (1600, 0, 0, 1)}


def test_signing_off_is_a_rated_loss(players: Runtime) -> None:
    send(players, "alice@example.org", "toy challenge alice bob")
    open_board(players, 101, "alice", "bob")
    replies = dict(send(players, "bob@example.org", "signoff bob bob-pw"))
    assert "alice 1600 -> 1800 (+200, provisional)" in body(replies["alice@example.org"])
    assert ratings_of(players) == {"alice": (1800, 1, 0, 0)}  # bob's row went with his account


def test_players_without_a_game_for_180_days_are_inactive(players: Runtime, clock: FakeClock) -> None:
    send(players, "alice@example.org", "toy challenge alice bob")
    open_board(players, 101, "alice", "bob")
    send(players, "bob@example.org", "toy resign 101 bob bob-pw")
    send(players, "alice@example.org", "toy challenge alice carol")
    clock.advance(days=170)
    open_board(players, 102, "alice", "carol")
    send(players, "carol@example.org", "toy resign 102 carol carol-pw")
    clock.advance(days=11)
    [(_, table)] = send(players, "carol@example.org", "toy ratings")
    provisional, inactive = body(table).split("Provisional")[1].split("Inactive")
    assert "alice" in provisional and "carol" in provisional and "bob" not in provisional
    assert "bob" in inactive


def test_history_is_newest_first_and_per_player(players: Runtime, clock: FakeClock) -> None:
    for opponent in ("bob", "carol"):
        send(players, "alice@example.org", f"toy challenge alice {opponent}")
        clock.advance(days=1)
    send(players, "alice@example.org", "toy resign 101 alice alice-pw")
    clock.advance(days=1)
    send(players, "alice@example.org", "toy resign 102 alice alice-pw")
    [(_, listing)] = send(players, "carol@example.org", "toy history")
    assert body(listing).index("  102  2026-01-08") < body(listing).index("  101  2026-01-07")
    [(_, listing)] = send(players, "carol@example.org", "toy history bob")
    assert "101" in body(listing) and "102" not in body(listing).split("\n", 1)[1]
