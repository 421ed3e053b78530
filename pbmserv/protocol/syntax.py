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

# The bounds of every other field, checked as a command is read, before
# anything is done (a password is never hashed or checked past its bound).
# Each is many times what real use needs; see docs/decisions/0127-field-bounds.md.
#: the longest password (a ten-word passphrase has some 80 characters)
LONGEST_PASSWORD = 128
#: the longest word the server shows back in an error (the rest is cut)
LONGEST_SHOWN = 40
#: the longest name of a command, a game or a help topic
LONGEST_NAME = 40
#: the longest `-name=value` option of a challenge, and the most options
LONGEST_OPTION = 40
MOST_OPTIONS = 10
#: the most players a challenge names, and the most userids `show`, `games` and `message` take
MOST_USERIDS = 10
#: the most addresses an account has (the service counts them too)
MOST_ADDRESSES = 5
#: the longest move (also each move of `preview`, and `queue`'s), and the most moves a preview tries
LONGEST_MOVE = 200
MOST_PREVIEW_MOVES = 50
#: the longest code of `confirm` (the server's codes have 10 or 16 letters)
LONGEST_CODE = 16
#: the most words after `help`, and the most games `list` names
MOST_HELP_WORDS = 3
MOST_GAMES = 20
#: the most digits of a board or move number (a database integer holds them)
MOST_DIGITS = 9
