"""Reply addresses never reach anybody but their owner (issue 19, item 1).

Fifty random games, five to a server, spread over the six games of the
catalog, are played through the whole server (mail in, store, process,
deliver). Four players meet in random pairs; erin subscribes to some
boards, frank to every new board of some games. Each move is sent at
random as the full command with the password or as a reply from a mail
client to the player's reply address (the envelope recipient), its first
line the move, sometimes with a #n guard and a comment, the board quoted
below under an attribution line that names the address, sometimes as
HTML. Chats, `show`, illegal moves, moves on another's board, password
changes and resignations are mixed in.

Every delivered mail (its raw bytes, its headers and its decoded text) is
read for reply addresses: each must be genuine at the time it is sent, and
its seat's holder must be the account the mail goes to; erin and frank get
none. Every board mail to a player has that player's own address for that
board as its Reply-To. At the end no code ever sent appears in a mail to
anyone but its owner, in a row of `inbound_mails` or in an unsealed outbox
row (on SQLite: anywhere in the database file's bytes); every move sent
to a reply address is in the board's move list as that player's; every
address from before a password change is refused at the door.
"""

from __future__ import annotations

import html
import random
import re
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from itertools import count
from pathlib import Path

import pytest
from sqlalchemy import select

from pbmserv.gamekit import get_game
from pbmserv.mail.backends import MemoryBackend
from pbmserv.runtime import Runtime
from pbmserv.service.play.reply_addresses import ReplyToken, holds_reply_address, is_genuine
from pbmserv.store import records, users
from pbmserv.store.key import is_sealed
from pbmserv.store.models import InboundMail, OutboxMail
from pbmserv.store.spool import spool_file
from tests.conftest import FakeClock

GAMES = ("majorities", "majority", "parliament", "plurality", "psychomachia", "synch")
SERVERS = range(10)
GAMES_A_SERVER = 5
MOVES_A_GAME = 15
PLAYERS = ("alice", "bob", "carol", "dave")
SUBSCRIBER, FOLLOWER = "erin", "frank"  # erin follows some boards, frank every new board of some games
#: a reply address of the test server (`pbmserv@localhost`), anywhere in a text; the code is group 2
ADDRESS = re.compile(r"pbmserv\+([a-z][a-z0-9_]*-\d+-\d+)-([a-z0-9]{16})@localhost", re.IGNORECASE)
_numbers = count(1)


def address(userid: str) -> str:
    return f"{userid}@example.org"


def texts_of(data: bytes) -> str:
    """Everything a mail shows: its raw bytes, its decoded headers and the decoded text of its parts."""
    message = BytesParser(policy=policy.default).parsebytes(data)
    parts = [data.decode("latin-1"), *(f"{name}: {value}" for name, value in message.items())]
    parts += [str(part.get_content()) for part in message.walk() if part.get_content_maintype() == "text"]
    return "\n".join(parts)


@dataclass
class Game:
    """One board as the test sees it."""

    name: str
    number: int
    seats: list[str]
    by_reply: list[tuple[int, int, str]] = field(default_factory=list)  # (move number, seat, text)


@dataclass
class Server:
    runtime: Runtime
    rng: random.Random
    passwords: dict[str, str]
    mails: list[tuple[str, bytes]] = field(default_factory=list)  # every mail delivered
    owners: dict[str, str] = field(default_factory=dict)  # code -> userid it was made for
    #: (game, board, userid) -> the player's newest reply address there, and the board mail it came with
    replies: dict[tuple[str, int, str], tuple[str, EmailMessage]] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)  # addresses from before a password change

    def signup(self, userid: str) -> None:
        """Sign up and confirm the address by replying to the welcome."""
        out = self.send(userid, f"signup {userid} {self.passwords[userid]}")
        [welcome] = [str(m["Subject"]) for _, m in out if str(m["Subject"]).startswith(f"confirm {userid} ")]
        self.send(userid, f"Re: {welcome}")

    # -- sending and checking each mail ------------------------------------------------
    def send(self, sender: str, subject: str, text: str = "", *, to: str = "",
             html_body: bool = False) -> list[tuple[str, EmailMessage]]:
        message = EmailMessage(policy=policy.SMTP)
        message["From"] = address(sender)
        message["To"] = to or "pbmserv@localhost"
        message["Subject"] = subject
        message["Message-ID"] = f"<leak-{next(_numbers)}@example.org>"
        if html_body:
            message.set_content(text, subtype="html")
        else:
            message.set_content(text or "\n")
        return self.deliver(message.as_bytes(), to)

    def deliver(self, raw: bytes, recipient: str = "") -> list[tuple[str, EmailMessage]]:
        clock, backend = self.runtime.clock, self.runtime.backend
        assert isinstance(clock, FakeClock) and isinstance(backend, MemoryBackend)
        clock.advance(minutes=10)  # under the hourly reply caps
        backend.sent.clear()
        self.runtime.intake.store(raw, None, recipient)
        self.runtime.processor.process_pending()
        self.runtime.delivery.deliver_due()
        parser = BytesParser(policy=policy.default)
        out = []
        for to, data in backend.sent:
            self.check_mail(to, data)
            self.mails.append((to, data))
            out.append((to, parser.parsebytes(data)))
        return out

    def check_mail(self, recipient: str, data: bytes) -> None:
        """Each reply address in the mail is genuine now and is the recipient's own."""
        for match in ADDRESS.finditer(texts_of(data)):
            token = ReplyToken.read(f"{match.group(1)}-{match.group(2)}".lower())
            assert token is not None, f"a malformed reply address {match.group(0)} in a mail to {recipient}"
            with self.runtime.engine.connect() as connection:
                holder = users.seat_holder(connection, token.game, token.board, token.seat)
                assert holder is not None, f"a mail to {recipient} carries {match.group(0)}: no such seat"
                owned = records.confirmed_addresses(connection, [holder[0]])[holder[0]]
            assert is_genuine(self.runtime.intake.key, token, *holder), (
                f"a mail to {recipient} carries {match.group(0)}, which is not (or no longer) genuine:\n"
                f"{data.decode('latin-1')}"
            )
            assert recipient in owned, (
                f"{holder[0]}'s reply address {match.group(0)} reached {recipient}:\n{data.decode('latin-1')}"
            )
            assert holder[0] not in (SUBSCRIBER, FOLLOWER)
            self.owners[token.mac] = holder[0]

    def board_mails(self, game: Game, out: list[tuple[str, EmailMessage]]) -> None:
        """After a change of the board: each player got one board mail, from their own reply address."""
        for seat, userid in enumerate(game.seats):
            theirs = [message for to, message in out if to == address(userid)]
            assert len(theirs) == 1, f"{userid} got {len(theirs)} mails of {game.name} {game.number}"
            reply_to = str(theirs[0]["Reply-To"] or "")
            token = ReplyToken.read(reply_to.removeprefix("pbmserv+").removesuffix("@localhost"))
            assert token is not None, f"the board mail to {userid} has no reply address: {reply_to!r}"
            assert (token.game, token.board, token.seat) == (game.name, game.number, seat), reply_to
            assert self.owners[token.mac] == userid
            self.replies[game.name, game.number, userid] = (reply_to, theirs[0])
        for to, message in out:
            if to not in {address(userid) for userid in game.seats}:
                assert message["Reply-To"] is None, f"a mail to {to} has a Reply-To: {message['Reply-To']}"

    # -- what players do ------------------------------------------------------------------
    def reply(self, userid: str, game: Game, first_line: str, comment: str = "") -> list[tuple[str, EmailMessage]]:
        """userid answers their newest board mail of the board from a mail client."""
        to, board_mail = self.replies[game.name, game.number, userid]
        attribution = f"On Mon, 5 Jan 2026 at 10:{self.rng.randrange(60):02}, pbmserv <{to}> wrote:"
        quoted = board_mail.get_content().rstrip("\n").splitlines()
        subject = f"Re: {board_mail['Subject']}"
        if self.rng.random() < 0.3:
            text = (
                f"<html><body><p>{html.escape(first_line)}</p>"
                + (f"<p>{html.escape(comment)}</p>" if comment else "")
                + f"<div>{html.escape(attribution)}</div><blockquote><pre>{html.escape(chr(10).join(quoted))}"
                + "</pre></blockquote></body></html>"
            )
            return self.send(userid, subject, text, to=to, html_body=True)
        lines = [first_line, *([comment] if comment else []), "", attribution, *(f"> {line}" for line in quoted)]
        return self.send(userid, subject, "\n".join(lines) + "\n", to=to)

    def can_reply(self, userid: str, game: Game) -> bool:
        found = self.replies.get((game.name, game.number, userid))
        return found is not None and found[0] not in self.stale

    def board(self, game: Game) -> records.BoardRecord:
        with self.runtime.engine.connect() as connection:
            board = records.find_board(connection, game.name, game.number)
        assert board is not None
        return board

    def move(self, game: Game) -> None:
        """The player to move (one of them, in a game of set-ups or of simultaneous moves) plays a legal move."""
        rules, board = get_game(game.name), self.board(game)
        state = rules.decode(board.state)
        seat = self.rng.choice(sorted(rules.to_move(state)))
        userid, text = game.seats[seat], self.rng.choice(rules.legal_moves(state, seat))
        line = f"{text} #{board.move_count + 1}" if self.rng.random() < 0.2 else text
        comment = f"{userid} thinks hard." if self.rng.random() < 0.2 else ""
        by_reply = self.can_reply(userid, game) and (not game.by_reply or self.rng.random() < 0.6)
        if by_reply:
            out = self.reply(userid, game, line, comment)
            game.by_reply.append((board.move_count + 1, seat, text))
        else:
            out = self.send(userid, f"{game.name} move {game.number} {userid} {self.passwords[userid]} {line}", comment)
        assert self.board(game).move_count > board.move_count, f"{userid}'s {line!r} was refused: {[m.get_content() for _, m in out]}"
        self.board_mails(game, out)

    def aside(self, game: Game) -> None:
        """Something that leaves the board as it is: a chat, a show, an illegal or foreign move."""
        userid = self.rng.choice(game.seats)
        outsider = self.rng.choice([u for u in (*PLAYERS, SUBSCRIBER, FOLLOWER) if u not in game.seats])
        before = self.board(game).move_count
        choice = self.rng.randrange(6)
        if choice == 0 and self.can_reply(userid, game):
            self.reply(userid, game, "chat are you still there?", "It is your move, I think.")
        elif choice == 0:
            self.send(userid, f"{game.name} chat {game.number} {userid} {self.passwords[userid]}", "Good luck!")
        elif choice == 1 and self.can_reply(userid, game):
            (mail,) = self.reply(userid, game, "show")
            assert mail[0] == address(userid)
        elif choice == 1:
            self.send(outsider, f"{game.name} show {game.number}")
        elif choice == 2 and self.can_reply(userid, game):
            self.expect_error(userid, self.reply(userid, game, "zz99", "a typo"))
        elif choice == 2:
            self.expect_error(userid, self.send(
                userid, f"{game.name} move {game.number} {userid} {self.passwords[userid]} zz99"))
        elif choice == 3:
            self.expect_error(outsider, self.send(
                outsider, f"{game.name} move {game.number} {outsider} {self.passwords[outsider]} a1"))
        elif choice == 4:
            self.send(userid, f"{game.name} moves {game.number} {userid} {self.passwords[userid]}")
        else:
            self.send(outsider, "all show " + userid)
        assert self.board(game).move_count == before

    def expect_error(self, userid: str, out: list[tuple[str, EmailMessage]]) -> None:
        assert [(to, str(m["Subject"]).endswith("Error")) for to, m in out] == [(address(userid), True)], out

    def change_password(self, userid: str) -> None:
        """A player draws a new password: every reply address of theirs stops working at once."""
        old = [to for (_, _, holder), (to, _) in self.replies.items() if holder == userid and to not in self.stale]
        new = f"{self.passwords[userid]}x"
        out = self.send(userid, f"change password {userid} {self.passwords[userid]} {new}")
        assert {to for to, _ in out} == {address(userid)}, out  # the answer, and a board mail per running board
        assert all(message["Reply-To"] is not None for _, message in out[1:]), out
        self.passwords[userid] = new
        for to in old:
            assert self.runtime.intake.recipient_problem(to) is not None, f"{to} still works after a new password"
        self.stale.extend(old)

    def stale_move(self, game: Game) -> None:
        """A move to an address from before a password change (past the listener, as a pipe might) does nothing."""
        userid = next(u for u in game.seats if self.replies.get((game.name, game.number, u), ("",))[0] in self.stale)
        to, board_mail = self.replies[game.name, game.number, userid]
        before = self.board(game).move_count
        self.expect_error(userid, self.send(userid, f"Re: {board_mail['Subject']}", "resign\n", to=to))
        assert self.board(game).move_count == before


def play_server(server: Server, seed: int) -> list[Game]:
    rng = server.rng
    for userid in server.passwords:
        server.signup(userid)
    names = [GAMES[(seed * GAMES_A_SERVER + i) % len(GAMES)] for i in range(GAMES_A_SERVER)]
    for name in sorted(set(names)):
        if rng.random() < 0.5:
            server.send(FOLLOWER, f"{name} subscribe all {FOLLOWER} {server.passwords[FOLLOWER]}")
    games = []
    for name in names:
        seats = rng.sample(PLAYERS, 2)
        rules = get_game(name)
        assert rules.min_players <= 2 <= rules.max_players
        out = server.send(rng.choice([seats[0], SUBSCRIBER]), f"{name} challenge {' '.join(seats)}")
        number = records_newest(server, name)
        game = Game(name, number, seats)
        server.board_mails(game, out)
        if rng.random() < 0.6:
            server.send(SUBSCRIBER, f"{name} subscribe {number} {SUBSCRIBER} {server.passwords[SUBSCRIBER]}")
        games.append(game)
    changer = rng.choice(sorted({userid for game in games for userid in game.seats}))
    change_at = rng.randrange(10, GAMES_A_SERVER * MOVES_A_GAME // 2)
    running = {id(game): game for game in games}
    moves_left = {id(game): rng.randint(8, MOVES_A_GAME) for game in games}
    steps = 0
    while running:
        game = rng.choice(list(running.values()))
        if rng.random() < 0.3:
            server.aside(game)
        if steps == change_at:
            server.change_password(changer)
            stale_boards = [g for g in games if changer in g.seats and server.board(g).result is None]
            if stale_boards:
                server.stale_move(rng.choice(stale_boards))
        steps += 1
        if moves_left[id(game)] == 0 or server.board(game).result is not None:
            if server.board(game).result is None and rng.random() < 0.5:
                resign(server, game)
            del running[id(game)]
            continue
        server.move(game)
        moves_left[id(game)] -= 1
    return games


def records_newest(server: Server, name: str) -> int:
    with server.runtime.engine.connect() as connection:
        number = records.newest_board_number(connection, name)
    assert number is not None
    return number


def resign(server: Server, game: Game) -> None:
    seat = server.rng.randrange(2)
    userid = game.seats[seat]
    if server.can_reply(userid, game):
        out = server.reply(userid, game, "resign", "Enough for today.")
    else:
        out = server.send(userid, f"{game.name} resign {game.number} {userid} {server.passwords[userid]}")
    assert server.board(game).result is not None, out
    server.board_mails(game, out)


# -- the checks after the games ---------------------------------------------------------
def check_mails_reached_owners_only(server: Server) -> None:
    """Every code sent, in any form, only ever reached its owner's address."""
    assert server.owners
    for to, data in server.mails:
        text = texts_of(data).lower()
        for code, owner in server.owners.items():
            assert code not in text or to == address(owner), (
                f"{owner}'s reply code {code} reached {to}:\n{data.decode('latin-1')}"
            )
        if to in (address(SUBSCRIBER), address(FOLLOWER)):
            assert not ADDRESS.search(text), f"a reply address reached {to}"


def check_moves_by_reply(server: Server, games: list[Game]) -> None:
    for game in games:
        assert game.by_reply, f"no move of {game.name} {game.number} was played through a reply address"
        board = server.board(game)
        with server.runtime.engine.connect() as connection:
            played = {move.number: move for move in records.board_moves(connection, board.id)}
        for number, seat, text in game.by_reply:
            assert (played[number].seat, played[number].text) == (seat, text), (game.name, game.number, number)


def check_stored(server: Server) -> None:
    codes = [code.encode() for code in server.owners]
    with server.runtime.engine.connect() as connection:
        inbound = connection.execute(select(InboundMail.raw, InboundMail.sealed, InboundMail.status,
                                            InboundMail.reply_token)).all()
        outbox = connection.execute(select(OutboxMail.raw)).all()
    assert any(row.reply_token for row in inbound)
    for row in inbound:
        assert row.status != "pending" and row.sealed is None
        kept = bytes(row.raw) + row.reply_token.encode()
        assert not any(code in kept.lower() for code in codes), f"an inbound row keeps a code: {kept!r}"
    sealed = 0
    for (raw,) in outbox:
        raw = bytes(raw)
        if is_sealed(raw):
            sealed += 1
            continue
        assert not holds_reply_address(raw.decode("latin-1")), f"an outbox row keeps a reply address: {raw!r}"
        assert not any(code in raw.lower() for code in codes)
    assert sealed > 0
    database = server.runtime.engine.url.database
    if server.runtime.engine.dialect.name != "sqlite" or database is None:
        return
    for path in (Path(database), Path(f"{database}-wal"), spool_file(database)):
        if path.exists():
            stored = path.read_bytes().lower()
            leaked = [code for code in codes if code in stored]
            assert not leaked, f"{path.name} holds the reply codes {leaked}"


@pytest.mark.parametrize("seed", SERVERS)
def test_reply_addresses_reach_their_owners_only(seed: int, runtime: Runtime) -> None:
    rng = random.Random(f"reply addresses {seed}")
    passwords = {userid: f"pw-{userid}-{seed}" for userid in (*PLAYERS, SUBSCRIBER, FOLLOWER)}
    server = Server(runtime, rng, passwords)
    games = play_server(server, seed)
    assert len(games) == GAMES_A_SERVER
    assert server.stale, "no reply address went stale with a password change"
    check_mails_reached_owners_only(server)
    check_moves_by_reply(server, games)
    check_stored(server)


# -- a reply address its owner writes into what is passed on ------------------------------
#: (subject, body, whether to the reply address) of a mail of alice's that names her reply address (ADDR)
PASSED_ON = {
    "move comment by reply": ("Re: Toy Board 101 alice", "b2\nWrite to ADDR if you like.\n", True),
    "chat by reply": ("Re: Toy Board 101 alice", "chat my board address is ADDR\n", True),
    "chat": ("toy chat 101 alice pw-alice", "my board address is ADDR\n", False),
    "message": ("message alice pw-alice bob", "my board address is ADDR\n", False),
}


@pytest.mark.parametrize("case", PASSED_ON)
def test_reply_address_written_in_a_body_is_not_passed_on(case: str, runtime: Runtime) -> None:
    server = Server(runtime, random.Random(case), {userid: f"pw-{userid}" for userid in ("alice", "bob", SUBSCRIBER)})
    for userid in server.passwords:
        server.signup(userid)
    game = Game("toy", 101, ["alice", "bob"])
    server.board_mails(game, server.send("alice", "toy challenge alice bob"))
    server.send(SUBSCRIBER, f"toy subscribe 101 {SUBSCRIBER} pw-{SUBSCRIBER}")
    own = server.replies["toy", 101, "alice"][0]
    subject, text, by_reply = PASSED_ON[case]
    out = server.send("alice", subject, text.replace("ADDR", own), to=own if by_reply else "")
    assert {to for to, _ in out} > {address("alice")}, "the mail was passed on to nobody: the case tests nothing"
