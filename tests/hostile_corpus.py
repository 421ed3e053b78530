"""Hostile mail for pbmserv (issue 16): the attacks that were seen to stop
the server, damage its data or make it mail thousands, as RFC 5322 bytes,
in the order `tests/test_hostile_corpus.py` replays them over SMTP between
two real players' moves.

Every builder is deterministic (the fuzz mail draws from a seeded
`random.Random`), so the same bytes come out each time. The replay
(`replay()`) is: the players' set-up, a restart of the server (once all
before it is processed: a restart is when the guess limiting of 16cc280
locked a player out), then the attacks with the players' moves among
them. `python -m tests.hostile_corpus OUTDIR` writes the replay as numbered
.eml files with the envelope sender in the file name's companion list
`OUTDIR/envelopes.txt`, for replaying by hand, e.g. with swaks:
`swaks --server 127.0.0.1:2525 --to pbmserv@localhost --from SENDER --data FILE`
(swaks cannot send the NUL in `h3-nul-envelope`'s MAIL FROM).

Toy board numbers are given in processing order: set-up makes toy boards
101 and 102, the `h1-change-address-board-mail` attack 103 to 106, and
only then does `l-forged-from-passes-reject` make another, so nothing
before them may start a toy board.
"""

from __future__ import annotations

import base64
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SERVER = "pbmserv@localhost"
CRLF = "\r\n"


@dataclass(frozen=True)
class Player:
    userid: str
    address: str
    password: str


ALICE = Player("alice", "alice@example.org", "secret1")
BOB = Player("bob", "bob@example.org", "secret2")
PLAYERS = (ALICE, BOB)
#: alice (X, moving first) against bob, both made at set-up
TOY_BOARDS = (101, 102)
MAJORITIES_BOARD = 101
#: a drawn game of noughts and crosses, X first: nine moves, no line of three
DRAWN_GAME = ("b2", "a1", "c1", "a3", "a2", "c2", "b1", "b3", "c3")
#: alice's first move on the majorities board: the move sent with her right password after the guessing
ALICE_MAJORITIES_MOVE = "a1"


@dataclass(frozen=True)
class Mail:
    name: str  # unique within the replay: the .eml file's name
    raw: bytes
    envelope_sender: str  # MAIL FROM, sent as it is (it may hold a NUL)
    #: intake may refuse it (5xx): it holds what cannot be stored (a NUL)
    refusable: bool = False


@dataclass(frozen=True)
class Attack:
    name: str
    finding: str  # the finding of issue 16 it reproduces: C1, C3, H1, H2, H3, H4, M1, L
    summary: str  # what it attacks, in a line
    mails: tuple[Mail, ...]
    #: the mails are sent at the same time (several SMTP sessions), not one after another
    concurrent: bool = False


@dataclass(frozen=True)
class PlayerMail:
    """A mail of alice or bob; with `board`, a move that must be answered
    with the board mail to both players."""

    player: Player
    mail: Mail
    game: str = ""
    board: int = 0


@dataclass(frozen=True)
class Restart:
    """`serve` is stopped (SIGTERM) and started again here."""

    reason: str


Step = Attack | PlayerMail | Restart


# -- making mails -------------------------------------------------------------------


def fold(name: str, value: str, width: int = 76) -> str:
    """A header line folded at spaces into lines of about `width` characters (RFC 5322 2.2.3)."""
    lines, line = [], f"{name}:"
    for word in value.split(" "):
        if len(line) + 1 + len(word) > width and line.strip():
            lines.append(line)
            line = ""
        line += " " + word
    return CRLF.join([*lines, line])


def raw_mail(
    sender: str, subject: str, body: str | bytes = "", *, message_id: str,
    headers: tuple[tuple[str, str], ...] = (), content_type: str = "text/plain; charset=us-ascii",
) -> bytes:
    """A mail's bytes with CRLF line ends, each header as given (folded
    only when long); `headers` come after From, To, Subject and Message-ID."""
    head = [
        f"From: {sender}", f"To: {SERVER}", fold("Subject", subject), f"Message-ID: <{message_id}>",
        "Date: Mon, 05 Jan 2026 09:00:00 +0000", *(f"{name}: {value}" for name, value in headers),
        "MIME-Version: 1.0",
    ]
    if content_type:
        head.append(f"Content-Type: {content_type}")
    text = body if isinstance(body, bytes) else body.replace("\r\n", "\n").replace("\n", CRLF).encode()
    return (CRLF.join(head) + CRLF + CRLF).encode("latin-1") + text + (b"" if text.endswith(b"\r\n") else b"\r\n")


def simple(name: str, sender: str, subject: str, body: str = "", **kwargs: Any) -> Mail:
    """A mail whose envelope sender is its From address."""
    return Mail(name, raw_mail(sender, subject, body, message_id=f"{name}@hostile.example", **kwargs), sender)


def lines(count: int, make: Callable[[int], str]) -> str:
    return "".join(make(n) + "\n" for n in range(count))


# -- C1: one mail stops all processing ------------------------------------------------


def nested_multipart() -> Attack:
    """C1: ~1,000 nested multipart/mixed parts (~66 KB) made the stdlib
    parser raise RecursionError before the processor's failure handling:
    the worker retried the same mail for ever and processed nothing else."""
    depth = 1000
    head = "".join(f"--b{n}\r\nContent-Type: multipart/mixed; boundary=\"b{n + 1}\"\r\n\r\n" for n in range(depth))
    tail = "".join(f"--b{n}--\r\n" for n in reversed(range(depth + 1)))
    body = head + f"--b{depth}\r\nContent-Type: text/plain\r\n\r\nhelp\r\n" + tail
    mail = simple(
        "c1-nested-multipart", "c1-nested@attacker.example", "help", body,
        content_type='multipart/mixed; boundary="b0"',
    )
    return Attack("c1-nested-multipart", "C1", "MIME depth: parser recursion before the failure handling", (mail,))


def nested_rfc822() -> Attack:
    """C1: ~1,000 nested message/rfc822 parts (~32 KB): the same
    RecursionError as nested multiparts, at half the size."""
    depth = 1000
    body = "Content-Type: message/rfc822\r\n\r\n" * depth + "Subject: help\r\n\r\nhelp\r\n"
    mail = simple("c1-nested-rfc822", "c1-rfc822@attacker.example", "help", body, content_type="message/rfc822")
    return Attack("c1-nested-rfc822", "C1", "MIME depth through attached mails", (mail,))


def sibling_parts() -> Attack:
    """C1: 5,000 sibling text parts (~190 KB) in one multipart: part count
    must be bounded before parsing, not only depth."""
    parts = "".join(f"--s\r\nContent-Type: text/plain\r\n\r\nhelp {n}\r\n" for n in range(5000))
    mail = simple(
        "c1-sibling-parts", "c1-siblings@attacker.example", "help", parts + "--s--\r\n",
        content_type='multipart/mixed; boundary="s"',
    )
    return Attack("c1-sibling-parts", "C1", "MIME part count", (mail,))


def many_headers() -> Attack:
    """C1: 10,000 header lines (~210 KB): header count must be bounded
    before parsing."""
    headers = tuple((f"X-Junk-{n}", "x" * 8) for n in range(10000))
    mail = simple("c1-many-headers", "c1-headers@attacker.example", "help", headers=headers)
    return Attack("c1-many-headers", "C1", "header count", (mail,))


def many_lines() -> Attack:
    """C1: 80,000 one-character lines (~240 KB) as a move's comment: line
    count must be bounded before parsing and quoting."""
    mail = simple("c1-many-lines", "c1-lines@attacker.example", "toy show 101", "x\n" * 80000)
    return Attack("c1-many-lines", "C1", "line count", (mail,))


# -- C3: amplification -------------------------------------------------------------------


def junk_lines_to_victim() -> Attack:
    """C3: a ~6 KB `multiple` mail of 2,000 junk lines with a forged
    Reply-To sent 2,000 error mails (21 MB), each quoting the whole mail,
    to the victim: caps did not count the mail's own replies."""
    mail = simple(
        "c3-junk-lines-reply-to", "c3-junk@attacker.example", "multiple", "z\n" * 2000,
        headers=(("Reply-To", "victim@outside.example"),),
    )
    return Attack("c3-junk-lines-reply-to", "C3", "one error mail per line, to a forged Reply-To", (mail,))


def show_500_lines() -> Attack:
    """C3: `majorities show 101` on 500 lines of one `multiple` mail sent
    500 board mails (to a forged Reply-To here)."""
    mail = simple(
        "c3-show-500-lines", "c3-show@attacker.example", "multiple",
        lines(500, lambda n: f"majorities show {MAJORITIES_BOARD}"),
        headers=(("Reply-To", "victim-show@outside.example"),),
    )
    return Attack("c3-show-500-lines", "C3", "commands per mail: one board mail per line", (mail,))


def show_500_boards() -> Attack:
    """C3: one `show` naming board 101 500 times (in a folded Subject):
    boards per `show` must be bounded."""
    subject = f"majorities show {' '.join([str(MAJORITIES_BOARD)] * 500)}"
    mail = simple(
        "c3-show-500-boards", "c3-show-line@attacker.example", subject,
        headers=(("Reply-To", "victim-show-line@outside.example"),),
    )
    return Attack("c3-show-500-boards", "C3", "boards per show", (mail,))


#: command-like lines the fuzz mail mixes with random bytes
_FUZZ_COMMANDS = (
    "help", "list", "majorities show 101", "toy show 101 102", "toy games alice", "majorities standings",
    "signup fuzz{n} fuzzpw{n} fuzz{n}@outside.example", "toy move 101 alice guess{n} b2",
    "message alice secret{n} bob", "change address bob pw{n} fuzz{n}@outside.example", "toy history alice",
    "majorities move 101 bob x{n} a1", "all show alice", "toy chat 101 bob pw{n}",
)
#: any byte but the line ends
_FUZZ_BYTES = bytes(byte for byte in range(256) if byte not in b"\r\n")


def fuzz() -> Attack:
    """C3: ~118 KB of random bytes mixed with command-like lines in a
    `multiple` mail (seed 16): made 9,205 mails (1.25 GB) and took the
    worker to 2.4 GB of memory, each error quoting the whole mail."""
    generator = random.Random(16)
    body = bytearray()
    n = 0
    while len(body) < 118 * 1024:
        n += 1
        if generator.random() < 0.4:
            line = generator.choice(_FUZZ_COMMANDS).format(n=n).encode()
        else:
            line = bytes(generator.choice(_FUZZ_BYTES) for _ in range(generator.randint(1, 120)))
        body += line + b"\r\n"
    raw = raw_mail(
        "c3-fuzz@attacker.example", "multiple", bytes(body), message_id="c3-fuzz@hostile.example",
        headers=(("Reply-To", "victim-fuzz@outside.example"), ("Content-Transfer-Encoding", "8bit")),
        content_type="text/plain; charset=utf-8",
    )
    mail = Mail("c3-fuzz", raw, "c3-fuzz@attacker.example")
    return Attack("c3-fuzz", "C3", "random bytes and commands: every amplification at once", (mail,))


# -- H1: a relay for attacker text ---------------------------------------------------------


def signup_thousands_of_addresses() -> Attack:
    """H1: one `signup` naming 5,000 unconfirmed addresses (~125 KB in a
    folded Subject) sent each a welcome mail listing them all (647 MB)."""
    addresses = " ".join(f"relay{n:04}@victims.example" for n in range(5000))
    mail = simple("h1-signup-5000-addresses", "h1-spammer@attacker.example", f"signup spammer spammerpw {addresses}")
    return Attack("h1-signup-5000-addresses", "H1", "addresses per account, unconfirmed addresses", (mail,))


def sixty_forged_signups() -> Attack:
    """H1: 60 signups from 60 forged senders, each naming the same victim:
    60 mails to the victim (caps were per sender, not per recipient)."""
    mails = tuple(
        simple(
            f"h1-forged-signup-{n:02}", f"forger{n:02}@attacker.example",
            f"signup forged{n:02} forgedpw{n:02} victim-signup@outside.example",
        )
        for n in range(60)
    )
    return Attack("h1-forged-signups", "H1", "per-recipient bound across senders", mails)


def message_spam() -> Attack:
    """H1: `message` relays any text to every address of an account: an
    account of 100 victims' addresses, messaged 40 times (with alice),
    sends 4,000 spam mails and a copy of each to the sender."""
    mallory = "mallory@attacker.example"
    hoard = " ".join(f"hoard{n:03}@victims.example" for n in range(100))
    mails = [
        simple("h1-message-mallory", mallory, "signup mallory mallorypw"),
        simple("h1-message-hoard", mallory, f"signup hoard hoardpw {hoard}"),
    ]
    mails += [
        simple(
            f"h1-message-{n:02}", mallory, f"message mallory mallorypw hoard {ALICE.userid}",
            f"CHEAP WATCHES {n}: http://spam.example/{n}\nClick now!\n",
        )
        for n in range(40)
    ]
    return Attack("h1-message-spam", "H1", "message/broadcast rate, unconfirmed addresses", tuple(mails))


def change_address_to_victim() -> Attack:
    """H1 (and M3): two accounts change their addresses to a victim's
    (one first keeping its own, which failed with IntegrityError on
    16cc280) and play four boards against each other: 36 board mails to
    the victim. Makes toy boards 103 to 106."""
    trudy, trudy2 = "trudy@attacker.example", "trudy2@attacker.example"
    victim = "victim-board@outside.example"
    mails = [
        simple("h1-board-signup-trudy", trudy, "signup trudy trudypw"),
        simple("h1-board-signup-trudy2", trudy2, "signup trudy2 trudy2pw"),
    ]
    boards = range(103, 107)
    mails += [simple(f"h1-board-challenge-{board}", trudy, "toy challenge trudy trudy2") for board in boards]
    mails += [
        simple("h1-board-change-keeping", trudy2, f"change address trudy2 trudy2pw {trudy2} {victim}"),
        simple("h1-board-change-trudy", trudy, f"change address trudy trudypw {victim}"),
        simple("h1-board-change-trudy2", trudy2, f"change address trudy2 trudy2pw {victim}"),
    ]
    for board in boards:
        for number, square in enumerate(DRAWN_GAME):
            who, password = (("trudy", trudy), "trudypw") if number % 2 == 0 else (("trudy2", trudy2), "trudy2pw")
            mails.append(simple(
                f"h1-board-move-{board}-{number + 1}", who[1], f"toy move {board} {who[0]} {password} {square}",
            ))
    return Attack("h1-change-address-board-mail", "H1", "board mails to an unconfirmed address", tuple(mails))


# -- H2: lockout by guessing -----------------------------------------------------------------


def password_guessing() -> Attack:
    """H2: wrong passwords for alice from a stranger, from 30 forged
    senders, from forged `From: alice` and 100 in one `multiple` mail: on
    16cc280, after a restart, alice's right password was then refused."""
    guess = f"majorities move {MAJORITIES_BOARD} {ALICE.userid} {{}} {ALICE_MAJORITIES_MOVE}"
    mails = [
        simple(f"h2-guess-stranger-{n:02}", "stranger@outside.example", guess.format(f"guess{n:02}"))
        for n in range(10)
    ]
    mails += [
        simple(f"h2-guess-forged-{n:02}", f"guesser{n:02}@attacker.example", guess.format(f"forged{n:02}"))
        for n in range(30)
    ]
    mails += [
        Mail(
            f"h2-guess-as-alice-{n}",
            raw_mail(ALICE.address, guess.format(f"asalice{n}"), message_id=f"h2-guess-as-alice-{n}@hostile.example"),
            "mallory@attacker.example",
        )
        for n in range(5)
    ]
    mails.append(simple(
        "h2-guess-multiple", "stranger2@outside.example", "multiple", lines(100, lambda n: guess.format(f"many{n:03}")),
    ))
    return Attack("h2-password-guessing", "H2", "guess limiting that locks the player out", tuple(mails))


# -- H3: what intake cannot store ---------------------------------------------------------------


def nul_bytes() -> Attack:
    """H3: a NUL in MAIL FROM failed the whole group commit on PostgreSQL
    (98 of 100 normal mails got 451); NULs in headers too. Sent at the
    same time as 20 bystanders' `help`, each of which must get its 250."""
    mails = [
        Mail("h3-nul-envelope", raw_mail("nul@attacker.example", "help", message_id="h3-nul-envelope@hostile.example"),
             "nul\x00sender@attacker.example", refusable=True),
        Mail("h3-nul-subject", raw_mail("nul@attacker.example", "help\x00", message_id="h3-nul-subject@hostile.example"),
             "nul@attacker.example", refusable=True),
        Mail("h3-nul-from", raw_mail("nul\x00from@attacker.example", "help", message_id="h3-nul-from@hostile.example"),
             "nul@attacker.example", refusable=True),
        Mail("h3-nul-message-id", raw_mail("nul@attacker.example", "help", message_id="nul\x00id@hostile.example"),
             "nul@attacker.example", refusable=True),
    ]
    interleaved = []
    for n in range(20):  # a NUL mail after every fifth bystander
        interleaved.append(simple(f"h3-bystander-{n:02}", f"bystander{n:02}@example.net", "help"))
        if n % 5 == 0:
            interleaved.append(mails[n // 5])
    return Attack("h3-nul", "H3", "one unstorable mail fails its group", tuple(interleaved), concurrent=True)


# -- H4: one mail holds every player up ------------------------------------------------------


def signup_lines(name: str, prefix: str, count: int) -> Attack:
    body = "".join(f"signup {prefix}{n:05} pw{n:05}x\n" for n in range(count))
    mail = simple(name, f"{name}@attacker.example", "multiple", body)
    return Attack(name, "H4", f"{count} signups (argon2 each) in one mail", (mail,))


def signups_1000_lines() -> Attack:
    """H4: a `multiple` mail of 1,000 `signup` lines (~27 KB; 23 KB in the
    issue) kept the worker busy 24 s (an argon2 hash each) while players
    waited."""
    return signup_lines("h4-signups-1000-lines", "bulk", 1000)


def signups_256k() -> Attack:
    """H4: the same at (just under) the 256 KB size limit, 10,000 lines:
    about 265 s, just under the stuck-mail watchdog."""
    return signup_lines("h4-signups-256k", "big", 10000)


# -- M1: passwords in clear ------------------------------------------------------------------


def password_at_odd_position() -> Attack:
    """M1: `majorities move alice PW 101 a1` (userid and board swapped):
    the masking guessed the password's position and masked `101`."""
    mail = simple(
        "m1-password-odd-position", ALICE.address,
        f"majorities move {ALICE.userid} {ALICE.password} {MAJORITIES_BOARD} {ALICE_MAJORITIES_MOVE}",
    )
    return Attack("m1-password-odd-position", "M1", "masking at an unexpected word position", (mail,))


def automatic_mail_with_password() -> Attack:
    """M1: automatic mail (Auto-Submitted) carrying alice's password is
    dropped unanswered, and its raw bytes were kept unmasked."""
    mail = simple(
        "m1-auto-submitted-password", ALICE.address, f"toy move 101 {ALICE.userid} {ALICE.password} b3",
        headers=(("Auto-Submitted", "auto-replied"),),
    )
    return Attack("m1-auto-submitted-password", "M1", "masking of dropped mail", (mail,))


def password_in_chat() -> Attack:
    """M1: bob writes his password in a chat to the board: relayed to
    alice and stored as written."""
    mail = simple(
        "m1-password-in-chat", BOB.address, f"toy chat 101 {BOB.userid} {BOB.password}",
        f"oops, my password is {BOB.password}\n",
    )
    return Attack("m1-password-in-chat", "M1", "masking in chat", (mail,))


# -- L: addresses, header injection, forged From ----------------------------------------------


def odd_addresses() -> Attack:
    """L: addresses that are no RFC 5321 mailbox were accepted at signup:
    `victim@x,other`, `bcc:victim@x`, `a(c)@x` and friends."""
    odd = (
        "victim-odd@outside.example,other", "bcc:victim-odd@outside.example", "a(c)@outside.example",
        '"victim odd"@outside.example', "victim-odd@outside.example>,<other@outside.example",
        "victim-odd@[127.0.0.1]", "to:victim-odd@outside.example",
    )
    mails = tuple(
        simple(f"l-odd-address-{n}", "odd@attacker.example", f"signup odd{n} oddpw{n} {address}")
        for n, address in enumerate(odd)
    )
    return Attack("l-odd-addresses", "L", "address validation", mails)


def header_injection() -> Attack:
    """L: CR/LF and encoded words in every header field the server reads or
    copies into replies (Subject, From, Reply-To, Message-ID, In-Reply-To,
    References): a reply must never get an extra header or recipient, nor
    go to an address hidden in an encoded word."""
    attacker, inject = "inject@attacker.example", "victim-inject@outside.example"
    hidden = base64.b64encode(f"{attacker}\r\nBcc: {inject}".encode()).decode()
    tricks = {
        "subject-bare-cr": {"Subject": f"help\rBcc: {inject}"},
        "subject-encoded-crlf": {"Subject": f"=?utf-8?q?help=0D=0ABcc:_{inject}?="},
        "from-bare-cr": {"From": f"{attacker}\rBcc: {inject}"},
        "from-encoded-crlf": {"From": f"=?utf-8?q?x=0D=0ABcc:_{inject}?= <{attacker}>"},
        "from-encoded-address": {"From": f"=?utf-8?q?{inject.replace('@', '=40')}?="},
        "reply-to-encoded-crlf": {"Reply-To": f"=?utf-8?b?{hidden}?="},
        "reply-to-two-addresses": {"Reply-To": f"{attacker}, {inject}"},
        "message-id-folded-bcc": {"Message-ID": f"<l-inject-id@hostile.example>\r\n Bcc: {inject}"},
        "in-reply-to-folded-bcc": {"In-Reply-To": f"<x@attacker.example>\r\n Bcc: {inject}"},
        "references-encoded-crlf": {"References": f"=?utf-8?q?<x@y>=0D=0ABcc:_{inject}?="},
    }
    mails = []
    for case, trick in tricks.items():
        name = f"l-inject-{case}"
        headers = {"From": attacker, "To": SERVER, "Subject": "help", "Message-ID": f"<{name}@hostile.example>", **trick}
        raw = "".join(f"{header}: {value}\r\n" for header, value in headers.items()) + "\r\nhelp\r\n"
        mails.append(Mail(name, raw.encode("latin-1"), attacker))
    return Attack("l-header-injection", "L", "header injection into replies", tuple(mails))


def forged_from_passes_reject() -> Attack:
    """L: bob rejects toy challenges (set-up), yet a challenge naming him
    with a forged `From: bob` (the envelope is the attacker's) started a
    board. Makes the next toy board (107)."""
    eve = "eve@attacker.example"
    mails = (
        simple("l-reject-signup-eve", eve, "signup eve evepw"),
        Mail(
            "l-reject-forged-challenge",
            raw_mail(BOB.address, f"toy challenge eve {BOB.userid}", message_id="l-reject-forged-challenge@hostile.example"),
            eve,
        ),
    )
    return Attack("l-forged-from-passes-reject", "L", "challenge policy against a forged From", mails)


#: In replay order. The guessing comes first, on a server just restarted
#: after alice's first move. What flooded or stopped 16cc280 comes late,
#: so that the rest is seen at work even there: the mass mailings, then
#: the mails that stopped all processing (nested MIME) last, with the
#: players' last moves after them.
ATTACKS = (
    password_guessing,
    password_at_odd_position, automatic_mail_with_password, password_in_chat,
    nul_bytes,
    sixty_forged_signups, message_spam, change_address_to_victim,
    odd_addresses, header_injection, forged_from_passes_reject,
    signup_thousands_of_addresses, junk_lines_to_victim, show_500_lines, show_500_boards, fuzz,
    signups_1000_lines, signups_256k,
    sibling_parts, many_headers, many_lines, nested_multipart, nested_rfc822,
)


# -- the players, and the whole replay -----------------------------------------------------------


def player_mail(player: Player, name: str, subject: str, body: str = "", *, game: str = "", board: int = 0) -> PlayerMail:
    return PlayerMail(player, simple(name, player.address, subject, body), game, board)


def setup() -> list[PlayerMail]:
    """alice and bob sign up from their own addresses; alice challenges bob
    to toy boards 101 and 102 and majorities board 101; bob rejects any
    later toy challenge."""
    return [
        player_mail(ALICE, "setup-signup-alice", f"signup {ALICE.userid} {ALICE.password}"),
        player_mail(BOB, "setup-signup-bob", f"signup {BOB.userid} {BOB.password}"),
        *(player_mail(ALICE, f"setup-toy-challenge-{board}", "toy challenge alice bob") for board in TOY_BOARDS),
        player_mail(ALICE, "setup-majorities-challenge", "majorities challenge -size=3 alice bob"),
        player_mail(BOB, "setup-bob-rejects", f"toy reject {BOB.userid} {BOB.password}"),
    ]


def toy_moves() -> Iterator[PlayerMail]:
    """alice's and bob's moves on toy boards 101 and 102, a drawn game each;
    alice's third move carries a comment with her password in it (M1)."""
    for board in TOY_BOARDS:
        for number, square in enumerate(DRAWN_GAME, start=1):
            player = ALICE if number % 2 else BOB
            comment = f"psst bob, don't tell: my password is {ALICE.password}\n" if (board, number) == (101, 5) else ""
            yield player_mail(
                player, f"move-toy-{board}-{number}", f"toy move {board} {player.userid} {player.password} {square}",
                comment, game="toy", board=board,
            )


def alice_after_guessing() -> PlayerMail:
    """alice's move with her right password, from her own address, after the guessing."""
    return player_mail(
        ALICE, "move-majorities-alice-after-guessing",
        f"majorities move {MAJORITIES_BOARD} {ALICE.userid} {ALICE.password} {ALICE_MAJORITIES_MOVE}",
        game="majorities", board=MAJORITIES_BOARD,
    )


def replay() -> list[Step]:
    """Set-up and alice's first move; a restart (once that move is
    processed); the attacks in order, with alice's right password right
    after the guessing, and the players' other moves spread evenly among
    them, the last after the last attack."""
    first, *moves = toy_moves()
    steps: list[Step] = [
        *setup(), first,
        Restart("16cc280 forgot at a restart whose passwords it had checked: every player could be locked out"),
    ]
    for number, build in enumerate(ATTACKS, start=1):
        attack = build()
        steps.append(attack)
        if attack.finding == "H2":
            steps.append(alice_after_guessing())
        share = slice(len(moves) * (number - 1) // len(ATTACKS), len(moves) * number // len(ATTACKS))
        steps += moves[share]
    return steps


def mails_of(step: Step) -> tuple[Mail, ...]:
    if isinstance(step, Attack):
        return step.mails
    if isinstance(step, PlayerMail):
        return (step.mail,)
    return ()


def write_eml(directory: Path) -> int:
    """Write the replay's mails as numbered .eml files and their envelope
    senders (MAIL FROM) to envelopes.txt; returns how many."""
    directory.mkdir(parents=True, exist_ok=True)
    envelopes, number = [], 0
    for step in replay():
        if isinstance(step, Restart):
            envelopes.append(f"# restart serve here: {step.reason}")
        for mail in mails_of(step):
            number += 1
            name = f"{number:03}-{mail.name}.eml"
            (directory / name).write_bytes(mail.raw)
            envelopes.append(f"{name} {mail.envelope_sender!r}")
    (directory / "envelopes.txt").write_text("\n".join(envelopes) + "\n")
    return number


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.hostile_corpus OUTDIR")
    print(f"{write_eml(Path(sys.argv[1]))} mails written to {sys.argv[1]}")
