"""The player's own words in a reply: quoted lines, attributions, signatures,
footers and a quoted earlier mail removed."""

from __future__ import annotations

import re

from pbmserv.mail.mime import normalise_newlines

# "On <date>, <name> wrote:" and its German and French forms. The date (a
# digit) gives it away: above `>` quotes it goes with them, anywhere else it
# ends the player's text (the quoted mail below it is not `>`-quoted).
_DATED_ATTRIBUTION = re.compile(
    r"""(?=.*\d)\s*(
        on\s.*\swrote                         # Gmail, Apple Mail, Thunderbird, Outlook
      | am\s.*\sschrieb(\s[^:]*)?             # Am 05.01.2026 um 09:00 schrieb Alice:
      | [^:]*\sschrieb\s+am\s.*               # Alice schrieb am 05.01.2026 09:00:
      | le\s.*\sa\s+écrit\s*                  # Le 5 janv. 2026 à 09:00, Alice a écrit :
    ):\s*""",
    re.IGNORECASE | re.VERBOSE,
)
# "<name> wrote:" (Thunderbird): only taken as an attribution when a quote
# follows it or nothing of the player's does.
_NAME_ATTRIBUTION = re.compile(r"\s*\S.{0,100}\s(wrote|schrieb|a\s+écrit)\s*:\s*", re.IGNORECASE)
_SEPARATOR = re.compile(
    r"\s*(-{2,}\s*(original message|forwarded message|ursprüngliche nachricht|message d'origine"
    r"|weitergeleitete nachricht|message transféré)\s*-{2,}|begin forwarded message:)\s*",
    re.IGNORECASE,
)
_UNDERSCORE_RULE = re.compile(r"\s*_{10,}\s*")
_HEADER_FROM = re.compile(r"\s*\*?(from|von|de)\s?:\*?\s.*", re.IGNORECASE)
_HEADER_NEXT = re.compile(
    r"\s*\*?(sent|date|to|cc|subject|gesendet|datum|an|betreff|envoyé|à|objet)\s?:\*?(\s.*)?", re.IGNORECASE
)
_MOBILE_FOOTER = re.compile(
    r"\s*(sent from (my|mail for|yahoo mail|outlook)\b.{0,40}|get outlook for \S.{0,20}"
    r"|von meinem \S.{0,40} gesendet|envoyé de mon \S.{0,40})\s*",
    re.IGNORECASE,
)
_LONGEST_MARKER = 300  # attributions and the like are short; longer lines are never tested


def strip_replies(text: str) -> str:
    """The player's own words: quoted lines (`>`, and the attribution line
    that introduces them) are dropped, and the text ends at a signature
    (`-- `), a mobile footer or a quoted earlier mail that is not `>`-quoted
    (Outlook's header block, "-----Original Message-----", "On ... wrote:").
    Lines lose trailing whitespace; blank lines at either end go."""
    lines = _without_quotes([line.rstrip() for line in normalise_newlines(text).split("\n")])
    return "\n".join(lines[: _end_of_own_text(lines)]).strip("\n")


def _is_quote(line: str) -> bool:
    return line.lstrip().startswith(">")


def _attribution_length(lines: list[str], index: int) -> int:
    """How many lines an attribution starting at `index` spans (0: none)."""
    line = lines[index]
    if line.endswith(":") and len(line) <= _LONGEST_MARKER and _NAME_ATTRIBUTION.fullmatch(line):
        return 1
    return _dated_attribution_length(lines, index)


def _dated_attribution_length(lines: list[str], index: int) -> int:
    """1 for "On <date>, <name> wrote:" at `index`, 2 when it is wrapped over
    two lines (as Gmail does), 0 when there is none."""
    line = lines[index]
    if len(line) > _LONGEST_MARKER:
        return 0
    if line.endswith(":") and _DATED_ATTRIBUTION.fullmatch(line):
        return 1
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if following.endswith(":") and len(following) <= _LONGEST_MARKER:
        return 2 if _DATED_ATTRIBUTION.fullmatch(f"{line} {following.strip()}") else 0
    return 0


def _without_quotes(lines: list[str]) -> list[str]:
    """Drop `>` lines and an attribution right above them; a run of blank
    and dropped lines becomes one blank line."""
    kept: list[str] = []
    dropping = False
    index = 0
    while index < len(lines):
        line = lines[index]
        length = 1 if _is_quote(line) else _attribution_length(lines, index)
        if length and (_is_quote(line) or _is_quote(_next_text(lines, index + length - 1))):
            while kept and not kept[-1]:
                kept.pop()
            dropping = True
            index += length
            continue
        if line or not dropping:
            if dropping:
                kept.append("")
                dropping = False
            kept.append(line)
        index += 1
    return kept


def _next_text_index(lines: list[str], index: int) -> int:
    """Index of the first non-blank line after `index` (len(lines) if none)."""
    index += 1
    while index < len(lines) and not lines[index].strip():
        index += 1
    return index


def _next_text(lines: list[str], index: int) -> str:
    following = _next_text_index(lines, index)
    return lines[following] if following < len(lines) else ""


def _end_of_own_text(lines: list[str]) -> int:
    """Index of the first line that is not the player's any more."""
    end = len(lines)
    for index in reversed(range(len(lines))):
        if _starts_foreign_text(lines, index) or (
            _attribution_length(lines, index) and _next_text_index(lines, index) >= end
        ):
            end = index
    return end


def _starts_foreign_text(lines: list[str], index: int) -> bool:
    """Whether a signature, a footer or a quoted mail that is not `>`-quoted starts here."""
    line = lines[index]
    if len(line) > _LONGEST_MARKER:
        return False
    if line == "--" or _SEPARATOR.fullmatch(line) or _MOBILE_FOOTER.fullmatch(line):  # "-- " lost its space
        return True
    if _dated_attribution_length(lines, index):
        return True
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if _UNDERSCORE_RULE.fullmatch(line) and _HEADER_FROM.fullmatch(following):  # Outlook on the web
        return True
    return bool(_HEADER_FROM.fullmatch(line) and _HEADER_NEXT.fullmatch(following))  # Outlook
