"""The global commands' words, each declared once (`Verb`: its syntax line, its
help, its reader), and their readers: the words after the command -> its command."""

from __future__ import annotations

from pbmserv.protocol.arguments import (
    at_most,
    exactly,
    need,
    read_address,
    read_code,
    read_mode,
    read_name,
    read_password,
    read_userid,
    shown,
)
from pbmserv.protocol.commands import (
    ALL_SHOW_FILTERS,
    NOTIFICATION_MODES,
    AllShow,
    Broadcast,
    ChangeAddress,
    ChangePassword,
    Command,
    Confirm,
    Help,
    ListGames,
    Message,
    Notifications,
    Pictures,
    Signoff,
    Signup,
    Timezone,
    Vacation,
)
from pbmserv.protocol.errors import BadArgument
from pbmserv.protocol.syntax import (
    LONGEST_ZONE,
    MOST_ADDRESSES,
    MOST_GAMES,
    MOST_HELP_WORDS,
    MOST_USERIDS,
    Said,
    Verb,
    by_word,
)


def _help(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    at_most(len(args), MOST_HELP_WORDS, "words after 'help'", syntax)
    return Help(tuple(read_name(arg, "help topic", syntax) for arg in args))


def _addresses(words: list[str], syntax: str) -> tuple[str, ...]:
    if len(words) > MOST_ADDRESSES:
        raise BadArgument(f"An account has at most {MOST_ADDRESSES} addresses, and this names {len(words)}.", syntax)
    return tuple(read_address(word, syntax) for word in words)


def _signup(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    userid, password = need(args, ("userid", "password"), syntax)
    return Signup(read_userid(userid, syntax), read_password(password, syntax), _addresses(args[2:], syntax))


def _change(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    what = args[0].lower() if args else ""
    if what == "password":
        userid, old, new = need(args[1:], ("userid", "old password", "new password"), syntax)
        if len(args) > 4:
            raise BadArgument("A password is one word: 'change password' takes exactly three words after it.", syntax)
        return ChangePassword(
            read_userid(userid, syntax), read_password(old, syntax, what="old password"),
            read_password(new, syntax, what="new password"),
        )
    if what == "address":
        userid, password = need(args[1:], ("userid", "password"), syntax)
        return ChangeAddress(read_userid(userid, syntax), read_password(password, syntax), _addresses(args[3:], syntax))
    raise BadArgument("'change' must be followed by 'password' or 'address'.", syntax)


def _signoff(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    userid, password = need(args, ("userid", "password"), syntax)
    if len(args) > 2:
        raise BadArgument("'signoff' takes only your userid and password.", syntax)
    return Signoff(read_userid(userid, syntax), read_password(password, syntax))


def _confirm(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    userid, code = exactly(args, ("userid", "code"), syntax)
    return Confirm(read_userid(userid, syntax), read_code(code, syntax))


def _list(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    at_most(len(args), MOST_GAMES, "games", syntax)
    return ListGames(tuple(read_name(arg, "game name", syntax) for arg in args))


def _message(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    userid, password, _ = need(args, ("userid", "password", "userid to send to"), syntax)
    at_most(len(args) - 2, MOST_USERIDS, "players to send to", syntax)
    to = tuple(dict.fromkeys(read_userid(arg, syntax) for arg in args[2:]))
    return Message(read_userid(userid, syntax), read_password(password, syntax), to)


def _broadcast(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    userid, password = exactly(args, ("userid", "password"), syntax)
    return Broadcast(read_userid(userid, syntax), read_password(password, syntax))


def _all(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    if not args or args[0].lower() != "show":
        raise BadArgument("'all' must be followed by 'show'.", syntax)
    (userid,) = need(args[1:], ("userid",), syntax)
    rest = [arg.lower() for arg in args[2:]]
    if len(rest) > 1 or (rest and rest[0] not in ALL_SHOW_FILTERS):
        raise BadArgument("'all show' takes one userid and then 'active' or 'next'.", syntax)
    return AllShow(read_userid(userid, syntax), rest[0] if rest else "active")


def _vacation(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    userid, password, switch = exactly(args, ("userid", "password", "'on' or 'off'"), syntax)
    if switch.lower() not in ("on", "off"):
        raise BadArgument(f"'vacation' ends with 'on' or 'off', not '{shown(switch)}'.", syntax)
    return Vacation(read_userid(userid, syntax), read_password(password, syntax), switch.lower() == "on")


def _pictures(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    userid, password, switch = exactly(args, ("userid", "password", "'on' or 'off'"), syntax)
    if switch.lower() not in ("on", "off"):
        raise BadArgument(f"'pictures' ends with 'on' or 'off', not '{shown(switch)}'.", syntax)
    return Pictures(read_userid(userid, syntax), read_password(password, syntax), switch.lower() == "on")


def _timezone(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    userid, password, zone = exactly(args, ("userid", "password", "time zone (such as Europe/Berlin or UTC)"), syntax)
    if len(zone) > LONGEST_ZONE:
        raise BadArgument(
            f"'{shown(zone)}' is not a time zone: a zone's name, such as Europe/Berlin or UTC, has at most "
            f"{LONGEST_ZONE} characters.", syntax,
        )
    return Timezone(read_userid(userid, syntax), read_password(password, syntax), zone)


def _notifications(said: Said) -> Command:
    args, syntax = said.args, said.syntax
    userid, password = need(args, ("userid", "password"), syntax)
    at_most(len(args) - 2, 2, "words after the password (a mode and, for the digest, an hour)", syntax)
    mode = read_mode(args[2], NOTIFICATION_MODES, syntax) if len(args) > 2 else None
    hour = None
    if len(args) > 3:
        if mode != "digest":
            raise BadArgument(f"An hour goes with 'digest' alone: '{mode}' takes nothing after it.", syntax)
        if not (args[3].isascii() and args[3].isdigit() and len(args[3]) <= 2 and int(args[3]) <= 23):
            raise BadArgument(
                f"'{shown(args[3])}' is not an hour of the day: the digest's hour is a whole number from 0 to 23.", syntax,
            )
        hour = int(args[3])
    return Notifications(read_userid(userid, syntax), read_password(password, syntax), mode, hour)


GLOBAL_VERBS = by_word(
    Verb(
        "help", "help [command or game]",
        "Mails you help. Alone it lists every command; with a command word or a game name it explains that one.",
        _help,
    ),
    Verb(
        "signup", "signup userid password [address...]",
        (
            "Creates your account. The userid has 2 to 20 letters, digits, '-', '_' or '.'; the password 4 to 128"
            " characters and no spaces. Mail goes to the address you mail from, or to the addresses you list (at "
            "most 5): each one, yours too, gets a mail asking to confirm it (yours is the welcome), and no other "
            "mail until it is confirmed; nobody can challenge you before one is. 'add' is another name for it."
        ),
        _signup,
    ),
    Verb(
        "add", "add userid password [address...]",
        "Another name for 'signup'.",
        _signup,
        alias_of="signup",
    ),
    Verb(
        "change", "change password userid oldpassword newpassword  |  change address userid password [address...]",
        (
            "'change password' replaces your password (old one first). 'change address' replaces the addresses "
            "your mail goes to (at most 5); without addresses it uses the one you mail from. A new address, the "
            "one you mail from too, gets mail only once it is confirmed."
        ),
        _change,
    ),
    Verb(
        "confirm", "confirm userid code   (the Subject of the mail that asks to confirm an address)",
        (
            "Confirms that an address may get the mail of an account. The server mails a new address this "
            "command, with its code, as the Subject: reply to that mail keeping the Subject, or send it yourself."
        ),
        _confirm,
    ),
    Verb(
        "signoff", "signoff userid password",
        (
            "Deletes your account. Every game you are still playing is forfeited to your opponents. 'delete' is "
            "another name for it."
        ),
        _signoff,
    ),
    Verb(
        "delete", "delete userid password",
        "Another name for 'signoff'.",
        _signoff,
        alias_of="signoff",
    ),
    Verb(
        "list", "list [game...]",
        "Lists the games this server runs, with their options. Name games to see only those.",
        _list,
    ),
    Verb(
        "message", "message userid password to-userid...   (the body is the message)",
        (
            "Sends the body of your mail to the players you name (by userid); you get a copy. Put the command in "
            "the Subject, not in a 'multiple' mail."
        ),
        _message,
    ),
    Verb(
        "broadcast", "broadcast userid password   (the body is the message; admins only)",
        "Sends the body of your mail to every player on this server. Only the server's admins may broadcast.",
        _broadcast,
    ),
    Verb(
        "all", "all show userid [active|next]",
        (
            "'all show userid' mails you every active board of that player in every game on this server, as "
            "anybody may see them; 'all show userid next' only the boards waiting for their move."
        ),
        _all,
    ),
    Verb(
        "vacation", "vacation userid password on|off",
        (
            "Pauses reminders and forfeits on all your boards while you are away ('on'), until you send 'off'. "
            "Each player has a number of vacation days per calendar year (30 unless the server says otherwise); "
            "every started day counts, and a vacation ends by itself when they are used up."
        ),
        _vacation,
    ),
    Verb(
        "pictures", "pictures userid password on|off   (from a board mail's reply address: pictures on|off)",
        (
            "With 'on', your board mails carry a picture of the board as you see it, in an HTML part beside "
            "the usual text, which stays exactly as it was; a mail program that shows HTML shows the picture, "
            "the tallies and the line to paste. 'off' (the default) sends text alone. Replying 'pictures on' "
            "or 'pictures off' to one of your board mails does the same without the password."
        ),
        _pictures,
    ),
    Verb(
        "timezone", "timezone userid password ZONE   (from a board mail's reply address: timezone ZONE)",
        (
            "Board mails that wait for your move say when the reminder and the forfeit come, in UTC and, once "
            "you name your time zone as the tz database writes it (Europe/Berlin, America/New_York, "
            "Asia/Tokyo), in your local time too. 'timezone userid password UTC' shows UTC alone again."
        ),
        _timezone,
    ),
    Verb(
        "notifications", "notifications userid password [every|turn|digest|results [HOUR]]",
        (
            "Chooses which board mails your boards send you. 'every' (the default): a mail each time a board "
            "changes. 'turn': only when a board waits for your move. 'digest': one mail a day at HOUR (0 to 23, "
            "in your 'timezone', else UTC; 8 unless you name one) with every board that waits for your move. "
            "'results': only the mails that end a game. Whatever you choose, the answer to your own move, a new "
            "board's first mail, the final mail and the reminders still come. Without a mode it mails what is in "
            "force. 'GAME notifications board' chooses for one board."
        ),
        _notifications,
    ),
    Verb(
        "multiple", "multiple   (in the Subject; then one command per body line)",
        (
            "Put 'multiple' in the Subject and one command on each line of the body (at most 20); each line is "
            "carried out in turn and answered on its own, and the lines that could not be carried out are "
            "answered together in one mail."
        ),
    ),
)
