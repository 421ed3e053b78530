"""The syntax of every command and the bounds on its arguments."""

from __future__ import annotations

#: the syntax of every global command, as help and error mails show it
GLOBAL_SYNTAX = {
    "help": "help [command or game]",
    "signup": "signup userid password [address...]",
    "add": "add userid password [address...]",
    "change": "change password userid oldpassword newpassword  |  change address userid password [address...]",
    "confirm": "confirm userid code   (the Subject of the mail that asks to confirm an address)",
    "signoff": "signoff userid password",
    "delete": "delete userid password",
    "list": "list [game...]",
    "message": "message userid password to-userid...   (the body is the message)",
    "broadcast": "broadcast userid password   (the body is the message; admins only)",
    "all": "all show userid [active|next]",
    "vacation": "vacation userid password on|off",
    "multiple": "multiple   (in the Subject; then one command per body line)",
}

#: the syntax of every per-game command; `GAME` stands for the game's name
GAME_SYNTAX = {
    "help": "GAME help",
    "challenge": "GAME challenge [-option=value...] [--nagtime=days] [--forfeittime=days] userid1 userid2",
    "move": "GAME move board userid password move[#n]",
    "queue": "GAME queue board userid password move",
    "preview": "GAME preview board[#n] userid password move[;move...]",
    "resign": "GAME resign board userid password",
    "moves": "GAME moves board [userid password]",
    "show": "GAME show board[#n]...  |  GAME show userid... [active|inactive|next|all]",
    "games": "GAME games [userid...] [active|inactive|next|all]",
    "showas": "GAME showas userid password board[#n]...",
    "subscribe": "GAME subscribe board|all userid password",
    "unsubscribe": "GAME unsubscribe board|all userid password",
    "notify": "GAME notify board userid password",
    "chat": "GAME chat board userid password   (the body is the message)",
    "accept": "GAME accept userid password",
    "reject": "GAME reject userid password",
    "limit": "GAME limit userid password number",
    "seek": "GAME seek userid password number",
    "standings": "GAME standings",
    "ratings": "GAME ratings",
    "history": "GAME history [userid]",
}

#: the largest numbers `limit` and `seek` take
MAX_LIMIT = 999
MAX_SEEK = 99
#: the most boards one `show` or `showas` names
MOST_BOARDS = 10
