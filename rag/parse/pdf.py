"""PDF -> text (pypdfium2): one page per PDF page, lines grouped into paragraphs, Item headings set apart."""

from __future__ import annotations

import re
from pathlib import Path

from .builder import BuiltText, TextBuilder
from .results import ParseError

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


def _pdf_page_text(document, number: int) -> str:
    try:
        page = document[number]
        try:
            textpage = page.get_textpage()
            try:
                return textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n")
            finally:
                textpage.close()
        finally:
            page.close()
    except Exception:  # noqa: BLE001 - one damaged page must not lose the rest of the filing
        return ""


def _document_text(document, name: str) -> tuple[BuiltText, str]:
    pages = range(len(document))
    if not pages:
        raise ParseError(f"{name} is a PDF without pages")
    builder = TextBuilder()
    cover: list[str] = []
    for number, page in enumerate(pages):
        if number:
            builder.new_page()
        page_text = _pdf_page_text(document, page)
        if number < _COVER_PAGES:
            cover.append(page_text)
        for paragraph in _pdf_paragraphs(page_text):
            builder.add(paragraph)
    if not builder.raw:
        raise ParseError(f"{name} has no text layer (a scanned PDF?)")
    return builder.build(), "\n".join(cover)


_PDF_HEADING_RE = re.compile(r"^(?:PART\s+(?:IV|I{1,3})\b|ITEMS?\s*\d{1,2}[A-Ca-c]?\b|SIGNATURES?$)", re.I)
# PDF text layers sometimes glue a heading to the sentence before it ("...operating results.Item 1B. Unresolved Staff"):
# break the line there. Cross-references ("see Part II, Item 7 of this report") follow no sentence end.
_PDF_GLUED_HEADING_RE = re.compile(r"(?<=[.!?:”\"])[ \t]*(?=ITEM\s+\d{1,2}[A-C]?\.\s+[A-Z])", re.I)
_PDF_BLOCK_SOFT_LIMIT = 600
_PDF_BLOCK_HARD_LIMIT = 2500


def _pdf_paragraphs(page_text: str) -> list[str]:
    """Group a page's extracted lines into paragraphs; Item/Part headings stand alone so they can be found."""
    paragraphs: list[str] = []
    current: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal current, size
        if current:
            paragraphs.append(" ".join(current))
        current, size = [], 0

    for raw in _PDF_GLUED_HEADING_RE.sub("\n", page_text).splitlines():
        line = raw.strip()
        if not line:
            continue
        if len(line) <= 120 and _PDF_HEADING_RE.match(line):
            flush()
            paragraphs.append(line)
            continue
        current.append(line)
        size += len(line) + 1
        if (size >= _PDF_BLOCK_SOFT_LIMIT and line[-1] in ".!?:") or size >= _PDF_BLOCK_HARD_LIMIT:
            flush()
    flush()
    return paragraphs
