"""The pages that carry the primary financial statements: a caption opening a page of figures, in the run of
pages where the statements sit together; not a caption inside a sentence, on a page of prose, or on a note's page
far from the statements."""

import re
import tempfile
from pathlib import Path

import pytest

from rag.config import get_settings
from rag.index import IndexStore
from rag.parse import ParsedFiling, parse_file, statement_pages
from tests.filings import shared_or_skip


def _rows(n: int, seed: int = 0) -> str:
    return "\n".join(f"Line item {i} | {1000 + seed + i:,} | {2000 + seed + i:,} | ({30 + i})" for i in range(n))


def _filing(pages: list[str]) -> ParsedFiling:
    text, starts = "", []
    for page in pages:
        starts.append(len(text))
        text += page + "\n\n"
    return ParsedFiling(text=text, blocks=[], sections=[], page_starts=starts, meta={})


def test_captions_that_open_pages_of_figures_are_the_statements():
    parsed = _filing([
        "Item 7. Management's Discussion\n\nRevenue grew on the consolidated balance sheets we show below.\n"
        + _rows(15),  # the caption inside a sentence
        "Acme Inc. and subsidiaries\n\nCONSOLIDATED STATEMENTS OF OPERATIONS\n(in millions)\n" + _rows(15),
        "Table of Contents 52\n\nConsolidated Balance Shee ts\n$ in millions\n" + _rows(15, 7),  # a PDF's split word
        "Consolidated Statements of Cash Flows\n\nWe describe below how cash moved during the year, in words "
        "rather than figures, because this page of the filing holds prose only and no table at all.",
        "Consolidated Statement of Cash Flow s (Millions)\n" + _rows(15, 3),
        "Notes to Consolidated Financial Statements\n\n" + _rows(15, 5),
    ] + ["Prose page." for _ in range(10)] + [
        "Condensed Consolidated Balance Sheets\n(parent company only)\n" + _rows(15, 9),  # outside the run
    ])
    assert statement_pages(parsed) == {2: "income statement", 3: "balance sheet", 5: "cash flow statement"}


def test_the_contents_page_that_lists_the_statements_is_none_of_them():
    contents = ("Index\n\nPART I. FINANCIAL INFORMATION\nItem 1. Financial Statements\n"
                "Condensed Consolidated Statements of Operations 3 Condensed Consolidated Balance Sheets 4 "
                "Condensed Consolidated Statements of Cash Flows 5 Notes 6 "
                + " ".join(f"Item {n}. Heading {n + 10}" for n in range(2, 12)))
    parsed = _filing([contents,
                      "Condensed Consolidated Statements of Operations\n(in millions)\n" + _rows(15),
                      "Condensed Consolidated Balance Sheets\n(in millions)\n" + _rows(15, 4),
                      "Condensed Consolidated Statements of Cash Flows\n(in millions)\n" + _rows(15, 8)])
    assert statement_pages(parsed) == {2: "income statement", 3: "balance sheet", 4: "cash flow statement"}


def test_a_filing_without_statements_has_none():
    parsed = _filing(["Item 1. Business\n\nWe make widgets.", "Item 8. The financial statements are in the "
                      "annual report to shareholders, incorporated by reference.\n" + _rows(15)])
    assert statement_pages(parsed) == {}


def test_real_pdf_statements_are_found_where_their_captions_open_the_page():
    # A PDF whose statement captions share their chunk with the audit report on the page before, and whose notes
    # open pages with a statement's caption too.
    pages = statement_pages(parse_file(shared_or_skip("corpus", "financebench", "pdfs", "PFIZER_2021_10K.pdf")))
    assert {kind for kind in pages.values()} == {"income statement", "balance sheet", "cash flow statement"}
    assert max(pages) - min(pages) < 8 and pages[min(pages)] == "income statement"


def test_real_html_statements_are_one_page_each():
    pages = statement_pages(parse_file(shared_or_skip("corpus", "filings", "TSLA", "tsla-20241231.htm")))
    assert sorted(pages.values()) == ["balance sheet", "cash flow statement", "income statement"]


def test_a_chunk_running_onto_a_statement_page_belongs_to_it_only_with_its_caption():
    from rag.index.chunking import _mark_statements

    notes = "Index to the notes | Page\nNote 1 | 70\nNote 2 | 75\n"
    statement = "CONSOLIDATED BALANCE SHEETS\n(in millions)\n" + _rows(15)
    parsed = _filing([notes, statement])
    at = parsed.page_starts[1]
    caption_end = at + len("CONSOLIDATED BALANCE SHEETS")

    def chunk(start, end, page_start, page_end):
        return {"text": parsed.text[start:end], "char_start": start, "char_end": end,
                "page_start": page_start, "page_end": page_end}

    chunks = [chunk(0, caption_end + 10, 1, 2),  # the notes' index, then the statement's caption
              chunk(0, at + 1, 1, 2),  # the notes' index up to the page break only
              chunk(caption_end + 10, len(parsed.text), 2, 2)]
    _mark_statements(parsed, chunks, statement_pages(parsed))
    assert [c["statement"] for c in chunks] == ["balance sheet", "", "balance sheet"]


@pytest.mark.parametrize("ticker, name", [("CRM", "crm-20250131.htm"), ("UNH", "unh-20241231.htm"),
                                          ("BA", "ba-20241231.htm")])
def test_an_income_statement_from_revenue_to_net_income_is_one_passage(ticker, name):
    """A margin divides a row near the statement's foot by its first total: an analyst checks both in the one
    passage cited, so the chunk that opens the statement runs at least down to the net income line."""
    parsed = parse_file(shared_or_skip("corpus", "filings", ticker, name))
    chunker = IndexStore(get_settings(storage_dir=Path(tempfile.gettempdir()) / "rag-statement-chunks")).chunker()
    chunks = [c for c in chunker.split(parsed, {"ticker": ticker, "form": "10-K", "fiscal_year": 2024})
              if c["statement"] == "income statement"]
    opening = chunks[0]["text"].split("\n", 1)[1]
    lines = [line.split(" | ")[0].strip().lower() for line in opening.splitlines()]
    assert any(re.match(r"(total )?(net )?revenues?$|(total )?net sales$|total revenues", x) for x in lines), lines
    assert any(re.match(r"net (income|earnings|loss)", x) for x in lines), lines
    sizes = chunker.count([c["text"] for c in chunks])
    assert max(sizes) <= chunker.statement_tokens
