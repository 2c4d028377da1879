"""PDF -> text (pypdfium2): one page per PDF page, lines grouped into paragraphs, Item headings set apart, and
statements laid out one line per row read as tables."""

from __future__ import annotations

import re
from pathlib import Path

from .builder import BuiltText, TextBuilder
from .items import ITEM_HEAD_RE, PART_HEAD_RE
from .layout import Line, Table, find_tables, group_lines, page_words, reading_order
from .results import ParseError
from .tables import LETTER_RE, add_table

_COVER_PAGES = 3


def pdf_text(path: str | Path) -> BuiltText:
    """The text of a PDF filing, one page per PDF page; ParseError when it cannot be opened or has no text."""
    return pdf_document(path)[0]


def pdf_document(path: str | Path) -> tuple[BuiltText, str]:
    """(pdf_text, the first pages' text with its line breaks): a cover page is read line by line (the name above
    "(Exact name of registrant...)", the rows of the trading-symbol table), which paragraphs join."""
    # pypdfium2 (Apache-2.0 / BSD-3-Clause, PDFium's text layer): permissive, and ~25x faster than pypdf on a
    # 10-K. PyMuPDF is AGPL, which an open-source app under a permissive licence cannot ship.
    import pypdfium2

    name = Path(path).name
    try:
        document = pypdfium2.PdfDocument(str(path))
    except pypdfium2.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise ParseError(f"{name} is an encrypted PDF that needs a password") from exc
        raise ParseError(f"{name} cannot be opened as a PDF ({exc})") from exc
    except Exception as exc:  # noqa: BLE001 - any failure to open means "cannot open"
        raise ParseError(f"{name} cannot be opened as a PDF ({type(exc).__name__}: {exc})") from exc
    try:
        return _document_text(document, name)
    finally:
        document.close()


def _pdf_page(document, number: int) -> tuple[str, list[Line], float]:
    """(PDFium's text of the page, its lines rebuilt from word positions in reading order, the page's height)."""
    try:
        page = document[number]
        try:
            width, height = page.get_size()
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n")
                lines = reading_order(group_lines(page_words(textpage, height)), width)
                return text, lines, height
            finally:
                textpage.close()
        finally:
            page.close()
    except Exception:  # noqa: BLE001 - one damaged page must not lose the rest of the filing
        return "", [], 0.0


def _document_text(document, name: str) -> tuple[BuiltText, str]:
    pages = range(len(document))
    if not pages:
        raise ParseError(f"{name} is a PDF without pages")
    read = [_pdf_page(document, page) for page in pages]
    cover = [text for text, _lines, _height in read[:_COVER_PAGES]]
    running = _running_lines([(lines, height) for _text, lines, height in read])
    builder = TextBuilder()
    for number, (_text, lines, _height) in enumerate(read):
        if number:
            builder.new_page()
        kept = [line for k, line in enumerate(lines) if (number, k) not in running]
        for kind, content in _page_blocks(_page_entries(kept)):
            if kind == "table":
                add_table(builder, content)
            else:
                builder.add(content)
    if not builder.raw:
        raise ParseError(f"{name} has no text layer (a scanned PDF?)")
    return builder.build(), "\n".join(cover)


# A page's edge: the lines a running header or footer may take, and the share of the page's height they sit in.
_EDGE_LINES = 3
_EDGE_SHARE = 0.12
_RUNNING_MIN_PAGES = 3
_PAGE_NUMBER_RE = re.compile(r"^(?:page\s+)?(?:[A-Z]{1,2}-)?\d{1,3}\.?$|^[ivxlc]{1,6}$|^-\s*\d{1,3}\s*-$", re.I)


def _running_lines(pages: list[tuple[list[Line], float]]) -> set[tuple[int, int]]:
    """(page index, line index) of running headers, footers and page numbers: lines at a page's top or bottom
    edge whose words, digits aside, recur at the edge of several pages, and a lone page number at the edge."""

    def edge(lines: list[Line], height: float) -> list[int]:
        top = [k for k in range(min(_EDGE_LINES, len(lines))) if lines[k].bottom <= _EDGE_SHARE * height]
        low = [k for k in range(max(0, len(lines) - _EDGE_LINES), len(lines))
               if lines[k].top >= (1 - _EDGE_SHARE) * height and k not in top]
        return top + low

    def key(line: Line) -> str | None:
        text = line.text
        if len(text) > 100 or ITEM_HEAD_RE.match(text) or PART_HEAD_RE.match(text):
            return None
        return re.sub(r"\d+", "#", text.lower())

    seen: dict[str, set[int]] = {}
    for n, (lines, height) in enumerate(pages):
        for k in edge(lines, height):
            if (found := key(lines[k])) is not None:
                seen.setdefault(found, set()).add(n)
    drop: set[tuple[int, int]] = set()
    for n, (lines, height) in enumerate(pages):
        for k in edge(lines, height):
            found = key(lines[k])
            if found is not None and (len(seen[found]) >= _RUNNING_MIN_PAGES or _PAGE_NUMBER_RE.match(lines[k].text)):
                drop.add((n, k))
    return drop


def _page_entries(lines: list[Line]) -> list[str | Table | None]:
    """A page's lines as its text lines and its tables, in reading order; None where a blank line parts two
    paragraphs."""
    tables = {t.first: t for t in find_tables(lines)}
    out: list[str | Table | None] = []
    k = 0
    while k < len(lines):
        table = tables.get(k)
        if table is not None:
            out.append(table)
            k = table.end
            continue
        line = lines[k]
        if k and out and line.top - lines[k - 1].bottom > 0.6 * line.height:
            out.append(None)
        out.append(line.text)
        k += 1
    return out


_PDF_HEADING_RE = re.compile(r"^(?:PART\s+(?:IV|I{1,3})\b|ITEMS?\s*\d{1,2}[A-Ca-c]?\b|SIGNATURES?$)", re.I)
# PDF text layers sometimes glue a heading to the sentence before it ("...operating results.Item 1B. Unresolved Staff"):
# break the line there. Cross-references ("see Part II, Item 7 of this report") follow no sentence end.
_PDF_GLUED_HEADING_RE = re.compile(r"(?<=[.!?:”\"])[ \t]*(?=ITEM\s+\d{1,2}[A-C]?\.\s+[A-Z])", re.I)
_PDF_BLOCK_SOFT_LIMIT = 600
_PDF_BLOCK_HARD_LIMIT = 2500


def _pdf_blocks(page_text: str) -> list[tuple[str, str | list[list[str]]]]:
    """The blocks of a page given as text alone, one line per line (see _page_blocks)."""
    return _page_blocks(page_text.splitlines())


def _page_blocks(entries: list[str | Table | None]) -> list[tuple[str, str | list[list[str]]]]:
    """A page's lines and tables as ("text", paragraph) and ("table", rows of cells) blocks. Item/Part headings
    stand alone so they can be found. A table found from the words' positions (rag.parse.layout) comes with its
    column heads; a text line laid out as a row ("Revenues $ 8,187,301 $ 7,970,141 ...") that the positions did not
    set in a table is still read as one when two or more follow each other, its columns named by the period heads
    above them, so each row is read like an HTML table's `label | v1 | v2` (see rag.parse.tables)."""
    blocks: list[tuple[str, str | list[list[str]]]] = []
    current: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal current, size
        if current:
            blocks.append(("text", " ".join(current)))
        current, size = [], 0

    def titles_apart() -> None:
        # The short lines after the last sentence are the table's titles ("<Segment>", "(in millions)"): a
        # block of their own, so that they caption the table (rag.parse.builder) rather than end a paragraph.
        nonlocal current
        cut = max((k + 1 for k, ln in enumerate(current)
                   if ln.endswith((".", "!", "?")) and len(ln.split()) > 5), default=0)  # not "ACME, INC."
        titles = current[cut:]
        current = current[:cut]
        flush()
        current = titles
        flush()

    lines: list[str | Table | None] = []
    for entry in entries:
        if isinstance(entry, str):
            lines.extend(ln.strip() for ln in _PDF_GLUED_HEADING_RE.sub("\n", entry).splitlines() if ln.strip())
        else:
            lines.append(entry)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line is None:
            flush()
            i += 1
            continue
        if isinstance(line, Table):
            titles_apart()
            blocks.append(("table", line.heads + line.rows))
            i += 1
            continue
        rows, used = _table_at(lines, i)
        if rows:
            heads, count = _heads_above(current, rows)
            current = current[:len(current) - count]  # the head lines belong to the table, not the text above
            titles_apart()
            blocks.append(("table", heads + rows))
            i += used
            continue
        if len(line) <= 120 and _PDF_HEADING_RE.match(line):
            flush()
            blocks.append(("text", line))
            i += 1
            continue
        current.append(line)
        size += len(line) + 1
        if (size >= _PDF_BLOCK_SOFT_LIMIT and line[-1] in ".!?:") or size >= _PDF_BLOCK_HARD_LIMIT:
            flush()
        i += 1
    flush()
    return blocks


# One cell's worth of a row's tail: an amount ("8,187,301", "(174,812)", "37.9%", "—") or a sign set apart ("$", ")").
_AMOUNT_TOKEN = re.compile(r"^(?:[$€£¥]?\(?[$€£¥]?-?\d[\d,]*(?:\.\d+)?\)?%?\)?|[—–-]+|[$€£¥(]|\)|%)$")
_YEAR_TOKEN = re.compile(r"^(?:19|20)\d\d$")
_MIN_TABLE_ROWS = 2
_LABEL_LINE_MAX = 60  # "Other income (expense):", a group heading between a table's rows


def _row_cells(line: str) -> list[str] | None:
    """A line laid out as a table row: its label and the amount cells after it (two or more); None otherwise. A
    year right after the label is part of the label ("Balance at December 31, 2024"), not a cell."""
    tokens = line.split()
    start = len(tokens)
    while start > 0 and _AMOUNT_TOKEN.match(tokens[start - 1]) and not _YEAR_TOKEN.match(tokens[start - 1]) \
            and not tokens[start - 1].endswith(","):
        start -= 1
    label, tail = " ".join(tokens[:start]), tokens[start:]
    values = [t for t in tail if re.search(r"\d", t) or re.fullmatch(r"[—–-]+", t)]
    if len(values) < 2 or not LETTER_RE.search(label):
        return None
    return [label] + tail


def _table_at(lines: list[str], i: int) -> tuple[list[list[str]], int]:
    """The rows of a table starting at line i (at least _MIN_TABLE_ROWS row lines, group headings between them
    kept as one-cell rows) and how many lines they take; ([], 0) when none starts there."""
    rows: list[list[str]] = []
    found = 0
    j = i
    while j < len(lines) and isinstance(lines[j], str):
        cells = _row_cells(lines[j])
        if cells is not None:
            rows.append(cells)
            found += 1
        elif (rows and len(lines[j]) <= _LABEL_LINE_MAX and not lines[j].endswith((".", "!", "?"))
              and j + 1 < len(lines) and isinstance(lines[j + 1], str)
              and (following := _row_cells(lines[j + 1])) is not None):
            if following[0][:1].islower() or following[0].startswith("("):
                # A label wrapped onto the next line ("Interest and other income" / "(expense) 26,961 ..."):
                # one row.
                rows.append([f"{lines[j]} {following[0]}"] + following[1:])
                found += 1
                j += 1
            else:
                rows.append([lines[j]])
        else:
            break
        j += 1
    return (rows, j - i) if found >= _MIN_TABLE_ROWS else ([], 0)


# A column's period, as a statement heads it: "Three Months Ended", "Six Months Ended", "Year Ended".
_PERIOD_HEAD = re.compile(r"\b(?:(?:three|six|nine|twelve)\s+months(?:\s+ended)?|(?:fiscal\s+)?(?:quarters?|years?)\s+ended)\b",
                          re.I)
_DATE_HEAD = re.compile(r"\b(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+)?"
                        r"(?:19|20)\d\d\b", re.I)
_COLUMN_HEAD = re.compile(_DATE_HEAD.pattern + r"|%\s*change\b|\bchange\b", re.I)
_UNIT_NOTE = re.compile(r"^\(?(?:dollars\s+|amounts\s+)?in\s+(?:thousands|millions|billions)\b", re.I)
_HEAD_LINES_MAX = 12


def _heads_above(above: list[str], rows: list[list[str]]) -> tuple[list[list[str]], int]:
    """The column heads of a table laid out as text, read from the short lines right above its first row (the
    period heads, the dates or years): header rows for add_table, and how many of those lines they took; ([], 0)
    when the heads do not number the first row's cells."""
    columns = len(rows[0]) - 1 - sum(1 for c in rows[0][1:] if re.fullmatch(r"[$€£¥(]|\)|%", c))
    taken: list[str] = []
    for line in reversed(above[-_HEAD_LINES_MAX:]):
        if len(line) > 80 or line.endswith((".", "!", "?")) or not (
                _DATE_HEAD.search(line) or _PERIOD_HEAD.search(line) or re.fullmatch(r"[A-Za-z]+\.?\s*\d{0,2},?", line)):
            break
        if len(_COLUMN_HEAD.findall(" ".join([line] + taken))) > columns:
            break  # a title naming the periods ("Revenue for the Three Months Ended June 2, 2025 and ..."), no head
        taken.insert(0, line)
    text = " ".join(taken)
    # The column heads in print order: the periods' dates or years, and a change column beside them ("2024 2023
    # % Change").
    dates = [" ".join(m.group(0).split()) for m in _COLUMN_HEAD.finditer(text)]
    if len(dates) != columns:
        return [], 0
    # The unit note, on its own line or ahead of the years on theirs ("(Amounts in millions) 2024 2023").
    note = next((" ".join(_PERIOD_HEAD.sub("", _COLUMN_HEAD.sub("", ln)).split())
                 for ln in reversed(above[-len(taken) - 3:]) if _UNIT_NOTE.match(ln)), "")
    heads = [[note] + dates]
    periods = _PERIOD_HEAD.findall(text)
    if periods and len(periods) < columns and columns % len(periods) == 0:
        heads.insert(0, [""] + [" ".join(p.split()).title() for p in periods])
    return heads, len(taken)
