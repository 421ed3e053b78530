"""Real-world mail in: what parse_mail makes of the mails players' clients send.

Every test feeds RFC 5322 bytes: the larger client mails live in tests/mails/
(invented, written to look like what Gmail, Outlook, Apple Mail and
Thunderbird send), the small ones are built here byte by byte.
"""

from __future__ import annotations

import base64
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.mail.html_text import html_to_text
from pbmserv.mail.inbound import message_text, parse_headers, parse_mail
from pbmserv.mail.loops import no_reply_reason
from pbmserv.mail.mime import MOST_HEADERS, MOST_LINES, MOST_PARTS, Unreadable, read_message
from pbmserv.mail.replies import strip_replies
from pbmserv.protocol import parse_request
from pbmserv.protocol.commands import Move

MAILS = Path(__file__).parent / "mails"
GAMES = ["majorities", "plurality", "synch", "parliament"]


def fixture(name: str, crlf: bool = False) -> bytes:
    raw = (MAILS / name).read_bytes()
    return raw.replace(b"\n", b"\r\n") if crlf else raw


def mail(*header_lines: str | bytes, body: bytes = b"", crlf: bool = False) -> bytes:
    """A mail from header lines and a raw body; LF line ends unless crlf."""
    headers = [line.encode("ascii") if isinstance(line, str) else line for line in header_lines]
    if not any(line.lower().startswith(b"from:") for line in headers):
        headers.insert(0, b"From: Alice Example <alice@example.org>")
    raw = b"\n".join([*headers, b"", body])
    return raw.replace(b"\n", b"\r\n") if crlf else raw


def text_mail(body: str, *headers: str, subject: str = "majorities move 101 alice secret a5") -> bytes:
    return mail(f"Subject: {subject}", "Content-Type: text/plain; charset=utf-8", *headers, body=body.encode())


def html_part(name: str) -> str:
    """The HTML alternative of a fixture mail, as text/html only would bring it."""
    message = BytesParser(policy=policy.default).parsebytes(fixture(name))
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return part.get_content()


# -- line endings, structure ---------------------------------------------------


@pytest.mark.parametrize("crlf", [False, True], ids=["LF", "CRLF"])
def test_plain_mail_with_either_line_ending(crlf: bool) -> None:
    raw = mail(
        "Subject: majorities move 101 alice secret a5,f4",
        "Content-Type: text/plain; charset=us-ascii",
        body=b"Your move.\n\nGood luck!\n",
        crlf=crlf,
    )
    parsed = parse_mail(raw)
    assert parsed.sender == "alice@example.org"
    assert parsed.subject == "majorities move 101 alice secret a5,f4"
    assert parsed.body == "Your move.\n\nGood luck!"
    assert "\r" not in message_text(read_message(raw))


@pytest.mark.parametrize("crlf", [False, True], ids=["LF", "CRLF"])
def test_multipart_alternative_takes_the_plain_part(crlf: bool) -> None:
    parsed = parse_mail(fixture("gmail_reply.eml", crlf))
    assert parsed.body == "Good game so far \u2013 I\u2019ll take the corner.\n\nYour centre looks weak, though!"


def test_alternative_with_html_first_still_prefers_plain() -> None:
    raw = mail(
        "Subject: help",
        'Content-Type: multipart/alternative; boundary="b"',
        body=b"--b\nContent-Type: text/html\n\n<p>from the <b>HTML</b></p>\n"
        b"--b\nContent-Type: text/plain\n\nfrom the plain part\n--b--\n",
    )
    assert parse_mail(raw).body == "from the plain part"


def test_empty_plain_alternative_falls_back_to_html() -> None:
    raw = mail(
        "Subject: help",
        'Content-Type: multipart/alternative; boundary="b"',
        body=b"--b\nContent-Type: text/plain\n\n \n--b\nContent-Type: text/html\n\n<div>only here</div>\n--b--\n",
    )
    assert parse_mail(raw).body == "only here"


@pytest.mark.parametrize("crlf", [False, True], ids=["LF", "CRLF"])
def test_html_only_mail_becomes_readable_text(crlf: bool) -> None:
    parsed = parse_mail(fixture("html_only.eml", crlf))
    assert parsed.body == (
        "Dear Alice,\n"
        "\n"
        "That was a clever move \u2013 I didn't see it coming.\n"
        "Let\u2019s play again: 5 < 7 & caf\u00e9 au lait.\n"
        "\n"
        "Best,\n"
        "Henry"
    )  # paragraphs and <br> kept, entities decoded, title/style/script and the blockquote gone


def test_html_to_text_layout() -> None:
    html = (
        "<html><head><title>T</title><style>div {color: red}</style></head><body>"
        "<div>line one</div><div>line two</div><div><br></div><div>after a blank line</div>"
        "<ul><li>first</li><li>second</li></ul>"
        "<table><tr><td>a1</td><td>b2</td></tr><tr><td>c3</td><td>d4</td></tr></table>"
        "<pre>  x . o\n  . x .</pre>"
        "<script>document.write('no')</script><!-- a comment --></body></html>"
    )
    assert html_to_text(html) == (
        "line one\nline two\n\nafter a blank line\n\n- first\n- second\n\na1 b2\nc3 d4\n\n  x . o\n  . x ."
    )


def test_html_blockquote_becomes_quoted_lines() -> None:
    text = html_to_text("<p>mine</p><blockquote><p>theirs</p><blockquote>older</blockquote></blockquote>")
    assert text == "mine\n\n> theirs\n\n> > older"
    assert strip_replies(text) == "mine"


@pytest.mark.parametrize("crlf", [False, True], ids=["LF", "CRLF"])
def test_multipart_mixed_ignores_attachments(crlf: bool) -> None:
    parsed = parse_mail(fixture("attachments.eml", crlf))
    assert parsed.body == "I attached my notes and a photo of my board."


def test_html_body_is_chosen_over_a_text_attachment() -> None:
    raw = mail(
        "Subject: help",
        'Content-Type: multipart/mixed; boundary="m"',
        body=b"--m\nContent-Type: text/html; charset=utf-8\n\n<p>the body</p>\n"
        b'--m\nContent-Type: text/plain; name="log.txt"\n\nan attachment without Content-Disposition\n--m--\n',
    )
    assert parse_mail(raw).body == "the body"


def test_attached_mail_is_not_the_body() -> None:
    raw = mail(
        "Subject: help",
        'Content-Type: multipart/mixed; boundary="m"',
        body=b"--m\nContent-Type: message/rfc822\n\nFrom: x@example.org\nSubject: old\n\nforwarded text\n--m--\n",
    )
    assert parse_mail(raw).body == ""


@pytest.mark.parametrize("crlf", [False, True], ids=["LF", "CRLF"])
def test_nested_multiparts(crlf: bool) -> None:
    parsed = parse_mail(fixture("nested.eml", crlf))
    assert parsed.body == "Nested but fine: \u00e7a va \u2014 my move is below the board photo."
    assert parsed.sender == "jack.games@example.org"  # Reply-To wins over From, lower-cased


def test_multipart_without_boundary_gives_empty_body() -> None:
    raw = mail("Subject: help", "Content-Type: multipart/mixed", body=b"--x\nContent-Type: text/plain\n\nhi\n--x--\n")
    parsed = parse_mail(raw)
    assert parsed.subject == "help"
    assert parsed.body == ""


def nested(depth: int) -> bytes:
    body = b"".join(f'--b{i}\nContent-Type: multipart/mixed; boundary="b{i + 1}"\n\n'.encode() for i in range(depth))
    body += f"--b{depth}\nContent-Type: text/plain\n\ndeep\n".encode()
    body += b"".join(f"--b{i}--\n".encode() for i in reversed(range(depth + 1)))
    return mail("Subject: help", 'Content-Type: multipart/mixed; boundary="b0"', body=body)


def test_nested_multiparts_are_read_up_to_the_part_bound() -> None:
    assert parse_mail(nested(MOST_PARTS - 2)).body == "deep"
    with pytest.raises(Unreadable, match=f"more than {MOST_PARTS} MIME parts"):
        parse_mail(nested(MOST_PARTS))
    assert parse_headers(nested(1000)).subject == "help", "the headers of an unreadable mail can still be read"


def test_the_reply_address_is_read_from_the_unfolded_header() -> None:
    raw = mail('Reply-To: "Mallory\r\n Example" <victim@example.org>, other@example.org', "Subject: help", body=b"hi\n")
    assert parse_mail(raw).sender == "victim@example.org"


def test_mails_beyond_the_line_and_header_bounds_are_unreadable() -> None:
    with pytest.raises(Unreadable, match=f"more than the {MOST_LINES} the server reads"):
        parse_mail(mail("Subject: multiple", body=b"help\r" * (MOST_LINES + 1)))
    many_headers = [f"X-Junk-{n}: x" for n in range(MOST_HEADERS)]
    with pytest.raises(Unreadable, match=f"more than {MOST_HEADERS} header lines"):
        parse_mail(mail("Subject: help", *many_headers, body=b"hi\n"))
    assert parse_mail(mail("Subject: help", *many_headers[:-5], body=b"hi\n")).body == "hi"


# -- transfer encodings and charsets ------------------------------------------------


def test_quoted_printable_body() -> None:
    raw = mail(
        "Subject: help",
        "Content-Type: text/plain; charset=utf-8",
        "Content-Transfer-Encoding: quoted-printable",
        body=b"Caf=C3=A9 au lait =E2=80=93 a very long line that the client had to wrap with a so=\nft line break.\n",
    )
    expected = "Caf\u00e9 au lait \u2013 a very long line that the client had to wrap with a soft line break."
    assert parse_mail(raw).body == expected


@pytest.mark.parametrize("crlf", [False, True], ids=["LF", "CRLF"])
def test_base64_body(crlf: bool) -> None:
    text = "Zwei Züge voraus.\r\n\r\nGrüße\r\n"
    raw = mail(
        "Subject: help",
        "Content-Type: text/plain; charset=UTF-8",
        "Content-Transfer-Encoding: base64",
        body=base64.encodebytes(text.encode()),
        crlf=crlf,
    )
    assert parse_mail(raw).body == "Zwei Züge voraus.\n\nGrüße"


def test_broken_base64_does_not_crash() -> None:
    raw = mail("Subject: help", "Content-Transfer-Encoding: base64", body=b"this is *not* base64!!\n")
    assert isinstance(parse_mail(raw).body, str)


@pytest.mark.parametrize(
    ("charset", "encoded", "expected"),
    [
        ("utf-8", "Grüße aus Köln – €5".encode(), "Grüße aus Köln – €5"),
        ("ISO-8859-1", "Grüße aus Köln".encode("latin-1"), "Grüße aus Köln"),
        ("windows-1252", "\u201cSmart\u201d \u2013 \u20ac5".encode("cp1252"), "\u201cSmart\u201d \u2013 \u20ac5"),
        # labelled Latin-1 but written by Windows: read as Windows-1252, as browsers do
        ("iso-8859-1", "It\u2019s \u20ac5".encode("cp1252"), "It\u2019s \u20ac5"),
        ("koi8-r", "Привет".encode("koi8-r"), "Привет"),
    ],
)
def test_declared_charsets(charset: str, encoded: bytes, expected: str) -> None:
    raw = mail("Subject: help", f'Content-Type: text/plain; charset="{charset}"',
               "Content-Transfer-Encoding: 8bit", body=encoded + b"\n")
    assert parse_mail(raw).body == expected


@pytest.mark.parametrize(
    ("encoded", "expected"),
    [("Grüße".encode(), "Grüße"), ("Grüße".encode("latin-1"), "Grüße"), (b"plain ascii", "plain ascii")],
    ids=["utf-8 bytes", "latin-1 bytes", "ascii"],
)
@pytest.mark.parametrize(
    "content_type",
    ['Content-Type: text/plain; charset="x-unknown"', "Content-Type: text/plain",
     "Content-Type: text/plain; charset=us-ascii", None],
    ids=["unknown charset", "no charset", "us-ascii declared", "no Content-Type"],
)
def test_undeclared_or_unknown_charset_is_guessed(content_type: str | None, encoded: bytes, expected: str) -> None:
    headers = ["Subject: help", *([content_type] if content_type else [])]
    raw = mail(*headers, body=encoded + b"\n")
    assert parse_mail(raw).body == expected


def test_unknown_charset_in_html_and_quoted_printable() -> None:
    raw = mail(
        "Subject: help",
        'Content-Type: text/html; charset="x-mac-nonsense"',
        "Content-Transfer-Encoding: quoted-printable",
        body=b"<p>na=C3=AFve</p>\n",
    )
    assert parse_mail(raw).body == "na\u00efve"


def test_declared_utf8_with_a_broken_byte_keeps_the_rest() -> None:
    raw = mail("Subject: help", "Content-Type: text/plain; charset=utf-8", body="Grüße ".encode() + b"\xff!\n")
    assert parse_mail(raw).body == "Grüße \ufffd!"


def test_control_characters_are_dropped() -> None:
    raw = mail("Subject: help\x00me", "Content-Type: text/plain", body=b"nul\x00 and bell\x07\n")
    parsed = parse_mail(raw)
    assert parsed.body == "nul and bell"
    assert "\x00" not in parsed.subject


# -- the Subject ----------------------------------------------------------------------


def test_utf8_base64_encoded_word_subject_folded_over_lines() -> None:
    words = ["majorities move 101 ", "alice secret a5,f4 ", "\u2014 gr\u00fc\u00dfe"]
    encoded = [f"=?UTF-8?B?{base64.b64encode(word.encode()).decode()}?=" for word in words]
    raw = mail("Subject: " + encoded[0], " " + encoded[1], "\t" + encoded[2], body=b"hi\n", crlf=True)
    parsed = parse_mail(raw)
    assert parsed.subject == "majorities move 101 alice secret a5,f4 \u2014 gr\u00fc\u00dfe"
    command = parse_request(parsed.subject, parsed.body, GAMES).lines[0].command
    assert isinstance(command, Move) and command.board == 101 and command.password == "secret"


def test_latin1_quoted_printable_encoded_word_subject_folded_over_lines() -> None:
    raw = mail(
        "Subject: =?ISO-8859-1?Q?Re:_majorities_move_101_bob_s=E9cret?=",
        " =?ISO-8859-1?Q?_a5,f4?=",
        body=b"hi\n",
    )
    parsed = parse_mail(raw)
    assert parsed.subject == "Re: majorities move 101 bob s\u00e9cret a5,f4"
    command = parse_request(parsed.subject, parsed.body, GAMES).lines[0].command
    assert isinstance(command, Move) and command.password == "s\u00e9cret" and command.move == "a5,f4"


def test_plain_folded_subject_is_unfolded() -> None:
    raw = mail("Subject: majorities move 101 alice", "  secret a5,f4", body=b"\n", crlf=True)
    assert parse_mail(raw).subject == "majorities move 101 alice secret a5,f4"


@pytest.mark.parametrize(
    "subject",
    [b"Subject: =?x-unknown?Q?caf=E9?= help", b"Subject: caf\xc3\xa9 help", b"Subject: caf\xe9 help",
     b"Subject: =?utf-8?B?not-base64?= help", b"Subject: =?utf-8?Q?unterminated help"],
    ids=["unknown charset", "raw utf-8", "raw latin-1", "bad base64", "unterminated"],
)
def test_odd_subjects_are_read_without_crashing(subject: bytes) -> None:
    parsed = parse_mail(mail(subject, body=b"\n"))
    assert parsed.subject.endswith("help")
    parsed.subject.encode("utf-8")  # no lone surrogates


# -- senders --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (["From: Alice Example <Alice@Example.ORG>"], "alice@example.org"),
        (['From: "Doe, John" <john.doe@example.org>'], "john.doe@example.org"),
        (["From: =?UTF-8?Q?Zo=C3=AB_D=C3=BCrr?= <zoe@example.org>"], "zoe@example.org"),
        (["From: bob@example.org", "Reply-To: Bob at Home <Bob@Home.example>"], "bob@home.example"),
        (["From: bob@example.org", "Reply-To: undisclosed-recipients:;"], "bob@example.org"),
        (["From: Alice Example"], ""),
        (["From: <>"], ""),
        (["From: @"], ""),
        (["From: \"alice@example.org\" <>"], ""),
        (["From: alice@example.org", 'Reply-To: "'], "alice@example.org"),  # a Reply-To the parser chokes on
    ],
)
def test_reply_address(headers: list[str], expected: str) -> None:
    assert parse_mail(mail(*headers, "Subject: help", body=b"\n")).sender == expected


def test_malformed_from_is_not_answered() -> None:
    parsed = parse_mail(mail("From: Alice Example (no address here)", "Subject: help", body=b"hi\n"))
    assert parsed.sender == ""
    assert no_reply_reason(parsed, None) == "no usable From or Reply-To address"


@pytest.mark.parametrize(
    "header",
    [b'From: "', b"Message-ID: <  <b", b"Reply-To: :\\q?=.?[?=>::;B,=?q,",
     b"From: =a>=?x?b?)\xff,,\r\n .)==?x?b?;=?utf-8?q?"],
)
def test_headers_the_email_package_cannot_parse(header: bytes) -> None:
    """policy.default raises IndexError, AttributeError or TypeError on these
    when the header is read; the undecoded text is used instead."""
    name = header.partition(b":")[0].decode().lower()
    parsed = parse_mail(mail(header, "Subject: help", body=b"hi\n"))
    assert (parsed.subject, parsed.body) == ("help", "hi")
    assert parsed.headers[name]
    assert parsed.sender in ("", "alice@example.org")


def test_no_from_at_all() -> None:
    parsed = parse_mail(b"Subject: help\n\nhi\n")
    assert (parsed.sender, parsed.subject, parsed.body) == ("", "help", "hi")


def test_headers_are_collected_lower_cased() -> None:
    raw = mail("Subject: help", "Auto-Submitted: auto-replied", "Message-ID:  <x@example.org> ", body=b"\n")
    parsed = parse_mail(raw)
    assert parsed.headers["auto-submitted"] == "auto-replied"
    assert parsed.message_id == "<x@example.org>"


# -- quoted replies ---------------------------------------------------------------------


def test_gmail_attribution_on_one_line() -> None:
    body = (
        "I take the corner.\n"
        "\n"
        "On Mon, Jan 5, 2026 at 9:00 AM Alice <alice@example.org> wrote:\n"
        "\n"
        "> Board 101\n"
        "> It is bob's turn.\n"
    )
    assert parse_mail(text_mail(body)).body == "I take the corner."


def test_gmail_attribution_wrapped_over_two_lines() -> None:
    # the fixture's plain part wraps it as "On ... Alice Example <" / "alice@example.org> wrote:"
    assert parse_mail(fixture("gmail_reply.eml")).body.endswith("Your centre looks weak, though!")
    body = (
        "Fine.\n"
        "\n"
        "On Mon, Jan 5, 2026 at 9:00 AM Alice Example <alice@example.org>\n"
        "wrote:\n"
        "\n"
        "> Board 101\n"
    )
    assert parse_mail(text_mail(body)).body == "Fine."


def test_gmail_html_reply() -> None:
    body = strip_replies(html_to_text(html_part("gmail_reply.eml")))
    assert body == "Good game so far \u2013 I\u2019ll take the corner.\n\nYour centre looks weak, though!"


def test_outlook_original_message() -> None:
    body = parse_mail(fixture("outlook_reply.eml")).body
    assert body == "Hi Alice,\n\nI accept the draw \u2013 well played.\n\nCarol"


def test_outlook_html_header_block() -> None:
    body = strip_replies(html_to_text(html_part("outlook_reply.eml")))
    assert body == "Hi Alice,\n\nI accept the draw \u2013 well played.\n\nCarol"


def test_outlook_header_block_after_underscore_rule() -> None:
    assert parse_mail(fixture("outlook_web_reply.eml")).body == "Your turn, Dave."
    assert strip_replies(html_to_text(html_part("outlook_web_reply.eml"))) == "Your turn, Dave."


def test_outlook_header_block_without_rule() -> None:
    body = (
        "Agreed.\n"
        "\n"
        "From: Alice Example <alice@example.org>\n"
        "Sent: Monday, January 5, 2026 9:00 AM\n"
        "To: bob@example.org\n"
        "Subject: Board 101\n"
        "\n"
        "old text\n"
    )
    assert parse_mail(text_mail(body)).body == "Agreed."


def test_outlook_for_mac_header_block_with_bold_markers() -> None:
    body = (
        "Agreed.\n"
        "\n"
        "*From:* Alice Example <alice@example.org>\n"
        "*Date:* Monday, 5 January 2026 at 09:00\n"
        "*To:* bob@example.org\n"
        "\n"
        "old text\n"
    )
    assert parse_mail(text_mail(body)).body == "Agreed."


def test_apple_mail() -> None:
    assert parse_mail(fixture("apple_mail_reply.eml")).body == "Fine, I resign. Congratulations!\n\nFrank"
    assert strip_replies(html_to_text(html_part("apple_mail_reply.eml"))) == "Fine, I resign. Congratulations!\n\nFrank"


def test_apple_mail_attribution_without_quote_marks() -> None:
    body = (
        "Resigning.\n"
        "\n"
        "On Jan 5, 2026, at 09:00, Alice Example <alice@example.org> wrote:\n"
        "\n"
        "Majorities Board 104\n"
    )
    assert parse_mail(text_mail(body)).body == "Resigning."


def test_ios_mail_quotes_the_attribution_and_adds_a_footer() -> None:
    body = (
        "Will move tonight\n"
        "\n"
        "Sent from my iPhone\n"
        "\n"
        "> On Jan 5, 2026, at 9:00 AM, Alice <alice@example.org> wrote:\n"
        "> \n"
        "> Board 101\n"
    )
    assert parse_mail(text_mail(body)).body == "Will move tonight"


def test_thunderbird_name_wrote_top_post() -> None:
    body = "See you next round.\n\nAlice Example wrote:\n> Majorities Board 101\n> It is bob's turn.\n"
    assert parse_mail(text_mail(body)).body == "See you next round."


def test_thunderbird_dated_attribution_top_post() -> None:
    body = "Done.\n\nOn 05/01/2026 09:00, Alice Example wrote:\n> Majorities Board 101\n"
    assert parse_mail(text_mail(body)).body == "Done."


def test_thunderbird_bottom_post_keeps_the_text_below_the_quote() -> None:
    parsed = parse_mail(fixture("thunderbird_bottom_post.eml"))
    assert parsed.body == "Schöne Grüße – I will move tomorrow.\n\nGrete"
    assert parsed.sender == "grete.mueller@example.de"


def test_name_wrote_in_the_players_own_text_is_kept() -> None:
    body = "Alice wrote: nothing yet\nBob wrote:\nthe best move\n"
    assert parse_mail(text_mail(body)).body == "Alice wrote: nothing yet\nBob wrote:\nthe best move"


def test_inline_replies_keep_the_players_lines() -> None:
    body = "> Will you accept a draw?\nNo.\n\n> Shall we play again?\n\n\nYes!\n"
    assert parse_mail(text_mail(body)).body == "No.\n\nYes!"


@pytest.mark.parametrize(
    "attribution",
    [
        "Am 05.01.2026 um 09:00 schrieb Alice Example <alice@example.org>:",
        "Am Mo., 5. Jan. 2026 um 09:00 Uhr schrieb Alice Example <\nalice@example.org>:",
        "Alice Example <alice@example.org> schrieb am 05.01.2026 09:00:",
        "Le lun. 5 janv. 2026 à 09:00, Alice Example <alice@example.org> a écrit :",
        "Le 05/01/2026 à 09:00, Alice Example a\u00a0écrit\u00a0:",
        "-----Ursprüngliche Nachricht-----",
        "-----Message d'origine-----",
    ],
)
def test_german_and_french_attributions(attribution: str) -> None:
    body = f"Mein Zug.\n\n{attribution}\nMajorities Board 101\n"
    assert parse_mail(text_mail(body)).body == "Mein Zug."


def test_german_outlook_header_block() -> None:
    body = (
        "Danke.\n"
        "\n"
        "Von: Alice Example <alice@example.org>\n"
        "Gesendet: Montag, 5. Januar 2026 09:00\n"
        "An: bob@example.org\n"
        "Betreff: Board 101\n"
    )
    assert parse_mail(text_mail(body)).body == "Danke."


def test_forwarded_message_is_cut() -> None:
    body = (
        "FYI\n"
        "\n"
        "---------- Forwarded message ---------\n"
        "From: Alice <alice@example.org>\n"
        "Date: Mon, Jan 5, 2026\n"
        "\n"
        "old\n"
    )
    assert parse_mail(text_mail(body)).body == "FYI"


# -- signatures and the player's own text --------------------------------------------------


@pytest.mark.parametrize("delimiter", ["-- ", "--"])
def test_signature_is_cut(delimiter: str) -> None:
    body = f"Good move.\n\n{delimiter}\nBob Builder\nhttps://example.net/~bob\n"
    assert parse_mail(text_mail(body)).body == "Good move."


def test_longer_dashes_are_not_a_signature() -> None:
    assert parse_mail(text_mail("a5\n---\nb6\n")).body == "a5\n---\nb6"


def test_own_text_is_kept_exactly() -> None:
    body = (
        "  Indented first line\n"
        "\n"
        "Second paragraph,   \n"
        "with two lines.\t\n"
        "\n"
        "\n"
        "\n"
        "Third after three blank lines.\n"
        "\n"
        "\n"
    )
    assert parse_mail(text_mail(body)).body == (
        "  Indented first line\n\nSecond paragraph,\nwith two lines.\n\n\n\nThird after three blank lines."
    )


@pytest.mark.parametrize("body", ["", "\n", "   \n\t\n  \n", "\u00a0\n"])
def test_whitespace_only_body_is_empty(body: str) -> None:
    assert parse_mail(text_mail(body)).body == ""


def test_multiple_commands_survive_a_reply() -> None:
    body = (
        "majorities move 101 alice secret a5\n"
        "majorities show 102\n"
        "\n"
        "-- \n"
        "Alice\n"
        "\n"
        "On Mon, Jan 5, 2026, Bob wrote:\n"
        "> hi\n"
    )
    parsed = parse_mail(text_mail(body, subject="Re: multiple"))
    request = parse_request(parsed.subject, parsed.body, GAMES)
    assert [line.text for line in request.lines] == ["majorities move 101 alice secret a5", "majorities show 102"]
    assert all(line.error is None for line in request.lines)


# -- properties ----------------------------------------------------------------------------

_CHARSETS = ["utf-8", "UTF-8", "iso-8859-1", "windows-1252", "us-ascii", "koi8-r", "utf-16", "utf-7",
             "x-unknown", "", "base64", "rot13", "undefined", "idna", "\x00", "utf-8'en'", "\u00e9"]
_ENCODINGS = ["7bit", "8bit", "binary", "quoted-printable", "base64", "x-uuencode", "bogus", ""]
_HEADER_NAMES = ["From", "Reply-To", "Subject", "Message-ID", "References", "Content-Type",
                 "Content-Transfer-Encoding", "Content-Disposition", "Auto-Submitted", "Date", "X-Random"]

_text_fragments = st.sampled_from([
    "", " ", "\t", "> quoted", ">", "-- ", "--", "On Mon, Jan 5, 2026 at 9:00 AM Alice <a@x.org>", "wrote:",
    "On 5 Jan 2026, Bob wrote:", "Alice wrote:", "-----Original Message-----", "From: Alice", "Sent: Monday",
    "_" * 32, "Sent from my iPhone", "Am 5.1.2026 schrieb Bob:", "a5,f4", "=?UTF-8?B?w7w=?=", "<p>x</p>",
    "=C3=A9", "=\n", "\r", "--b", "--b--", "Content-Type: text/plain",
])


@st.composite
def header_values(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["text", "address", "encoded", "content-type", "raw"]))
    if kind == "text":
        return draw(st.text(max_size=40)).encode("utf-8", "surrogatepass")
    if kind == "address":
        name = draw(st.text(max_size=10)).replace("\n", " ")
        return f'"{name}" <{draw(st.emails())}>'.encode("utf-8", "surrogatepass")
    if kind == "encoded":
        encoded_charset = draw(st.sampled_from(_CHARSETS)).encode("utf-8")
        scheme = draw(st.sampled_from([b"B", b"Q", b"b", b"X"]))
        payload = draw(st.binary(max_size=20))
        data = base64.b64encode(payload) if scheme in (b"B", b"b") else payload.hex().upper().encode()
        return b"=?" + encoded_charset + b"?" + scheme + b"?" + data + b"?="
    if kind == "content-type":
        maintype = draw(st.sampled_from(["text/plain", "text/html", "multipart/mixed", "multipart/alternative",
                                         "message/rfc822", "application/pdf", "text", ""]))
        charset = draw(st.sampled_from(_CHARSETS))
        return f'{maintype}; charset="{charset}"; boundary="b"'.encode("utf-8", "surrogatepass")
    return draw(st.binary(max_size=40))


@st.composite
def random_mails(draw: st.DrawFn) -> bytes:
    headers = draw(st.lists(st.tuples(st.sampled_from(_HEADER_NAMES), header_values()), max_size=8))
    if draw(st.booleans()):
        headers.append(("Content-Transfer-Encoding", draw(st.sampled_from(_ENCODINGS)).encode()))
    lines = [name.encode() + b": " + value for name, value in headers]
    body_lines = draw(st.lists(st.one_of(_text_fragments.map(str.encode), st.binary(max_size=30)), max_size=12))
    newline = draw(st.sampled_from([b"\n", b"\r\n"]))
    return newline.join([*lines, b"", *body_lines])


def assert_well_formed(raw: bytes) -> None:
    parsed = parse_mail(raw)
    for value in (parsed.sender, parsed.subject, parsed.body, parsed.message_id, parsed.references,
                  *parsed.headers.values()):
        value.encode("utf-8")  # no lone surrogates: it must fit in a reply
        assert "\x00" not in value
    assert parsed.sender == parsed.sender.lower()
    assert "\r" not in parsed.body
    assert strip_replies(parsed.body) == parsed.body


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_parse_mail_never_raises_on_arbitrary_bytes(raw: bytes) -> None:
    assert_well_formed(raw)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_mails())
def test_parse_mail_never_raises_on_random_mails(raw: bytes) -> None:
    assert_well_formed(raw)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["text/plain", "text/html", "application/octet-stream",
                                           "multipart/alternative", "message/rfc822"]),
                          st.sampled_from(_CHARSETS), st.sampled_from(_ENCODINGS), st.binary(max_size=60)),
                min_size=1, max_size=4))
def test_parse_mail_never_raises_on_random_multiparts(parts: list[tuple[str, str, str, bytes]]) -> None:
    body = b""
    for content_type, charset, encoding, payload in parts:
        body += (f'--b\nContent-Type: {content_type}; charset="{charset}"\n'
                 f"Content-Transfer-Encoding: {encoding}\n\n").encode("utf-8", "surrogatepass") + payload + b"\n"
    raw = mail("Subject: help", 'Content-Type: multipart/mixed; boundary="b"', body=body + b"--b--\n")
    assert_well_formed(raw)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), st.lists(_text_fragments, max_size=20).map("\n".join)))
def test_strip_replies_is_idempotent(text: str) -> None:
    once = strip_replies(text)
    assert strip_replies(once) == once


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=300), st.lists(st.sampled_from(
    ["<p>", "</p>", "<br>", "<div>", "</div>", "<blockquote>", "</blockquote>", "<pre>", "</pre>", "<style>",
     "</style>", "<li>", "&nbsp;", "&amp;", "&#0;", "<!--", "-->", "<![CDATA[", "x", " ", "\n", "<", ">"]),
    max_size=30).map("".join)))
def test_html_to_text_never_raises(html: str) -> None:
    text = html_to_text(html)
    assert text == text.strip("\n")


def test_outgoing_reply_can_quote_any_parsed_body() -> None:
    """What parse_mail returns goes into reply mails: it must encode."""
    parsed = parse_mail(mail("Subject: =?x-unknown?B?/w==?=", "Content-Type: text/plain; charset=utf-7",
                             body=b"+2AA-\n"))
    reply = EmailMessage(policy=policy.SMTP)
    reply["Subject"] = parsed.subject or "x"
    reply.set_content(parsed.body + "\n")
    reply.as_bytes()
