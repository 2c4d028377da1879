"""EDGAR HTML (inline XBRL or plain) -> text and facts: one pass over the lxml tree routes visible text into
blocks, tables into row blocks and inline XBRL into the fact collector, with page breaks from the CSS."""

from __future__ import annotations

import codecs
import re

from lxml import etree

from .builder import CONTROL_RE, END_BASE, MAX_MARKED, START_BASE, BuiltText, TextBuilder
from .plaintext import add_plain_text
from .results import Fact, ParseError
from .tables import add_table
from .xbrl import FactCollector

# Not <table>: 1990s plain-text filings mark their tables up with <TABLE>, <S> and <C>.
HTML_SNIFF_RE = re.compile(r"<(?:html|body|div|p|font|br|td|tr|ix:[a-z]+)[\s>/]")
_XML_DECL_RE = re.compile(r"^[\s\ufeff]*<\?xml[^>]*>")  # lxml refuses a str that declares an encoding
_CHARSET_RE = re.compile(rb"""(?:charset|encoding)\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.I)
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none", re.I)
_BREAK_BEFORE_RE = re.compile(r"(?:page-)?break-before\s*:\s*(?:always|page|left|right|recto|verso)", re.I)
_BREAK_AFTER_RE = re.compile(r"(?:page-)?break-after\s*:\s*(?:always|page|left|right|recto|verso)", re.I)
_PAGEBREAK_COMMENT_RE = re.compile(r"^\s*page\s*break\s*$", re.I)  # <!-- PAGEBREAK --> of 1990s filer software

# libxml2's HTML parser stops at this nesting depth even with huge_tree, and returns the tree read so far as if the
# document ended there: the reason every fatal parser error refuses the file rather than losing its rest.
MAX_HTML_DEPTH = 2048

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


def decode(data: bytes) -> str:
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
    text = CONTROL_RE.sub("", _XML_DECL_RE.sub("", text, count=1))
    if not text.strip():
        raise ParseError("the document is empty")
    if text.count("\ufffd") > max(64, len(text) // 20):
        raise ParseError("the file is binary or in an unknown encoding, not an HTML filing")
    parser = etree.HTMLParser(huge_tree=True, remove_blank_text=False, no_network=True)
    try:
        root = etree.fromstring(text, parser)
    except (etree.LxmlError, ValueError) as exc:
        raise ParseError(f"the HTML cannot be read: {exc}") from exc
    _refuse_cut_short(parser.error_log)
    if root is None:
        raise ParseError("the document holds no HTML")
    return root


def _refuse_cut_short(errors) -> None:
    """ParseError when the parser gave up part-way (a fatal error): what it returns then is only the start of the
    document, and indexing that would lose the rest without a word."""
    fatal = [e for e in errors if e.level == etree.ErrorLevels.FATAL]
    if not fatal:
        return
    first = fatal[0]
    if "depth" in first.message.lower():
        raise ParseError(
            f"the HTML is nested too deep: elements inside elements more than {MAX_HTML_DEPTH:,} levels deep "
            f"(line {first.line}), and the HTML reader stops there, so the rest of the document could not be read. "
            "Real filings nest a few hundred levels at most; the file is refused rather than indexed in part")
    raise ParseError(f"the HTML reader stopped at line {first.line} ({first.message.strip()}), so the rest of the "
                     "document could not be read; the file is refused rather than indexed in part")


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

    def __init__(self, builder: TextBuilder, facts: FactCollector) -> None:
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
                    add_plain_text(self.builder, "".join(el.itertext()))
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
        if idx is None or hidden or idx >= MAX_MARKED:
            return ""
        return chr(START_BASE + idx) + chr(END_BASE + idx)

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
            add_table(self.builder, table.rows)
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


def html_document(data: bytes | str) -> tuple[BuiltText, dict, list[Fact]]:
    """Text and facts of an HTML document, with the metadata its inline XBRL states (nothing guessed)."""
    text = decode(data) if isinstance(data, (bytes, bytearray)) else data
    root = _html_root(text)
    builder = TextBuilder()
    facts = FactCollector()
    _HtmlWalker(builder, facts).walk(root)
    if not builder.raw:
        raise ParseError("the document holds no readable text")
    built = builder.build()
    facts.finish(built.spans, built.text)
    return built, facts.meta(), facts.facts
