"""A forged From gets nobody mail and holds nobody up (issue 35): no
address gets anything but a request to confirm it until a reply from it
proves it; privileges come from proof, never from the From line. Each
test failed on d27bc44."""

from __future__ import annotations

from pbmserv.runtime import Runtime
from tests.mailtools import body, send, signup

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
