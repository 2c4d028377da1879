"""Answers for a terminal: Markdown rendered (ANSI bold on a TTY, plain text otherwise), filing text made safe to
print, and citation numbers renumbered 1..n in order of first use.

The engine writes Markdown for the app (bold source headings, code-quoted table rows) and numbers sources by
retrieval rank, with exact XBRL figures after them, so the numbers an answer cites have gaps ([1] [3] [4] [9]).
A terminal reader wants neither the markup nor the gaps. Nothing here changes a word or a figure of the answer.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading

from .schema import period_label

# Filing text and model output are untrusted: an escape sequence in them could recolour, move the cursor or retitle
# the terminal. CSI and OSC sequences go whole; any other C0/C1 control (tab and newline kept) and the Unicode
# bidirectional overrides, which reorder what is shown, go too.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|\x9b[0-?]*[ -/]*[@-~]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

BOLD, BOLD_OFF = "\x1b[1m", "\x1b[22m"
ITALIC, ITALIC_OFF = "\x1b[3m", "\x1b[23m"
CODE, CODE_OFF = "\x1b[36m", "\x1b[39m"

# A citation marker as the engine leaves it in a finished answer: [n] (the stream normalises [1, 2] to [1][2]).
_MARKER = re.compile(r"\[(\d{1,3})\]")

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
# Inline Markdown, leftmost first: code spans (their text literal), backslash escapes, bold, italic, links.
# Italic needs a non-space inside each star and no word character outside, so "3 * 4" or "file_name" stay.
_INLINE = re.compile(
    r"(?P<ticks>`+)(?P<code>.+?)(?P=ticks)"
    r"|\\(?P<escaped>[!-/:-@\[-`{-~])"
    r"|\*\*(?=\S)(?P<strong>.+?)(?<=\S)\*\*"
    r"|(?<!\w)__(?=\S)(?P<strong_u>.+?)(?<=\S)__(?!\w)"
    r"|(?<![\w*])\*(?=[^\s*])(?P<em>.+?)(?<=[^\s*])\*(?![\w*])"
    r"|(?<!\w)_(?=[^\s_])(?P<em_u>.+?)(?<=[^\s_])_(?!\w)"
    r"|\[(?P<link>[^\]]+)\]\((?P<url>[^)\s]+)\)"
)


def clean_text(text: str) -> str:
    """Text with escape sequences and control characters removed (newlines and tabs kept)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text or ""))


def shown_name(text) -> str:
    """A name (a file's, a ticker, a company) for one line of a terminal: its escape sequences, newlines and other
    control characters shown as Python writes them ("\\x1b[31m", "\\n") rather than acted on, so a name can
    neither restyle the line it is printed in nor split it, and the user still sees what the name holds."""
    text = str(text if text is not None else "").replace("\n", "\\n").replace("\t", "\\t")
    return _CONTROLS.sub(lambda m: repr(m.group(0))[1:-1], text)


def wants_style(stream) -> bool:
    """ANSI styling only on a terminal, and not when the user asked for none (the NO_COLOR convention)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def render_inline(text: str, style: bool) -> str:
    def wrap(on: str, inner: str, off: str) -> str:
        return f"{on}{inner}{off}" if style else inner

    def replace(m: re.Match) -> str:
        if m.group("code") is not None:
            return wrap(CODE, m.group("code"), CODE_OFF)
        if m.group("escaped") is not None:
            return m.group("escaped")
        strong = m.group("strong") if m.group("strong") is not None else m.group("strong_u")
        if strong is not None:
            return wrap(BOLD, render_inline(strong, style), BOLD_OFF)
        em = m.group("em") if m.group("em") is not None else m.group("em_u")
        if em is not None:
            return wrap(ITALIC, render_inline(em, style), ITALIC_OFF)
        return f"{render_inline(m.group('link'), style)} ({m.group('url')})"

    return _INLINE.sub(replace, text)


class MarkdownLines:
    """Renders Markdown one line at a time (the answer streams), keeping the one piece of state lines share: being
    inside a fenced code block, whose lines print as they are."""

    def __init__(self, style: bool):
        self.style = style
        self.in_fence = False

    def render(self, line: str) -> str | None:
        """The line for the terminal, or None for a line that is only markup (a code fence)."""
        if _FENCE.match(line):
            self.in_fence = not self.in_fence
            return None
        if self.in_fence:
            return line
        if _RULE.match(line):
            return "-" * 40
        heading = _HEADING.match(line)
        if heading:
            inner = render_inline(heading.group(1), self.style)
            return f"{BOLD}{inner.replace(BOLD_OFF, '')}{BOLD_OFF}" if self.style else inner
        bullet = _BULLET.match(line)
        if bullet:
            return f"{bullet.group(1)}- {render_inline(bullet.group(2), self.style)}"
        quote = _QUOTE.match(line)
        if quote:
            return "  " + render_inline(quote.group(1), self.style)
        return render_inline(line, self.style)


class CitationNumbers:
    """Engine source numbers -> the numbers a reader sees, 1..n in order of first use in the answer."""

    def __init__(self):
        self.shown: dict[int, int] = {}

    def renumber(self, text: str) -> str:
        """Every marker of the text under its shown number, a source named for the first time taking the next."""
        return _MARKER.sub(lambda m: f"[{self.number_for(int(m.group(1)))}]", text)

    def number_for(self, engine_number: int) -> int:
        """The shown number of a source, the next one for a source not named before."""
        if engine_number not in self.shown:
            self.shown[engine_number] = len(self.shown) + 1
        return self.shown[engine_number]

    def renumber_known(self, text: str) -> str:
        """Markers of numbered sources renumbered; others (a citation the engine removed) left as they are."""
        return _MARKER.sub(lambda m: f"[{self.shown.get(int(m.group(1)), m.group(1))}]", text)


class AnswerPrinter:
    """Prints a streamed answer line by line: cleaned, citations renumbered, Markdown rendered. A line is printed
    once it is complete (a marker or a bold span never straddles a line), and blank lines only before more text."""

    def __init__(self, out, style: bool):
        self.out = out
        self.numbers = CitationNumbers()
        self.markdown = MarkdownLines(style)
        self.pending = ""
        self.blank_lines = 0
        self.printed = False

    def feed(self, piece: str) -> None:
        self.pending += clean_text(piece)
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self._line(line)

    def close(self) -> None:
        if self.pending:
            self._line(self.pending)
            self.pending = ""
        self.out.flush()

    def _line(self, raw: str) -> None:
        shown = self.markdown.render(self.numbers.renumber(raw))
        if shown is None:
            return
        if not shown.strip():
            self.blank_lines += self.printed
            return
        self.out.write("\n" * min(self.blank_lines, 1) + shown + "\n")
        self.blank_lines, self.printed = 0, True
        self.out.flush()


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def number_sources(result, numbers: CitationNumbers) -> None:
    """Number every source of an answer: the cited ones keep the numbers the printed answer gave them, then the
    retrieved ones it did not cite follow in retrieval order, so that every [n] a warning names is listed."""
    for c in result.citations:
        numbers.number_for(c.number)
    for c in result.sources:
        numbers.number_for(c.number)


def source_lines(result, numbers: CitationNumbers, style: bool) -> list[str]:
    """The sources under their shown numbers, cited first, each with one measure a reader can compare: a passage's
    retrieval rank (the fused scores of hybrid search are on no scale a reader knows) or, for a figure from the
    XBRL facts, that it is exact."""
    number_sources(result, numbers)
    passages = sorted(c.number for c in result.sources if c.kind != "fact")
    rank = {number: i + 1 for i, number in enumerate(passages)}
    cited = {c.number for c in result.citations}
    uncited = [c for c in result.sources if c.number not in cited]
    lines = []
    for heading, group in (("Sources:", result.citations), ("Also retrieved, not cited:", uncited)):
        if not group:
            continue
        if lines:
            lines.append("")
        lines.append(f"{BOLD}{heading}{BOLD_OFF}" if style else heading)
        for c in sorted(group, key=lambda c: numbers.shown[c.number]):
            if c.kind == "fact":
                measure = f"figure read from {c.origin}" if c.origin else "exact XBRL figure"
            else:
                measure = f"{ordinal(rank.get(c.number, c.number))} of {len(passages)} passages retrieved"
            label = f"[{numbers.shown[c.number]}]"
            text = clean_text(f"{_where(c)}  ({measure})  {c.url or c.source or ''}").rstrip()
            lines.append(f"  {BOLD + label + BOLD_OFF if style else label} {text}")
    return lines


def _where(c) -> str:
    """'ACME 10-K FY2024 Item 8 p. 30-31'"""
    pages = None
    if c.page_start is not None:
        pages = f"p. {c.page_start}" + (f"-{c.page_end}" if c.page_end not in (None, c.page_start) else "")
    period = period_label(c.fiscal_year, getattr(c, "fiscal_period", None)) or None
    return " ".join(str(part) for part in (c.ticker or c.company, c.form, period, c.section, pages) if part)


class WaitNotice:
    """Says on stderr that an answer is waiting for the model. On a terminal: one line, rewritten as the seconds
    pass ("waiting for llama3.1:8b, 12 s") and erased when the answer starts. Elsewhere (a log, a pipe): a line
    once the wait passes a second, then one every `every_s` seconds, so a quick answer prints none."""

    def __init__(self, out, *, live: bool, hint: str = "", every_s: float = 10.0):
        self.out = out
        self.live = live
        self.hint = hint
        self.every_s = every_s
        self.shown = ""  # the line on screen (live) or the last one printed
        self.next_at = 1.0  # seconds of waiting at which a log line is due

    def show(self, wait) -> None:
        """`wait`: the stream's WaitState, or None when it is not waiting (then the notice is cleared)."""
        if wait is None:
            self.clear()
            return
        line = clean_text(wait.label()) + (f" ({self.hint})" if self.hint else "")
        if self.live:
            if line != self.shown:
                self.out.write("\r\x1b[2K" + line)
                self.out.flush()
                self.shown = line
        elif wait.seconds >= self.next_at:
            self.out.write(line + "\n")
            self.out.flush()
            self.shown = line
            self.next_at = wait.seconds + self.every_s

    def clear(self) -> None:
        if self.live and self.shown:
            self.out.write("\r\x1b[2K")
            self.out.flush()
        self.shown = ""
        self.next_at = 1.0


@contextlib.contextmanager
def stop_on_interrupt(stream, say=None):
    """While the block runs, the first Ctrl-C calls `stream.stop()` (the answer then comes from the filings, or
    keeps what the model wrote so far) instead of ending the program; a second one interrupts as usual. Yields
    whether it could (signal handlers belong to the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    previous = signal.getsignal(signal.SIGINT)

    def first_interrupt(signum, frame):
        signal.signal(signal.SIGINT, previous)
        stream.stop()
        if say is not None:
            say()

    signal.signal(signal.SIGINT, first_interrupt)
    try:
        yield True
    finally:
        signal.signal(signal.SIGINT, previous)
