"""The cross-reference index some 10-Ks print instead of Item headings: a table mapping each Form 10-K Item to the
pages of the report that answer it ("Item 7. | Management's Discussion ... | 6-25"). Read where the body has no
Item headings of its own, it places each Item on the pages it names."""

from __future__ import annotations

import re
from collections import Counter

from .items import ITEM_HEAD_RE, letters
from .results import Block, ParsedFiling

_PAGE_RANGE_RE = re.compile(r"(?<![\w(])(\d{1,3})(?:\s*[-–—]\s*(\d{1,3}))?(?![\w)])")
_MIN_ROWS = 6  # an index lists most of the form's Items; a sentence or two naming Items is not one
_MAX_PAGE_SHIFT = 3  # printed page numbers may run ahead of or behind the file's own pages (cover, inserts)


class _Row:
    """One line of the index: the Item, its title, where the line sits in the text, and the printed pages."""

    def __init__(self, label: str, title: str, pos: int, pages: list[tuple[int, int]]):
        self.label, self.title, self.pos, self.pages = label, title, pos, pages


def cross_reference_starts(parsed: ParsedFiling, labels: list[str], titles: list[str]) -> list[tuple[int, str, str]]:
    """(char_start, item, title) for the Items the index places, in text order; [] where there is no index.

    Each page range an Item claims becomes a section; where ranges overlap (Item 7A's pages inside Item 7's), the
    range that starts later, then the shorter one, holds the text, and the enclosing Item resumes after it. An
    Item the index places on no page of the body ("Not applicable", "incorporated by reference to the proxy
    statement") is the index's own line for it."""
    found = _index_rows(parsed.blocks, labels, titles)
    if found is None:
        return []
    table, rows = found
    shift = _page_shift(parsed.blocks, rows)
    intervals = []  # (start, end, label, title)
    for row in rows:
        for n, (first, last) in enumerate(row.pages):
            start = _page_start(parsed, first + shift, row.title if n == 0 else "")
            end = _page_start(parsed, last + shift + 1)
            if start is not None and start < (end if end is not None else len(parsed.text)):
                intervals.append((start, end if end is not None else len(parsed.text), row.label, row.title))
    starts = _innermost_segments(intervals)
    placed = {label for _, label, _ in starts}
    row_starts = [(row.pos, row.label, row.title) for row in rows if row.label not in placed]
    if row_starts:
        resume = _innermost_segments([iv for iv in intervals if iv[0] <= table.char_end < iv[1]])
        # The index's footnotes ("(a) Incorporated by reference to ...") stay with its lines; the enclosing Item
        # resumes on the next page.
        after = next((b.char_start for b in parsed.blocks if b.page > table.page), None)
        starts = [s for s in starts if not table.char_start < s[0] <= table.char_end]
        starts += row_starts
        if resume and after is not None and not any(s[0] == after for s in starts) and any(
                iv[0] <= after < iv[1] and iv[2] == resume[-1][1] for iv in intervals):
            starts.append((after, resume[-1][1], resume[-1][2]))
        starts.sort(key=lambda s: s[0])
    return starts


def _index_rows(blocks: list[Block], labels: list[str], titles: list[str]) -> tuple[Block, list[_Row]] | None:
    """The table with the most lines of the form "Item N | title | pages" (at least _MIN_ROWS), the last such on
    a tie: the index sits at the end of the report, after any table of contents."""
    best: tuple[Block, list[_Row]] | None = None
    for block in blocks:
        if block.kind != "table" or "item" not in block.text.lower():
            continue
        rows, pos = [], block.char_start
        for line in block.text.split("\n"):
            row = _index_row(line, pos, labels, titles)
            if row is not None:
                rows.append(row)
            pos += len(line) + 1
        if len(rows) >= _MIN_ROWS and (best is None or len(rows) >= len(best[1])):
            best = (block, rows)
    return best


def _index_row(line: str, pos: int, labels: list[str], titles: list[str]) -> _Row | None:
    cells = [c.strip() for c in line.split("|") if c.strip()]
    if not cells:
        return None
    m = ITEM_HEAD_RE.match(cells[0])
    if not m or m.group("sub"):
        return None
    label = f"Item {m.group('num').lstrip('0')}{(m.group('letter') or '').upper()}"
    if label not in labels:
        return None
    rest = [c for c in ([m.group("rest").strip()] + cells[1:]) if c]
    title = rest[0] if rest else titles[labels.index(label)]
    pages_cell = rest[-1] if len(rest) > 1 else ""
    pages = [(int(a), int(b or a)) for a, b in _PAGE_RANGE_RE.findall(pages_cell)]
    return _Row(label, title, pos, [(a, b) for a, b in pages if a <= b])


def _page_shift(blocks: list[Block], rows: list[_Row]) -> int:
    """How far the file's pages run from the printed ones: the shift that puts most Items' titles at the top of a
    block on the page the index names for them; 0 when no title is printed as such."""
    votes: Counter[int] = Counter()
    by_page: dict[int, list[Block]] = {}
    for block in blocks:
        by_page.setdefault(block.page, []).append(block)
    for row in rows:
        title = letters(row.title)[:20]
        if not row.pages or len(title) < 8:
            continue
        for shift in range(-_MAX_PAGE_SHIFT, _MAX_PAGE_SHIFT + 1):
            if any(letters(b.text[:60]).startswith(title) for b in by_page.get(row.pages[0][0] + shift, [])):
                votes[shift] += 1
    return max(votes, key=lambda s: (votes[s], -abs(s))) if votes else 0


def _page_start(parsed: ParsedFiling, page: int, title: str = "") -> int | None:
    """Where the Item starts on `page`: the block opening with its title (a capitalised heading first), else the
    page's first block; None past the last page."""
    on_page = [b for b in parsed.blocks if b.page == page]
    if not on_page:
        later = [b for b in parsed.blocks if b.page > page]
        return later[0].char_start if later and page >= 1 else None
    key = letters(title)[:20]
    if len(key) >= 8:
        titled = [b for b in on_page if letters(b.text[:60]).startswith(key)]
        capitalised = [b for b in titled if b.text[: len(title)].isupper()]
        if titled:
            return (capitalised or titled)[0].char_start
    return on_page[0].char_start


def _innermost_segments(intervals: list[tuple[int, int, str, str]]) -> list[tuple[int, str, str]]:
    """Cut the text at every interval's start and end; each piece goes to the covering interval that starts last
    (then the shortest); a piece no interval covers stays with the one before. Consecutive pieces of one Item
    merge."""
    cuts = sorted({p for start, end, _, _ in intervals for p in (start, end)})
    starts: list[tuple[int, str, str]] = []
    for x in cuts:
        covering = [iv for iv in intervals if iv[0] <= x < iv[1]]
        if not covering:
            continue
        start, end, label, title = max(covering, key=lambda iv: (iv[0], -(iv[1] - iv[0])))
        if not starts or starts[-1][1] != label:
            starts.append((x, label, title))
    return starts

