"""`pictures on|off`: whether a player's board mails carry a picture of the
board beside their text (docs/decisions/0143-pictures-in-mail.md)."""

from __future__ import annotations

from pbmserv.protocol.commands import Pictures
from pbmserv.service.commands.accounts import to_account_and_sender
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import views
from pbmserv.service.processing.context import Context, Reply
from pbmserv.store import users


@handles(Pictures)
def pictures(ctx: Context, command: Pictures) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    was = "on" if user.pictures else "off"
    now = "on" if command.on else "off"
    if command.on != user.pictures:
        users.set_pictures(ctx.connection, user.id, command.on)
    changed = f"Pictures are {now} for {user.userid} now" if was != now else f"Pictures were {now} for {user.userid} already"
    if command.on:
        looks = (
            f"{changed}: each board mail to {user.userid} from the next one on holds the same text as before and, "
            "beside it, a page with a picture of the board as you see it, the tallies, the last move and the "
            "line to paste. A mail program that shows HTML shows that page; one that does not shows the text. "
            "A picture adds some 10 to 50 KB to a mail."
        )
        other = "off"
    else:
        looks = f"{changed}: each board mail to {user.userid} from the next one on is text alone, the board drawn in letters."
        other = "on"
    turn = (
        f"'pictures {user.userid} password {other}' turns them {other}, as does 'pictures {other}' as the first "
        "line of a reply to one of your board mails."
    )
    recipients = to_account_and_sender(ctx, user)
    text = views.wrap(looks, hang="") + "\n" + views.wrap(turn, hang="") + "\n"
    return [Reply(recipients, f"pbmserv pictures {user.userid}", text)]
