"""PDF -> text (pypdfium2): one page per PDF page, lines grouped into paragraphs, Item headings set apart, and
statements laid out one line per row read as tables."""

from __future__ import annotations

import re
from pathlib import Path

from .builder import PAGE_NUMBER_RE, BuiltText, TextBuilder
from .items import is_heading
from .layout import Line, Table, find_tables, group_lines, page_words, reading_order, text_lines
from .results import ParseError
from .tables import add_table

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


def _pdf_page(document, number: int) -> tuple[str, list[Line], tuple[float, float]]:
    """(PDFium's text of the page, its lines rebuilt from word positions top to bottom, the page's size)."""
    try:
        page = document[number]
        try:
            width, height = page.get_size()
            textpage = page.get_textpage()
            try:
                text = textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n")
                try:
                    return text, group_lines(page_words(textpage, height)), (width, height)
                except Exception:  # noqa: BLE001 - a page whose boxes cannot be read keeps its text, line by line
                    return text, text_lines(text), (width, height)
            finally:
                textpage.close()
        finally:
            page.close()
    except Exception:  # noqa: BLE001 - one damaged page must not lose the rest of the filing
        return "", [], (0.0, 0.0)


def _document_text(document, name: str) -> tuple[BuiltText, str]:
    pages = range(len(document))
    if not pages:
        raise ParseError(f"{name} is a PDF without pages")
    read = [_pdf_page(document, page) for page in pages]
    cover = [text for text, _lines, _size in read[:_COVER_PAGES]]
    running = _running_lines([(lines, size[1]) for _text, lines, size in read])
    builder = TextBuilder()
    for number, (_text, lines, size) in enumerate(read):
        if number:
            builder.new_page()
        # Headers and footers go first, so that the columns of a two-column page are read without them.
        kept = reading_order([line for k, line in enumerate(lines) if (number, k) not in running], size[0])
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
        if len(text) > 100 or is_heading(text):
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
            if found is not None and (len(seen[found]) >= _RUNNING_MIN_PAGES or PAGE_NUMBER_RE.match(lines[k].text)):
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


def _page_blocks(entries: list[str | Table | None]) -> list[tuple[str, str | list[list[str]]]]:
    """A page's lines and tables as ("text", paragraph) and ("table", rows of cells) blocks. Item/Part headings
    stand alone so they can be found. A table found from the words' positions (rag.parse.layout) comes with its
    column heads, so each row is read like an HTML table's `label | v1 | v2` (see rag.parse.tables)."""
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
