"""Filled paragraphs: the same lines as textwrap gives, short lines included."""

import textwrap

from hypothesis import given
from hypothesis import strategies as st

from pbmserv.gamekit.text import filled


@given(
    st.text(alphabet=st.sampled_from(list("ab -\t\n\u00e9")), max_size=40),
    st.integers(min_value=5, max_value=40),
    st.sampled_from(["", "  "]),
    st.booleans(),
)
def test_filled_lines_are_textwraps(text: str, width: int, indent: str, break_on_hyphens: bool) -> None:
    expected = textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=break_on_hyphens)
    assert filled(text, width, indent, break_on_hyphens) == tuple(expected)
