"""Text for board mails: paragraphs filled to the mail's width."""

from __future__ import annotations

import textwrap
from functools import lru_cache


@lru_cache(maxsize=4096)
def filled(text: str, width: int, indent: str = "", break_on_hyphens: bool = True) -> tuple[str, ...]:
    """`text` as lines of at most `width` characters, continuation lines
    indented by `indent`. Legends and notes come back in mail after mail,
    so each is filled once (textwrap is slow next to the rest of a render);
    a line that needs no filling (as "Last move: ...", new in every mail)
    is given back as it is."""
    if len(text) <= width and text.isprintable() and text == text.strip() and text:
        return (text,)
    return tuple(textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=break_on_hyphens))
