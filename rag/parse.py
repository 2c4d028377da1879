"""Filing file -> structured text: Items, pages, tables as rows, character offsets, XBRL facts.

A filing's text is a sequence of blocks (paragraphs, headings, list items, tables) joined by a blank line.
Tables read as one row per line, `label | v1 | v2`, with their column-header lines first; every block, section,
page and visible XBRL fact carries its character span in that text, so a citation can point at the exact passage.

Inputs: EDGAR HTML (inline XBRL or plain), EDGAR full-submission .txt (SGML), and PDF (pypdfium2).
"""

from __future__ import annotations

import bisect
import codecs
import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree


class ParseError(ValueError):
    """The input cannot be read as a filing; the message says why in words a user understands."""


@dataclass
class Block:
    """A paragraph, heading or table of the filing's text. `text == ParsedFiling.text[char_start:char_end]`."""

    kind: str  # "text" | "table"
    char_start: int
    char_end: int
    page: int  # 1-based page the block starts on
    # For tables: the column-header line(s) (e.g. "| 2024 | 2023 | 2022"), repeated by the chunker in every
    # chunk of the table so that a number never travels without its year. Empty for text.
    table_header: str = ""
    text: str = field(default="", repr=False)  # the block's own text (a copy of the span, for convenience)
    # For tables: the short lines right above it (title and units: "CONSOLIDATED STATEMENTS OF OPERATIONS",
    # "(In millions, except ...)"), which a chunker may repeat with table_header. Empty for text.
    caption: str = field(default="", repr=False)


@dataclass
class Section:
    # "Cover", "Item 1", "Item 1A", ..., "Item 16", "Signatures"; 10-Q: "Part I Item 2", "Part II Item 1A";
    # 8-K: "Item 8.01"; "Financial Statements" for statements printed after Part IV where Item 8 points to them;
    # "Document" when no Item heading was found at all
    item: str
    title: str  # "Risk Factors"
    char_start: int
    char_end: int
    page_start: int
    page_end: int


@dataclass
class Fact:
    """One inline XBRL fact (ix:nonFraction, or a dei: ix:nonNumeric) with where it sits in the text."""

    concept: str  # "us-gaap:Revenues"
    value: float | None  # scale and sign applied; None for non-numeric facts
    text: str  # as displayed ("391,035")
    unit: str  # "usd", "shares", "usdPerShare", "" for non-numeric
    context_id: str
    period_start: str | None  # ISO date, None for an instant
    period_end: str | None  # ISO date (the instant for instant contexts)
    dimensions: dict[str, str] = field(default_factory=dict)  # axis -> member
    decimals: str | None = None
    scale: int = 0
    char_start: int = -1  # span in ParsedFiling.text, -1 where hidden (ix:header)
    char_end: int = -1


@dataclass
class ParsedFiling:
    text: str
    blocks: list[Block]
    sections: list[Section]
    page_starts: list[int]  # page_starts[i] = char offset where page i+1 begins; page_starts[0] == 0
    # Read from the file itself: company, cik, form, fiscal_year (int), fiscal_year_source
    # ("dei:DocumentFiscalYearFocus" | "period_end" | "caller"), period_end (ISO), ticker, accession,
    # filing_date, shares_outstanding. Keys absent when unknown.
    meta: dict
    facts: list[Fact] = field(default_factory=list)

    def page_at(self, offset: int) -> int:
        """1-based page holding character `offset`."""
        return max(1, bisect.bisect_right(self.page_starts, offset))

    def section_at(self, offset: int) -> Section | None:
        """The section whose span holds `offset` (the last one for offsets at or past the end)."""
        if not self.sections:
            return None
        starts = [s.char_start for s in self.sections]
        return self.sections[max(0, bisect.bisect_right(starts, offset) - 1)]


@dataclass
class SubmissionDocument:
    """One <DOCUMENT> of an EDGAR full submission."""

    type: str  # "10-K", "EX-21.1", "GRAPHIC", ...
    sequence: str
    filename: str
    description: str
    text: str  # the content of <TEXT>, without <XBRL>/<PDF> wrappers


@dataclass
class FullSubmission:
    header: dict  # company, cik, form, period_end (ISO), filing_date (ISO), accession, fiscal_year_end ("1231")
    documents: list[SubmissionDocument]
    primary: SubmissionDocument | None  # the document of the submission's own form, else the first


# --------------------------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------------------------

_ACCESSION_RE = re.compile(r"\d{10}-\d{2}-\d{6}")


def parse_file(path: str | Path) -> ParsedFiling:
    """Parse an EDGAR .htm/.html, a full-submission .txt, a plain-text filing or a PDF."""
    path = Path(path)
    try:
        parsed = _parse_path(path)
    except ParseError as exc:
        if path.name in str(exc):
            raise
        raise ParseError(f"{path.name}: {exc}") from exc
    # Older EDGAR documents are often saved under their accession number.
    if "accession" not in parsed.meta:
        m = _ACCESSION_RE.search(path.name)
        if m:
            parsed.meta["accession"] = m.group()
    return parsed


def _parse_path(path: Path) -> ParsedFiling:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    if not data.strip():
        raise ParseError(f"{path.name} is empty")
    suffix = path.suffix.lower()
    if data.lstrip()[:5] == b"%PDF-" or suffix == ".pdf":
        return parse_pdf(path)
    head = data[:65536].decode("latin-1").lower()
    if "<document>" in head and "<type>" in head:
        return parse_submission(_decode(data))
    if suffix in (".htm", ".html", ".xhtml", ".xml") or _HTML_SNIFF_RE.search(head):
        return parse_html(data)
    return parse_text(_decode(data))


def parse_html(data: bytes | str) -> ParsedFiling:
    """Parse EDGAR HTML (inline XBRL or plain) into text, blocks, sections, pages, facts and metadata."""
    built, meta, facts = _html_document(data)
    _fill_from_cover(meta, built.text)
    return _assemble(built, meta, facts)


def _html_document(data: bytes | str) -> tuple[_BuiltText, dict, list[Fact]]:
    """Text and facts of an HTML document, with the metadata its inline XBRL states (nothing guessed)."""
    text = _decode(data) if isinstance(data, (bytes, bytearray)) else data
    root = _html_root(text)
    builder = _TextBuilder()
    facts = _FactCollector()
    _HtmlWalker(builder, facts).walk(root)
    if not builder.raw:
        raise ParseError("the document holds no readable text")
    built = builder.build()
    facts.finish(built.spans, built.text)
    return built, facts.meta(), facts.facts


def fiscal_year_from_period_end(period_end: str) -> int:
    """The fiscal year when no dei:DocumentFiscalYearFocus says it: the year the period ends in, except a 52/53-week
    year that ends in the first week of January (Johnson & Johnson's fiscal 2022 ended 2023-01-01), which is named
    for the year it ran through. Callers mark it fiscal_year_source="period_end": a fallback, not the company's
    own label."""
    year, month, day = int(period_end[:4]), int(period_end[5:7]), int(period_end[8:10])
    return year - 1 if month == 1 and day <= 7 else year


def parse_pdf(path: str | Path) -> ParsedFiling:
    """Parse a PDF filing: one page per PDF page, Items detected where the text shows them."""
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
        return _pdf_document(document, name)
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


def _pdf_document(document, name: str) -> ParsedFiling:
    pages = range(len(document))
    if not pages:
        raise ParseError(f"{name} is a PDF without pages")
    builder = _TextBuilder()
    for number, page in enumerate(pages):
        if number:
            builder.new_page()
        for paragraph in _pdf_paragraphs(_pdf_page_text(document, page)):
            builder.add(paragraph)
    if not builder.raw:
        raise ParseError(f"{name} has no text layer (a scanned PDF?)")
    built = builder.build()
    meta: dict = {}
    _fill_from_cover(meta, built.text)
    return _assemble(built, meta, [])


def read_full_submission(text: str) -> FullSubmission:
    """Split an EDGAR full-submission .txt into its SGML header and its <DOCUMENT> blocks."""
    first_doc = _DOC_OPEN_RE.search(text)
    header_text = text[: first_doc.start()] if first_doc else text[:20000]
    header = _read_sgml_header(header_text)
    documents = []
    for m in _DOC_RE.finditer(text):
        documents.append(_read_sgml_document(m.group(1)))
    form = header.get("form", "").upper()
    primary = next((d for d in documents if form and d.type.upper() == form), None)
    if primary is None and documents:
        primary = documents[0]
    return FullSubmission(header=header, documents=documents, primary=primary)


def parse_submission(text: str) -> ParsedFiling:
    """Parse a full-submission .txt: its main document, with metadata completed from the SGML header."""
    submission = read_full_submission(text)
    doc = submission.primary
    if doc is None:
        raise ParseError("the submission holds no <DOCUMENT>")
    if not doc.text.strip():
        raise ParseError(f"the main document ({doc.type} {doc.filename}) is empty")
    if _HTML_SNIFF_RE.search(doc.text[:65536].lower()):
        built, meta, facts = _html_document(doc.text)
    else:
        built, meta, facts = _text_document(doc.text), {}, []
    header = submission.header
    # EDGAR's header is the authority on its own bookkeeping (the exact form type, e.g. 10-K405); what the inline
    # XBRL states comes next; a guess from the cover page text only fills what is still missing.
    for key in ("form", "cik", "accession", "filing_date"):
        if header.get(key):
            meta[key] = header[key]
    for key in ("company", "period_end"):
        if header.get(key) and key not in meta:
            meta[key] = header[key]
    _fill_from_cover(meta, built.text)
    if doc.filename:
        meta["primary_document"] = doc.filename
    return _assemble(built, meta, facts)


def parse_text(text: str) -> ParsedFiling:
    """Parse a plain-text filing (1990s EDGAR): paragraphs by blank lines, pages by <PAGE> or form feeds."""
    built = _text_document(text)
    meta: dict = {}
    _fill_from_cover(meta, built.text)
    return _assemble(built, meta, [])


def _text_document(text: str) -> _BuiltText:
    builder = _TextBuilder()
    _add_plain_text(builder, text)
    if not builder.raw:
        raise ParseError("the document holds no readable text")
    return builder.build()


def _add_plain_text(builder: _TextBuilder, text: str) -> None:
    """Fixed-layout text (a .txt filing, or one wrapped in <pre>): paragraphs by blank lines, pages by <PAGE>."""
    text = _CONTROL_RE.sub("", text)
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


# --------------------------------------------------------------------------------------------------------------
# Text assembly: blocks joined by a blank line, page starts, fact spans
# --------------------------------------------------------------------------------------------------------------

# A visible XBRL fact is wrapped in two private-use code points while its text flows through whitespace collapse and
# table-cell merging; the builder turns them into offsets and removes them. Planes 15 and 16 hold 65534 each.
_START_BASE = 0xF0000
_END_BASE = 0x100000
_MAX_MARKED = 0xFFFE
_MARK_RE = re.compile("[\U000f0000-\U0010ffff]")
_WS_RE = re.compile(r"[\s\u200b\ufeff]+")
# "Item 1.Business": the heading's two spans are set apart by padding, not by a space.
_ITEM_GLUED_RE = re.compile(r"^(\s*ITEM\s+\d{1,2}[A-C]?\.)(?=[A-Z])", re.I)
# A line drawn with characters (the rule between a table and its footnotes): no words, and dozens of word pieces
# that would crowd the footnotes out of their table's chunk.
_RULE_LINE_RE = re.compile(r"[_\-=*~.·•]{4,}")
_BULLET_GLUED_RE = re.compile(r"^(\s*[•●◦▪■►‣∙·○])(?=[^\s•●◦▪■►‣∙·○])")  # "•Facebook." likewise
# C0 controls (bar tab/newline/carriage return/form feed), lone surrogates and marker code points never belong in
# the text; removing them up front keeps lxml and the markers safe.
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f\ud800-\udfff\U000f0000-\U0010ffff]")


def _visible(s: str) -> str:
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
class _BuiltText:
    text: str
    blocks: list[Block]
    page_starts: list[int]
    spans: dict[int, tuple[int, int]]  # fact index -> (start, end)


class _TextBuilder:
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
            raw = _WS_RE.sub(" ", raw)
            raw = _BULLET_GLUED_RE.sub(r"\1 ", _ITEM_GLUED_RE.sub(r"\1 ", raw, count=1), count=1)
        clean, marks = _split_markers(raw)
        text = clean.strip()
        if _RULE_LINE_RE.fullmatch(text):
            text = ""
        if not text:
            for code, _ in marks:
                if code >= _END_BASE and self.raw:  # the fact ended with the previous block
                    self.raw[-1].marks.append((code, len(self.raw[-1].text)))
                elif code < _END_BASE:
                    self._carry += chr(code)
            return
        if self._break_pending:
            self.page += 1
            self._break_pending = False
        if marks:
            lead = len(clean) - len(clean.lstrip())
            marks = [(code, min(max(offset - lead, 0), len(text))) for code, offset in marks]
        self.raw.append(_RawBlock(text, kind, header, self.page, marks))

    def build(self) -> _BuiltText:
        running = _running_blocks(self.raw)
        kept = [b for i, b in enumerate(self.raw) if i not in running]
        parts, blocks, spans = [], [], {}
        starts: dict[int, int] = {}
        pos = 0
        for raw in kept:
            for code, offset in raw.marks:
                if code >= _END_BASE:
                    idx = code - _END_BASE
                    if idx in spans:
                        spans[idx] = (spans[idx][0], pos + offset)
                else:
                    spans[code - _START_BASE] = (pos + offset, -1)
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
        return _BuiltText(text, blocks, page_starts, {k: v for k, v in spans.items() if 0 <= v[0] <= v[1]})


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
                    or above.text.endswith(".") or _ITEM_HEAD_RE.match(above.text)):
                break  # titles, units and "...as follows:" lead-ins; not the sentences of the text before
            lines.insert(0, above.text)
            k -= 1
        table.caption = "\n".join(lines)


_PAGE_NUMBER_RE = re.compile(r"^(?:page\s+)?(?:[A-Z]{1,2}-)?\d{1,3}\.?$|^[ivxlc]{1,6}$", re.I)
_TOC_LINK_RE = re.compile(r"^(?:table\s+of\s+contents|index)\b", re.I)
_SMALL_NUMBER_RE = re.compile(r"(?<![\d,.])\d{1,3}(?![\d,.]\d)")
_RUNNING_MAX_CHARS = 80
_RUNNING_MIN_PAGES = 3


def _running_blocks(raw: list[_RawBlock]) -> set[int]:
    """Indexes of page numbers, running footers ("Apple Inc. | 2024 Form 10-K | 20") and headers ("Table of
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
        if _ITEM_HEAD_RE.match(block.text) or _PART_HEAD_RE.match(block.text):
            return None  # "Item 7" atop a page is how a section is found, even where it repeats
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
        return len(seen_on[k]) >= _RUNNING_MIN_PAGES or (at_end and bool(_PAGE_NUMBER_RE.match(raw[i].text)))

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


def _assemble(built: _BuiltText, meta: dict, facts: list[Fact]) -> ParsedFiling:
    parsed = ParsedFiling(text=built.text, blocks=built.blocks, sections=[], page_starts=built.page_starts,
                          meta=meta, facts=facts)
    parsed.sections = _find_sections(parsed)
    return parsed


# --------------------------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------------------------

# Not <table>: 1990s plain-text filings mark their tables up with <TABLE>, <S> and <C>.
_HTML_SNIFF_RE = re.compile(r"<(?:html|body|div|p|font|br|td|tr|ix:[a-z]+)[\s>/]")
_XML_DECL_RE = re.compile(r"^[\s\ufeff]*<\?xml[^>]*>")  # lxml refuses a str that declares an encoding
_CHARSET_RE = re.compile(rb"""(?:charset|encoding)\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none", re.I)
_BREAK_BEFORE_RE = re.compile(r"(?:page-)?break-before\s*:\s*(?:always|page|left|right|recto|verso)", re.I)
_BREAK_AFTER_RE = re.compile(r"(?:page-)?break-after\s*:\s*(?:always|page|left|right|recto|verso)", re.I)
_PAGEBREAK_COMMENT_RE = re.compile(r"^\s*page\s*break\s*$", re.I)  # <!-- PAGEBREAK --> of 1990s filer software

_SKIP_TAGS = frozenset(
    "head script style title noscript template meta link iframe object svg math select option button".split()
)
_BLOCK_TAGS = frozenset(
    """p div h1 h2 h3 h4 h5 h6 li ul ol dl dt dd blockquote center section article header footer nav aside main
    pre address form fieldset figure figcaption caption hr br body html tr td th table thead tbody tfoot""".split()
)
_ROW_GROUP_TAGS = frozenset(("thead", "tbody", "tfoot"))

# Flags kept per open element for its end event.
_F_BLOCK, _F_BREAK_AFTER, _F_TABLE, _F_ROW, _F_CELL, _F_NESTED_TABLE = 1, 2, 4, 8, 16, 32


def _decode(data: bytes) -> str:
    """Bytes -> str: BOMs, then UTF-8, then the declared charset, then Windows-1252 (what old filings use)."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", "replace")
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return data.decode("utf-16", "replace")
    if data[:65536].count(b"\x00") > 0:
        raise ParseError("the file is binary, not a text or HTML filing")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    m = _CHARSET_RE.search(data[:4096])
    if m:
        try:
            return data.decode(m.group(1).decode("ascii"), "replace")
        except LookupError:
            pass
    return data.decode("cp1252", "replace")


def _html_root(text: str):
    text = _CONTROL_RE.sub("", _XML_DECL_RE.sub("", text, count=1))
    if not text.strip():
        raise ParseError("the document is empty")
    if text.count("\ufffd") > max(64, len(text) // 20):
        raise ParseError("the file is binary or in an unknown encoding, not an HTML filing")
    parser = etree.HTMLParser(huge_tree=True, remove_blank_text=False, no_network=True)
    try:
        root = etree.fromstring(text, parser)
    except (etree.LxmlError, ValueError) as exc:
        raise ParseError(f"the HTML cannot be read: {exc}") from exc
    if root is None:
        raise ParseError("the document holds no HTML")
    return root


class _TableCollector:
    """Rows of cells (raw text with fact markers) of the outermost table being walked."""

    def __init__(self) -> None:
        self.rows: list[list[str]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def start_row(self) -> None:
        self.end_row()
        self._row = []

    def end_row(self) -> None:
        self.end_cell()
        if self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def start_cell(self) -> None:
        self.end_cell()
        if self._row is None:
            self._row = []
        self._cell = []

    def end_cell(self) -> None:
        if self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None

    def text(self, s: str) -> None:
        if self._cell is None:
            if not s.strip():
                return  # whitespace between tags
            self.start_cell()
        self._cell.append(s)

    def separate(self) -> None:
        if self._cell is not None:
            self._cell.append(" ")


class _HtmlWalker:
    """One pass over the lxml tree: visible text into blocks, tables into row blocks, facts and contexts read."""

    def __init__(self, builder: _TextBuilder, facts: _FactCollector) -> None:
        self.builder = builder
        self.facts = facts
        self.paragraph: list[str] = []
        self.table: _TableCollector | None = None
        self.table_depth = 0
        self.break_after_table = False

    # Text routing: into the current table cell, or into the current paragraph.
    def emit(self, s: str) -> None:
        if self.table is not None:
            self.table.text(s)
        else:
            self.paragraph.append(s)

    def boundary(self) -> None:
        if self.table is not None:
            self.table.separate()
        elif self.paragraph:
            self.builder.add("".join(self.paragraph))
            self.paragraph = []

    def page_break(self) -> None:
        if self.table is not None:
            self.break_after_table = True  # a break inside a table is applied after it
            return
        self.boundary()
        self.builder.page_break()

    def walk(self, root) -> None:
        walker = etree.iterwalk(root, events=("start", "end", "comment"))
        stack: list[tuple[bool, int, str]] = []  # (hidden before the element, flags, end marker)
        hidden = False
        for event, el in walker:
            if event == "comment":
                if not hidden:
                    if _PAGEBREAK_COMMENT_RE.match(el.text or ""):
                        self.page_break()
                    if el.tail:
                        self.emit(el.tail)
                continue
            tag = el.tag
            if event == "start":
                outer_hidden = hidden
                flags, end_mark = 0, ""
                if not isinstance(tag, str):
                    walker.skip_subtree()
                    stack.append((outer_hidden, 0, ""))
                    continue
                if ":" in tag:
                    end_mark = self._xbrl_start(el, tag, hidden, walker)
                if tag in _SKIP_TAGS or tag == "ix:header":
                    hidden = True
                    if tag != "ix:header":
                        walker.skip_subtree()
                elif tag == "pre" and not hidden and self.table is None:
                    # A plain-text filing wrapped in <pre>: its blank lines and column gaps are its layout.
                    self.boundary()
                    _add_plain_text(self.builder, "".join(el.itertext()))
                    walker.skip_subtree()
                    stack.append((outer_hidden, 0, ""))
                    continue
                if not hidden:
                    style = el.get("style")
                    if style:
                        style = style.lower()
                        if "none" in style and _HIDDEN_STYLE_RE.search(style):
                            hidden = True
                        elif "reak" in style:
                            if _BREAK_BEFORE_RE.search(style):
                                self.page_break()
                            if _BREAK_AFTER_RE.search(style):
                                flags |= _F_BREAK_AFTER
                if not hidden:
                    flags |= self._structure_start(tag)
                    if end_mark:
                        self.emit(end_mark[0])
                        end_mark = end_mark[1]
                    if el.text:
                        self.emit(el.text)
                else:
                    end_mark = ""
                stack.append((outer_hidden, flags, end_mark))
            else:
                outer_hidden, flags, end_mark = stack.pop()
                if end_mark:
                    self.emit(end_mark)
                if flags:
                    self._structure_end(flags)
                hidden = outer_hidden
                if el.tail and not hidden:
                    self.emit(el.tail)
        self.boundary()

    def _xbrl_start(self, el, tag: str, hidden: bool, walker) -> str:
        """Read a fact or context; for a visible fact return its start+end marker pair."""
        if tag == "ix:nonfraction":
            idx = self.facts.add_numeric(el)
        elif tag == "ix:nonnumeric":
            idx = self.facts.add_nonnumeric(el)
        elif tag.endswith(":context"):
            self.facts.add_context(el)
            walker.skip_subtree()
            return ""
        else:
            return ""
        if idx is None or hidden or idx >= _MAX_MARKED:
            return ""
        return chr(_START_BASE + idx) + chr(_END_BASE + idx)

    def _structure_start(self, tag: str) -> int:
        if tag == "table":
            self.table_depth += 1
            if self.table_depth == 1:
                self.boundary()
                self.table = _TableCollector()
                return _F_TABLE
            self.boundary()
            return _F_NESTED_TABLE
        if self.table_depth == 1 and self.table is not None:
            if tag == "tr":
                self.table.start_row()
                return _F_ROW
            if tag in ("td", "th"):
                self.table.start_cell()
                return _F_CELL
            if tag in _ROW_GROUP_TAGS:
                return 0
        if tag in _BLOCK_TAGS:
            self.boundary()
            return _F_BLOCK
        return 0

    def _structure_end(self, flags: int) -> None:
        if flags & _F_CELL:
            self.table.end_cell()
        if flags & _F_ROW:
            self.table.end_row()
        if flags & _F_TABLE:
            self.table.end_row()
            table, self.table = self.table, None
            self.table_depth -= 1
            _add_table(self.builder, table.rows)
            if self.break_after_table:
                self.break_after_table = False
                self.builder.page_break()
        if flags & _F_NESTED_TABLE:
            self.table_depth -= 1
            self.boundary()
        if flags & _F_BLOCK:
            self.boundary()
        if flags & _F_BREAK_AFTER:
            self.page_break()


# --------------------------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------------------------

_M = "[\U000f0000-\U0010ffff]*"  # optional fact markers inside a pattern
_PREFIX_CELL_RE = re.compile(r"^[$€£¥]?\(?[$€£¥]?$")  # "$", "(", "$(": belong to the next cell
_SUFFIX_CELLS = frozenset((")", "%", ")%", "%)"))  # belong to the previous cell
_CURRENCY_SPACE_RE = re.compile(rf"([$€£¥])\s+(?={_M}[\d(])")
_PAREN_OPEN_SPACE_RE = re.compile(rf"\(\s+(?={_M}[\d$])")
_PAREN_CLOSE_SPACE_RE = re.compile(rf"(?<=[\d%])({_M})\s+\)")
_PERCENT_SPACE_RE = re.compile(rf"(\d{_M})\s+%")
_LETTER_RE = re.compile(r"[A-Za-z]")
_AMOUNT_RE = re.compile(r"^[$€£¥]?\(?-?[$€£¥]?\d[\d,]*(?:\.\d+)?\)?%?\)?$|^[—–-]+$")
_YEAR_RE = re.compile(r"^(?:19|20)\d\d$")
_BULLET_RE = re.compile(
    r"^(?:[•●◦▪■□►‣∙·○\-–—*]|\(?\d{1,2}\)|\(?[a-zA-Z]\)|\d{1,2}\.|[a-zA-Z]\.|\(?[ivxIVX]{1,4}\)|[ivxIVX]{1,4}\.)$"
)


def _tidy_amount_cell(cell: str) -> str:
    """'$ 391,035' -> '$391,035', '( 1,234 )' -> '(1,234)', '46.2 %' -> '46.2%' (cells without words only)."""
    if _LETTER_RE.search(cell):
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
        cell = _WS_RE.sub(" ", raw).strip()
        vis = _visible(cell).strip()
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


def _is_amount(value: str) -> bool:
    return bool(_AMOUNT_RE.match(value)) and not _YEAR_RE.match(value)


def _header_row_count(rows: list[tuple[bool, list[str]]]) -> int:
    """Leading rows that name the columns (years, period captions, "(Dollars in Millions) | 2024 | 2023"): rows
    without amounts that either leave the label column empty or hold several cells. A label-only row such as
    "Net sales:" is data. A table with no amounts at all takes its first row as header when that row is short."""
    count = 0
    for label_empty, cells in rows[:6]:
        if any(_is_amount(_visible(c)) for c in cells):
            break
        if not (label_empty or len(cells) >= 2):
            break
        count += 1
    if count < len(rows):
        return count
    first = rows[0][1]
    has_amounts = any(_is_amount(_visible(c)) for _, cells in rows for c in cells)
    if not has_amounts and len(rows) >= 3 and len(first) >= 2 and all(len(_visible(c)) <= 40 for c in first):
        return 1
    return 0


def _add_table(builder: _TextBuilder, raw_rows: list[list[str]]) -> None:
    """Render one table: data tables as `label | v1 | v2` lines, layout tables as ordinary text."""
    rows: list[tuple[bool, list[str]]] = []
    for raw in raw_rows:
        cells = _merge_cells(raw)
        if cells:
            label_empty = not raw or not _visible(raw[0]).strip()
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
    if len(rows) == 1 and not any(_is_amount(_visible(c)) for c in rows[0][1]):
        builder.add(" ".join(rows[0][1]))  # a heading such as "Item 7. | Management's Discussion ..."
        return
    has_labels = not all(label_empty for label_empty, _ in rows)
    lines = []
    for label_empty, cells in rows:
        line = " | ".join(cells)
        lines.append("| " + line if label_empty and has_labels else line)
    n_header = _header_row_count(rows)
    header = _visible("\n".join(lines[:n_header]))
    builder.add("\n".join(lines), kind="table", header=header, collapse=False)


def _is_list_row(cells: list[str]) -> bool:
    if len(cells) == 1:
        return True
    return len(cells) == 2 and bool(_BULLET_RE.match(_visible(cells[0]))) and len(_LETTER_RE.findall(cells[1])) >= 3


# --------------------------------------------------------------------------------------------------------------
# Inline XBRL facts and contexts
# --------------------------------------------------------------------------------------------------------------

_DEI_META = {
    "dei:entityregistrantname": "company",
    "dei:entitycentralindexkey": "cik",
    "dei:documenttype": "form",
    "dei:tradingsymbol": "ticker",
}
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS_WORDS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALE_WORDS = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}


def _words_to_number(text: str) -> float | None:
    """'no', 'none', 'twenty-five', 'one hundred' -> number (the ixt-sec:numwordsen format)."""
    words = re.findall(r"[a-z]+", text.lower())
    if not words:
        return None
    if words[0] in ("no", "none", "nil"):
        return 0.0
    total, current = 0, 0
    for w in words:
        if w in _NUMBER_WORDS:
            current += _NUMBER_WORDS[w]
        elif w in _TENS_WORDS:
            current += _TENS_WORDS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w in _SCALE_WORDS:
            total += max(current, 1) * _SCALE_WORDS[w]
            current = 0
        elif w != "and":
            return None
    return float(total + current)


def _fact_number(text: str, fmt: str) -> float | None:
    """The unsigned, unscaled number an ix:nonFraction displays, per its ixt format."""
    fmt = fmt.lower()
    stripped = text.strip()
    if "zero" in fmt or "dash" in fmt or re.fullmatch(r"[—–\-‒―]*", stripped):
        return 0.0
    if "word" in fmt:
        return _words_to_number(stripped)
    digits = re.sub(r"[^\d.,]", "", stripped)
    if "comma" in fmt and "decimal" in fmt:  # 1.234,5
        digits = digits.replace(".", "").replace(",", ".")
    else:
        digits = digits.replace(",", "")
    try:
        return float(digits)
    except ValueError:
        return None


def _attr(el, name: str) -> str:
    """Attribute by lower-case name: lxml's HTML parser lower-cases them, a browser-saved copy already is."""
    return el.get(name) or ""


class _FactCollector:
    def __init__(self) -> None:
        self.facts: list[Fact] = []
        self.contexts: dict[str, tuple[str | None, str | None, dict[str, str]]] = {}
        self.dei: dict[str, list[tuple[str, float | None]]] = {}

    def add_numeric(self, el) -> int:
        text = _WS_RE.sub(" ", "".join(el.itertext())).strip()
        concept = _attr(el, "name")
        fmt = _attr(el, "format")
        try:
            scale = int(_attr(el, "scale") or 0)
        except ValueError:
            scale = 0
        value = None if _attr(el, "xsi:nil") == "true" else _fact_number(text, fmt)
        if value is not None:
            value = value * 10.0**scale if -30 < scale < 30 else None
        if value is not None and _attr(el, "sign") == "-":
            value = -value
        fact = Fact(concept=concept, value=value, text=text, unit=_attr(el, "unitref"),
                    context_id=_attr(el, "contextref"), period_start=None, period_end=None,
                    decimals=el.get("decimals"), scale=scale)
        self.facts.append(fact)
        if concept.lower().startswith("dei:"):
            self.dei.setdefault(concept.lower(), []).append((text, value))
        return len(self.facts) - 1

    def add_nonnumeric(self, el) -> int | None:
        concept = _attr(el, "name")
        if not concept.lower().startswith("dei:"):
            return None  # text blocks and policies: their text is in the body already, not a fact here
        text = _WS_RE.sub(" ", "".join(el.itertext())).strip()
        self.dei.setdefault(concept.lower(), []).append((text, None))
        self.facts.append(Fact(concept=concept, value=None, text=text, unit="",
                               context_id=_attr(el, "contextref"), period_start=None, period_end=None))
        return len(self.facts) - 1

    def add_context(self, el) -> None:
        ctx_id = _attr(el, "id")
        start = end = None
        dims: dict[str, str] = {}
        for sub in el.iter():
            tag = sub.tag if isinstance(sub.tag, str) else ""
            local = tag.rsplit(":", 1)[-1]
            if local == "startdate":
                start = (sub.text or "").strip() or None
            elif local in ("enddate", "instant"):
                end = (sub.text or "").strip() or None
            elif local in ("explicitmember", "typedmember"):
                dims[_attr(sub, "dimension")] = _WS_RE.sub(" ", "".join(sub.itertext())).strip()
        if ctx_id:
            self.contexts[ctx_id] = (start, end, dims)

    def finish(self, spans: dict[int, tuple[int, int]], text: str) -> None:
        """Attach periods, dimensions and text spans (trimmed of surrounding whitespace)."""
        for idx, fact in enumerate(self.facts):
            ctx = self.contexts.get(fact.context_id)
            if ctx:
                fact.period_start, fact.period_end = ctx[0], ctx[1]
                fact.dimensions = dict(ctx[2])
            span = spans.get(idx)
            if span:
                start, end = span
                while start < end and text[start].isspace():
                    start += 1
                while end > start and text[end - 1].isspace():
                    end -= 1
                fact.char_start, fact.char_end = start, end
                if fact.value is None and not fact.unit:
                    fact.text = text[start:end]  # a text fact spanning blocks keeps its block breaks

    def meta(self) -> dict:
        meta: dict = {}
        for concept, key in _DEI_META.items():
            for text, _ in self.dei.get(concept, []):
                if text:
                    meta[key] = text
                    break
        for text, _ in self.dei.get("dei:documentfiscalyearfocus", []):
            if re.fullmatch(r"\d{4}", text):
                meta["fiscal_year"] = int(text)
                meta["fiscal_year_source"] = "dei:DocumentFiscalYearFocus"
                break
        for text, _ in self.dei.get("dei:documentperiodenddate", []):
            iso = _iso_date(text)
            if iso:
                meta["period_end"] = iso
                break
        if "fiscal_year" not in meta and "period_end" in meta:
            meta["fiscal_year"] = fiscal_year_from_period_end(meta["period_end"])
            meta["fiscal_year_source"] = "period_end"
        shares = [v for _, v in self.dei.get("dei:entitycommonstocksharesoutstanding", []) if v is not None]
        if shares:
            # One value per share class (GOOGL reports A, B and C): the total is what "shares outstanding" means.
            meta["shares_outstanding"] = int(sum(shares))
        if "form" in meta:
            meta["form"] = meta["form"].upper()
        return meta


# --------------------------------------------------------------------------------------------------------------
# Dates and cover-page metadata
# --------------------------------------------------------------------------------------------------------------

_MONTHS = {m: i + 1 for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
_ISO_DATE_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_COMPACT_DATE_RE = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_MONTH_DAY_YEAR_RE = re.compile(r"([A-Za-z]{3,9})\.?\s+(\d{1,2})\s*(?:st|nd|rd|th)?\s*,?\s*(\d{4})")
_DAY_MONTH_YEAR_RE = re.compile(r"(\d{1,2})\s+([A-Za-z]{3,9})\.?\s*,?\s*(\d{4})")
_SLASH_DATE_RE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")


def _iso_date(text: str) -> str | None:
    """'September 28, 2024', '2024-09-28', '20240928', '28 September 2024', '9/28/2024' -> '2024-09-28'."""
    text = _WS_RE.sub(" ", text).strip()
    candidates = []
    if m := _ISO_DATE_RE.search(text):
        candidates.append((m.group(1), m.group(2), m.group(3)))
    elif m := _COMPACT_DATE_RE.match(text):
        candidates.append((m.group(1), m.group(2), m.group(3)))
    elif m := _MONTH_DAY_YEAR_RE.search(text):
        candidates.append((m.group(3), _MONTHS.get(m.group(1)[:3].lower()), m.group(2)))
    elif m := _DAY_MONTH_YEAR_RE.search(text):
        candidates.append((m.group(3), _MONTHS.get(m.group(2)[:3].lower()), m.group(1)))
    elif m := _SLASH_DATE_RE.search(text):
        candidates.append((m.group(3), m.group(1), m.group(2)))
    for year, month, day in candidates:
        try:
            return _dt.date(int(year), int(month or 0), int(day)).isoformat()
        except (TypeError, ValueError):
            return None
    return None


_COVER_FORM_RE = re.compile(r"\bFORM\s+(10-K(?:405|SB|T)?(?:/A)?|10-Q(?:SB)?(?:/A)?|20-F|40-F|8-K)\b", re.I)
_COVER_PERIOD_RE = re.compile(
    r"for\s+the\s+(?:fiscal\s+)?(?:year|quarterly\s+period|quarter|period)\s+end(?:ed|ing)\s*:?\s*(.{6,40})", re.I
)
_EXACT_NAME_RE = re.compile(r"\(?\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)


def _fill_from_cover(meta: dict, text: str) -> None:
    """Fill what the XBRL did not give from the cover page: form, fiscal period end, registrant's exact name."""
    cover = text[:20000]
    if "form" not in meta and (m := _COVER_FORM_RE.search(cover)):
        meta["form"] = m.group(1).upper()
    if "period_end" not in meta and (m := _COVER_PERIOD_RE.search(cover)):
        iso = _iso_date(m.group(1))
        if iso:
            meta["period_end"] = iso
    if "fiscal_year" not in meta and "period_end" in meta:
        meta["fiscal_year"] = fiscal_year_from_period_end(meta["period_end"])
        meta["fiscal_year_source"] = "period_end"
    if "company" not in meta and (m := _EXACT_NAME_RE.search(cover)):
        name = _registrant_name(cover[: m.start()], cover[m.start() : m.start() + 200])
        if name:
            meta["company"] = name


def _registrant_name(before: str, at: str) -> str | None:
    """The name printed just above '(Exact name of registrant as specified in its charter)'."""
    line_start = before.rfind("\n") + 1
    same_line = before[line_start:].strip(" |")
    lines = [same_line] if len(_LETTER_RE.findall(same_line)) >= 3 else []
    lines += [ln.strip(" |") for ln in reversed(before[:line_start].splitlines())]
    for line in lines[:6]:
        line = line.split(" | ")[0].strip(" ,|")
        if len(_LETTER_RE.findall(line)) >= 3 and len(line) <= 120 and not line.lower().startswith("commission"):
            return line
    return None


# --------------------------------------------------------------------------------------------------------------
# Sections: Items in the body, not in the table of contents
# --------------------------------------------------------------------------------------------------------------

_TENK_ITEMS = [
    ("1", "Business"),
    ("1A", "Risk Factors"),
    ("1B", "Unresolved Staff Comments"),
    ("1C", "Cybersecurity"),
    ("2", "Properties"),
    ("3", "Legal Proceedings"),
    ("4", "Mine Safety Disclosures"),
    ("5", "Market for Registrant's Common Equity, Related Stockholder Matters and Issuer Purchases of Equity "
          "Securities"),
    ("6", "[Reserved]"),
    ("7", "Management's Discussion and Analysis of Financial Condition and Results of Operations"),
    ("7A", "Quantitative and Qualitative Disclosures About Market Risk"),
    ("8", "Financial Statements and Supplementary Data"),
    ("9", "Changes in and Disagreements with Accountants on Accounting and Financial Disclosure"),
    ("9A", "Controls and Procedures"),
    ("9B", "Other Information"),
    ("9C", "Disclosure Regarding Foreign Jurisdictions that Prevent Inspections"),
    ("10", "Directors, Executive Officers and Corporate Governance"),
    ("11", "Executive Compensation"),
    ("12", "Security Ownership of Certain Beneficial Owners and Management and Related Stockholder Matters"),
    ("13", "Certain Relationships and Related Transactions, and Director Independence"),
    ("14", "Principal Accountant Fees and Services"),
    ("15", "Exhibits and Financial Statement Schedules"),
    ("16", "Form 10-K Summary"),
]
_TENQ_ITEMS = [
    ("I", "1", "Financial Statements"),
    ("I", "2", "Management's Discussion and Analysis of Financial Condition and Results of Operations"),
    ("I", "3", "Quantitative and Qualitative Disclosures About Market Risk"),
    ("I", "4", "Controls and Procedures"),
    ("II", "1", "Legal Proceedings"),
    ("II", "1A", "Risk Factors"),
    ("II", "2", "Unregistered Sales of Equity Securities and Use of Proceeds"),
    ("II", "3", "Defaults Upon Senior Securities"),
    ("II", "4", "Mine Safety Disclosures"),
    ("II", "5", "Other Information"),
    ("II", "6", "Exhibits"),
]
_ITEM_HEAD_RE = re.compile(
    r"^(?:PART\s+(?P<part>IV|I{1,3})\b[\s.,:;\-–—]*)?ITEMS?\s*(?P<num>\d{1,2})(?:\.(?P<sub>\d\d))?\s?"
    r"(?P<letter>[A-Ca-c])?(?![A-Za-z0-9])[\s.,:;\-–—)]*(?P<rest>.*)",
    re.I | re.S,
)
_EIGHTK_ITEMS = [
    ("1.01", "Entry into a Material Definitive Agreement"),
    ("1.02", "Termination of a Material Definitive Agreement"),
    ("1.03", "Bankruptcy or Receivership"),
    ("1.04", "Mine Safety - Reporting of Shutdowns and Patterns of Violations"),
    ("1.05", "Material Cybersecurity Incidents"),
    ("2.01", "Completion of Acquisition or Disposition of Assets"),
    ("2.02", "Results of Operations and Financial Condition"),
    ("2.03", "Creation of a Direct Financial Obligation"),
    ("2.04", "Triggering Events That Accelerate or Increase a Direct Financial Obligation"),
    ("2.05", "Costs Associated with Exit or Disposal Activities"),
    ("2.06", "Material Impairments"),
    ("3.01", "Notice of Delisting or Failure to Satisfy a Continued Listing Rule or Standard"),
    ("3.02", "Unregistered Sales of Equity Securities"),
    ("3.03", "Material Modification to Rights of Security Holders"),
    ("4.01", "Changes in Registrant's Certifying Accountant"),
    ("4.02", "Non-Reliance on Previously Issued Financial Statements"),
    ("5.01", "Changes in Control of Registrant"),
    ("5.02", "Departure of Directors or Certain Officers; Election of Directors; Appointment of Certain Officers"),
    ("5.03", "Amendments to Articles of Incorporation or Bylaws; Change in Fiscal Year"),
    ("5.04", "Temporary Suspension of Trading Under Registrant's Employee Benefit Plans"),
    ("5.05", "Amendments to the Registrant's Code of Ethics, or Waiver of a Provision of the Code of Ethics"),
    ("5.06", "Change in Shell Company Status"),
    ("5.07", "Submission of Matters to a Vote of Security Holders"),
    ("5.08", "Shareholder Director Nominations"),
    ("6.01", "ABS Informational and Computational Material"),
    ("6.02", "Change of Servicer or Trustee"),
    ("6.03", "Change in Credit Enhancement or Other External Support"),
    ("6.04", "Failure to Make a Required Distribution"),
    ("6.05", "Securities Act Updating Disclosure"),
    ("7.01", "Regulation FD Disclosure"),
    ("8.01", "Other Events"),
    ("9.01", "Financial Statements and Exhibits"),
]
_PART_HEAD_RE = re.compile(r"^PART\s+(IV|I{1,3})\b(?!\s*,?\s*ITEM)", re.I)
_SIGNATURES_RE = re.compile(r"^SIGNATURES?\b[\s.:]*$", re.I)
_HEADING_MAX_CHARS = 200  # longer blocks are only headings when the Item's own title follows the number
_TOC_GAP_CHARS = 1000  # a body heading is followed by at least this much text before the next candidate


@dataclass
class _Candidate:
    block: int
    pos: int
    ranks: list[int]
    title: str
    quality: float = 0.0


def _letters(s: str) -> str:
    return re.sub(r"[^a-z]", "", s.lower())


def _item_title(rest: str, canonical: str, next_text: str) -> str:
    """The heading's own title, tidied; the canonical title where the heading shows none or a broken one."""
    rest = rest.strip(" .:-–—|")
    if not rest and next_text and not _ITEM_HEAD_RE.match(next_text):
        rest = next_text.strip(" .:-–—|")
        if _letters(rest).startswith(_letters(canonical)):
            return canonical  # the title line ran on into the text ("Unresolved Staff Comments None. 15")
        if len(rest) > 120:
            rest = _leading_title(rest)
    if len(rest) > 120:
        rest = canonical if _letters(rest).startswith(_letters(canonical)[:12]) else _leading_title(rest)
    if len(_letters(rest)) < 5 and _letters(canonical).startswith(_letters(rest)):
        return canonical  # missing, or cut like "B" + "USINESS" in a PDF
    if rest.isupper():
        return canonical if _letters(rest).startswith(_letters(canonical)[:12]) else _title_case(rest)
    return rest


def _title_case(text: str) -> str:
    """'EXHIBIT AND FINANCIAL STATEMENT SCHEDULES' -> 'Exhibit and Financial Statement Schedules'."""
    words = text.lower().split()
    return " ".join(w if n and w in _TITLE_SMALL_WORDS else w[:1].upper() + w[1:] for n, w in enumerate(words))


_TITLE_SMALL_WORDS = frozenset("a an and as by for in of on or the to with about from under".split())


def _leading_title(text: str) -> str:
    """The Title-Case words a heading ran into its text with: "Selected Financial Data The following ..."."""
    words: list[str] = []
    for word in text.split()[:16]:
        if not (word[0].isupper() or word[0] in "[&(" or word.lower() in _TITLE_SMALL_WORDS):
            break
        words.append(word)
    while words and (words[-1].lower() in _TITLE_SMALL_WORDS or words[-1] in ("The", "A", "An", "Our", "We", "This")):
        words.pop()
    return " ".join(words).rstrip(" .:,;")


def _section_scheme(form: str) -> tuple[list[str], list[str], dict[tuple[str, str], list[int]]]:
    """Labels, canonical titles, and (part, item) -> possible ranks for a form."""
    if "10-Q" in form.upper():
        labels = [f"Part {p} Item {n}" for p, n, _ in _TENQ_ITEMS]
        titles = [t for _, _, t in _TENQ_ITEMS]
        ranks: dict[tuple[str, str], list[int]] = {}
        for i, (p, n, _) in enumerate(_TENQ_ITEMS):
            ranks.setdefault((p, n), []).append(i)
            ranks.setdefault(("", n), []).append(i)
        return labels, titles, ranks
    items = _EIGHTK_ITEMS if form.upper().startswith("8-K") else _TENK_ITEMS
    labels = [f"Item {n}" for n, _ in items]
    titles = [t for _, t in items]
    ranks = {}
    for i, (n, _) in enumerate(items):
        for p in ("", "I", "II", "III", "IV"):
            ranks[(p, n)] = [i]
    return labels, titles, ranks


def _find_sections(parsed: ParsedFiling) -> list[Section]:
    text, blocks = parsed.text, parsed.blocks
    labels, titles, rank_map = _section_scheme(str(parsed.meta.get("form", "")))
    candidates: list[_Candidate] = []
    part = ""
    for i, block in enumerate(blocks):
        if block.kind != "text":
            continue
        head = block.text[:400]
        if m := _PART_HEAD_RE.match(head):
            if len(block.text) <= 120:
                part = m.group(1).upper()
            continue
        m = _ITEM_HEAD_RE.match(head)
        if not m:
            continue
        number = m.group("num").lstrip("0") + (m.group("letter") or "").upper()
        if m.group("sub"):  # "Item 8.01" of a current report
            number = f"{m.group('num').lstrip('0')}.{m.group('sub')}"
        block_part = (m.group("part") or part).upper()
        ranks = rank_map.get((block_part, number)) or rank_map.get(("", number))
        if not ranks:
            continue
        rest = m.group("rest")
        canonical = titles[ranks[0]]
        if len(block.text) > _HEADING_MAX_CHARS and not _letters(rest).startswith(_letters(canonical)[:12]):
            continue  # a paragraph that happens to start with "Item 7 ...": a cross-reference, not a heading
        next_text = blocks[i + 1].text if i + 1 < len(blocks) and blocks[i + 1].kind == "text" else ""
        candidates.append(_Candidate(i, block.char_start, ranks, _item_title(rest, canonical, next_text)))
    chosen = _best_item_chain(candidates, len(text))

    starts: list[tuple[int, str, str]] = []  # (char_start, item, title)
    for cand, rank in chosen:
        start = cand.pos
        prev = blocks[cand.block - 1] if cand.block else None
        if prev is not None and prev.kind == "text" and _PART_HEAD_RE.match(prev.text) and len(prev.text) <= 120:
            start = prev.char_start  # "PART II" right above "Item 5" opens the section with it
            if starts and start <= starts[-1][0]:
                start = cand.pos
        starts.append((start, labels[rank], cand.title))
    if starts:
        last_block = chosen[-1][0].block
        for block in blocks[last_block + 1 :]:
            if block.kind == "text" and len(block.text) <= 30 and _SIGNATURES_RE.match(block.text):
                starts.append((block.char_start, "Signatures", "Signatures"))
                break
        item15 = next((cand.block for cand, rank in chosen if labels[rank] == "Item 15"), last_block)
        appendix = _financial_statements_appendix(parsed, starts, item15)
        if appendix is not None:
            starts.append((appendix.char_start, "Financial Statements", "Financial Statements"))
            starts.sort(key=lambda s: s[0])
        if starts[0][0] > 0:
            starts.insert(0, (0, "Cover", "Cover page and table of contents"))
    else:
        starts = [(0, "Document", "")]
    sections = []
    for n, (start, item, title) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(text)
        # Sections run block start to block start; the blank line before the next one belongs to this one.
        sections.append(Section(item, title, start, end, parsed.page_at(start), parsed.page_at(max(start, end - 1))))
    return sections


_FS_HEADING_RE = re.compile(
    r"^(?:INDEX\s+TO\s+(?:THE\s+)?(?:CONSOLIDATED\s+)?FINANCIAL\s+STATEMENTS|REPORTS?\s+OF\s+INDEPENDENT\s+"
    r"REGISTERED\s+PUBLIC\s+ACCOUNTING\s+FIRM|CONSOLIDATED\s+(?:STATEMENTS?\s+OF|BALANCE\s+SHEETS?))",
    re.I,
)
_POINTER_MAX_CHARS = 3000


def _financial_statements_appendix(parsed: ParsedFiling, starts: list[tuple[int, str, str]],
                                   search_from: int) -> Block | None:
    """Where Item 8 only points elsewhere ("see page F-1", "included following Part IV"), the heading that opens
    the financial statements printed in Item 15 or after the last Item, so they are not filed under Item 16 or
    Signatures. Such a heading opens a page; the list of statements in Item 15(a) does not."""
    labels = [item for _, item, _ in starts]
    if "Item 8" not in labels:
        return None
    n = labels.index("Item 8")
    if not any(label.startswith("Item ") for label in labels[n + 1:]):
        return None  # no Item follows Item 8: the statements printed after it are its own text
    item8_end = starts[n + 1][0] if n + 1 < len(starts) else len(parsed.text)
    if item8_end - starts[n][0] > _POINTER_MAX_CHARS:
        return None
    blocks = parsed.blocks
    for i in range(search_from + 1, len(blocks)):
        block = blocks[i]
        if block.kind != "text" or len(block.text) > 150 or not _FS_HEADING_RE.match(block.text):
            continue
        if i >= 3 and blocks[i - 3].page == block.page:
            continue  # not near the top of its page
        return block
    return None


def _best_item_chain(candidates: list[_Candidate], text_len: int) -> list[tuple[_Candidate, int]]:
    """Choose the ordered sequence of Item headings (rank and position both increasing) of greatest weight.

    A candidate weighs by how much text follows it before the next candidate: table-of-contents entries sit a
    line apart and weigh almost nothing, body headings weigh ~1. Ties go to the earliest chain, so repeated
    running headers ("Item 7" atop each PDF page) resolve to the first one.
    """
    if not candidates:
        return []
    # The gap runs to the next candidate of another Item: "Item 14." followed by "Item 14(a)(1)" sub-headings, or
    # "Item 7" atop every page of a PDF, is one heading followed by its text.
    nxt = text_len
    for n in range(len(candidates) - 1, -1, -1):
        cand = candidates[n]
        if n + 1 < len(candidates) and candidates[n + 1].ranks != cand.ranks:
            nxt = candidates[n + 1].pos
        cand.quality = min(1.0, (nxt - cand.pos) / _TOC_GAP_CHARS)
    n_ranks = 1 + max(r for c in candidates for r in c.ranks)
    # best_from[r] = (score, node) of the best chain starting with rank r among nodes after the current position
    best_from: list[tuple[float, tuple[int, int] | None]] = [(0.0, None)] * (n_ranks + 1)
    successor: dict[tuple[int, int], tuple[int, int] | None] = {}
    score: dict[tuple[int, int], float] = {}
    for ci in range(len(candidates) - 1, -1, -1):
        cand = candidates[ci]
        computed = []
        for rank in cand.ranks:
            best_next, best_node = 0.0, None
            for r in range(rank + 1, n_ranks):
                s, node = best_from[r]
                if node is not None and (s > best_next or (s == best_next and best_node is not None
                                                              and node[0] < best_node[0])):
                    best_next, best_node = s, node
            node = (ci, rank)
            successor[node] = best_node
            score[node] = cand.quality + best_next
            computed.append((rank, node))
        for rank, node in computed:  # update after computing: one candidate cannot follow itself
            if score[node] >= best_from[rank][0] or best_from[rank][1] is None:
                best_from[rank] = (score[node], node)
    start = max(score, key=lambda node: (score[node], -node[0]))
    chain = []
    node: tuple[int, int] | None = start
    while node is not None:
        chain.append((candidates[node[0]], node[1]))
        node = successor[node]
    return chain


# --------------------------------------------------------------------------------------------------------------
# Full submission (.txt SGML)
# --------------------------------------------------------------------------------------------------------------

_DOC_OPEN_RE = re.compile(r"<DOCUMENT>", re.I)
_DOC_RE = re.compile(r"<DOCUMENT>(.*?)(?:</DOCUMENT>|\Z)", re.I | re.S)
_TEXT_RE = re.compile(r"<TEXT>(.*?)(?:</TEXT>|\Z)", re.I | re.S)
_WRAPPER_OPEN_RE = re.compile(r"\s*<(XBRL|PDF|XML)>", re.I)
_HEADER_FIELDS = {
    "COMPANY CONFORMED NAME": "company",
    "CENTRAL INDEX KEY": "cik",
    "CONFORMED SUBMISSION TYPE": "form",
    "CONFORMED PERIOD OF REPORT": "period_end",
    "FILED AS OF DATE": "filing_date",
    "ACCESSION NUMBER": "accession",
    "FISCAL YEAR END": "fiscal_year_end",
}
_HEADER_LINE_RE = re.compile(r"^\s*([A-Z][A-Z0-9 \-]+?):[ \t]*(\S.*?)\s*$", re.M)


def _read_sgml_header(header_text: str) -> dict:
    header: dict = {}
    for m in _HEADER_LINE_RE.finditer(header_text):
        key = _HEADER_FIELDS.get(m.group(1).strip())
        if key and key not in header:  # first one wins: the filer, not a former name or a second filer
            header[key] = m.group(2).strip()
    for key in ("period_end", "filing_date"):
        if key in header:
            iso = _iso_date(header[key])
            if iso:
                header[key] = iso
            else:
                del header[key]
    if "form" in header:
        header["form"] = header["form"].upper()
    return header


def _sgml_tag_value(body: str, tag: str) -> str:
    m = re.search(rf"<{tag}>[ \t]*([^\r\n<]*)", body, re.I)
    return m.group(1).strip() if m else ""


def _read_sgml_document(body: str) -> SubmissionDocument:
    m = _TEXT_RE.search(body)
    text = m.group(1) if m else ""
    wrapper = _WRAPPER_OPEN_RE.match(text)
    if wrapper:  # <XBRL>...</XBRL> around inline XBRL, <PDF>...</PDF> around a uuencoded PDF
        text = text[wrapper.end() :]
        close = text.upper().rfind(f"</{wrapper.group(1).upper()}>")
        if close != -1:
            text = text[:close]
    return SubmissionDocument(
        type=_sgml_tag_value(body, "TYPE"),
        sequence=_sgml_tag_value(body, "SEQUENCE"),
        filename=_sgml_tag_value(body, "FILENAME"),
        description=_sgml_tag_value(body, "DESCRIPTION"),
        text=text.strip("\r\n"),
    )


# --------------------------------------------------------------------------------------------------------------
# Plain text and PDF page text
# --------------------------------------------------------------------------------------------------------------

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


def _add_text_table(builder: _TextBuilder, lines: list[str]) -> None:
    """A fixed-width text table: columns are runs of two or more spaces."""
    rows = [[""] * (ln[:1].isspace()) + re.split(r" {2,}|\t", ln.strip()) for ln in lines]
    _add_table(builder, rows)


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
