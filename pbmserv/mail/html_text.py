"""HTML to plain text, for a mail that has no text/plain part."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from pbmserv.mail.mime import normalise_newlines


class _TextExtractor(HTMLParser):
    """HTML to plain text: <p> and headings become paragraphs, <div>, <br>,
    <li> and table rows lines; <blockquote> becomes `> ` quoted lines (which
    strip_replies drops); style, script and title are dropped."""

    PARAGRAPHS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "ul", "ol", "table", "dl"}
    LINES = {"div", "tr", "li", "dd", "dt", "hr", "center", "section", "article", "header", "footer", "address"}
    HIDDEN = {"style", "script", "title", "template"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.at_line_start = True
        self.hidden = 0
        self.preformatted = 0
        self.quote_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag == "br":
            self._newline()
        elif tag in self.PARAGRAPHS:
            self._blank_line()
        elif tag in self.LINES:
            self._end_line()
        elif tag in ("td", "th") and not self.at_line_start:
            self.out.append(" ")
        if tag == "li":
            self._write("- ")
        elif tag == "pre":
            self.preformatted += 1
        elif tag == "blockquote":
            self.quote_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.PARAGRAPHS:
            self._blank_line()
        elif tag in self.LINES:
            self._end_line()
        if tag == "pre":
            self.preformatted = max(0, self.preformatted - 1)
        elif tag == "blockquote":
            self.quote_depth = max(0, self.quote_depth - 1)

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if not self.preformatted:
            self._write(re.sub(r"\s+", " ", data))
            return
        for index, line in enumerate(data.replace("\xa0", " ").split("\n")):
            if index:
                self._newline()
            self._write(line, keep_indent=True)

    def _write(self, text: str, keep_indent: bool = False) -> None:
        if not keep_indent and self.out and self.out[-1].endswith(" "):
            text = text.lstrip()
        if self.at_line_start:
            text = text if keep_indent else text.lstrip()
            if not text:
                return
            if self.quote_depth:
                self.out.append("> " * self.quote_depth)
            self.at_line_start = False
        self.out.append(text)

    def _newline(self) -> None:
        self.out.append("\n")
        self.at_line_start = True

    def _end_line(self) -> None:
        if not self.at_line_start:
            self._newline()

    def _blank_line(self) -> None:
        self._end_line()
        self._newline()


def html_to_text(html: str) -> str:
    """Readable text from HTML: paragraphs and line breaks kept, entities
    decoded, at most one blank line in a row."""
    extractor = _TextExtractor()
    extractor.feed(normalise_newlines(html))
    extractor.close()
    lines = "".join(extractor.out).replace("\xa0", " ").split("\n")
    kept: list[str] = []
    for line in (line.rstrip() for line in lines):
        if line or (kept and kept[-1]):
            kept.append(line)
    return "\n".join(kept).strip("\n")
