"""Plain-text filings (1990s EDGAR, or a filing wrapped in <pre>): paragraphs by blank lines, pages by <PAGE> or
form feeds, fixed-width tables by their column gaps."""

from __future__ import annotations

import re

from .builder import CONTROL_RE, BuiltText, TextBuilder
from .results import ParseError
from .tables import add_table

_PAGE_SPLIT_RE = re.compile(r"(?im)^[ \t]*<PAGE>[ \t]*\d*[ \t]*$|\f")
_SGML_TABLE_TAG_RE = re.compile(r"^\s*(?:</?(?:TABLE|CAPTION|S|C|FN)>\s*)+$", re.I)  # old EDGAR table markup
_COLUMN_GAP_RE = re.compile(r"\S(?: {2,}|\t)\S")
_NUMBER_RE = re.compile(r"\d[\d,]*")


def _looks_tabular(lines: list[str]) -> bool:
    if len(lines) < 2:
        return False
    gapped = sum(1 for ln in lines if _COLUMN_GAP_RE.search(ln.strip()))
    numeric = sum(1 for ln in lines if _NUMBER_RE.search(ln))
    return gapped >= 0.6 * len(lines) and numeric >= 1


def _add_text_table(builder: TextBuilder, lines: list[str]) -> None:
    """A fixed-width text table: columns are runs of two or more spaces."""
    rows = [[""] * (ln[:1].isspace()) + re.split(r" {2,}|\t", ln.strip()) for ln in lines]
    add_table(builder, rows)


def text_document(text: str) -> BuiltText:
    """The text of a plain-text filing; ParseError when it holds none."""
    builder = TextBuilder()
    add_plain_text(builder, text)
    if not builder.raw:
        raise ParseError("the document holds no readable text")
    return builder.build()


def add_plain_text(builder: TextBuilder, text: str) -> None:
    """Fixed-layout text (a .txt filing, or one wrapped in <pre>): paragraphs by blank lines, pages by <PAGE>."""
    text = CONTROL_RE.sub("", text)
    for number, page in enumerate(_PAGE_SPLIT_RE.split(text)):
        if number:
            builder.page_break()
        for paragraph in re.split(r"\n[ \t]*\n", page):
            lines = [ln for ln in paragraph.splitlines() if ln.strip() and not _SGML_TABLE_TAG_RE.match(ln)]
            if not lines:
                continue
            if _looks_tabular(lines):
                _add_text_table(builder, lines)
            else:
                builder.add(" ".join(lines))
