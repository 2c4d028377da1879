"""rag.parse: text layout, tables, Items, pages, XBRL facts and metadata, on hand-written fixtures and the corpus."""

from __future__ import annotations

import csv
import html
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag.dates import fiscal_year_from_period_end
from rag.parse import (
    ParsedFiling,
    ParseError,
    parse_file,
    parse_html,
    parse_pdf,
    parse_submission,
    read_full_submission,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus"
NO_CORPUS = "../shared/corpus is absent: the corpus tests read real filings in place"


def check_invariants(parsed: ParsedFiling) -> None:
    """What every parse must satisfy, whatever the input."""
    text = parsed.text
    assert parsed.page_starts and parsed.page_starts[0] == 0
    assert parsed.page_starts == sorted(parsed.page_starts)
    assert all(0 <= p <= len(text) for p in parsed.page_starts)
    last_page = 1
    for block in parsed.blocks:
        assert 0 <= block.char_start < block.char_end <= len(text)
        assert text[block.char_start : block.char_end] == block.text
        assert block.page >= last_page, "page numbers never decrease"
        assert parsed.page_at(block.char_start) == block.page
        last_page = block.page
    assert last_page <= len(parsed.page_starts)
    sections = parsed.sections
    assert sections and sections[0].char_start == 0 and sections[-1].char_end == len(text)
    for a, b in zip(sections, sections[1:], strict=False):
        assert a.char_end == b.char_start and a.char_start < a.char_end
    for fact in parsed.facts:
        if fact.char_start >= 0:
            assert 0 <= fact.char_start <= fact.char_end <= len(text)


def section_text(parsed: ParsedFiling, item: str) -> str:
    section = next(s for s in parsed.sections if s.item == item)
    return parsed.text[section.char_start : section.char_end]


# ------------------------------------------------------------------------------------------------------------------
# Tables
# ------------------------------------------------------------------------------------------------------------------

TABLE_HTML = """<html><body>
<p>Intro paragraph with   extra
   whitespace.</p>
<p>CONSOLIDATED STATEMENTS OF OPERATIONS</p>
<p>(In millions)</p>
<table>
<tr><td></td><td colspan="3">Years ended</td></tr>
<tr><td></td><td colspan="2">2024</td><td></td><td colspan="2">2023</td></tr>
<tr><td>Net sales</td><td>$</td><td>391,035</td><td></td><td>$</td><td>383,285</td></tr>
<tr><td>Other income/(expense), net</td><td></td><td>(1,234</td><td>)</td><td></td><td>(565</td><td>)</td></tr>
<tr><td>Gross margin percentage</td><td>46.2</td><td>%</td><td></td><td>44.1 %</td></tr>
<tr><td>Interest</td><td>$ (12</td><td>)</td><td></td><td>&#8212;</td></tr>
</table>
<table><tr><td><div>A layout table holding one paragraph of text.</div></td></tr></table>
<table>
<tr><td>&#8226;</td><td>First bullet point with words.</td></tr>
<tr><td>&#8226;</td><td>Second bullet point with words.</td></tr>
</table>
</body></html>"""


def test_table_rows_merge_currency_negatives_percent_and_keep_header():
    parsed = parse_html(TABLE_HTML)
    check_invariants(parsed)
    tables = [b for b in parsed.blocks if b.kind == "table"]
    assert len(tables) == 1
    table = tables[0]
    assert table.text == (
        "| Years ended\n"
        "| 2024 | 2023\n"
        "Net sales | $391,035 | $383,285\n"
        "Other income/(expense), net | (1,234) | (565)\n"
        "Gross margin percentage | 46.2% | 44.1%\n"
        "Interest | $(12) | —"
    )
    assert table.table_header == "| Years ended\n| 2024 | 2023"
    assert table.text.startswith(table.table_header)
    assert table.caption == "CONSOLIDATED STATEMENTS OF OPERATIONS\n(In millions)"
    texts = [b.text for b in parsed.blocks if b.kind == "text"]
    assert texts[0] == "Intro paragraph with extra whitespace."
    assert "A layout table holding one paragraph of text." in texts
    assert "• First bullet point with words." in texts
    assert "\n\n".join(b.text for b in parsed.blocks) == parsed.text


def test_rule_lines_are_dropped_so_footnotes_follow_their_table():
    parsed = parse_html(
        "<html><body><table><tr><td>Period</td><td>Remaining (1)</td></tr><tr><td>Total</td><td>$17,650</td></tr>"
        "</table><p>_________________________________________</p><p>----------</p>"
        "<p>(1) In March 2024 the Board authorized $25 billion.</p><p>Three dots... stay in a sentence.</p>"
        "</body></html>"
    )
    check_invariants(parsed)
    texts = [b.text for b in parsed.blocks]
    assert not any(re.fullmatch(r"[_\-]+", t) for t in texts), texts
    table = next(i for i, b in enumerate(parsed.blocks) if b.kind == "table")
    assert parsed.blocks[table + 1].text == "(1) In March 2024 the Board authorized $25 billion."
    assert "Three dots... stay in a sentence." in texts


def test_table_without_amounts_takes_first_row_as_header():
    html = """<table><tr><td>Name</td><td>Age</td><td>Position</td></tr>
    <tr><td>Jane Roe</td><td>fifty</td><td>Chief Executive Officer</td></tr>
    <tr><td>John Doe</td><td>sixty</td><td>Chief Financial Officer</td></tr></table>"""
    table = next(b for b in parse_html(html).blocks if b.kind == "table")
    assert table.table_header == "Name | Age | Position"
    assert table.text.splitlines()[1] == "Jane Roe | fifty | Chief Executive Officer"


# ------------------------------------------------------------------------------------------------------------------
# Items: body, not the table of contents
# ------------------------------------------------------------------------------------------------------------------

FILLER = "The company sells widgets and services to customers around the world. " * 25


def _tenk_html() -> str:
    toc_table = "".join(
        f"<tr><td>Item {n}.</td><td>{t}</td><td>{p}</td></tr>"
        for n, t, p in [("1", "Business", 3), ("1A", "Risk Factors", 5), ("7", "Management&#8217;s Discussion", 9),
                        ("8", "Financial Statements and Supplementary Data", 20)]
    )
    # A second, paragraph-style index: also a list of Items, but a line apart, so it must lose to the body.
    toc_paragraphs = "".join(f"<p>Item {n}. {t}</p>" for n, t in [("1", "Business"), ("1A", "Risk Factors"),
                                                                  ("7", "MD&amp;A"), ("8", "Financial Statements")])
    return f"""<html><body>
    <p>FORM 10-K</p><p>For the fiscal year ended December 31, 2009</p>
    <p>EXAMPLE WIDGETS, INC.</p><p>(Exact name of registrant as specified in its charter)</p>
    <p>TABLE OF CONTENTS</p><table>{toc_table}</table>{toc_paragraphs}
    <p>PART I</p>
    <p>Item 1. Business</p><p>{FILLER}</p>
    <p>Item 7 of this report discusses our results; this paragraph starts with an Item number but is a
       cross-reference in the middle of the Business section, and it is long enough not to be a heading at all.</p>
    <p>{FILLER}</p>
    <p>ITEM 1A. RISK FACTORS</p><p>{FILLER}</p>
    <p>PART II</p>
    <table><tr><td>Item 7.</td><td>Management&#8217;s Discussion and Analysis</td></tr></table><p>{FILLER}</p>
    <p>See Item 8 for the statements.</p>
    <p>Item 8. Financial Statements and Supplementary Data</p><p>{FILLER}</p>
    <p>SIGNATURES</p><p>Pursuant to the requirements of the Securities Exchange Act of 1934 ...</p>
    </body></html>"""


def test_items_found_in_body_not_toc():
    parsed = parse_html(_tenk_html())
    check_invariants(parsed)
    assert [s.item for s in parsed.sections] == ["Cover", "Item 1", "Item 1A", "Item 7", "Item 8", "Signatures"]
    item1 = section_text(parsed, "Item 1")
    assert item1.startswith("PART I\n\nItem 1. Business\n\n")  # the Part heading opens its first Item
    assert "Item 7 of this report discusses" in item1  # the cross-reference stays inside Item 1
    cover = section_text(parsed, "Cover")
    assert "Risk Factors | 5" in cover and "Item 8. Financial Statements" in cover  # both indexes are Cover
    titles = {s.item: s.title for s in parsed.sections}
    assert titles["Item 1A"] == "Risk Factors"  # all-caps heading mapped to its title
    assert titles["Item 7"] == "Management’s Discussion and Analysis"  # heading laid out as a one-row table
    assert section_text(parsed, "Signatures").startswith("SIGNATURES")
    assert parsed.meta["company"] == "EXAMPLE WIDGETS, INC."
    assert parsed.meta["period_end"] == "2009-12-31"
    assert (parsed.meta["fiscal_year"], parsed.meta["fiscal_year_source"]) == (2009, "period_end")
    assert parsed.meta["form"] == "10-K"
    offset = parsed.text.index("ITEM 1A. RISK FACTORS") + 5
    assert parsed.section_at(offset).item == "Item 1A"


def test_ten_q_items_are_mapped_to_their_part():
    body = "".join(
        f"<p>{head}</p><p>{FILLER}</p>"
        for head in ["PART I. FINANCIAL INFORMATION", "Item 1. Financial Statements", "Item 2. Management’s Discussion",
                     "PART II. OTHER INFORMATION", "Item 1. Legal Proceedings", "Item 1A. Risk Factors",
                     "Item 6. Exhibits"]
    )
    parsed = parse_html(f"<html><body><p>FORM 10-Q</p>{body}</body></html>")
    check_invariants(parsed)
    assert [s.item for s in parsed.sections] == [
        "Cover", "Part I Item 1", "Part I Item 2", "Part II Item 1", "Part II Item 1A", "Part II Item 6"]


PAGE = '<div style="page-break-before: always"></div>'


def _tenq_html(cover: str = "<p>FORM 10-Q</p>") -> str:
    """A 10-Q laid out as many are: a table of contents listing both Parts, then the condensed statements with no
    "Item 1." heading above them, and no "PART I" heading in the body (the last PART line seen is the index's)."""
    toc = "".join(f"<p>{line}</p>" for line in [
        "PART I. FINANCIAL INFORMATION", "Item 1. Financial Statements 3", "Item 2. Management’s Discussion 9",
        "Item 3. Quantitative and Qualitative Disclosures About Market Risk 12", "Item 4. Controls and Procedures 12",
        "PART II. OTHER INFORMATION", "Item 1. Legal Proceedings 13", "Item 1A. Risk Factors 13",
        "Item 6. Exhibits 14"])
    statements = (f"<p>EXAMPLE WIDGETS, INC.</p><p>CONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS</p>"
                  f"<table><tr><td></td><td>2024</td><td>2023</td></tr><tr><td>Net sales</td><td>1,200</td>"
                  f"<td>1,100</td></tr></table><p>{FILLER}</p>")
    body = "".join(f"{PAGE}<p>{head}</p><p>{FILLER}</p>" for head in [
        "Item 2. Management’s Discussion and Analysis of Financial Condition and Results of Operations",
        "Item 3. Quantitative and Qualitative Disclosures About Market Risk", "Item 4. Controls and Procedures"])
    part2 = "".join(f"<p>{head}</p><p>{FILLER}</p>" for head in ["Item 1.", "ITEM 1A. RISK FACTORS",
                                                                   "Item 6. Exhibits"])
    return (f"<html><body>{cover}<p>For the quarterly period ended June 30, 2024</p>{PAGE}{toc}{PAGE}{statements}"
            f"{body}{PAGE}<p>PART II — OTHER INFORMATION</p>{part2}</body></html>")


def test_ten_q_statements_without_item_heading_open_part_one_item_one():
    parsed = parse_html(_tenq_html())
    check_invariants(parsed)
    assert [s.item for s in parsed.sections] == [
        "Cover", "Part I Item 1", "Part I Item 2", "Part I Item 3", "Part I Item 4", "Part II Item 1",
        "Part II Item 1A", "Part II Item 6"]
    item1 = section_text(parsed, "Part I Item 1")
    assert item1.startswith("EXAMPLE WIDGETS, INC.\n\nCONDENSED CONSOLIDATED STATEMENTS OF OPERATIONS")
    assert "Net sales | 1,200 | 1,100" in item1
    cover = section_text(parsed, "Cover")
    assert "Item 6. Exhibits 14" in cover and "Net sales" not in cover  # the index stays with the cover
    titles = {s.item: s.title for s in parsed.sections}
    assert titles["Part I Item 1"] == "Financial Statements"
    assert titles["Part II Item 1"] == "Legal Proceedings"  # an untitled "Item 1." after PART II is Part II's


def test_ten_q_items_told_apart_by_title_when_the_part_heading_is_the_index():
    # "Item 2. Management's Discussion" follows the index's "PART II" line: its title makes it Part I Item 2; the
    # risk factors under "PART II" are Part II Item 1A, and a 10-Q's "Item 1" there is Part II Item 1.
    parsed = parse_html(_tenq_html())
    starts = {s.item: parsed.text[s.char_start : s.char_end] for s in parsed.sections}
    assert starts["Part I Item 2"].startswith("Item 2. Management’s Discussion")
    assert starts["Part II Item 1"].startswith("PART II — OTHER INFORMATION\n\nItem 1.")
    assert starts["Part II Item 1A"].startswith("ITEM 1A. RISK FACTORS")


def test_ten_q_known_from_the_body_when_the_form_is_not_stated():
    parsed = parse_html(_tenq_html(cover="<p>QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d)</p>"))
    assert "form" not in parsed.meta
    assert [s.item for s in parsed.sections][:3] == ["Cover", "Part I Item 1", "Part I Item 2"]


def test_ten_q_item_one_heading_kept_where_the_body_has_one():
    html = _tenq_html().replace("<p>EXAMPLE WIDGETS, INC.</p>", "<p>Item 1. Financial Statements</p>")
    parsed = parse_html(html)
    assert section_text(parsed, "Part I Item 1").startswith("Item 1. Financial Statements\n\nCONDENSED")


def test_cross_reference_index_instead_of_item_headings():
    # A 10-K that prints its report in its own order and, at the end, a table mapping each Item to pages.
    pages = ["OVERVIEW. We make widgets.", "RISK FACTORS. Our business is risky.", "MANAGEMENT’S DISCUSSION AND "
             "ANALYSIS OF FINANCIAL CONDITION AND RESULTS OF OPERATIONS. Sales rose.", "Market risk: rates moved.",
             "STATEMENT OF EARNINGS. Net sales 100."]
    body = "".join(f"{PAGE}<p>{text}</p><p>{FILLER}</p>" for text in pages)
    rows = [("1.", "Business", "2"), ("1A.", "Risk Factors", "3"), ("1B.", "Unresolved Staff Comments", "None"),
            ("7.", "Management’s Discussion and Analysis", "4-5"), ("7A.", "Quantitative and Qualitative "
            "Disclosures About Market Risk", "5"), ("8.", "Financial Statements and Supplementary Data", "6"),
            ("10.", "Directors, Executive Officers and Corporate Governance", "(a)")]
    index = "".join(f"<tr><td>Item {n}</td><td>{t}</td><td>{p}</td></tr>" for n, t, p in rows)
    html = (f"<html><body><p>FORM 10-K</p>{body}{PAGE}<table><tr><td>FORM 10-K CROSS REFERENCE INDEX</td>"
            f"<td>Page(s)</td></tr>{index}</table><p>SIGNATURES</p><p>Signed.</p></body></html>")
    parsed = parse_html(html)
    check_invariants(parsed)
    assert [(s.item, s.page_start) for s in parsed.sections] == [
        ("Cover", 1), ("Item 1", 2), ("Item 1A", 3), ("Item 7", 4), ("Item 7A", 5), ("Item 8", 6), ("Item 1B", 7),
        ("Item 10", 7), ("Signatures", 7)]
    assert section_text(parsed, "Item 7").startswith("MANAGEMENT’S DISCUSSION")
    assert section_text(parsed, "Item 1B").startswith("Item 1B. | Unresolved Staff Comments | None")


def test_no_items_gives_one_document_section():
    parsed = parse_html("<p>Just a letter.</p><p>Nothing else.</p>")
    assert [(s.item, s.char_start, s.char_end) for s in parsed.sections] == [("Document", 0, len(parsed.text))]


# ------------------------------------------------------------------------------------------------------------------
# Pages
# ------------------------------------------------------------------------------------------------------------------

def test_page_breaks_from_css_and_hr_and_running_footers_dropped():
    footer = "<p>Acme Corp | 2024 Form 10-K | {n}</p>"
    html = f"""<html><body>
    <div>Page one text.</div>{footer.format(n=1)}
    <div style="page-break-after: always"></div>
    <div>Page two text.</div>{footer.format(n=2)}
    <hr style="page-break-after:always"/>
    <p style="break-before: page">Page three text.</p>{footer.format(n=3)}
    <div style="PAGE-BREAK-BEFORE:always"><p>Table of Contents</p>Page four text.</div><p>4</p>
    <table style="page-break-before:always"><tr><td>Row</td><td>1,000</td></tr><tr><td>Other</td><td>2</td></tr>
    </table>
    </body></html>"""
    parsed = parse_html(html)
    check_invariants(parsed)
    assert [(b.text, b.page) for b in parsed.blocks] == [
        ("Page one text.", 1), ("Page two text.", 2), ("Page three text.", 3), ("Table of Contents", 4),
        ("Page four text.", 4), ("Row | 1,000\nOther | 2", 5)]
    assert len(parsed.page_starts) == 5
    assert parsed.page_starts[2] == parsed.text.index("Page three")
    assert "Acme Corp" not in parsed.text  # a footer repeated on three pages is not content
    assert parsed.page_at(parsed.text.index("Row")) == 5


# ------------------------------------------------------------------------------------------------------------------
# Inline XBRL
# ------------------------------------------------------------------------------------------------------------------

IXBRL_HTML = """<?xml version='1.0' encoding='ASCII'?>
<html xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"><head><title>t</title><style>p {color: red}</style></head><body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="c-1">2024</ix:nonNumeric>
<ix:nonNumeric name="dei:EntityCentralIndexKey" contextRef="c-1">0000123456</ix:nonNumeric>
<ix:nonFraction name="dei:EntityCommonStockSharesOutstanding" contextRef="c-3" unitRef="shares" decimals="0">1,500</ix:nonFraction>
</ix:hidden><ix:resources>
<xbrli:context id="c-1"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000123456</xbrli:identifier>
</xbrli:entity><xbrli:period><xbrli:startDate>2023-10-01</xbrli:startDate><xbrli:endDate>2024-09-28</xbrli:endDate>
</xbrli:period></xbrli:context>
<xbrli:context id="c-2"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000123456</xbrli:identifier>
<xbrli:segment><xbrldi:explicitMember dimension="srt:ProductOrServiceAxis">us-gaap:ProductMember</xbrldi:explicitMember>
</xbrli:segment></xbrli:entity><xbrli:period><xbrli:instant>2024-09-28</xbrli:instant></xbrli:period></xbrli:context>
<xbrli:context id="c-3"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000123456</xbrli:identifier>
</xbrli:entity><xbrli:period><xbrli:instant>2024-10-18</xbrli:instant></xbrli:period></xbrli:context>
</ix:resources></ix:header></div>
<script>var hidden = "SCRIPT TEXT";</script>
<p>Registrant: <ix:nonNumeric name="dei:EntityRegistrantName" contextRef="c-1">Example Corp</ix:nonNumeric>,
form <ix:nonNumeric name="dei:DocumentType" contextRef="c-1">10-K</ix:nonNumeric>, period ended
<ix:nonNumeric name="dei:DocumentPeriodEndDate" contextRef="c-1" format="ixt:date-monthname-day-year-en">September
28, 2024</ix:nonNumeric>, trading as <ix:nonNumeric name="dei:TradingSymbol" contextRef="c-1">EXMP</ix:nonNumeric>.</p>
<div style="display: none">HIDDEN NOTE</div>
<table>
<tr><td></td><td>2024</td></tr>
<tr><td>Net loss</td><td>$</td><td>(<ix:nonFraction name="us-gaap:NetIncomeLoss" contextRef="c-1" unitRef="usd" decimals="-6" scale="6" sign="-" format="ixt:num-dot-decimal">1,234</ix:nonFraction></td><td>)</td></tr>
<tr><td>Products</td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="c-2" unitRef="usd" decimals="-6" scale="6" format="ixt:fixed-zero">&#8212;</ix:nonFraction></td></tr>
</table>
<ix:nonNumeric name="us-gaap:RevenueTextBlock" contextRef="c-1"><p>Revenue grew by
<ix:nonFraction name="us-gaap:Growth" contextRef="c-1" unitRef="pure" decimals="3" scale="-2">12.5</ix:nonFraction>%
to <ix:nonFraction name="us-gaap:Units" contextRef="c-1" unitRef="units" decimals="INF" format="ixt-sec:numwordsen">three</ix:nonFraction>
units.</p></ix:nonNumeric>
<ix:continuation id="cont-1"><p>Continued text.</p></ix:continuation>
</body></html>"""


def _lower_case_tags(html: str) -> str:
    """What a browser's "save page" does to inline XBRL: tag and attribute names lower-cased, text untouched."""
    html = re.sub(r"<(/?)([A-Za-z][\w:.-]*)", lambda m: "<" + m.group(1) + m.group(2).lower(), html)
    return re.sub(r"(\s)([A-Za-z][\w:.-]*)=", lambda m: m.group(1) + m.group(2).lower() + "=", html)


def _facts_by_concept(parsed: ParsedFiling) -> dict:
    return {f.concept: f for f in parsed.facts}


@pytest.mark.parametrize("variant", ["as filed", "browser-saved"])
def test_inline_xbrl_hidden_header_contexts_scale_sign(variant):
    html = IXBRL_HTML if variant == "as filed" else _lower_case_tags(IXBRL_HTML)
    assert variant == "as filed" or "ix:nonfraction" in html and "contextref=" in html
    parsed = parse_html(html)
    check_invariants(parsed)
    text = parsed.text
    for hidden in ("0000123456", "2023-10-01", "1,500", "SCRIPT TEXT", "HIDDEN NOTE", "color: red"):
        assert hidden not in text
    facts = _facts_by_concept(parsed)

    loss = facts["us-gaap:NetIncomeLoss"]
    assert loss.value == -1234000000.0
    assert (loss.text, loss.unit, loss.decimals, loss.scale) == ("1,234", "usd", "-6", 6)
    assert (loss.period_start, loss.period_end, loss.dimensions) == ("2023-10-01", "2024-09-28", {})
    assert text[loss.char_start : loss.char_end] == "1,234"
    assert "Net loss | $(1,234)" in text

    revenue = facts["us-gaap:Revenues"]
    assert revenue.value == 0.0 and revenue.text == "—"
    assert (revenue.period_start, revenue.period_end) == (None, "2024-09-28")
    assert revenue.dimensions == {"srt:ProductOrServiceAxis": "us-gaap:ProductMember"}

    growth = facts["us-gaap:Growth"]  # nested inside a text-block ix:nonNumeric
    assert growth.value == pytest.approx(0.125) and text[growth.char_start : growth.char_end] == "12.5"
    assert facts["us-gaap:Units"].value == 3.0
    assert "Continued text." in text

    shares = facts["dei:EntityCommonStockSharesOutstanding"]
    assert shares.char_start == -1 and shares.value == 1500.0  # hidden: no span
    name = facts["dei:EntityRegistrantName"]
    assert name.value is None and text[name.char_start : name.char_end] == "Example Corp"
    assert parsed.meta == {
        "company": "Example Corp", "cik": "0000123456", "form": "10-K", "ticker": "EXMP", "fiscal_year": 2024,
        "fiscal_year_source": "dei:DocumentFiscalYearFocus", "period_end": "2024-09-28", "shares_outstanding": 1500,
        "fiscal_period": "FY", "fiscal_period_source": "form",
    }


def test_same_result_from_bytes_and_browser_saved_copy():
    as_bytes = parse_html(IXBRL_HTML.encode("ascii"))
    lowered = parse_html(_lower_case_tags(IXBRL_HTML))
    assert as_bytes.text == lowered.text
    assert [(f.concept, f.value, f.char_start) for f in as_bytes.facts] == [
        (f.concept, f.value, f.char_start) for f in lowered.facts]


def test_fiscal_year_falls_back_to_period_end():
    html = IXBRL_HTML.replace('name="dei:DocumentFiscalYearFocus"', 'name="dei:Other"')
    meta = parse_html(html).meta
    assert (meta["fiscal_year"], meta["fiscal_year_source"]) == (2024, "period_end")


# ------------------------------------------------------------------------------------------------------------------
# Unreadable input
# ------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "name,data",
    [
        ("empty.htm", b""),
        ("blank.htm", b"   \n\t "),
        ("junk.htm", bytes(range(256)) * 40),
        ("notext.html", b"<html><body><div><table><tr><td></td></tr></table></div></body></html>"),
        ("junk.pdf", b"this is not a pdf at all" * 50),
        ("truncated.pdf", b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog"),
        ("hidden.htm", b'<div style="display:none">only hidden text</div>'),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_unreadable_input_raises_parse_error(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ParseError) as excinfo:
        parse_file(path)
    assert name in str(excinfo.value)  # the message names the file for the user


def test_missing_file_raises_parse_error(tmp_path):
    with pytest.raises(ParseError, match="cannot read"):
        parse_file(tmp_path / "nope.htm")


# ------------------------------------------------------------------------------------------------------------------
# Full submission (.txt SGML)
# ------------------------------------------------------------------------------------------------------------------

SGML = """<SEC-DOCUMENT>0000912057-99-000001.txt : 19990330
<SEC-HEADER>0000912057-99-000001.hdr.sgml : 19990330
ACCESSION NUMBER:\t\t0000912057-99-000001
CONFORMED SUBMISSION TYPE:\t10-K405
PUBLIC DOCUMENT COUNT:\t\t2
CONFORMED PERIOD OF REPORT:\t19981231
FILED AS OF DATE:\t\t19990330

FILER:

\tCOMPANY DATA:\t
\t\tCOMPANY CONFORMED NAME:\t\t\tEXAMPLE WIDGETS INC
\t\tCENTRAL INDEX KEY:\t\t\t0000999999
\t\tFISCAL YEAR END:\t\t\t1231

\tFORMER COMPANY:\t
\t\tFORMER CONFORMED NAME:\tOLD WIDGETS INC
</SEC-HEADER>
<DOCUMENT>
<TYPE>EX-27
<SEQUENCE>2
<FILENAME>ex27.txt
<DESCRIPTION>FINANCIAL DATA SCHEDULE
<TEXT>
<ARTICLE> 5
</TEXT>
</DOCUMENT>
<DOCUMENT>
<TYPE>10-K405
<SEQUENCE>1
<FILENAME>form10k.txt
<DESCRIPTION>ANNUAL REPORT
<TEXT>
                                   FORM 10-K

PART I

ITEM 1.  BUSINESS

Example Widgets makes widgets
and sells them.

<PAGE>   2

ITEM 7.  MANAGEMENT'S DISCUSSION AND ANALYSIS

<TABLE>
<CAPTION>
                                  1998        1997
<S>                               <C>         <C>
Net sales                      $ 1,234     $ 1,100
Net loss                          (56)        (12)
</TABLE>
</TEXT>
</DOCUMENT>
</SEC-DOCUMENT>
"""


def test_read_full_submission_hand_written():
    sub = read_full_submission(SGML)
    assert sub.header == {
        "accession": "0000912057-99-000001", "form": "10-K405", "period_end": "1998-12-31",
        "filing_date": "1999-03-30", "company": "EXAMPLE WIDGETS INC", "cik": "0000999999", "fiscal_year_end": "1231",
    }
    assert [(d.type, d.sequence, d.filename) for d in sub.documents] == [
        ("EX-27", "2", "ex27.txt"), ("10-K405", "1", "form10k.txt")]
    assert sub.primary is sub.documents[1]  # the document of the submission's form, not the first
    assert sub.primary.description == "ANNUAL REPORT"


def test_parse_full_submission_plain_text_document(tmp_path):
    path = tmp_path / "full-submission.txt"
    path.write_text(SGML)
    parsed = parse_file(path)
    check_invariants(parsed)
    meta = parsed.meta
    assert (meta["form"], meta["accession"], meta["filing_date"]) == ("10-K405", "0000912057-99-000001", "1999-03-30")
    assert (meta["fiscal_year"], meta["fiscal_year_source"], meta["period_end"]) == (1998, "period_end", "1998-12-31")
    assert meta["company"] == "EXAMPLE WIDGETS INC" and meta["cik"] == "0000999999"
    assert [s.item for s in parsed.sections] == ["Cover", "Item 1", "Item 7"]
    assert "Example Widgets makes widgets and sells them." in parsed.text
    table = next(b for b in parsed.blocks if b.kind == "table")
    assert table.text == "| 1998 | 1997\nNet sales | $1,234 | $1,100\nNet loss | (56) | (12)"
    assert table.table_header == "| 1998 | 1997" and table.page == 2
    assert "<TABLE>" not in parsed.text and "<S>" not in parsed.text

    # rag.edgar saves a plain-text main document as HTML with the text in <pre>: same reading.
    wrapped = parse_html(f"<html><body><pre>{html.escape(read_full_submission(SGML).primary.text)}</pre></body></html>")
    assert [b.text for b in wrapped.blocks] == [b.text for b in parsed.blocks]
    assert [s.item for s in wrapped.sections] == ["Cover", "Item 1", "Item 7"] and wrapped.blocks[-1].page == 2


@pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)
def test_full_submissions_from_corpus():
    folder = CORPUS / "full-submission"
    tesla = read_full_submission((folder / "0001564590-20-004475-minimal_tsla_10k_fy2019_TRIMMED.txt").read_text())
    assert tesla.header["company"] == "Tesla, Inc."  # the filer, not the former name
    assert (tesla.header["cik"], tesla.header["period_end"]) == ("0001318605", "2019-12-31")
    assert [d.type for d in tesla.documents] == ["10-K", "EX-21.1"]
    assert tesla.primary.text.lstrip().startswith("<?xml") and "</XBRL>" not in tesla.primary.text

    parsed = parse_file(folder / "0001564590-20-004475-minimal_tsla_10k_fy2019_TRIMMED.txt")
    check_invariants(parsed)
    assert parsed.meta["fiscal_year"] == 2019 and parsed.meta["accession"] == "0001564590-20-004475"
    assert parsed.meta["filing_date"] == "2020-02-13"
    assert _facts_by_concept(parsed)["us-gaap:Revenues"].value == 24578000000.0
    assert "Subsidiaries of Tesla" not in parsed.text  # only the main document

    carmax = parse_file(folder / "0001779026-23-000027_carmax-auto-owner-trust-2019-3_10-K_full-submission.txt")
    check_invariants(carmax)
    assert carmax.meta["company"] == "CarMax Auto Owner Trust 2019-3"
    assert (carmax.meta["fiscal_year"], carmax.meta["fiscal_year_source"]) == (2023, "period_end")
    assert carmax.meta["primary_document"] == "a2019-310xk052623.htm"

    eight_k = parse_submission((folder / "aapl-8k-20191115_full-submission.txt").read_text(errors="replace"))
    check_invariants(eight_k)
    assert eight_k.meta["form"] == "8-K" and eight_k.meta["ticker"] == "AAPL"
    assert [s.item for s in eight_k.sections] == ["Cover", "Item 8.01", "Item 9.01", "Signatures"]


# ------------------------------------------------------------------------------------------------------------------
# The corpus
# ------------------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _manifest_years() -> dict[str, int]:
    with open(CORPUS / "MANIFEST.tsv", newline="") as fh:
        rows = csv.DictReader(fh, delimiter="\t")
        return {r["path"]: int(r["fiscal_year"]) for r in rows if r["kind"] == "filing"}


@pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)
def test_corpus_filings():
    years = _manifest_years()
    paths = sorted((CORPUS / "filings").glob("*/*.htm*"))
    assert len(paths) == 29
    for path in paths:
        rel = path.relative_to(CORPUS).as_posix()
        parsed = parse_file(path)
        check_invariants(parsed)
        assert parsed.meta["fiscal_year"] == years[rel], rel
        assert len(parsed.page_starts) > 20, rel
        items = [s.item for s in parsed.sections]
        if "_older_html_10k" in rel:
            assert parsed.meta.get("company") and parsed.meta.get("period_end"), rel
            assert {"Item 1", "Item 7", "Item 8"} <= set(items), (rel, items)
            continue
        assert parsed.meta["fiscal_year_source"] == "dei:DocumentFiscalYearFocus", rel
        assert parsed.meta["form"] == "10-K" and parsed.meta["cik"].isdigit(), rel
        positions = [items.index(item) for item in ("Item 1", "Item 1A", "Item 7", "Item 8")]
        assert positions == sorted(positions), (rel, items)
        assert items[0] == "Cover" and items.index("Signatures") > items.index("Item 16"), (rel, items)
        for item in ("Item 1", "Item 1A", "Item 7", "Item 8"):
            heading, _, body = section_text(parsed, item).partition("\n\n")
            assert re.match(r"(PART I+\W*\n\n)?ITEM", heading + "\n\n" + body, re.I), (rel, item, heading)
            assert body.strip(), (rel, item)
        # IBM's and Wells Fargo's MD&A and statements sit in an exhibit: Item 7/8 only point there. Netflix and
        # NVIDIA print the statements after Part IV, where Item 8 points: a "Financial Statements" section.
        if not rel.startswith(("filings/IBM/", "filings/WFC/")):
            statements = section_text(parsed, "Item 8")
            if len(statements) < 3000:
                statements = section_text(parsed, "Financial Statements")
                assert items.index("Financial Statements") > items.index("Item 15"), (rel, items)
            assert len(statements) > 20000, rel
            assert len(section_text(parsed, "Item 7")) > 5000, rel
        visible = [f for f in parsed.facts if f.char_start >= 0 and f.unit]
        assert visible, rel
        assert all(parsed.text[f.char_start : f.char_end] == f.text for f in visible), rel


@pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)
def test_apple_income_statement_table_and_fact():
    parsed = parse_file(CORPUS / "filings/AAPL/aapl-20240928.htm")
    revenue = [f for f in parsed.facts if f.concept == "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax"
               and f.value == 391035000000.0 and not f.dimensions and f.char_start >= 0]
    assert revenue and revenue[0].period_start == "2023-10-01" and revenue[0].period_end == "2024-09-28"
    statement = next(b for b in parsed.blocks if b.kind == "table" and "CONSOLIDATED STATEMENTS OF OPERATIONS"
                     in b.caption)
    assert statement.table_header == "| Years ended\n| September 28, 2024 | September 30, 2023 | September 24, 2022"
    assert "\nTotal net sales | 391,035 | 383,285 | 394,328\n" in statement.text
    assert "\nNet income | $93,736 | $96,995 | $99,803\n" in statement.text
    assert parsed.sections[[s.item for s in parsed.sections].index("Item 8")].page_start <= statement.page
    assert "Apple Inc. | 2024 Form 10-K |" not in parsed.text  # running footers dropped


# ------------------------------------------------------------------------------------------------------------------
# PDF
# ------------------------------------------------------------------------------------------------------------------

PDF_DOC = "AMAZON_2019_10K"  # the smallest FinanceBench PDF


def _squash(s: str) -> str:
    return re.sub(r"\s+", "", s)


@pytest.mark.skipif(not (CORPUS / "financebench").is_dir(), reason=NO_CORPUS)
def test_pdf_pages_items_and_evidence_page():
    import pypdfium2

    path = CORPUS / "financebench" / "pdfs" / f"{PDF_DOC}.pdf"
    parsed = parse_pdf(path)
    check_invariants(parsed)
    assert len(parsed.page_starts) == len(pypdfium2.PdfDocument(str(path)))
    assert len(parsed.text) > 100000
    items = [s.item for s in parsed.sections]
    assert {"Item 1", "Item 1A", "Item 7", "Item 8"} <= set(items), items
    assert (parsed.meta["form"], parsed.meta["fiscal_year"]) == ("10-K", 2019)

    questions = [json.loads(line) for line in (CORPUS / "financebench" / "questions.jsonl").open()]
    question = next(q for q in questions if q["doc_name"] == PDF_DOC)
    evidence = question["evidence"][0]
    page = evidence["evidence_page_num"] + 1  # 0-based in FinanceBench
    starts = parsed.page_starts + [len(parsed.text)]
    page_text = _squash(parsed.text[starts[page - 1] : starts[page]])
    lines = [ln for ln in evidence["evidence_text"].splitlines() if len(ln.strip()) > 25]
    assert lines, "the evidence should hold a line of text"
    found = [ln for ln in lines if _squash(ln) in page_text]
    assert len(found) >= len(lines) // 2, (page, lines[:3])


def test_pdf_garbage_raises_parse_error(tmp_path):
    path = tmp_path / "report.pdf"
    path.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 20)
    with pytest.raises(ParseError, match="PDF"):
        parse_pdf(path)


# ------------------------------------------------------------------------------------------------------------------
# Fuzz
# ------------------------------------------------------------------------------------------------------------------

_WORDS = st.sampled_from([
    "Item 7.", "ITEM 1A. RISK FACTORS", "PART II", "SIGNATURES", "$", "(", ")", "%", "1,234", "(56", "—", "2024",
    "Revenue", "Table of Contents", "12", " ", "\n", "&nbsp;", "&#8212;", "<", ">", "&", "\u00a0", "\U000f0001",
    "\x00", "\ud800", "<?xml version='1.0' encoding='utf-8'?>",
])
_TEXT = st.one_of(_WORDS, st.text(max_size=12))
_TAGS = st.sampled_from([
    "table", "tr", "td", "th", "div", "p", "span", "b", "li", "ul", "h2", "font", "ix:nonFraction", "ix:nonNumeric",
    "ix:header", "ix:continuation", "xbrli:context", "script", "style", "thead", "center",
])
_ATTRS = st.sampled_from([
    "", ' style="display:none"', ' style="page-break-after:always"', ' style="break-before:page"',
    ' name="dei:DocumentType" contextRef="c1"', ' name="us-gaap:X" contextRef="c1" unitRef="usd" scale="6" sign="-"',
    ' name="us-gaap:Y" format="ixt:fixed-zero" scale="x"', ' colspan="3"', ' id="c1"', ' name="dei:DocumentFiscalYearFocus"',
])


def _element(children):
    return st.builds(
        lambda tag, attrs, inner, close: f"<{tag}{attrs}>{''.join(inner)}" + (f"</{tag}>" if close else ""),
        _TAGS, _ATTRS, st.lists(children, max_size=4), st.booleans(),
    )


_HTML = st.recursive(_TEXT, _element, max_leaves=25).map(lambda s: s if isinstance(s, str) else "".join(s))


def _check_parse(data) -> None:
    try:
        parsed = parse_html(data)
    except ParseError:
        return
    check_invariants(parsed)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_HTML, min_size=1, max_size=6).map("".join))
def test_fuzz_html_fragments(html):
    _check_parse(html)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600))
def test_fuzz_random_bytes(data):
    _check_parse(data)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(_TEXT, st.sampled_from(["<DOCUMENT>", "<TYPE>10-K\n", "<TEXT>", "</TEXT>", "</DOCUMENT>",
                                                      "CONFORMED SUBMISSION TYPE:\t10-K\n", "<PAGE>\n", "\n\n"])),
                max_size=30).map("".join))
def test_fuzz_full_submission_text(text):
    sub = read_full_submission(text)
    assert sub.primary is None or sub.primary in sub.documents
    try:
        parsed = parse_submission(text)
    except ParseError:
        return
    check_invariants(parsed)


def test_fiscal_year_from_a_period_end_without_a_dei_tag():
    assert fiscal_year_from_period_end("2024-12-31") == 2024
    assert fiscal_year_from_period_end("2023-01-01") == 2022  # a 52/53-week year that ran through December
    assert fiscal_year_from_period_end("2025-01-31") == 2025  # late January: the year it ends in, as said
    assert fiscal_year_from_period_end("2024-09-28") == 2024
