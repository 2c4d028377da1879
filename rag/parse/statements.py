"""Which pages of a filing hold its primary financial statements (income statement, balance sheet, cash flows).

Regulation S-X sets the statements out in Item 8 of a 10-K (Part I Item 1 of a 10-Q) one after another, each
page opening with the statement's caption ("Consolidated Balance Sheets", "Condensed Consolidated Statements of
Operations") under at most a running header (the company's name, "Table of Contents", a page number), above a
page of figures. Notes, MD&A tables and exhibit lists also name the statements, but in a sentence ("recorded on
the Consolidated Balance Sheets"), away from a page's top, or outside the run of pages where the statements sit.
"""

from __future__ import annotations

import re

from .results import ParsedFiling

# The captions of the three primary statements, matched with spaces removed because PDF text layers split words
# ("Balance Shee t", "Cash Flow s").
STATEMENT_CAPTIONS = {
    "income statement": re.compile(r"statements?of(?:consolidated)?(?:operations|income|earnings)|incomestatements?"),
    "balance sheet": re.compile(r"balancesheets?|statements?offinancial(?:position|condition)"),
    "cash flow statement": re.compile(r"statements?of(?:consolidated)?cashflows?|cashflows?statements?"),
}
_NUMBER = re.compile(r"(?<![\w.])\(?\$?\d[\d,]*(?:\.\d+)?\)?(?![\w])")
_WORD = re.compile(r"\S+")
OPENING_CHARS = 400  # where a page's caption sits: under a running header, above the column headings
_HEADER_WORDS = 15  # a running header is a name and a page reference, never a sentence
# Lower-case words a running header may hold ("Acme & Jones and subsidiaries consolidated balance sheets");
# any other lower-case word before the caption makes it part of a sentence.
_HEADER_LOWER = {"and", "of", "the", "subsidiaries", "subsidiary", "companies", "consolidated", "condensed",
                 "combined", "inc", "corp", "co", "ltd", "plc", "llc", "unaudited"}
_STATEMENT_RUN_PAGES = 8  # the primary statements follow each other within a few pages


def _is_page_of_figures(text: str) -> bool:
    numbers = len(_NUMBER.findall(text))
    return numbers >= 12 and numbers >= 0.15 * len(_WORD.findall(text))


def _opening_caption(opening: str) -> str:
    """The statement whose caption opens this page text ("" for none)."""
    kept = [(i, ch.lower()) for i, ch in enumerate(opening) if not ch.isspace()]
    squeezed = "".join(ch for _i, ch in kept)
    hits = [(m.start(), kind) for kind, rx in STATEMENT_CAPTIONS.items() if (m := rx.search(squeezed))]
    if len(hits) != 1:
        return ""  # none, or the captions of several statements: the contents page that lists them
    at, kind = hits[0]
    before = opening[: kept[at][0]]
    words = re.findall(r"[A-Za-z]+", before)
    if len(before.split()) > _HEADER_WORDS or any(w[0].islower() and w not in _HEADER_LOWER for w in words):
        return ""
    return kind


def statement_pages(parsed: ParsedFiling) -> dict[int, str]:
    """1-based page -> "income statement" | "balance sheet" | "cash flow statement", for the pages that carry a
    primary statement. Of pages whose opening caption names one, only those in the run of pages where the most
    different statements sit together are kept: a note or an MD&A table opening a page with the same caption lies
    outside that run (the parent-only statements of Schedule I, a segment's statement of operations)."""
    starts = parsed.page_starts or [0]
    found: dict[int, str] = {}
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(parsed.text)
        page = parsed.text[start:end]
        if not _is_page_of_figures(page):
            continue
        kind = _opening_caption(page[:OPENING_CHARS])
        if kind:
            found[i + 1] = kind
    if not found:
        return {}

    def run(first: int) -> dict[int, str]:
        return {p: kind for p, kind in found.items() if first <= p < first + _STATEMENT_RUN_PAGES}

    # The run with the most different statements, then the most pages, then the earliest.
    return run(max(found, key=lambda first: (len(set(run(first).values())), len(run(first)), -first)))
