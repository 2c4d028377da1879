"""Text that reaches the page: safe Markdown for model output and filing text, passage highlighting, labels.

Nothing here imports streamlit, so the rules are unit-tested on their own.

Model answers and filing text are untrusted: a filing (or a model repeating one) could hold Markdown links,
images, raw HTML, LaTeX (`$391,035 and $383,285` would turn into a formula) or Streamlit's own directives
(`:red[...]`, `:material/...:`). `MarkdownEscaper` lets through only what cannot do harm and reads well:
bold/italic stars, list markers, headings, tables, inline code and fenced code blocks (their content is literal).
Everything that could build a link, an image, HTML or a formula is escaped, and URL/e-mail autolinks are broken
with an invisible word joiner. Citation markers `[n]` are drawn in the theme's blue.

It works on a stream: `feed()` returns only output that is final, so the pieces streamed into `st.write_stream`
add up to exactly what `safe_markdown()` gives for the whole text (the page does not jump when the streamed
answer is replaced by the stored one).
"""

from __future__ import annotations

import html
import re
from typing import Iterable, Iterator

from rag.companies import reader_name
from rag.conversations import Escaper
from rag.parse.tables import without_unit_leftovers
from rag.schema import citation_label, pages_label, period_label

WORD_JOINER = "\u2060"
# Characters escaped with a backslash everywhere in ordinary text.
_ESCAPE = set("\\[]<>$&!~_:")
# Escaped too in literal mode (labels): emphasis, code spans, headings and table pipes show as typed.
_LITERAL_ESCAPE = _ESCAPE | set("*`#|")
_CITATION = re.compile(r"^\[\s*\d{1,3}(?:\s*,\s*\d{1,3})*\s*\]$")
_CITATION_CHARS = set("0123456789, ")
_MAX_INDENT = 3  # four spaces would start an indented code block, which shows backslashes literally
_INFO_CHARS = re.compile(r"[^A-Za-z0-9_+\-]")


class Md(str):
    """Markdown the app vouches for: app-written, or untrusted text escaped by this module or ui.safe.

    A plain `str` is untrusted; ui.safe.md() and plain() escape any `str` that is not an `Md`. `Md + Md` is an
    `Md`; every other operation (`+ str`, slicing, `.format`) gives back a plain `str`, so a mix of trusted and
    untrusted text is never mistaken for trusted."""

    __slots__ = ()

    def __add__(self, other):
        joined = str.__add__(self, other)
        return Md(joined) if isinstance(other, Md) else joined


class MarkdownEscaper:
    """Streaming, prefix-stable escaping of untrusted text into harmless Markdown (see the module docstring).

    literal=True (for labels): stars, backticks, '#' and '|' are escaped too, so the text shows exactly as typed."""

    def __init__(self, citation_color: str | None = "blue", literal: bool = False):
        self.citation_color = citation_color
        self.literal = literal
        self._escape = _LITERAL_ESCAPE if literal else _ESCAPE
        self._out: list[str] = []
        self._at_line_start = True
        self._indent = 0  # spaces seen at the start of the current line, not yet written
        self._ticks = 0  # length of the backtick run being read
        self._ticks_at_line_start = False
        self._code: str | None = None  # inside an inline code span: its content so far
        self._code_ticks = 0
        self._fence: int = 0  # inside a fenced block: its backtick count
        self._fence_info: str | None = None  # reading the info string of an opening fence
        self._fence_line = ""  # the current line inside a fenced block
        self._bracket: str | None = None  # reading what might be a citation marker "[12]"
        self._colon_word: str | None = None  # letters since the last ':' (to break "https://", ":material/")
        self._tail = ""  # the last few characters of the input, for "www."

    # ---- public
    def feed(self, text: str) -> str:
        for ch in text or "":
            self._char(ch)
        return self._take()

    def flush(self) -> str:
        self._end_ticks(final=True)
        if self._bracket is not None:
            self._flush_bracket()
        if self._code is not None:
            self._unclosed_code()
        if self._fence_info is not None:
            self._emit("`" * self._fence + self._clean_info(self._fence_info) + "\n")
            self._fence_info = None
        if self._fence:
            if self._fence_line:
                self._emit(self._fence_line + "\n")
            self._emit("`" * self._fence)
            self._fence, self._fence_line = 0, ""
        return self._take()

    # ---- internals
    def _take(self) -> str:
        out = "".join(self._out)
        self._out.clear()
        return out

    def _emit(self, s: str) -> None:
        self._out.append(s)

    def _char(self, ch: str) -> None:
        if ch == "\r":
            return
        if self._fence_info is not None:  # the rest of an opening fence line: its language
            if ch == "\n":
                self._emit("`" * self._fence + self._clean_info(self._fence_info) + "\n")
                self._fence_info = None
                self._at_line_start = True
            else:
                self._fence_info += ch
            return
        if self._fence:  # inside a fenced code block: literal, line by line, until the closing fence
            if ch == "\n":
                line = self._fence_line
                self._fence_line = ""
                stripped = line.strip(" \t")
                if stripped and set(stripped) == {"`"} and len(stripped) >= self._fence:
                    self._emit("`" * self._fence + "\n")
                    self._fence = 0
                    self._at_line_start = True
                    self._indent = 0
                else:
                    self._emit(line + "\n")
            else:
                self._fence_line += ch
            return
        if ch == "`" and not self.literal:
            if self._ticks == 0:
                self._ticks_at_line_start = self._at_line_start and self._indent == 0 and self._code is None
            self._ticks += 1
            return
        if self._ticks:
            self._end_ticks()
            if self._fence_info is not None or self._fence:
                self._char(ch)
                return
        if self._code is not None:
            if ch == "\n":
                self._unclosed_code()
                self._newline()
            else:
                self._code += ch
            return
        if self._bracket is not None:
            if ch == "]":
                self._bracket += ch
                self._flush_bracket()
                return
            if ch in _CITATION_CHARS and len(self._bracket) < 16:
                self._bracket += ch
                return
            self._flush_bracket()
        if ch == "\n":
            self._newline()
            return
        if self._at_line_start:
            if ch == " ":
                self._indent += 1
                return
            if ch == "\t":
                self._indent += 4
                return
            self._emit(" " * min(self._indent, _MAX_INDENT))
            self._at_line_start = False
        if ch == "[":
            self._bracket = "["
            return
        self._plain(ch)

    def _plain(self, ch: str) -> None:
        """One character of ordinary text."""
        if ch == "/" and self._colon_word is not None:
            self._emit(WORD_JOINER + "/")
        elif ch == "." and self._tail[-3:].lower() == "www":
            self._emit(WORD_JOINER + ".")
        elif ch == "@":
            self._emit("@" + WORD_JOINER)
        elif ch in self._escape:
            self._emit("\\" + ch)
        else:
            self._emit(ch)
        if ch == ":":
            self._colon_word = ""
        elif self._colon_word is not None and ch.isalnum() and len(self._colon_word) < 16:
            self._colon_word += ch
        else:
            self._colon_word = None
        self._tail = (self._tail + ch)[-4:]

    def _newline(self) -> None:
        self._emit("\n")
        self._at_line_start = True
        self._indent = 0
        self._colon_word = None
        self._tail = ""

    def _end_ticks(self, final: bool = False) -> None:
        """A run of backticks ended: it closes a code span, opens one, or opens a fenced block."""
        run, self._ticks = self._ticks, 0
        if not run:
            return
        if self._code is not None:
            if run == self._code_ticks:
                self._emit("`" * run + self._code + "`" * run)
                self._code = None
            else:
                self._code += "`" * run
            return
        if self._bracket is not None:
            self._flush_bracket()
        if self._at_line_start:
            self._emit(" " * min(self._indent, _MAX_INDENT))
            self._at_line_start = False
        if run >= 3 and self._ticks_at_line_start and not final:
            self._fence = run
            self._fence_info = ""
            return
        if final:
            self._emit("\\`" * run)
            return
        self._code = ""
        self._code_ticks = run

    def _unclosed_code(self) -> None:
        """A code span with no closing backticks on its line: show its backticks and text as plain text."""
        content, self._code = self._code or "", None
        self._emit("\\`" * self._code_ticks)
        for ch in content:
            self._plain(ch)

    def _flush_bracket(self) -> None:
        raw, self._bracket = self._bracket or "", None
        if _CITATION.match(raw) and self.citation_color:
            inner = re.sub(r"\s+", " ", raw[1:-1].strip())
            self._emit(f":{self.citation_color}[\\[{inner}\\]]")
            self._colon_word = None
            self._tail = ""
            return
        for ch in raw:
            self._plain(ch)

    @staticmethod
    def _clean_info(info: str) -> str:
        word = info.strip().split(" ")[0] if info.strip() else ""
        return _INFO_CHARS.sub("", word)[:20]


def safe_markdown(text: str, *, citation_color: str | None = "blue") -> Md:
    """Untrusted text as Markdown that renders its words and figures and nothing else (see the module doc)."""
    esc = MarkdownEscaper(citation_color=citation_color)
    return Md(esc.feed(text or "") + esc.flush())


def safe_inline(text) -> Md:
    """One line of untrusted text for a label, caption or title: newlines folded, every character shown as typed
    (no emphasis, code, link, image, HTML, formula or directive). Text that is already `Md` is kept as it is."""
    if isinstance(text, Md):
        return text
    esc = MarkdownEscaper(citation_color=None, literal=True)
    return Md(esc.feed(re.sub(r"\s+", " ", str("" if text is None else text)).strip()) + esc.flush())


def code_inline(text: str) -> Md:
    """Untrusted text as an inline code span (its content is shown literally; backticks cannot close it)."""
    body = re.sub(r"\s+", " ", str(text or "")).replace("`", "'").strip()
    return Md(f"`{body}`" if body else "")


_URL = re.compile(r"^https://[A-Za-z0-9.-]+(?:/[^\s()<>\[\]`\"']*)?$")


def safe_url(url) -> str | None:
    """An https URL fit for a link (no spaces, brackets or quotes that could break out of Markdown), or None."""
    url = str(url or "").strip()
    return url if _URL.match(url) else None


def escaped_stream(pieces: Iterable[str], *, citation_color: str | None = "blue") -> Iterator[str]:
    """Escape a stream of text pieces for st.write_stream; the pieces add up to safe_markdown(whole text)."""
    esc = MarkdownEscaper(citation_color=citation_color)
    for piece in pieces:
        out = esc.feed(piece)
        if out:
            yield out
    tail = esc.flush()
    if tail:
        yield tail


# --------------------------------------------------------------------------------------------------------------
# Passages in their filing


def chunk_body(chunk_text: str) -> str:
    """A chunk's text without its one-line header (company · form · FY · Item)."""
    head, sep, body = (chunk_text or "").partition("\n")
    return body if sep and "·" in head else (chunk_text or "")


def locate_passage(filing_text: str, chunk_text: str, char_start: int | None, char_end: int | None):
    """(start, end) of a cited chunk in its filing's text, or None when the text no longer holds it.

    The chunk's own offsets are used when the text there is what was cited; otherwise (the filing was re-indexed
    and the text moved) the chunk's body is looked up."""
    if not filing_text:
        return None
    body = chunk_body(chunk_text).strip()
    if char_start is not None and char_end is not None and 0 <= char_start < char_end <= len(filing_text):
        span = filing_text[char_start:char_end].strip()
        if not body or not span or span in chunk_text or span[:200] in chunk_text:
            return char_start, char_end
    for probe in (body[:300], body[-300:], body[:80]):
        probe = probe.strip()
        if len(probe) < 20:
            continue
        at = filing_text.find(probe)
        if at >= 0:
            if probe == body[:300].strip():
                return at, min(len(filing_text), at + len(body))
            return at, at + len(probe)
    return None


def context_window(text: str, start: int, end: int, before: int = 900, after: int = 1600) -> tuple[str, str, str,
                                                                                                   bool, bool]:
    """(before, passage, after, cut_before, cut_after) around text[start:end], the edges moved to line breaks."""
    lo = max(0, start - before)
    if lo > 0:
        nl = text.find("\n", lo, start)
        lo = nl + 1 if nl >= 0 else lo
    hi = min(len(text), end + after)
    if hi < len(text):
        nl = text.rfind("\n", end, hi)
        hi = nl if nl > end else hi
    return text[lo:start], text[start:end], text[end:hi], lo > 0, hi < len(text)


def highlight_html(before: str, passage: str, after: str, cut_before: bool = False, cut_after: bool = False,
                   quote: str | Iterable[str] | None = None, *, mark: bool = True) -> str:
    """The passage inside its surrounding text, as HTML: the passage marked, or, when a `quote` that supports the
    answer (a figure's row, a prose answer's sentence; one or several) is in it, the passage shaded and the quotes
    alone marked; mark=False shows the text alone. Runs of table lines ("cell | cell") are drawn as tables, their
    cells cleaned of the layout's leftovers (see table_cells). Every piece of filing text is escaped here, cell by
    cell or run by run; the only tags are ours."""
    text = before + passage + after
    p0, p1 = len(before), len(before) + len(passage)
    quotes = [quote] if isinstance(quote, str) else list(quote or [])
    marks = []
    for q in quotes:
        at = passage.find(q) if q else -1
        if at >= 0:
            marks.append((p0 + at, p0 + at + len(q)))
    shade = (p0, p1) if marks else None
    if not marks and mark:
        marks = [(p0, p1)]
    parts = ['<div class="wb-passage">']
    if cut_before:
        parts.append('<div class="wb-more">…</div>')
    for kind, lo, hi in _blocks(text):
        if kind == "table":
            parts.append(_table_html(text, lo, hi, shade, marks))
        else:
            parts.append('<div class="wb-text">' + _styled(text, lo, hi, shade, marks) + "</div>")
    if cut_after:
        parts.append('<div class="wb-more">…</div>')
    parts.append("</div>")
    return "".join(parts)


SECTION_ROW_CHARS = 80  # the longest line without cells still read as a row heading inside a table


def _is_table_line(line: str) -> bool:
    return " | " in line or line.startswith("| ") or line.rstrip().endswith(" |")


def _blocks(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) runs of `text`: "table" for consecutive table lines, "text" for the rest. A short line
    between two table lines (a statement's "Revenues" over its rows) is a row of that table, so the table is not cut
    in two with columns of different widths."""
    lines = text.splitlines(keepends=True)
    kinds = ["table" if _is_table_line(line.rstrip("\n")) else "text" for line in lines]
    for i in range(1, len(lines) - 1):
        line = lines[i].strip()
        if kinds[i - 1] == kinds[i + 1] == "table" and line and len(line) <= SECTION_ROW_CHARS:
            kinds[i] = "table"
    blocks: list[tuple[str, int, int]] = []
    at = 0
    for line, kind in zip(lines, kinds):
        if blocks and blocks[-1][0] == kind:
            blocks[-1] = (kind, blocks[-1][1], at + len(line))
        else:
            blocks.append((kind, at, at + len(line)))
        at += len(line)
    return blocks


def _overlaps(lo: int, hi: int, span) -> bool:
    return span is not None and lo < span[1] and span[0] < hi


def _styled(text: str, lo: int, hi: int, shade, marks: list) -> str:
    """text[lo:hi] escaped, with the marked spans in <mark> and the shaded one (the cited chunk) in a span."""
    cuts = {lo, hi}
    for a, b in ([shade] if shade else []) + marks:
        cuts.update(x for x in (a, b) if lo < x < hi)
    out = []
    edges = sorted(cuts)
    for a, b in zip(edges, edges[1:]):
        piece = html.escape(text[a:b], quote=True)
        if any(_overlaps(a, b, m) for m in marks):
            out.append('<mark class="wb-mark">' + piece + "</mark>")
        elif _overlaps(a, b, shade):
            out.append('<span class="wb-chunk">' + piece + "</span>")
        else:
            out.append(piece)
    return "".join(out)


def _cell_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) in `line` of each cell's text, trimmed; a closing '|' makes no empty last cell."""
    spans, at = [], 0
    for raw in line.split("|"):
        lead = len(raw) - len(raw.lstrip())
        spans.append((at + lead, at + lead + len(raw.strip())))
        at += len(raw) + 1
    if line.rstrip().endswith("|") and len(spans) > 1 and spans[-1][0] == spans[-1][1]:
        spans.pop()
    return spans


def table_cells(line: str) -> list[str]:
    """One table line's cells, trimmed; unit-sign leftovers dropped, trailing empty cells too."""
    cells = [without_unit_leftovers(line[a:b]) for a, b in _cell_spans(line)]
    while len(cells) > 1 and not cells[-1]:
        cells.pop()
    return cells


def _table_html(text: str, lo: int, hi: int, shade, marks: list) -> str:
    """A run of table lines as an HTML table built from escaped cells. Marked spans are marked within their cells;
    a row a marked span covers whole (a figure's row) is marked as a row, one the shaded span touches is shaded. A
    row whose first cell is empty is a heading row."""
    rows = []
    at = lo
    for line in text[lo:hi].splitlines(keepends=True):
        start, body = at, line.rstrip("\n")
        at += len(line)
        if body.strip():
            spans = [(start + a, start + b) for a, b in _cell_spans(body)]
            while len(spans) > 1 and not without_unit_leftovers(text[spans[-1][0]:spans[-1][1]]):
                spans.pop()
            rows.append(spans)
    width = max((len(spans) for spans in rows), default=1)
    out = ['<table class="wb-table">']
    for spans in rows:
        first, last = spans[0][0], spans[-1][1]
        head = not without_unit_leftovers(text[spans[0][0]:spans[0][1]])
        whole = any(m[0] <= first and last <= m[1] for m in marks)
        cls = "wb-mark" if whole else "wb-chunk" if _overlaps(first, last, shade) else ""
        out.append(f'<tr class="{cls}">' if cls else "<tr>")
        for i in range(width):
            tag = "th" if head else "td"
            num = ' class="wb-num"' if i and not head else ""
            if i < len(spans):
                a, b = spans[i]
                raw = text[a:b]
                cleaned = without_unit_leftovers(raw)
                if whole or cleaned != raw:
                    body = html.escape(cleaned, quote=True)
                else:  # the figure the answer cites, marked inside its cell
                    body = _styled(text, a, b, None, marks)
            else:
                body = ""
            out.append(f"<{tag}{num}>{body}</{tag}>")
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)]*\s+|\n+")
_CITE_MARK = re.compile(r"\[\s*(\d{1,3}(?:\s*,\s*\d{1,3})*)\s*\]")
_WORD = re.compile(r"[a-z0-9][a-z0-9'.,%$-]*")


def _sentences(text: str) -> list[str]:
    """The sentences (or lines) of `text`."""
    return [p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()]


def _words(text: str) -> set[str]:
    return {w.strip(".,") for w in _WORD.findall(text.lower())}


def _claims(answer: str, number: int) -> list[str]:
    """What the answer says with [number]: on each line, the text from the previous citation marker (or the line's
    start) up to a marker that names the number; bullets, emphasis and quote marks around it removed."""
    claims = []
    for line in answer.splitlines():
        at = 0
        for m in _CITE_MARK.finditer(line):
            said, at = line[at:m.start()], m.end()
            if number not in {int(n) for n in re.split(r"\s*,\s*", m.group(1))}:
                continue
            said = re.sub(r"^[\s*>#-]*(?:\d+\.\s)?", "", said).replace("**", "")
            claims.append(re.sub(r"\s+", " ", said).strip(" .;,"))
    return [c for c in claims if c]


def supporting_quotes(answer: str, number, passage: str, min_overlap: float = 0.6) -> list[str]:
    """The parts of `passage` that the answer's claims citing [number] quote or restate: a claim (or a quotation
    in it) found in the passage as written, else the passage's sentence sharing the most of its words (at least
    min_overlap of the shorter one's). Empty when none does: the whole passage is then what supports it."""
    if not answer or not passage or number is None:
        return []
    found: list[str] = []
    candidates = _sentences(passage)
    for claim in _claims(answer, int(number)):
        quoted = re.findall(r"[\"“]([^\"”]{20,})[\"”]", claim)
        for part in quoted or [claim]:
            part = part.strip(" .;,")
            if len(part) < 12:
                continue
            if part in passage:
                found.append(next((part + end for end in ".;" if part + end in passage), part))
                continue
            for said in _sentences(part):
                words = _words(said)
                best, score = None, 0.0
                for cand in candidates:
                    cw = _words(cand)
                    overlap = len(words & cw) / min(len(words), len(cw)) if words and cw else 0.0
                    if overlap > score:
                        best, score = cand, overlap
                if best and score >= min_overlap and len(words) >= 3:
                    found.append(best)
    return list(dict.fromkeys(found))


PASSAGE_CSS = """
<style>
.wb-passage { font-family: "Source Sans Pro", "Source Sans 3", system-ui, sans-serif;
  font-size: 0.9rem; line-height: 1.5; color: #3b4450; background: #f7f8fa; border: 1px solid #e3e7ee;
  border-radius: 0.5rem; padding: 0.9rem 1rem; overflow-wrap: anywhere; }
.wb-text { white-space: pre-wrap; }
.wb-mark { background: #fff1a8; color: #111827; border-radius: 2px; padding: 0.05rem 0;
  box-shadow: 0 0 0 2px #fff1a8; }
.wb-chunk { background: #fbf7e4; }
.wb-more { color: #8a94a3; }
.wb-table { border-collapse: collapse; margin: 0.3rem 0 0.6rem; font-variant-numeric: tabular-nums;
  overflow-wrap: normal; }
.wb-table td, .wb-table th { padding: 0.1rem 0.6rem; border-bottom: 1px solid #e3e7ee; text-align: left;
  vertical-align: top; }
.wb-table th { font-weight: 600; color: #4b5563; }
.wb-table td.wb-num { text-align: right; white-space: nowrap; }
.wb-table tr.wb-mark { box-shadow: none; }
.wb-table tr.wb-mark td, .wb-table tr.wb-mark th { background: #fff1a8; color: #111827; }
.wb-table tr.wb-chunk td { background: #fbf7e4; }
</style>
"""


# --------------------------------------------------------------------------------------------------------------
# Labels


PAGE_DASH = "–"  # page ranges on the page read "p. 5–6"


def source_kind(c: dict) -> str:
    """What a cited source is, for its caption: "" for a retrieved passage (its score says how it ranked)."""
    if c.get("kind") == "fact" and c.get("origin"):
        return f"a figure read from {c['origin']}"
    return {"fact": "exact XBRL fact", "passage": "a figure read from this passage's text"}.get(
        c.get("kind") or "chunk", "")


def short_label(c: dict) -> str:
    """'ACME · 10-Q · Q3 FY2025 · Part I Item 2 · p. 21', 'ACME · 10-K · FY2024 · Item 8 · p. 5' (plain text:
    escape it before it goes into Markdown)."""
    parts = [c.get("ticker") or c.get("company") or "?"]
    if c.get("form"):
        parts.append(str(c["form"]))
    period = period_label(c.get("fiscal_year"), c.get("fiscal_period"))
    if period:
        parts.append(period)
    if c.get("section"):
        parts.append(str(c["section"]))
    pages = pages_label(c.get("page_start"), c.get("page_end"), PAGE_DASH)
    if pages:
        parts.append(pages)
    if c.get("kind") == "fact":
        parts.append("PDF figure" if c.get("origin") else "XBRL fact")
    return " · ".join(parts)


def long_label(c: dict) -> str:
    """'Acme Widgets Inc. (ACME) · 10-Q · Q3 FY2025 · Part I Item 2 … · p. 5–6' (plain text).

    rag.schema.citation_label with the UI's en dash, and the section named by section_label: a title that already
    names the part ('Cover page and table of contents', 'Signatures') stands alone."""
    c = {**c, "company": reader_name(c.get("company")) or None}
    if c.get("section"):
        c = {**c, "section": section_label(c["section"], c.get("section_title")), "section_title": None}
    return citation_label(c, page_dash=PAGE_DASH)


def section_label(item, title) -> str:
    """'Item 7 Management's Discussion…'; a title that already names the part ('Cover page …') alone."""
    item, title = str(item or "").strip(), str(title or "").strip()
    if not title:
        return item
    if not item or title.lower().startswith(item.lower()):
        return title
    return f"{item} {title}"


def ms_label(ms) -> str:
    if ms is None:
        return "–"
    ms = float(ms)
    return f"{ms:,.0f} ms" if ms < 1000 else f"{ms / 1000:,.1f} s"


def timings_label(timings: dict | None) -> str:
    """'search 1.2 s + answer 0.4 s = 1.6 s · first words at 1.3 s': the engine times the answer from the end of
    the search, so the total is their sum, and each figure is rounded in one unit so the sum shown adds up."""
    t = timings or {}
    search, answer, first = t.get("retrieval_ms"), t.get("total_ms"), t.get("first_token_ms")
    if search is None:  # nothing searched (the question failed before): the time it took
        return f"total {ms_label(answer)}" if answer is not None else ""
    if answer is None:
        return f"search {ms_label(search)}"
    search, answer = float(search), float(answer)
    if search + answer < 1000:
        s_ms, a_ms = round(search), round(answer)
        text = f"search {s_ms:,} ms + answer {a_ms:,} ms = {s_ms + a_ms:,} ms"
    else:
        s_ds, a_ds = round(search / 100), round(answer / 100)  # tenths of a second
        text = f"search {s_ds / 10:,.1f} s + answer {a_ds / 10:,.1f} s = {(s_ds + a_ds) / 10:,.1f} s"
    if first is not None:
        text += f" · first words at {ms_label(search + float(first))}"
    return text


# The export (rag.conversations.to_markdown) escapes what it did not write by the page's own rules. Citation
# markers stay plain "[n]": the theme's colour directive means nothing outside Streamlit.
EXPORT_ESCAPER = Escaper(block=lambda text: safe_markdown(text, citation_color=None), inline=safe_inline,
                         code=code_inline, url=safe_url)
