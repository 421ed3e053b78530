"""Pictures in mail (issue 37, item 3): a board mail to a player with
`pictures on` is multipart/alternative, its text part the very bytes a
player with pictures off gets, beside it a multipart/related of HTML and
the PNG of the board as that seat sees it; opened as a mail program opens
it (Chromium reading it as MHTML, which resolves `cid:`), the picture shows."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import replace
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from sqlalchemy import select

from pbmserv import pictures
from pbmserv.config import Settings
from pbmserv.mail.outbound import WIRE
from pbmserv.protocol import parse_request
from pbmserv.protocol.commands import Pictures
from pbmserv.runtime import Runtime
from pbmserv.service.play.board import load
from pbmserv.service.processing.catalog import Catalog
from pbmserv.store.models import OutboxMail
from tests.browser import chromium
from tests.conftest import TEST_PASSWORD_COST, FakeClock
from tests.mailtools import feed, make_mail, read_maildir, send, signup
from tests.toygame import Toy

PARSER = BytesParser(policy=policy.default)
TOY = Toy()


def make_runtime(tmp_path: Path, name: str, key_file: str, **settings: Any) -> Runtime:
    """A server of its own on a SQLite file, so that two of them can play the same game side by side."""
    directory = tmp_path / name
    directory.mkdir()
    chosen: dict[str, Any] = {
        "database_url": f"sqlite:///{directory / 'pbmserv.db'}", "key_file": key_file, "mail_backend": "memory",
        "maildir": str(directory / "outbox"), **TEST_PASSWORD_COST, **settings,
    }
    runtime = Runtime(replace(Settings(), **chosen), catalog=Catalog([*Catalog.installed(), TOY]), clock=FakeClock())
    runtime.upgrade_schema()
    return runtime


@pytest.fixture
def servers(tmp_path: Path, key_file: str) -> Iterator[tuple[Runtime, Runtime]]:
    """Two servers alike: on the first alice has pictures on, on the second off."""
    on, off = make_runtime(tmp_path, "on", key_file), make_runtime(tmp_path, "off", key_file)
    yield on, off
    on.close()
    off.close()


def start_secret_board(runtime: Runtime, pictures_for: tuple[str, ...]) -> list[tuple[str, bytes]]:
    """alice and bob on toy board 101 with secret squares; bob has named his (c1), alice not yet.
    The board mails of bob's move."""
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    for userid, password in (("alice", "secret1"), ("bob", "secret2")):
        if userid in pictures_for:
            send(runtime, f"{userid}@example.org", f"pictures {userid} {password} on")
    send(runtime, "alice@example.org", "toy challenge alice bob -secret")
    return feed(runtime, make_mail("bob@example.org", "toy move 101 bob secret2 bonus c1"))


def alice_s_mail(delivered: list[tuple[str, bytes]]) -> bytes:
    [raw] = [raw for recipient, raw in delivered if recipient == "alice@example.org"]
    return raw


def parts(message: EmailMessage) -> tuple[EmailMessage, EmailMessage, EmailMessage, EmailMessage]:
    """The text, the multipart/related, its HTML and its picture, once their types and order are checked."""
    assert message.get_content_type() == "multipart/alternative"
    assert all(not part.defects for part in message.walk()), "lawful MIME, as policy.default reads it"
    text, related = message.iter_parts()
    assert (text.get_content_type(), related.get_content_type()) == ("text/plain", "multipart/related")
    html, image = related.iter_parts()
    assert (html.get_content_type(), image.get_content_type()) == ("text/html", "image/png")
    return text, related, html, image  # type: ignore[return-value]


def text_part_bytes(raw: bytes) -> tuple[bytes, bytes]:
    """The header lines and the body, as written, of the first part of a multipart mail."""
    boundary = PARSER.parsebytes(raw).get_boundary()
    assert boundary is not None
    first = raw.split(b"--" + boundary.encode() + b"\r\n")[1]
    head, _, body = first.partition(b"\r\n\r\n")
    return head, body.removesuffix(b"\r\n")  # that CRLF belongs to the next boundary's line (RFC 2046)


@pytest.mark.parametrize("comment", ["Good luck.", "Viel Glück, ça va? " + "long line " * 12])
def test_the_text_part_is_the_mail_a_player_without_pictures_gets_byte_for_byte(
    servers: tuple[Runtime, Runtime], comment: str,
) -> None:
    on, off = servers
    start_secret_board(on, ("alice",))
    start_secret_board(off, ())
    for runtime in servers:
        send(runtime, "alice@example.org", "toy move 101 alice secret1 bonus b2")
        send(runtime, "alice@example.org", "toy move 101 alice secret1 a1")
    rich, plain = (alice_s_mail(feed(runtime, make_mail("bob@example.org", "toy move 101 bob secret2 c3", comment))) for runtime in servers)
    plain_head, _, plain_body = plain.partition(b"\r\n\r\n")
    head, body = text_part_bytes(rich)
    assert body == plain_body
    content_lines = [line for line in plain_head.split(b"\r\n") if line.startswith(b"Content-")]
    assert head.split(b"\r\n") == content_lines  # the same type, charset and transfer encoding
    expected = b"quoted-printable" if not comment.isascii() else b"7bit"
    assert expected in head
    text, _, _, _ = parts(PARSER.parsebytes(rich))
    assert text.get_content() == PARSER.parsebytes(plain).get_content()


def test_the_picture_is_the_seat_s_own_view_inline_and_named_in_the_html(servers: tuple[Runtime, Runtime]) -> None:
    on, _ = servers
    start_secret_board(on, ("alice", "bob"))
    delivered = feed(on, make_mail("alice@example.org", "toy move 101 alice secret1 bonus b2"))
    mails = {recipient: PARSER.parsebytes(raw) for recipient, raw in delivered}
    with on.engine.connect() as connection:
        state = load(connection, TOY, 101).state
    for seat, player in enumerate(("alice", "bob")):
        _, _, html, image = parts(mails[f"{player}@example.org"])
        assert image.get_content_disposition() == "inline"
        content_id = str(image["Content-ID"])
        assert re.fullmatch(r"<[^<>@\s]+@[^<>@\s]+>", content_id)
        drawing = TOY.draw(state, seat)
        source = html.get_content()
        assert f'<img src="cid:{content_id[1:-1]}" alt="{drawing.title}"' in source
        png = image.get_content()
        assert png == pictures.png(drawing)
        picture = Image.open(io.BytesIO(png))
        picture.load()
        assert picture.format == "PNG" and f'width="{picture.width}" height="{picture.height}"' in source
        assert ("<pre>  toy move 101 alice PASSWORD" in source) == (player == "alice")  # the line to paste, to alice
        assert "The board on the web: <a href=\"http://127.0.0.1:8080/toy/101\">" in source


def test_a_seat_without_a_secret_of_its_own_is_sent_the_public_picture(servers: tuple[Runtime, Runtime]) -> None:
    on, _ = servers
    delivered = dict(start_secret_board(on, ("alice", "bob")))  # bob has named his square, alice not yet
    with on.engine.connect() as connection:
        state = load(connection, TOY, 101).state
    alice_s = parts(PARSER.parsebytes(delivered["alice@example.org"]))[3].get_content()
    bob_s = parts(PARSER.parsebytes(delivered["bob@example.org"]))[3].get_content()
    assert alice_s == pictures.png(TOY.draw(state, None))  # nothing of bob's secret
    assert bob_s == pictures.png(TOY.draw(state, 1))


def psychomachia_pictures(runtime: Runtime, board: int, moves: list[tuple[str, str]]) -> dict[str, bytes]:
    """The PNG of each player's board mail after `moves` on Psychomachia board `board`."""
    for userid, move in moves[:-1]:
        send(runtime, f"{userid}@example.org", f"psychomachia move {board} {userid} secret-{userid} {move}")
    userid, move = moves[-1]
    delivered = feed(runtime, make_mail(f"{userid}@example.org", f"psychomachia move {board} {userid} secret-{userid} {move}"))
    return {recipient.partition("@")[0]: parts(PARSER.parsebytes(raw))[3].get_content() for recipient, raw in delivered}


def test_psychomachia_pictures_show_a_seat_its_own_hidden_stone_and_nothing_of_the_other_s(
    servers: tuple[Runtime, Runtime],
) -> None:
    on, _ = servers
    for userid in ("alice", "bob"):
        signup(on, userid, f"secret-{userid}")
        send(on, f"{userid}@example.org", f"pictures {userid} secret-{userid} on")
    twins = {}
    for board, alice_hides in ((101, "a1"), (102, "e1")):
        send(on, "alice@example.org", "psychomachia challenge -size=6 -stones=6 alice bob")
        only_bob_s = psychomachia_pictures(on, board, [("bob", "hide d5")])
        with on.engine.connect() as connection:
            game = on.processor.catalog.get("psychomachia")
            state = load(connection, game, board).state
        assert only_bob_s["alice"] == pictures.png(game.draw(state, None))  # alice holds no secret: the public view
        assert only_bob_s["bob"] == pictures.png(game.draw(state, 1)) != only_bob_s["alice"]
        twins[alice_hides] = psychomachia_pictures(on, board, [("alice", f"hide {alice_hides}"), ("alice", "c1")])
    assert twins["a1"]["bob"] == twins["e1"]["bob"]  # where alice hid her stone is in no picture of bob's
    assert twins["a1"]["alice"] != twins["e1"]["alice"]  # and in each of hers


def test_subscribers_and_third_parties_get_text_alone(servers: tuple[Runtime, Runtime]) -> None:
    on, _ = servers
    signup(on, "carol", "secret3")
    send(on, "carol@example.org", "pictures carol secret3 on")
    start_secret_board(on, ("alice",))
    send(on, "carol@example.org", "toy subscribe 101 carol secret3")
    delivered = feed(on, make_mail("dave@example.org", "toy move 101 alice secret1 bonus b2"))
    kinds = {recipient: PARSER.parsebytes(raw).get_content_type() for recipient, raw in delivered}
    assert kinds == {
        "alice@example.org": "multipart/alternative", "bob@example.org": "text/plain",
        "carol@example.org": "text/plain", "dave@example.org": "text/plain",
    }


def test_the_caps_count_the_mail_as_sent_picture_and_all(servers: tuple[Runtime, Runtime]) -> None:
    on, _ = servers
    start_secret_board(on, ("alice",))
    delivered = dict(feed(on, make_mail("alice@example.org", "toy move 101 alice secret1 bonus b2")))
    with on.engine.connect() as connection:
        rows = connection.execute(select(OutboxMail.recipient, OutboxMail.size).order_by(OutboxMail.id)).all()
    sizes = {recipient: size for recipient, size in rows}
    rich, plain = delivered["alice@example.org"], delivered["bob@example.org"]
    png = parts(PARSER.parsebytes(rich))[3].get_content()
    assert sizes["alice@example.org"] >= len(rich) - 100  # the outbox keeps it sealed: a few bytes more or less
    assert sizes["alice@example.org"] > sizes["bob@example.org"] + len(png) * 4 // 3
    assert len(plain) < 3_000


def test_the_mail_that_fills_the_board_mail_cap_says_so_in_both_versions(tmp_path: Path, key_file: str) -> None:
    runtime = make_runtime(tmp_path, "capped", key_file, board_mails_per_hour=2)
    rich = alice_s_mail(start_secret_board(runtime, ("alice",)))  # alice's second board mail (the first: the challenge)
    text, _, html, _ = parts(PARSER.parsebytes(rich))
    assert text.get_content().startswith("Board mails to this address are paused")
    assert "<p><strong>Board mails to this address are paused" in html.get_content()
    runtime.close()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("pictures alice pw on", Pictures("alice", "pw", True)),
        ("PICTURES Alice pw OFF", Pictures("alice", "pw", False)),
        ("pictures alice pw maybe", "'pictures' ends with 'on' or 'off', not 'maybe'."),
        ("pictures alice pw", "The 'on' or 'off' is missing."),
        ("pictures alice", "The password is missing."),
        ("pictures alice pw on now", "'now' is one word too many: nothing follows the 'on' or 'off'."),
    ],
)
def test_pictures_reads_its_words(line: str, expected: Pictures | str) -> None:
    [read] = parse_request(line, "", ["toy"]).lines
    if isinstance(expected, str):
        assert read.command is None and read.error is not None and str(read.error) == expected
    else:
        assert read.command == expected


def test_a_board_mail_from_the_maildir_shows_its_picture_in_chromium(tmp_path: Path, key_file: str) -> None:
    runtime = make_runtime(tmp_path, "maildir", key_file, mail_backend="maildir")
    outbox = Path(runtime.settings.maildir)

    def post(sender: str, subject: str) -> None:
        runtime.intake.store(make_mail(sender, subject), None, "")
        runtime.processor.process_pending()
        runtime.delivery.deliver_due()

    for userid in ("alice", "bob"):
        post(f"{userid}@example.org", f"signup {userid} secret-{userid}")
        [welcome] = [m for m in map(PARSER.parsebytes, read_maildir(outbox)) if str(m["Subject"]).startswith(f"confirm {userid} ")]
        post(f"{userid}@example.org", f"Re: {welcome['Subject']}")
    post("alice@example.org", "pictures alice secret-alice on")
    post("alice@example.org", "toy challenge alice bob")
    runtime.close()
    [raw] = [raw for raw in read_maildir(outbox) if PARSER.parsebytes(raw).is_multipart()]
    message = PARSER.parsebytes(raw)
    _, related, _, _ = parts(message)
    related["MIME-Version"] = "1.0"
    related["Subject"] = str(message["Subject"])
    related.set_param("type", "text/html")
    page_file = tmp_path / "board-mail.mhtml"  # Chromium shows multipart/related as a mail program does, cid: and all
    page_file.write_bytes(related.as_bytes(policy=WIRE))
    with chromium() as browser:
        page = browser.new_page()
        page.goto(page_file.as_uri())
        image = page.locator("img")
        assert image.evaluate("element => element.complete && element.naturalWidth") > 0
        shot = Image.open(io.BytesIO(image.screenshot())).convert("RGB")
        colours = shot.getcolors(maxcolors=1_000_000)
        assert colours is not None and len(colours) > 1, "the picture is not blank"
        assert "toy move 101 alice PASSWORD" in page.inner_text("body")
