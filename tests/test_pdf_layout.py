"""The PDF reader reads the page's layout: small real PDFs written in the test (tests/pdf_maker.py) with a statement
table of two year columns, a running header and footer and page numbers, a two-column page of prose; and the
FinanceBench PDFs of ../shared where present. Every company and figure here is invented."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rag.facts.pdf_cover import PDF_COVER_SOURCE, cover_facts
from rag.facts.pdf_tables import PDF_TABLE_SOURCE, parent_share_metric, row_metric, table_facts
from rag.facts.store import FactStore
from rag.parse import parse_file, parse_pdf
from rag.parse.statements import statement_pages
from tests.filings import shared_or_skip
from tests.pdf_maker import write_pdf

HEADER = "Acme Widgets, Inc."
FOOTER = "Acme Widgets 2019 Annual Report"
ROWS = [  # label, 2019, 2018
    ("Net sales", "$ 12,345", "$ 11,000"),
    ("Cost of sales", "7,100", "6,400"),
    ("Gross margin", "5,245", "4,600"),
    ("Research and development", "1,200", "1,100"),
    ("Selling, general and administrative", "2,000", "1,900"),
    ("Total operating expenses", "3,200", "3,000"),
    ("Operating income", "2,045", "1,600"),
    ("Interest expense", "(145)", "(120)"),
    ("Income before income taxes", "1,900", "1,480"),
    ("Provision for income taxes", "400", "310"),
    ("Net income", "$ 1,500", "$ 1,170"),
    ("Net income attributable to noncontrolling interests", "60", "50"),
    ("Net income attributable to Acme stockholders", "$ 1,440", "$ 1,120"),
]
COVER_COUNT_LINE = "As of February 14, 2020, there were 48,210,375 shares of the registrant's common stock outstanding."
WORDS = ("the company designs and sells widgets through distributors in many regions and reports one segment "
         "whose results are reviewed by management each quarter").split()


def _edges(page: int) -> list[tuple[float, float, str]]:
    return [(72, 30, HEADER), (72, 765, FOOTER), (520, 765, str(page))]


def _prose(x: float, top: float, lines: int, width: int) -> list[tuple[float, float, str]]:
    out = []
    for k in range(lines):
        words = [WORDS[(k * 7 + j) % len(WORDS)] for j in range(width)]
        out.append((x, top + 12 * k, " ".join(words)))
    return out


def _statement_page() -> list[tuple[float, float, str]]:
    texts = [(72, 80, "Item 8. Financial Statements and Supplementary Data"),
             (72, 110, "CONSOLIDATED STATEMENTS OF OPERATIONS"),
             (72, 122, "(In millions, except per share amounts)"),
             (400, 140, "Year Ended December 31,"),
             (400, 152, "2019"), (480, 152, "2018")]
    for k, (label, this, last) in enumerate(ROWS):
        y = 168 + 12 * k
        texts += [(72, y, label), (440 - 5 * len(this), y, this), (520 - 5 * len(last), y, last)]
    texts.append((72, 168 + 12 * len(ROWS) + 20, "See the accompanying notes to the consolidated financial "
                                                 "statements."))
    return texts


def _filing_pages() -> list[list[tuple[float, float, str]]]:
    cover = [(150, 80, "UNITED STATES SECURITIES AND EXCHANGE COMMISSION"), (230, 100, "Washington, D.C. 20549"),
             (260, 130, "FORM 10-K"), (100, 160, "ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES "
                                              "EXCHANGE ACT OF 1934"),
             (150, 180, "For the fiscal year ended December 31, 2019"), (220, 220, "ACME WIDGETS, INC."),
             (170, 235, "(Exact name of registrant as specified in its charter)"),
             (72, 260, "Title of each class"), (250, 260, "Trading Symbol(s)"),
             (400, 260, "Name of each exchange on which registered"),
             (72, 275, "Common Stock, $0.01 par value"), (250, 275, "ACMW"), (400, 275, "The Nasdaq Stock Market LLC"),
             (72, 300, "Indicate by check mark whether the registrant is a shell company (as defined in Rule 12b-2 of "
                       "the Act). Yes No X"),
             (72, 320, COVER_COUNT_LINE)]
    business = [(72, 80, "Item 1. Business")] + _prose(72, 100, 30, 12)
    two_columns = ([(72, 80, "Item 7. Management's Discussion and Analysis")]
                   + [(72, y, "Left column " + t) for _, y, t in _prose(72, 100, 30, 5)]
                   + [(330, y, "Right column " + t) for _, y, t in _prose(330, 100, 30, 5)])
    pages = [cover, business, two_columns, _statement_page(), [(72, 80, "Item 9. Changes in and Disagreements "
                                                                  "with Accountants")] + _prose(72, 100, 20, 12)]
    return [texts + (_edges(n + 1) if n else []) for n, texts in enumerate(pages)]


@pytest.fixture(scope="module")
def filing(tmp_path_factory) -> Path:
    return write_pdf(tmp_path_factory.mktemp("pdf") / "acme-10k-2019.pdf", _filing_pages())


@pytest.fixture(scope="module")
def parsed(filing):
    return parse_file(filing)


def _page_text(parsed, page: int) -> str:
    starts = parsed.page_starts + [len(parsed.text)]
    return parsed.text[starts[page - 1]:starts[page]]


def test_statement_rows_come_out_with_their_column_heads(parsed):
    table = next(b for b in parsed.blocks if b.kind == "table" and "Net sales" in b.text)
    assert table.page == 4
    assert table.table_header.splitlines()[-1].strip().endswith("| 2019 | 2018")
    assert "Year Ended December 31," in table.table_header
    lines = table.text.splitlines()
    assert "Net sales | $12,345 | $11,000" in lines
    assert "Interest expense | (145) | (120)" in lines
    assert "CONSOLIDATED STATEMENTS OF OPERATIONS" in table.caption
    assert "In millions" in table.caption


def test_running_header_footer_and_page_numbers_are_dropped(parsed):
    assert HEADER not in parsed.text and FOOTER not in parsed.text
    for page in range(2, 6):
        text = _page_text(parsed, page)
        assert not text.rstrip().endswith(str(page)), text[-80:]


def test_page_spans_items_and_statement_page(parsed):
    assert len(parsed.page_starts) == 5
    assert parsed.page_at(parsed.text.index("Net sales |")) == 4
    items = {s.item: (s.page_start, s.page_end) for s in parsed.sections}
    assert items["Item 1"][0] == 2 and items["Item 7"][0] == 3 and items["Item 8"] == (4, 4)
    assert statement_pages(parsed) == {4: "income statement"}


def test_a_two_column_page_is_read_one_column_after_the_other(parsed):
    text = _page_text(parsed, 3)
    assert text.count("Left column") == 30 and text.count("Right column") == 30
    assert text.rindex("Left column") < text.index("Right column")


def test_statement_rows_become_facts_read_from_the_pdf_table(parsed, filing, tmp_path):
    meta = dict(parsed.meta, doc_id="acme-2019", ticker="ACME", path=str(filing))
    assert meta["period_end"] == "2019-12-31" and meta["fiscal_year"] == 2019
    facts = table_facts(parsed, meta)
    revenue = [f for f in facts if f.concept == "us-gaap:Revenues"]
    assert {(f.period_start, f.period_end, f.value) for f in revenue} == {
        ("2019-01-01", "2019-12-31", 12_345e6), ("2018-01-01", "2018-12-31", 11_000e6)}
    assert all(f.source == PDF_TABLE_SOURCE for f in facts)
    interest = next(f for f in facts if f.concept == "us-gaap:InterestExpense" and f.period_end == "2019-12-31")
    assert interest.value == 145e6  # an expense printed in parentheses is subtracted, not below zero
    assert parsed.text[revenue[0].char_start:revenue[0].char_end] in ("$12,345", "$11,000")
    store = FactStore(tmp_path / "facts.sqlite3")
    chunks = [{"id": "c4", "char_start": parsed.page_starts[3], "char_end": len(parsed.text), "section": "Item 8",
               "page_start": 4}]
    store.add_filing(meta, facts, chunks, text=parsed.text)
    rows = [r for r in store.facts("acme-2019", ["us-gaap:Revenues"]) if r.period_end == "2019-12-31"]
    assert len(rows) == 1 and rows[0].value == 12_345e6
    assert rows[0].source == PDF_TABLE_SOURCE and rows[0].provenance() == "read from the PDF's statement table"
    assert rows[0].page == 4 and rows[0].chunk_id == "c4" and rows[0].row_label == "Net sales"


def test_net_income_is_the_parents_share_where_the_statement_prints_both(parsed, filing):
    meta = dict(parsed.meta, doc_id="acme-2019", ticker="ACME", path=str(filing))
    net_income = {f.period_end: f.value for f in table_facts(parsed, meta) if f.concept == "us-gaap:NetIncomeLoss"}
    # Not the consolidated line above it (1,500), nor the noncontrolling interests' share (60).
    assert net_income == {"2019-12-31": 1_440e6, "2018-12-31": 1_120e6}


def test_row_labels_map_through_the_metric_vocabulary():
    assert row_metric("Total net sales", "income statement").key == "revenue"
    assert row_metric("Cost of sales", "income statement").key == "cost_of_revenue"
    assert row_metric("Net sales", "balance sheet") is None  # not a figure that statement prints
    assert row_metric("Net sales of widgets sold to distributors", "income statement") is None
    assert parent_share_metric("Net income attributable to common shareholders", "income statement").key == \
        "net_income"
    assert parent_share_metric("Net loss attributable to non-controlling interests", "income statement") is None
    assert parent_share_metric("Net income", "income statement") is None


def test_financebench_pdf_statement_page_reads_as_a_table_fast():
    path = shared_or_skip("corpus", "financebench", "pdfs", "AMAZON_2019_10K.pdf")
    started = time.perf_counter()
    parsed = parse_file(path)
    elapsed = time.perf_counter() - started
    print(f"benchmark: {path.name}, {len(parsed.page_starts)} pages parsed in {elapsed:.1f} s")
    pages = statement_pages(parsed)
    assert set(pages.values()) == {"income statement", "balance sheet", "cash flow statement"}
    tables = [b for b in parsed.blocks if b.kind == "table" and b.page in pages]
    assert tables and all("|" in b.table_header for b in tables[:3])
    facts = table_facts(parsed, parsed.meta)
    assert any(f.concept == "us-gaap:Revenues" and f.period_end == parsed.meta["period_end"] for f in facts)


def test_a_figure_asked_of_a_pdf_is_answered_from_its_table_with_its_page(filing, tmp_path):
    from rag.catalog import Catalog
    from rag.config import get_settings
    from rag.facts import FactsLayer
    from rag.index import IndexStore
    from rag.question import plan_question
    from tests.filings import store_facts

    settings = get_settings(storage_dir=tmp_path)
    store = FactStore.for_settings(settings)
    chunks: dict = {}
    _doc, meta = store_facts(store, IndexStore(settings).chunker(), filing, chunks)
    layer = FactsLayer(settings, store=store, chunk_lookup=chunks.get)
    assert meta["ticker"] == "ACMW"
    value = layer.value("revenue", "ACMW", 2019)
    assert value is not None and value.amount == 12_345e6 and value.fact.source == PDF_TABLE_SOURCE
    answer = layer.answer_for(plan_question("What was Acme Widgets' revenue in fiscal 2019?",
                                            Catalog.build(layer.filings())))
    assert answer is not None and "12,345" in answer.block
    assert "read from the PDF's statement table (page 4)" in answer.block
    citation = answer.citations[0]
    assert citation.page_start == 4 and "Read from the PDF's statement table, page 4" in citation.text
    assert "XBRL fact" not in citation.text


def test_the_cover_pages_share_count_is_a_fact_read_from_the_pdf_cover(parsed):
    facts = cover_facts(parsed)
    assert [(f.concept, f.value, f.period_end, f.unit, f.source) for f in facts] == [
        ("dei:EntityCommonStockSharesOutstanding", 48_210_375, "2020-02-14", "shares", PDF_COVER_SOURCE)]
    assert parsed.text[facts[0].char_start:facts[0].char_end] == "48,210,375"
    assert parsed.page_at(facts[0].char_start) == 1


def test_a_share_count_asked_of_a_pdf_is_answered_from_its_cover(filing, tmp_path):
    from rag.catalog import Catalog
    from rag.config import get_settings
    from rag.facts import FactsLayer
    from rag.index import IndexStore
    from rag.question import plan_question
    from tests.filings import store_facts

    settings = get_settings(storage_dir=tmp_path)
    store = FactStore.for_settings(settings)
    chunks: dict = {}
    store_facts(store, IndexStore(settings).chunker(), filing, chunks)
    layer = FactsLayer(settings, store=store, chunk_lookup=chunks.get)
    answer = layer.answer_for(plan_question("How many shares of Acme Widgets common stock were outstanding in "
                                            "fiscal 2019?", Catalog.build(layer.filings())))
    assert answer is not None and "48,210,375 shares" in answer.block
    assert "read from the PDF's cover page (page 1)" in answer.block
    citation = answer.citations[0]
    assert citation.origin == "the PDF's cover page" and citation.page_start == 1
    assert "Read from the PDF's cover page, page 1" in citation.text and "XBRL fact" not in citation.text


@pytest.mark.parametrize("count_lines, expected", [
    # One class: the count beside its date, in the one-row table a cover may print under the instruction.
    (["Indicate the number of shares outstanding of each of the issuer's classes of common stock, as of the "
      "latest practicable date.", "Class Outstanding at July 20, 2025", "Common Stock, $0.10 par value 7,654,321"],
     [(7_654_321, "2025-07-20")]),
    # Written with a scale word, after a statement of shares held by non-affiliates (two counts, not this one).
    (["As of June 30, 2025, there were 1,200,000 shares of common stock outstanding held by non-affiliates.",
      "As of August 1, 2025, 2.5 million shares of the registrant's common stock were outstanding."],
     [(2_500_000, "2025-08-01")]),
    # One count per class of stock: which one a question means is not guessed.
    (["As of August 1, 2025, the number of shares of common stock outstanding were: Class A 1,234,567 "
      "Class B 7,654,321"], []),
])
def test_cover_counts_per_class_are_not_guessed_and_other_numbers_are_not_counts(tmp_path, count_lines, expected):
    cover = [(260, 80, "FORM 10-Q"), (100, 100, "For the quarterly period ended June 30, 2025"),
             (220, 120, "GADGET WORKS CORP."), (170, 135, "(Exact name of registrant as specified in its charter)"),
             (72, 160, "Indicate by check mark whether the registrant is a shell company (as defined in Rule 12b-2 "
                       "of the Exchange Act). Yes No X")]
    cover += [(72, 190 + 30 * k, line) for k, line in enumerate(count_lines)]
    pages = [cover, [(72, 80, "Part I. Item 1. Financial Statements")] + _prose(72, 100, 30, 12)]
    parsed = parse_file(write_pdf(tmp_path / "gadget-10q.pdf", pages))
    assert [(f.value, f.period_end) for f in cover_facts(parsed)] == expected


def test_a_quarterly_statement_with_period_heads_over_pairs_of_columns(tmp_path):
    heads = [(330, 100, "Three Months Ended"), (470, 100, "Six Months Ended"),
             (300, 112, "June 30,"), (360, 112, "June 30,"), (440, 112, "June 30,"), (500, 112, "June 30,"),
             (305, 124, "2025"), (365, 124, "2024"), (445, 124, "2025"), (505, 124, "2024")]
    rows = [("Total revenues", ("8,100", "7,900", "16,300", "15,800")),
            ("Cost of revenues", ("4,600", "4,700", "9,400", "8,900")),
            ("Net income", ("900", "850", "1,700", "1,650"))]
    texts = [(72, 60, "GAMMA, INC."), (72, 72, "CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS"),
             (72, 84, "(in thousands)")] + heads
    for k, (label, values) in enumerate(rows):
        texts.append((72, 140 + 12 * k, label))
        texts += [(x - 5 * len(v), 140 + 12 * k, v) for x, v in zip((330, 390, 470, 530), values, strict=True)]
    path = write_pdf(tmp_path / "gamma-q2.pdf", [[(72, 72, "Quarterly report")] + _prose(72, 100, 10, 10), texts])
    parsed = parse_pdf(path)  # a page of a quarterly report, not a whole filing
    table = next(b for b in parsed.blocks if b.kind == "table")
    assert table.table_header.splitlines()[-1] == ("| Three Months Ended June 30, 2025 | Three Months "
                                                   "Ended June 30, 2024 | Six Months Ended June 30, 2025 | Six Months "
                                                   "Ended June 30, 2024")
    assert "Total revenues | 8,100 | 7,900 | 16,300 | 15,800" in table.text
    assert statement_pages(parsed) == {2: "income statement"}
    facts = table_facts(parsed, {"period_end": "2025-06-30", "fiscal_year": 2025, "fiscal_period": "Q2"})
    revenue = {(f.period_start, f.period_end): f.value for f in facts if f.concept == "us-gaap:Revenues"}
    assert revenue == {("2025-04-01", "2025-06-30"): 8_100e3, ("2024-04-01", "2024-06-30"): 7_900e3,
                       ("2025-01-01", "2025-06-30"): 16_300e3, ("2024-01-01", "2024-06-30"): 15_800e3}


def _width(text: str, size: float = 9.0) -> float:
    """The width of text set in Helvetica (its widths per 1,000 units of the font size)."""
    widths = {",": 278, ".": 278, " ": 278, "(": 333, ")": 333, "%": 889}
    return sum(widths.get(ch, 556) for ch in text) * size / 1000


def test_amounts_set_close_together_are_separate_cells_and_sign_heads_separate_columns(tmp_path):
    # An invented segment table of a change analysis, typeset as such tables often are: each amount flush right
    # in its column, its "$" flush left, so a percent change ends a space before the next column's "$"; the "$"
    # and "%" change heads share one run of text; a stray page number stands left of the heads.
    rights = [290, 340, 390, 440, 510]
    texts = [(72, 80, "Item 2. Management's Discussion and Analysis"),
             (72, 110, "The following table presents net sales by segment (in millions):"),
             (30, 130, "7"), (250, 130, "Three months ended"), (470, 130, "Six months ended")]
    texts += [(390 - _width("$"), 130, "$"), (440 - _width("%"), 130, "%")]
    texts += [(right - _width(head), 142, head) for right, head in zip(rights, ["2025", "2024", "change", "change",
                                                                              "2025"])]
    rows = [("Gadgets", ["1,210", "1,100", "110", "10%", "2,400"], True),
            ("Sprockets", ["640", "700", "(60)", "(9)%", "1,300"], False),
            ("Total segment net sales", ["1,850", "1,800", "50", "3%", "3,700"], True)]
    for k, (label, values, dollars) in enumerate(rows):
        y = 160 + 12 * k
        texts.append((72, y, label))
        for n, (right, value) in enumerate(zip(rights, values)):
            texts.append((right - _width(value), y, value))
            if dollars and n != 3:
                texts.append((rights[n - 1] + _width(" ") if n else 250, y, "$"))
    parsed = parse_file(write_pdf(tmp_path / "segments.pdf", [texts]))
    table = next(b for b in parsed.blocks if b.kind == "table" and "Gadgets" in b.text)
    lines = table.text.splitlines()
    assert "Gadgets | $1,210 | $1,100 | $110 | 10% | $2,400" in lines, lines
    assert "Sprockets | 640 | 700 | (60) | (9)% | 1,300" in lines, lines
    head = table.table_header.splitlines()[-1]
    assert "Three months ended 2025" in head and "$ change" in head and "% change" in head, head
    assert "7" not in head.split("|")[0], head
