"""Table rows -> text: data tables as `label | v1 | v2` lines with their column-header lines, layout tables and
laid-out lists as ordinary text. Shared by HTML tables and the fixed-width tables of plain-text filings."""

from __future__ import annotations

import re

from .builder import WS_RE, TextBuilder, visible

_M = "[\U000f0000-\U0010ffff]*"  # optional fact markers inside a pattern
_PREFIX_CELL_RE = re.compile(r"^[$€£¥]?\(?[$€£¥]?$")  # "$", "(", "$(": belong to the next cell
_SUFFIX_CELLS = frozenset((")", "%", ")%", "%)"))  # belong to the previous cell
_CURRENCY_SPACE_RE = re.compile(rf"([$€£¥])\s+(?={_M}[\d(])")
_PAREN_OPEN_SPACE_RE = re.compile(rf"\(\s+(?={_M}[\d$])")
_PAREN_CLOSE_SPACE_RE = re.compile(rf"(?<=[\d%])({_M})\s+\)")
_PERCENT_SPACE_RE = re.compile(rf"(\d{_M})\s+%")
LETTER_RE = re.compile(r"[A-Za-z]")
_AMOUNT_RE = re.compile(r"^[$€£¥]?\(?-?[$€£¥]?\d[\d,]*(?:\.\d+)?\)?%?\)?$|^[—–-]+$")
YEAR_RE = re.compile(r"^(?:19|20)\d\d$")
_BULLET_RE = re.compile(
    r"^(?:[•●◦▪■□►‣∙·○\-–—*]|\(?\d{1,2}\)|\(?[a-zA-Z]\)|\d{1,2}\.|[a-zA-Z]\.|\(?[ivxIVX]{1,4}\)|[ivxIVX]{1,4}\.)$"
)


def _tidy_amount_cell(cell: str) -> str:
    """'$ 48,210' -> '$48,210', '( 1,234 )' -> '(1,234)', '37.9 %' -> '37.9%' (cells without words only)."""
    if LETTER_RE.search(cell):
        return cell
    cell = _CURRENCY_SPACE_RE.sub(r"\1", cell)
    cell = _PAREN_OPEN_SPACE_RE.sub("(", cell)
    cell = _PAREN_CLOSE_SPACE_RE.sub(r"\1)", cell)
    return _PERCENT_SPACE_RE.sub(r"\1%", cell)


def _merge_cells(raw_cells: list[str]) -> list[str]:
    """Drop spacer cells; glue '$', '(' to the next cell and ')', '%' to the previous one."""
    out: list[str] = []
    prefix = ""
    for raw in raw_cells:
        cell = WS_RE.sub(" ", raw).strip()
        vis = visible(cell).strip()
        if not vis:
            continue
        if _PREFIX_CELL_RE.match(vis):
            prefix += cell
            continue
        if vis in _SUFFIX_CELLS and out:
            out[-1] += cell
            continue
        out.append(_tidy_amount_cell(prefix + cell))
        prefix = ""
    if prefix:
        out.append(prefix)
    return out


UNIT_SIGNS = "$%€£¥"


def without_unit_leftovers(cell: str) -> str:
    """A cell as a reader should see it: "" when it is nothing but currency or percent signs, and a run of two or
    more signs glued to a heading's end dropped ("2024%%" -> "2024"). Both are what a layout leaves when it gives a
    unit its own column; for display only, since dropping cells would shift a row's values against its heads."""
    text = cell.strip()
    if not text.strip(UNIT_SIGNS + " "):
        return ""
    bare = text.rstrip(UNIT_SIGNS)
    if len(text) - len(bare) >= 2 and (bare[-1].isalnum() or bare[-1] == ")"):
        return bare
    return text


def is_amount(value: str) -> bool:
    return bool(_AMOUNT_RE.match(value)) and not YEAR_RE.match(value)


def _header_row_count(rows: list[tuple[bool, list[str]]]) -> int:
    """Leading rows that name the columns (years, period captions, "(Dollars in Millions) | 2024 | 2023"): rows
    without amounts that either leave the label column empty or hold several cells. A label-only row such as
    "Net sales:" is data. A table with no amounts at all takes its first row as header when that row is short."""
    count = 0
    for label_empty, cells in rows[:6]:
        if any(is_amount(visible(c)) for c in cells):
            break
        if not (label_empty or len(cells) >= 2):
            break
        count += 1
    if count < len(rows):
        return count
    first = rows[0][1]
    has_amounts = any(is_amount(visible(c)) for _, cells in rows for c in cells)
    if not has_amounts and len(rows) >= 3 and len(first) >= 2 and all(len(visible(c)) <= 40 for c in first):
        return 1
    return 0


def add_table(builder: TextBuilder, raw_rows: list[list[str]]) -> None:
    """Render one table: data tables as `label | v1 | v2` lines, layout tables as ordinary text."""
    rows: list[tuple[bool, list[str]]] = []
    for raw in raw_rows:
        cells = _merge_cells(raw)
        if cells:
            label_empty = not raw or not visible(raw[0]).strip()
            rows.append((label_empty, cells))
    if not rows:
        return
    if all(len(cells) == 1 for _, cells in rows):  # layout table: one text cell per row
        for _, cells in rows:
            builder.add(cells[0])
        return
    if all(_is_list_row(cells) for _, cells in rows):  # bullets or footnotes laid out as a table
        for _, cells in rows:
            builder.add(" ".join(cells))
        return
    if len(rows) == 1 and not any(is_amount(visible(c)) for c in rows[0][1]):
        builder.add(" ".join(rows[0][1]))  # a heading such as "Item 7. | Management's Discussion ..."
        return
    has_labels = not all(label_empty for label_empty, _ in rows)
    lines = []
    for label_empty, cells in rows:
        line = " | ".join(cells)
        lines.append("| " + line if label_empty and has_labels else line)
    n_header = _header_row_count(rows)
    header = visible("\n".join(lines[:n_header]))
    builder.add("\n".join(lines), kind="table", header=header, collapse=False)


def _is_list_row(cells: list[str]) -> bool:
    if len(cells) == 1:
        return True
    return len(cells) == 2 and bool(_BULLET_RE.match(visible(cells[0]))) and len(LETTER_RE.findall(cells[1])) >= 3
