"""Blocks -> one text with character offsets: blocks joined by a blank line, page starts, running headers and
footers dropped, table captions attached, and the spans of the XBRL facts marked in the block text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .items import ITEM_HEAD_RE, is_heading
from .results import Block

# A visible XBRL fact is wrapped in two private-use code points while its text flows through whitespace collapse and
# table-cell merging; the builder turns them into offsets and removes them. Planes 15 and 16 hold 65534 each.
START_BASE = 0xF0000
END_BASE = 0x100000
MAX_MARKED = 0xFFFE
_MARK_RE = re.compile("[\U000f0000-\U0010ffff]")
WS_RE = re.compile(r"[\s\u200b\ufeff]+")
# "Item 1.Business": the heading's two spans are set apart by padding, not by a space.
_ITEM_GLUED_RE = re.compile(r"^(\s*ITEM\s+\d{1,2}[A-C]?\.)(?=[A-Z])", re.I)
# A line drawn with characters (the rule between a table and its footnotes): no words, and dozens of word pieces
# that would crowd the footnotes out of their table's chunk.
_RULE_LINE_RE = re.compile(r"[_\-=*~.·•]{4,}")
_BULLET_GLUED_RE = re.compile(r"^(\s*[•●◦▪■►‣∙·○])(?=[^\s•●◦▪■►‣∙·○])")  # "•Acme." likewise
# C0 controls (bar tab/newline/carriage return/form feed), lone surrogates and marker code points never belong in
# the text; removing them up front keeps lxml and the markers safe.
CONTROL_RE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\ud800-\udfff\U000f0000-\U0010ffff]")


def visible(s: str) -> str:
    """s without its fact markers: what a reader sees."""
    return _MARK_RE.sub("", s)


def _split_markers(s: str) -> tuple[str, list[tuple[int, int]]]:
    """Remove the fact markers from s; return the clean text and (code point, offset in clean text) pairs."""
    if not _MARK_RE.search(s):
        return s, []
    pieces, marks, last, removed = [], [], 0, 0
    for m in _MARK_RE.finditer(s):
        pieces.append(s[last : m.start()])
        marks.append((ord(m.group()), m.start() - removed))
        removed += 1
        last = m.end()
    pieces.append(s[last:])
    return "".join(pieces), marks


@dataclass
class _RawBlock:
    text: str
    kind: str
    header: str
    page: int
    marks: list[tuple[int, int]]  # (marker code point, offset in text)


@dataclass
class BuiltText:
    """The finished text of a document, before sections are found: what every reader hands to the assembly."""

    text: str
    blocks: list[Block]
    page_starts: list[int]
    spans: dict[int, tuple[int, int]]  # fact index -> (start, end)


class TextBuilder:
    """Collects blocks page by page; `build` drops running headers/footers and fixes offsets and fact spans."""

    def __init__(self) -> None:
        self.raw: list[_RawBlock] = []
        self.page = 1
        self._break_pending = False
        self._carry = ""  # fact start markers whose block had no visible text: they open the next block

    def page_break(self) -> None:
        """A page break in the source: the next block starts a new page (breaks before any text are ignored)."""
        if self.raw:
            self._break_pending = True

    def new_page(self) -> None:
        """An unconditional page (PDF): one page per call, even an empty one."""
        self.page += 1
        self._break_pending = False

    def add(self, raw: str, kind: str = "text", header: str = "", collapse: bool = True) -> None:
        if self._carry:
            raw, self._carry = self._carry + raw, ""
        if collapse:
            raw = WS_RE.sub(" ", raw)
            raw = _BULLET_GLUED_RE.sub(r"\1 ", _ITEM_GLUED_RE.sub(r"\1 ", raw, count=1), count=1)
        clean, marks = _split_markers(raw)
        text = clean.strip()
        if _RULE_LINE_RE.fullmatch(text):
            text = ""
        if not text:
            for code, _ in marks:
                if code >= END_BASE and self.raw:  # the fact ended with the previous block
                    self.raw[-1].marks.append((code, len(self.raw[-1].text)))
                elif code < END_BASE:
                    self._carry += chr(code)
            return
        if self._break_pending:
            self.page += 1
            self._break_pending = False
        if marks:
            lead = len(clean) - len(clean.lstrip())
            marks = [(code, min(max(offset - lead, 0), len(text))) for code, offset in marks]
        self.raw.append(_RawBlock(text, kind, header, self.page, marks))

    def build(self) -> BuiltText:
        running = _running_blocks(self.raw)
        kept = [b for i, b in enumerate(self.raw) if i not in running]
        parts, blocks, spans = [], [], {}
        starts: dict[int, int] = {}
        pos = 0
        for raw in kept:
            for code, offset in raw.marks:
                if code >= END_BASE:
                    idx = code - END_BASE
                    if idx in spans:
                        spans[idx] = (spans[idx][0], pos + offset)
                else:
                    spans[code - START_BASE] = (pos + offset, -1)
            starts.setdefault(raw.page, pos)
            blocks.append(Block(raw.kind, pos, pos + len(raw.text), raw.page, raw.header, raw.text))
            parts.append(raw.text)
            pos += len(raw.text) + 2
        text = "\n\n".join(parts)
        _attach_captions(blocks)
        # A page whose every block was dropped (or a blank PDF page) starts where the next page does.
        page_starts, nxt = [], len(text)
        for page in range(self.page, 0, -1):
            nxt = starts.get(page, nxt)
            page_starts.append(nxt)
        page_starts.reverse()
        page_starts[0] = 0
        return BuiltText(text, blocks, page_starts, {k: v for k, v in spans.items() if 0 <= v[0] <= v[1]})


_CAPTION_MAX_CHARS = 150
_CAPTION_MAX_LINES = 3


def _attach_captions(blocks: list[Block]) -> None:
    for j, table in enumerate(blocks):
        if table.kind != "table":
            continue
        lines: list[str] = []
        k = j - 1
        while k >= 0 and len(lines) < _CAPTION_MAX_LINES:
            above = blocks[k]
            if (above.kind != "text" or above.page != table.page or len(above.text) > _CAPTION_MAX_CHARS
                    or above.text.endswith(".") or ITEM_HEAD_RE.match(above.text)):
                break  # titles, units and "...as follows:" lead-ins; not the sentences of the text before
            lines.insert(0, above.text)
            k -= 1
        table.caption = "\n".join(lines)


PAGE_NUMBER_RE = re.compile(r"^(?:page\s+)?(?:[A-Z]{1,2}-)?\d{1,3}\.?$|^[ivxlc]{1,6}$", re.I)
_TOC_LINK_RE = re.compile(r"^(?:table\s+of\s+contents|index)\b", re.I)
_SMALL_NUMBER_RE = re.compile(r"(?<![\d,.])\d{1,3}(?![\d,.]\d)")
_RUNNING_MAX_CHARS = 80
_RUNNING_MIN_PAGES = 3


def _running_blocks(raw: list[_RawBlock]) -> set[int]:
    """Indexes of page numbers, running footers ("Acme Inc. | 2024 Form 10-K | 20") and headers ("Table of
    Contents" links): short blocks at a page's edge that repeat, digits aside, on several pages."""
    pages: dict[int, list[int]] = {}
    for i, block in enumerate(raw):
        pages.setdefault(block.page, []).append(i)
    if len(pages) < 2:
        return set()

    def key(i: int) -> str | None:
        block = raw[i]
        if block.marks or len(block.text) > _RUNNING_MAX_CHARS:
            return None
        if not (_SMALL_NUMBER_RE.search(block.text) or _TOC_LINK_RE.match(block.text)):
            return None
        if is_heading(block.text):
            return None
        return re.sub(r"\d+", "#", block.text.lower())

    seen_on: dict[str, set[int]] = {}
    for idxs in pages.values():
        for i in idxs[:2] + idxs[-2:]:
            if k := key(i):
                seen_on.setdefault(k, set()).add(raw[i].page)

    def running(i: int, at_end: bool) -> bool:
        k = key(i)
        if k is None:
            return False
        return len(seen_on[k]) >= _RUNNING_MIN_PAGES or (at_end and bool(PAGE_NUMBER_RE.match(raw[i].text)))

    drop: set[int] = set()
    for idxs in pages.values():
        for i in idxs[:2]:  # from the top of the page down, while the blocks are running headers
            if not running(i, False):
                break
            drop.add(i)
        for i in reversed(idxs[-2:]):  # from the bottom up, while they are footers
            if i in drop:
                continue
            if not running(i, True):
                break
            drop.add(i)
    return drop
