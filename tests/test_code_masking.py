"""A player's reply-address code is masked in whatever form it is written
(issue 35, F10): matched by the code itself, not by the address around
it. A property over generated forms of a real code, then chats, messages
and move comments that carry it in each of the forms a player could paste,
through the whole server: what the opponent gets and what the database
keeps (the move's comment, the kept copy of the mail) hold no form of it."""

from __future__ import annotations

import unicodedata
from email import policy
from email.parser import BytesParser
from urllib.parse import quote, unquote

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from pbmserv.protocol.commands import MASK
from pbmserv.runtime import Runtime
from pbmserv.service.play.reply_addresses import (
    ReplyToken,
    _folded,
    _Pieces,
    address_codes,
    mask_addresses,
    mask_codes,
    reply_address,
    token_for,
    token_of,
)
from pbmserv.store.key import CODE_ALPHABET, ServerKey
from pbmserv.store.models import InboundMail, Move
from tests.mailtools import body, make_mail, send, signup

SERVER = "pbmserv@localhost"
KEY = ServerKey(bytes(range(32)))
CODE = token_for(KEY, "toy", 101, 0, "alice", "secret").mac
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u202e\u2066"


def every_form(text: str) -> str:
    """The oracle: `text` reduced to its letters and digits by another road
    than the server's (percent-decoding, NFKC and case folding, then
    dropping all but ASCII letters and digits), so that a code in any of
    the forms below shows as itself."""
    folded = unicodedata.normalize("NFKC", unquote(text)).casefold()
    return "".join(char for char in folded if char.isascii() and char.isalnum())


# -- the code alone, as a property -------------------------------------------------------
def fullwidth(char: str) -> str:
    return chr(ord(char) + 0xFEE0)


letter_forms = st.sampled_from(["plain", "upper", "fullwidth", "percent", "percent upper"])
between = st.one_of(
    st.just(""), st.sampled_from(list(INVISIBLE)), st.sampled_from([" ", "-", "\n> ", "\u2011", " - ", "\t"]),
)


@st.composite
def written(draw: st.DrawFn, code: str) -> str:
    """`code` as somebody might write it: each letter in a form of its own, with something between letters or not."""
    out = []
    for position, char in enumerate(code):
        form = draw(letter_forms)
        shown = {
            "plain": char, "upper": char.upper(), "fullwidth": fullwidth(char.upper() if draw(st.booleans()) else char),
            "percent": quote(char, safe="") if not char.isalnum() else f"%{ord(char):02x}",
            "percent upper": f"%{ord(char.upper()):02X}",
        }[form]
        out.append(shown + (draw(between) if position < len(code) - 1 else ""))
    return "".join(out)


codes = st.text(alphabet=CODE_ALPHABET, min_size=16, max_size=16)
around = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.data(), codes, around, around)
def test_a_code_in_any_form_is_masked_and_the_rest_kept(data: st.DataObject, code: str, before: str, after: str) -> None:
    form = data.draw(written(code))
    text = f"{before} l {form} o {after}"  # l and o are in no code: the code cannot run on into what is around it
    masked = mask_codes(text, [code])
    assert code not in every_form(masked), (text, masked)
    assume(code not in every_form(before) + every_form(after))
    assert masked == f"{before} l {MASK} o {after}", (text, masked)


@settings(max_examples=300, deadline=None)
@given(st.data(), codes, st.sampled_from(["", "pbmserv+", "mailto:pbmserv%2B", "pbmserv＋", "<pbmserv+"]),
       st.sampled_from(["", "@localhost", "%40localhost", "＠localhost", "@localhost>"]), st.booleans())
def test_an_address_in_any_form_is_found_without_knowing_its_code(
    data: st.DataObject, code: str, head: str, tail: str, dashes: bool,
) -> None:
    plus_part = ("toy\u2011101\u20111\u2011" if dashes else "toy-101-1-") + data.draw(written(code))
    text = f"reply to {head}{plus_part}{tail} please"
    assert address_codes(text) == {code}
    masked = mask_addresses(text)
    assert code not in every_form(masked) and masked.startswith("reply to ") and masked.endswith(" please")


unicode_text = st.lists(st.one_of(
    st.characters(blacklist_categories=["Cs"]), st.sampled_from(["%", "%2B", "%41", "%e2%80%8b", "%EF%BC%A1", "%C3", " "]),
), max_size=60).map("".join)


@settings(max_examples=500, deadline=None)
@given(unicode_text)
def test_a_text_cut_into_pieces_folds_as_the_whole(text: str) -> None:
    """`mask_codes` finds a code in the folded text and then goes through
    the pieces it is in: their folded texts are the whole one's."""
    long = (text + " ") * 80  # past a piece's length
    assert _Pieces(long).folded == _folded(long)


@settings(max_examples=100, deadline=None)
@given(st.data(), codes, st.integers(min_value=0, max_value=6_000))
def test_a_code_in_a_long_text_is_masked_wherever_it_stands(data: st.DataObject, code: str, at: int) -> None:
    filler = "lots of words, none of them all that long\n" * 150
    text = f"{filler[:at]} l {data.draw(written(code))} o {filler[at:]}"
    assert mask_codes(text, [code]) == f"{filler[:at]} l {MASK} o {filler[at:]}"


def test_text_without_a_code_is_left_alone() -> None:
    for text in (
        "toy 101 1 uncharacteristic", "toy-101-1-characterizations!", "I have 2 cats and 3 pets, toy-101-1 ok",
        "majorities-101-2-abcdefghijkmnpq", "x" * 50_000 + "-101-1-" + "a" * 16, "toy-101-1-" + "b" * 17,
    ):
        assert address_codes(text) == frozenset(), text
        assert mask_addresses(text) == text
    assert mask_codes("the code is elsewhere", [CODE]) == "the code is elsewhere"


# -- through the server -------------------------------------------------------------------
def forms_of(address: str) -> dict[str, str]:
    """What a player could paste of their reply address."""
    local, _, domain = address.partition("@")
    plus_part = local.partition("+")[2]
    code = plus_part.rsplit("-", 1)[1]
    spaced = " ".join(code[i:i + 4] for i in range(0, 16, 4))
    return {
        "as it is": address,
        "with a name": f"Toy Board 101 <{address}>",
        "no @": local,
        "the plus part": plus_part,
        "the code alone": code,
        "upper case": address.upper(),
        "mailto link": f"mailto:{quote(address, safe='')}",
        "fullwidth @": f"{local}＠{domain}",
        "fullwidth": "".join(fullwidth(c) if " " < c < "\x7f" else c for c in address),
        "zero-width space": address.replace(code, code[:8] + "\u200b" + code[8:]),
        "soft hyphen and bidi mark": address.replace(code, code[:5] + "\u00ad" + code[5:11] + "\u200e" + code[11:]),
        "spaced in fours": f"my code is {spaced.upper()}",
        "hyphenated": address.replace(code, spaced.replace(" ", "-")),
        "wrapped in a quote": address.replace(code, code[:9] + "\n> " + code[9:]),
        "non-breaking hyphens": address.replace("-", "\u2011"),
        "percent-encoded letters": "".join(f"%{ord(c):02X}" for c in plus_part),
    }


@pytest.fixture
def board(runtime: Runtime) -> tuple[Runtime, str]:
    """alice and bob on toy board 101, alice to move; alice's reply address."""
    signup(runtime, "alice", "secret1")
    signup(runtime, "bob", "secret2")
    mails = send(runtime, "alice@example.org", "toy challenge alice bob")
    [address] = [str(m["Reply-To"]) for to, m in mails if to == "alice@example.org" and m["Reply-To"]]
    assert token_of(address, SERVER) is not None
    return runtime, address


def kept_texts(runtime: Runtime) -> list[str]:
    """What the database keeps of every mail, as stored and as its text, and every move's comment."""
    parser = BytesParser(policy=policy.default)
    with runtime.sessions() as session:
        mails = session.scalars(select(InboundMail)).all()
        assert all(mail.sealed is None for mail in mails), "every mail is processed"
        texts = [mail.raw.decode("utf-8", "replace") for mail in mails]
        texts += [part.get_content() for mail in mails if (part := parser.parsebytes(mail.raw).get_body(("plain",)))]
        texts += [move.comment for move in session.scalars(select(Move))]
    return texts


@pytest.mark.parametrize("form", list(forms_of("pbmserv+toy-101-1-abcdefghijkmnpqr@localhost")))
def test_a_code_pasted_into_a_chat_a_comment_or_a_reply_reaches_nobody(board: tuple[Runtime, str], form: str) -> None:
    runtime, address = board
    code = ReplyToken.read(address.partition("+")[2].partition("@")[0]).mac  # type: ignore[union-attr]
    pasted = forms_of(address)[form]
    text = f"Write to me here:\n{pasted}\nthanks"
    delivered = send(runtime, "alice@example.org", "toy chat 101 alice secret1", text)
    delivered += send(runtime, "alice@example.org", "message alice secret1 bob", text)
    runtime.intake.store(make_mail("alice@example.org", "Re: Toy Board 101", f"chat {text}"), None, address)
    delivered += send(runtime, "alice@example.org", "toy move 101 alice secret1 b2", text)
    runtime.intake.store(make_mail("alice@example.org", "Re: Toy Board 101", f"c3\n{text}"), None, address)  # not her turn
    delivered += send(runtime, "alice@example.org", "help")
    to_bob = [body(message) for recipient, message in delivered if recipient == "bob@example.org"]
    assert sum("Write to me here:" in text for text in to_bob) >= 4, to_bob
    for text in to_bob:
        assert code not in every_form(text), (form, text)
    for kept in kept_texts(runtime):
        assert code not in every_form(kept), (form, kept)


def test_the_genuine_code_alone_is_masked_in_a_mail_to_its_reply_address(board: tuple[Runtime, str]) -> None:
    runtime, address = board
    code = address.partition("@")[0].rsplit("-", 1)[1]
    runtime.intake.store(make_mail("alice@example.org", "Re: Toy Board 101", f"b2\nmy code: {code[:6]} {code[6:]}"), None, address)
    delivered = send(runtime, "alice@example.org", "help")
    [comment] = [move.comment for move in kept_moves(runtime)]
    assert comment == f"my code: {MASK}"
    assert all(code not in every_form(body(message)) for _, message in delivered)


def kept_moves(runtime: Runtime) -> list[Move]:
    with runtime.sessions() as session:
        return list(session.scalars(select(Move)))


def test_another_player_s_address_is_masked_too(board: tuple[Runtime, str]) -> None:
    runtime, _ = board
    other = reply_address(SERVER, token_for(runtime.intake.key, "toy", 102, 1, "carol", "x"))
    delivered = send(runtime, "alice@example.org", "toy chat 101 alice secret1", f"carol's: {other.upper()}")
    [chat] = [body(m) for to, m in delivered if to == "bob@example.org"]
    assert f"carol's: PBMSERV+TOY-102-2-{MASK}@LOCALHOST" in chat
