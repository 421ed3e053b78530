"""The traffic of `bad_mail_flood.py`: the flood's SMTP clients (a process
of their own), the relay that takes every mail serve sends (a process of
its own, logging each mail's arrival), and the ordinary player, who sends
a legal move every half second on a real board."""

from __future__ import annotations

import asyncio
import smtplib
import time
from collections import Counter
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser
from email.policy import compat32
from pathlib import Path
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from pbmserv.gamekit import get_game
from proofs.flood_mails import PLAYERS, FloodMails

SERVER = "pbmserv@localhost"
#: the flood's clients connect from here, the player from 127.0.0.1: per-client session limits apart
FLOOD_ADDRESS = "127.0.1.1"
#: the largest board (56 moves, a new board every ~28 s): the cap of 10 new boards an hour naming a player
#: is reached after ~5 minutes of moves; longer runs need more pairs of players (not done)
GAME, GAME_OPTIONS = "majorities", {"size": "7"}


# -- the flood -----------------------------------------------------------------------------


@dataclass
class Answers:
    """The server's answers to the flood's mails, by code, and the automatic mails it took (250)."""

    codes: Counter[str] = field(default_factory=Counter)
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    automatic_taken: int = 0
    reconnects: int = 0


async def _reply(reader: asyncio.StreamReader) -> bytes:
    line = await reader.readline()
    while line[3:4] == b"-":
        line = await reader.readline()
    if not line:
        raise ConnectionError("closed")
    return line


async def _session(mails: FloodMails, left: list[int], answers: Answers, port: int, sent: Any) -> None:
    """One SMTP client sending mail after mail, as an MTA would; a new
    connection whenever the server ends one. A 4xx is taken as the answer
    (a bad mail's sender may try again or not); each mail is sent once."""
    writer: asyncio.StreamWriter | None = None
    while left[0] > 0:
        if writer is None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(FLOOD_ADDRESS, 0))
            try:
                await _reply(reader)
                writer.write(b"EHLO flood.example\r\n")
                await _reply(reader)
            except ConnectionError:
                writer.close()
                writer = None
                answers.reconnects += 1
                await asyncio.sleep(0.05)
                continue
        left[0] -= 1
        mail = mails.next()
        code = "closed"
        try:
            writer.write(f"MAIL FROM:<{mail.envelope_sender}>\r\n".encode("latin-1"))
            code = (await _reply(reader))[:3].decode()
            if code.startswith("2"):
                writer.write(f"RCPT TO:<{SERVER}>\r\n".encode())
                code = (await _reply(reader))[:3].decode()
            if code.startswith("2"):
                writer.write(b"DATA\r\n")
                code = (await _reply(reader))[:3].decode()
            if code == "354":
                data = mail.raw.replace(b"\r\n.", b"\r\n..")
                writer.write((b"." if data.startswith(b".") else b"") + data + (b"" if data.endswith(b"\r\n") else b"\r\n") + b".\r\n")
                await writer.drain()
                code = (await _reply(reader))[:3].decode()
            elif not code.startswith("4"):
                writer.write(b"RSET\r\n")
                await _reply(reader)
        except (ConnectionError, OSError):
            writer.close()
            writer = None
            answers.reconnects += 1
        answers.codes[code] += 1
        answers.by_kind.setdefault(mail.kind, Counter())[code] += 1
        answers.automatic_taken += mail.automatic and code == "250"
        sent.value += 1
        if code == "421" and writer is not None:
            writer.close()
            writer = None
    if writer is not None:
        writer.write(b"QUIT\r\n")
        writer.close()


def flood(port: int, count: int, sessions: int, seed: int, max_bytes: int, sent: Any, results: Any) -> None:
    """The flood's process: `count` bad mails over `sessions` SMTP sessions at once, as fast as they are taken."""
    mails, left, answers = FloodMails(seed, max_bytes), [count], Answers()

    async def everyone() -> None:
        await asyncio.gather(*(_session(mails, left, answers, port, sent) for _ in range(sessions)))

    asyncio.run(everyone())
    results.put(answers)


# -- the relay: every mail serve sends --------------------------------------------------------


class RelayLog:
    """Logs each mail relayed: arrival (time.time()), Message-ID, In-Reply-To, recipients, Subject."""

    def __init__(self, path: Path):
        self.file = open(path, "a", buffering=1)
        self.parser = BytesHeaderParser(policy=compat32)

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.content if isinstance(envelope.content, bytes) else b""
        headers = self.parser.parsebytes(content)
        fields = [str(headers.get(name, "")).replace("\t", " ").replace("\n", " ").replace("\r", " ")
                  for name in ("Message-ID", "In-Reply-To", "Subject")]
        extra = [name for name in headers.keys() if name.lower() in ("bcc", "cc")]
        recipients = " ".join(envelope.rcpt_tos)
        self.file.write("\t".join([f"{time.time():.4f}", *fields, recipients, ",".join(extra)]) + "\n")
        return "250 OK"


def relay(port_out: Any, path: Path) -> None:
    """The relay's process: an aiosmtpd server on a free port (told through `port_out`), until killed."""

    async def serve() -> None:
        handler = RelayLog(path)
        server = await asyncio.get_running_loop().create_server(
            lambda: SMTP(handler, hostname="relay.localhost", data_size_limit=None), "127.0.0.1", 0,
        )
        port_out.value = server.sockets[0].getsockname()[1]
        await server.serve_forever()

    asyncio.run(serve())


@dataclass(frozen=True)
class Relayed:
    at: float
    message_id: str
    in_reply_to: str
    subject: str
    recipients: tuple[str, ...]
    copies: str  # Cc/Bcc header names, if any (there must be none)


def relayed(path: Path) -> list[Relayed]:
    found = []
    for line in path.read_text(errors="replace").splitlines():
        at, message_id, in_reply_to, subject, recipients, copies = (line.split("\t") + [""] * 6)[:6]
        found.append(Relayed(float(at), message_id.strip(), in_reply_to.strip(), subject, tuple(recipients.split()), copies))
    return found


# -- the player -------------------------------------------------------------------------------


@dataclass
class Player:
    """Pairs of players (alice and bob first) playing majorities boards,
    one move every `every` seconds, a new board for the next pair when one
    ends; the moves are chosen from the game's legal moves, as the server
    will see the board."""

    port: int
    passwords: dict[str, str]
    every: float = 0.5
    board: int = 101
    moves: dict[str, tuple[str, float]] = field(default_factory=dict)  # Message-ID -> (mover's address, time of its 250)
    refused: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.game = get_game(GAME)
        names = list(PLAYERS)
        self.pairs = [[first, second] for first, second in zip(names[::2], names[1::2])]
        self.first_board = self.board
        self.seats = self.pairs[0]
        self.state = self.game.new(GAME_OPTIONS, self.seats)
        self.number = 0

    def send(self, userid: str, subject: str, message_id: str) -> float | None:
        address = PLAYERS[userid]
        raw = (f"From: {address}\r\nTo: {SERVER}\r\nSubject: {subject}\r\nMessage-ID: <{message_id}>\r\n\r\n"
               "an ordinary move\r\n").encode()
        try:
            with smtplib.SMTP("127.0.0.1", self.port, timeout=60) as client:
                client.sendmail(address, [SERVER], raw)
                return time.time()  # at the 250, before QUIT
        except (smtplib.SMTPException, OSError) as error:
            self.refused.append(f"{subject}: {error}")
            return None

    def challenge(self) -> None:
        options = " ".join(f"-{name}={value}" for name, value in GAME_OPTIONS.items())
        first, second = self.seats
        self.send(first, f"{GAME} challenge {options} {first} {second}", f"challenge-{self.board}@player.example")

    def next_move(self) -> None:
        """The next legal move, sent; a new board (challenged) when this one is over."""
        if self.game.outcome(self.state) is not None:
            self.board += 1
            self.seats = self.pairs[(self.board - self.first_board) % len(self.pairs)]
            self.state = self.game.new(GAME_OPTIONS, self.seats)
            self.challenge()
            return
        seat = min(self.game.to_move(self.state))
        userid = self.seats[seat]
        moves = self.game.legal_moves(self.state, seat)
        self.number += 1
        move = moves[(self.number * 7919) % len(moves)]
        message_id = f"move-{self.board}-{self.number}@player.example"
        at = self.send(userid, f"{GAME} move {self.board} {userid} {self.passwords[userid]} {move}", message_id)
        if at is not None:
            self.moves[f"<{message_id}>"] = (PLAYERS[userid], at)
            self.state = self.game.play(self.state, seat, move)
