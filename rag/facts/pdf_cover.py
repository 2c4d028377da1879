"""The share count a PDF's cover page states, for the fact store: the form's cover must give "the number of shares
outstanding of each of the issuer's classes of common stock, as of the latest practicable date", which an EDGAR
filing tags as dei:EntityCommonStockSharesOutstanding and a PDF only prints, as a sentence ("As of <date>, there
were <n> shares of the registrant's common stock outstanding") or as a one-row table under that instruction.

The count and the date beside it give one fact, marked PDF_COVER_SOURCE (never XBRL) and kept at the span of the
count, so an answer cites the cover's chunk and page. A cover that states several counts in one statement (one per
class of stock) gives none: which class a question means is for the reader of the passage, not a guess.
"""

from __future__ import annotations

from ..dates import dates_named
from ..lexicon import word_set
from ..numbers import parse_numbers
from ..parse import Fact, ParsedFiling

PDF_COVER_SOURCE = "pdf-cover"  # Fact.source of a share count read from a PDF's cover page
COVER_SHARES_CONCEPT = "dei:EntityCommonStockSharesOutstanding"
_COVER_PAGES = 2  # where no "Cover" section was found, the pages a cover page can take
_MIN_COUNT = 1000  # a share count; smaller numbers on a cover are rule, section or telephone numbers
_COUNT_WORDS = word_set("cover_share_count")


def _cover_span(parsed: ParsedFiling) -> tuple[int, int]:
    for s in parsed.sections:
        if s.item == "Cover":
            return s.char_start, s.char_end
    pages = parsed.page_starts
    return 0, pages[_COVER_PAGES] if len(pages) > _COVER_PAGES else len(parsed.text)


def _paragraphs(text: str, at: int) -> list[tuple[int, str]]:
    """(offset, text) of each paragraph of text, offsets counted from `at`."""
    out, start = [], 0
    for part in text.split("\n\n"):
        out.append((at + start, part))
        start += len(part) + 2
    return out


def _counts(text: str) -> list:
    """The share counts written in the text: not a date's digits, a par value, a percentage, a small number, or the
    digits of a rule or file number ("Rule 12b-2" is not twelve billion)."""
    dates = [(s, e) for s, e, _iso in dates_named(text)]
    out = []
    for n in parse_numbers(text):
        if n.money or n.pct or n.negative or any(s <= n.start < e for s, e in dates):
            continue
        if text[n.end:n.end + 1] == "-" or text[n.end:n.end + 1].isalnum():
            continue
        # A count is written with its thousands separated or with a scale word; bare digits are a year ("the Act of
        # 1934"), a statute's section or a file number.
        separated = "," in n.raw
        if n.value * n.scale >= _MIN_COUNT and (n.scaled or separated):
            out.append(n)
    return out


def cover_facts(parsed: ParsedFiling) -> list[Fact]:
    """The cover's share count as a fact (see the module's docstring): from the last paragraph that states one
    (a statement of the shares non-affiliates hold comes before it), or from the paragraph after it when that one
    is the instruction above a table of the count. None when a statement gives a count per class of stock, or the
    cover states no count with its date."""
    lo, hi = _cover_span(parsed)
    paragraphs = _paragraphs(parsed.text[lo:hi], lo)
    found = None
    for k, (at, text) in enumerate(paragraphs):
        words = {w.strip(".,;:()").lower() for w in text.split()}
        if not words & _COUNT_WORDS:
            continue
        after = [text + "\n\n" + paragraphs[k + 1][1]] if k + 1 < len(paragraphs) else []
        for window in [text, *after]:
            counts, dates = _counts(window), dates_named(window)
            if len(counts) > 1:
                return []  # one count per class of stock
            if counts and dates:
                break
        if len(counts) == 1 and dates:
            n = counts[0]
            as_of = min(dates, key=lambda d: min(abs(d[0] - n.end), abs(n.start - d[1])))[2]
            found = (at + n.start, n, as_of)
    if found is None:
        return []
    at, n, as_of = found
    return [Fact(concept=COVER_SHARES_CONCEPT, value=n.value * n.scale, text=n.raw, unit="shares",
                 context_id=f"{PDF_COVER_SOURCE}:{as_of}", period_start=None, period_end=as_of, decimals=None,
                 scale=0, char_start=at, char_end=at + len(n.raw), source=PDF_COVER_SOURCE)]
