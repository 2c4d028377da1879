"""A PDF page's layout from the positions of its words: lines rebuilt in reading order (a two-column page read one
column after the other), each line cut into cells where the gap between words is wider than a space, and tables
found by their shape: rows whose right-hand cells are amounts, set in columns aligned on their right edges, with
the column heads read from the lines above that sit over those columns.

Positions come from PDFium's text page (pypdfium2): the page's text in PDFium's order, and for each word the box
of its first and last character; nothing here depends on the order in which the PDF's content stream draws them.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field

from .tables import LETTER_RE, YEAR_RE, is_amount

_WORD_RE = re.compile(r"\S+")
# Signs that belong to the amount beside them, wherever the typesetter put them ("$" at a column's left edge).
_LEADING_SIGN = frozenset("$€£¥(")
_TRAILING_SIGN = frozenset((")", "%", ")%", "%)"))


@dataclass
class Word:
    x0: float
    x1: float
    top: float  # distance from the page's top edge, in points
    bottom: float
    text: str

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 1.0)


@dataclass
class Cell:
    x0: float
    x1: float
    text: str

    @property
    def amount(self) -> bool:
        """An amount ("8,187,301", "$ (174,812)", "37.9 %", "—"), not a year."""
        return is_amount(self.text.replace(" ", ""))


@dataclass
class Line:
    words: list[Word]
    cells: list[Cell] = field(default_factory=list)

    @property
    def top(self) -> float:
        return min(w.top for w in self.words)

    @property
    def bottom(self) -> float:
        return max(w.bottom for w in self.words)

    @property
    def height(self) -> float:
        return sorted(w.height for w in self.words)[len(self.words) // 2]

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    def amount_tail(self) -> int:
        """How many cells at the line's end are amounts."""
        count = 0
        for cell in reversed(self.cells):
            if not cell.amount:
                break
            count += 1
        return count


# ==============================================================================================================
# Words and lines


def page_words(textpage, page_height: float) -> list[Word]:
    """The words of a PDFium text page with their boxes (top-down coordinates): two character boxes a word."""
    import pypdfium2.raw as pdfium_c

    text = textpage.get_text_range()
    raw = textpage.raw
    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    rect = pdfium_c.FS_RECTF()
    words: list[Word] = []
    for m in _WORD_RE.finditer(text):
        first, last = m.start(), m.end() - 1
        if not pdfium_c.FPDFText_GetLooseCharBox(raw, first, rect):
            continue
        x0, y_top, y_bottom = rect.left, rect.top, rect.bottom
        x1 = rect.right
        if last != first and pdfium_c.FPDFText_GetCharBox(raw, last, left, right, bottom, top):
            x1 = max(x1, right.value)
        if y_top - y_bottom <= 0 or x1 < x0:
            continue
        words.append(Word(x0, x1, page_height - y_top, page_height - y_bottom, m.group()))
    return words


def text_lines(text: str) -> list[Line]:
    """Lines from text alone, where the words' boxes cannot be read: one cell each, a line's height apart."""
    return [Line([w], [Cell(w.x0, w.x1, w.text)])
            for k, ln in enumerate(s for s in text.splitlines() if s.strip())
            for w in [Word(0.0, 6.0 * len(ln.strip()), 12.0 * k, 12.0 * k + 10.0, ln.strip())]]


def group_lines(words: list[Word]) -> list[Line]:
    """Words on one baseline make a line (top to bottom), each line's words left to right."""
    lines: list[Line] = []
    for word in sorted(words, key=lambda w: ((w.top + w.bottom) / 2, w.x0)):
        middle = (word.top + word.bottom) / 2
        if lines:
            line = lines[-1]
            anchor = line.words[0]
            if abs(middle - (anchor.top + anchor.bottom) / 2) <= 0.4 * min(word.height, anchor.height):
                line.words.append(word)
                continue
        lines.append(Line([word]))
    for line in lines:
        line.words.sort(key=lambda w: w.x0)
        line.cells = _cells(line.words)
    return lines


def _cells(words: list[Word]) -> list[Cell]:
    """A line's words cut where the gap between two is wider than a space (about the letters' height); a sign
    stays with its amount."""
    cells: list[Cell] = []
    current: list[Word] = []
    for word in words:
        if current:
            gap = word.x0 - current[-1].x1
            # A sign joins the amount beside it; two signs side by side are two column heads ("$ %").
            joined = (current[-1].text in _LEADING_SIGN and word.text not in _TRAILING_SIGN) \
                or (word.text in _TRAILING_SIGN and current[-1].text not in _LEADING_SIGN)
            # Two amounts set close together ("(19)% $ 2,191") are two cells whatever the gap.
            next_amount = not joined and (word.text in _LEADING_SIGN or is_amount(word.text)) \
                and is_amount("".join(w.text for w in current))
            if next_amount or (gap > 0.9 * min(word.height, current[-1].height) and not joined):
                cells.append(Cell(current[0].x0, current[-1].x1, " ".join(w.text for w in current)))
                current = []
        current.append(word)
    if current:
        cells.append(Cell(current[0].x0, current[-1].x1, " ".join(w.text for w in current)))
    return cells


def reading_order(lines: list[Line], page_width: float) -> list[Line]:
    """The lines in reading order: a page set in two columns of prose (a gutter no word crosses, text on both
    sides) is read left column first; any other page top to bottom."""
    gutter = _gutter(lines, page_width)
    if gutter is None:
        return lines
    left: list[Line] = []
    right: list[Line] = []
    for line in lines:
        before = [w for w in line.words if w.x1 <= gutter]
        after = [w for w in line.words if w.x0 >= gutter]
        if before:
            left.append(Line(before, _cells(before)))
        if after:
            right.append(Line(after, _cells(after)))
    return left + right


_GUTTER_BAND = (0.3, 0.7)  # where a two-column page's gutter lies, as a share of the page's width
_GUTTER_MIN = 8.0  # points
_MIN_COLUMN_LINES = 8


def _gutter(lines: list[Line], page_width: float) -> float | None:
    words = [w for line in lines for w in line.words]
    if len(words) < 40 or page_width <= 0:
        return None
    lo, hi = _GUTTER_BAND[0] * page_width, _GUTTER_BAND[1] * page_width
    spans = sorted((max(w.x0, lo), min(w.x1, hi)) for w in words if w.x1 > lo and w.x0 < hi)
    best, at, reach = 0.0, None, lo
    for x0, x1 in spans + [(hi, hi)]:
        if x0 - reach > best:
            best, at = x0 - reach, (x0 + reach) / 2
        reach = max(reach, x1)
    if at is None or best < _GUTTER_MIN:
        return None
    sides = ([w for w in words if w.x1 <= at], [w for w in words if w.x0 >= at])
    for side in sides:
        lines_on_side = {round(w.top) for w in side}
        prose = sum(1 for w in side if LETTER_RE.search(w.text))
        if len(lines_on_side) < _MIN_COLUMN_LINES or prose < 0.8 * len(side) or len(side) < 4 * len(lines_on_side):
            return None  # a table's labels and figures, or a column of short captions, are no second column
    return at


# ==============================================================================================================
# Tables


@dataclass
class Table:
    heads: list[list[str]]  # header rows: [label-column text, head of column 1, ...]
    rows: list[list[str]]  # [label, value of column 1, ...] ("" where a row leaves a column empty)
    first: int  # index of the first line it takes (heads included) and one past its last
    end: int


_MIN_ROWS = 2
_HEAD_LINES = 6
_GROUP_LABEL_MAX = 130  # "Other income (expense):", a group heading between rows
_GROUP_LINES = 3
_SENTENCE_END = (".", "!", "?")


def _is_row(line: Line) -> bool:
    tail = line.amount_tail()
    if not tail:
        return False
    label = line.cells[: len(line.cells) - tail]
    return len(label) <= 1 and (not label or bool(LETTER_RE.search(label[0].text)))


def _group_label(line: Line) -> bool:
    """A line that heads a group of rows ("Current assets:", "Adjustments to reconcile ... activities:"): one cell
    of words, not a sentence."""
    return len(line.cells) == 1 and len(line.text) <= _GROUP_LABEL_MAX and not line.text.endswith(_SENTENCE_END)


def find_tables(lines: list[Line]) -> list[Table]:
    """The tables of a page's lines: runs of rows (a label, then amounts in aligned columns) with at least
    _MIN_ROWS rows of two or more amounts, their group headings and wrapped labels, and their column heads."""
    tables: list[Table] = []
    i = 0
    while i < len(lines):
        if not _is_row(lines[i]):
            i += 1
            continue
        j, rows = i, []
        while j < len(lines):
            if _is_row(lines[j]):
                rows.append(lines[j])
                j += 1
                continue
            # Up to _GROUP_LINES group headings (or a label wrapped over lines) before the next row.
            k = j
            while k < len(lines) and k - j < _GROUP_LINES and _group_label(lines[k]) \
                    and lines[k].top - lines[k - 1].bottom < 2.5 * lines[k].height:
                k += 1
            if rows and k > j and k < len(lines) and _is_row(lines[k]) \
                    and lines[k].top - lines[k - 1].bottom < 2.5 * lines[k].height:
                rows.extend(lines[j:k])
                j = k
                continue
            break
        full = sum(1 for r in rows if r.amount_tail() >= 2)
        if full >= _MIN_ROWS:
            table = _table(lines, i, j, rows)
            if table is not None:
                tables.append(table)
                i = j
                continue
        i = max(j, i + 1)
    return tables


def _columns(rows: list[Line]) -> list[tuple[float, float]]:
    """The amount columns as (left, right) spans, found by the right edges the amounts align on."""
    cells = sorted((c for r in rows for c in r.cells[len(r.cells) - r.amount_tail():]), key=lambda c: c.x1)
    height = sorted(r.height for r in rows)[len(rows) // 2]
    columns: list[list[Cell]] = []
    for cell in cells:
        if columns and cell.x1 - columns[-1][-1].x1 <= 1.5 * height:
            columns[-1].append(cell)
        else:
            columns.append([cell])
    # A column must hold amounts of more than one row (a stray footnote figure is not a column).
    kept = [col for col in columns if len(col) >= 2] or columns
    return [(min(c.x0 for c in col), max(c.x1 for c in col)) for col in kept]


def _column_of(cell: Cell, columns: list[tuple[float, float]]) -> int:
    return min(range(len(columns)), key=lambda k: abs(cell.x1 - columns[k][1]))


def _table(lines: list[Line], first: int, end: int, rows: list[Line]) -> Table | None:
    columns = _columns(rows)
    if not columns:
        return None
    out_rows: list[list[str]] = []
    for line in rows:
        tail = line.amount_tail()
        label = " ".join(c.text for c in line.cells[: len(line.cells) - tail])
        if not tail:
            out_rows.append([label])
            continue
        values = [""] * len(columns)
        for cell in line.cells[len(line.cells) - tail:]:
            k = _column_of(cell, columns)
            values[k] = f"{values[k]} {cell.text}".strip()
        if out_rows and len(out_rows[-1]) == 1 and label[:1].islower():
            out_rows[-1] = [f"{out_rows[-1][0]} {label}"] + values  # a label wrapped onto the row's line
            continue
        out_rows.append([label] + values)
    heads, groups, head_start = _heads(lines, first, columns)
    return Table(heads, groups + out_rows, head_start, end)


def _heads(lines: list[Line], first: int, columns: list[tuple[float, float]]
           ) -> tuple[list[list[str]], list[list[str]], int]:
    """The column heads: the short lines right above the first row whose cells sit over the amount columns
    (a head spanning all the columns, "Year Ended December 31,", is a header row of its own; one spanning some of
    them, "Six Months Ended", leads each of their heads: "Six Months Ended June 30, 2025"), skipping the group headings
    between them and the first row ("Assets", "Current assets"). Returns the header rows (spanning heads first,
    then one head per column, the label column's text first), the group headings as one-cell rows, and the line
    where the table starts; ([], [], first) when no head sits over the columns."""
    columns = list(columns)
    left_edge = columns[0][0]
    spans: list[list[str]] = [[] for _ in columns]  # heads over several columns ("Six Months Ended")
    per_column: list[list[str]] = [[] for _ in columns]
    label_text: list[str] = []
    groups: list[Line] = []
    start = first
    k = first - 1
    below = lines[first].top if first < len(lines) else 0.0
    while k >= 0 and first - k <= _HEAD_LINES:
        line = lines[k]
        if below - line.bottom > 2.5 * line.height or line.text.endswith(_SENTENCE_END) or _is_row(line):
            break
        over = [c for c in line.cells if c.x0 >= left_edge - 3 * line.height]
        if any(c.amount for c in over):
            break
        if not over:
            if start != first or not _group_label(line):
                break
            groups.insert(0, line)  # a group heading above the first row, below the heads
            below = line.top
            k -= 1
            continue
        # A number beside the heads (a stray page or note number) is not the label column's head.
        beside = [c for c in line.cells if c.x0 < left_edge - 3 * line.height and not c.amount]
        if len(" ".join(c.text for c in beside)) > 80:
            break
        for cell in reversed(over):
            hit = [n for n, (x0, x1) in enumerate(columns) if cell.x0 < x1 and cell.x1 > x0]
            if not hit:  # over the gap between two columns: the nearer one
                hit = [min(range(len(columns)), key=lambda n: abs((cell.x0 + cell.x1) / 2 - sum(columns[n]) / 2))]
            ends_in_year = bool(YEAR_RE.match(cell.text.split()[-1].strip("(),")))  # "2024", "June 30, 2024"
            if len(over) == 1 and len(columns) > 1 and not ends_in_year:
                hit = list(range(len(columns)))  # one head, not a year's, over all the columns
            for n in hit:
                (spans if len(hit) > 1 else per_column)[n].insert(0, cell.text)
            if len(hit) == 1:  # a column reaches as wide as its own head, for the heads above to span it
                columns[hit[0]] = (min(columns[hit[0]][0], cell.x0), max(columns[hit[0]][1], cell.x1))
        label_text[:0] = [c.text for c in beside]
        start = k
        below = line.top
        k -= 1
    if not any(per_column) and not any(spans):
        return [], [], first
    heads = []
    if all(span == spans[0] for span in spans):  # one head over every column: a row of its own
        if spans[0]:
            heads.append([""] + [" ".join(spans[0])])
        spans = [[] for _ in columns]
    heads.append([" ".join(label_text)] + [" ".join(span + col) for span, col in zip(spans, per_column)])
    return heads, [[g.text] for g in groups], start
