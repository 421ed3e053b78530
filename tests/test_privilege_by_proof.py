"""A forged From gets nobody mail and holds nobody up (issue 35): no
address gets anything but a request to confirm it until a reply from it
proves it; privileges come from proof, never from the From line. Each
test failed on d27bc44."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.mail.authentication import author, vouchers
from pbmserv.mail.inbound import parse_mail
from pbmserv.runtime import Runtime
from pbmserv.service.processing import guesses
from tests.mailtools import body, make_mail, send, send_raw, signup

VICTIM = "victim@outside.example"


def test_a_forged_signup_sends_its_victim_one_mail_and_no_board_mail(runtime: Runtime) -> None:
    """F3: two sybils signed up with the victim's From, then a board between them played."""
    to_victim = []
    for subject in ("signup sybila pw-sybila", "signup sybilb pw-sybilb", "toy challenge sybila sybilb"):
        to_victim += [message for recipient, message in send(runtime, VICTIM, subject) if recipient == VICTIM]
    for n in range(5):
        to_victim += [message for recipient, message in send(runtime, VICTIM, f"toy move 101 sybila pw-sybila a{n}")
                      if recipient == VICTIM and "Board 101" in str(message["Subject"]) and "Error" not in str(message["Subject"])]
    [welcome] = [message for message in to_victim if str(message["Subject"]).startswith("confirm ")]
    assert str(welcome["Subject"]).startswith("confirm sybila ")
    assert "If you did not sign up, there is nothing to do" in " ".join(body(welcome).split())
    assert not [message for message in to_victim if "Board" in str(message["Subject"])], "no board was made"


def test_a_signup_confirms_its_address_only_by_a_reply_to_its_welcome(runtime: Runtime) -> None:
    [(recipient, welcome)] = send(runtime, "carol@example.org", "signup carol pw-carol")
    assert recipient == "carol@example.org" and str(welcome["Subject"]).startswith("confirm carol ")
    signup(runtime, "alice", "pw-alice")
    [(_, refused)] = send(runtime, "alice@example.org", "toy challenge alice carol")
    assert "carol has not confirmed an address yet, so no challenge may name them." in " ".join(body(refused).split())

    [(_, confirmed)] = send(runtime, "carol@example.org", f"Re: {welcome['Subject']}")
    assert "carol@example.org now gets the mail of carol." in body(confirmed)
    made = send(runtime, "alice@example.org", "toy challenge alice carol")
    assert sorted(recipient for recipient, _ in made) == ["alice@example.org", "carol@example.org"]


def test_a_welcome_reaches_an_address_once_a_day_whatever_signs_up(runtime: Runtime) -> None:
    """A flood of signups naming the victim, from the victim's From or any other."""
    to_victim = 0
    for n in range(12):
        sender = VICTIM if n % 2 else f"forged{n}@outside.example"
        replies = send(runtime, sender, f"signup sybil{n} pw-sybil{n} {VICTIM}")
        to_victim += sum(1 for recipient, _ in replies if recipient == VICTIM)
    assert to_victim == 1


def test_change_address_does_not_confirm_the_address_it_comes_from(toy_boards: Runtime) -> None:
    replies = send(toy_boards, "new@outside.example", "change address alice secret1 new@outside.example")
    [request] = [message for recipient, message in replies if str(message["Subject"]).startswith("confirm alice ")]
    assert "no other mail of the account comes here unless the address is confirmed" in " ".join(body(request).split())
    moved = send(toy_boards, "bob@example.org", "toy move 101 bob secret2 a1")
    assert "new@outside.example" not in [recipient for recipient, _ in moved]


# -- the trusted mail server's word, and nothing else ------------------------------------
def vouching(sender: str, *results: str) -> bytes:
    """A mail from `sender` with an Authentication-Results header for each of `results` ("server; verdicts")."""
    lines = "".join(f"Authentication-Results: {result}\r\n" for result in results)
    return lines.encode() + make_mail(sender, "help")


@pytest.mark.parametrize(("results", "vouched_by"), [
    (["mx.example.org; dkim=pass header.d=example.org; dmarc=pass header.from=example.org"], {"mx.example.org"}),
    (["MX.example.org; dmarc=pass header.from=example.org"], {"mx.example.org"}),
    (["mx.example.org; dkim=pass header.d=example.org"], {"mx.example.org"}),
    (["mx.example.org; dkim=pass header.d=sub.example.org"], set()),  # another domain's signature
    (["mx.example.org; dkim=pass header.d=other.example"], set()),
    (["mx.example.org; dkim=pass header.d=example.org; dmarc=fail header.from=example.org"], set()),
    (["mx.example.org; dmarc=pass header.from=other.example"], set()),
    (["mx.example.org; spf=pass smtp.mailfrom=example.org"], set()),  # SPF is the envelope's, not the From's
    (["mx.example.org; none"], set()),
    (["evil.example; dmarc=pass header.from=example.org", "mx.example.org; dmarc=fail"], {"evil.example"}),
    (["mx.example.org; dmarc=pass header.from=example.org", "mx.example.org; dmarc=fail header.from=example.org"], set()),
    (["this is ; not = a header"], set()),
])
def test_who_vouches_for_a_mails_from(results: list[str], vouched_by: set[str]) -> None:
    assert parse_mail(vouching("alice@example.org", *results)).vouched_by == vouched_by


def test_nobody_vouches_for_a_mail_of_two_froms_or_none() -> None:
    header = b"Authentication-Results: mx.example.org; dmarc=pass header.from=example.org\r\n"
    two = header + b"From: alice@example.org\r\nFrom: eve@example.org\r\nSubject: help\r\n\r\nx\r\n"
    both = header + b"From: alice@example.org, eve@example.org\r\nSubject: help\r\n\r\nx\r\n"
    none = header + b"Subject: help\r\n\r\nx\r\n"
    for raw in (two, both, none):
        mail = parse_mail(raw)
        assert (mail.author, mail.vouched_by) == ("", frozenset())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=120), max_size=4), st.text(max_size=60))
def test_any_authentication_results_header_is_read_without_failing(values: list[str], sender: str) -> None:
    headers = {"from": [sender], "authentication-results": values}
    assert vouchers(headers, author(headers)) <= {value.split(";")[0].strip().lower() for value in values}


def trusting(runtime: Runtime, authserv_id: str) -> Runtime:
    """The runtime trusting the mail server `authserv_id`, with caps on answers high enough for a guessing test."""
    runtime.settings = dataclasses.replace(
        runtime.settings, trusted_authserv_id=authserv_id, replies_per_hour=1000, error_replies_per_hour=1000,
    )
    runtime.intake.settings = runtime.processor.settings = runtime.settings
    return runtime


def vouched_move(sender: str, subject: str) -> bytes:
    domain = sender.rpartition("@")[2]
    header = f"mx.example.org; dkim=pass header.d={domain}; dmarc=pass header.from={domain}"
    return make_mail(sender, subject, headers={"Authentication-Results": header})


def test_guessing_under_a_players_address_is_limited_and_proof_still_gets_in(toy_boards: Runtime) -> None:
    """F2: mail forged from bob's address was checked without limit (10-17 guesses a second)."""
    runtime = trusting(toy_boards, "mx.example.org")
    for n in range(guesses.PER_ACCOUNT):
        [(_, message)] = send(runtime, "bob@example.org", f"toy move 101 bob guess{n} a1")
        assert "The password for 'bob' is wrong." in body(message)
    [(_, message)] = send(runtime, "bob@example.org", "toy move 101 bob guess-more a1")
    text = " ".join(body(message).split())
    assert "Too many wrong passwords for bob came in the last 15 minutes in mail that says it is from bob's" in text
    assert "reply to one of your board mails instead" in text
    [(_, message)] = send(runtime, "bob@example.org", "toy move 101 bob secret2 a1")
    assert "Too many wrong passwords for bob" in body(message).replace("\n", " "), "not checked: nothing proves it is bob"
    moved = send_raw(runtime, vouched_move("bob@example.org", "toy move 101 bob secret2 a1"))
    assert sorted(to for to, message in moved if "Error" not in str(message["Subject"])) == ["alice@example.org", "bob@example.org"]


def test_a_forger_of_the_from_line_alone_guesses_as_a_stranger_and_locks_nobody_out(toy_boards: Runtime) -> None:
    """A mail claims an account's address only when its From and its envelope sender both name it."""
    runtime = trusting(toy_boards, "mx.example.org")
    for n in range(guesses.PER_SENDER):
        [(_, message)] = send_raw(runtime, make_mail("bob@example.org", f"toy move 101 bob guess{n} a1"), "forger@evil.example")
        assert "The password for 'bob' is wrong." in body(message)
    [(_, message)] = send_raw(runtime, make_mail("bob@example.org", "toy move 101 bob guess-more a1"), "forger@evil.example")
    assert "Too many wrong passwords came from bob@example.org" in " ".join(body(message).split())
    moved = send(runtime, "bob@example.org", "toy move 101 bob secret2 a1")
    assert sorted(to for to, message in moved if "Error" not in str(message["Subject"])) == ["alice@example.org", "bob@example.org"]


def test_an_authentication_result_of_a_server_not_trusted_proves_nothing(toy_boards: Runtime) -> None:
    runtime = trusting(toy_boards, "mx.example.org")
    for n in range(guesses.PER_ACCOUNT):
        send(runtime, "bob@example.org", f"toy move 101 bob guess{n} a1")
    forged = vouched_move("bob@example.org", "toy move 101 bob secret2 a1").replace(b"mx.example.org", b"mx.evil.example")
    [(_, message)] = send_raw(runtime, forged)
    assert "Too many wrong passwords for bob" in body(message).replace("\n", " ")
