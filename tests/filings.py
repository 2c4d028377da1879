"""Small, realistic inline XBRL 10-K documents made on the fly, for tests that must not depend on ../shared."""

from __future__ import annotations

from html import escape
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"


def shared_or_skip(*parts: str) -> Path:
    import pytest

    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared corpus (../shared beside the project) is needed for this test")
    return path


def _paragraphs(seed: str, n: int) -> str:
    return "".join(
        f"<p>{escape(seed)} paragraph {i}: the company discusses its operations, customers, suppliers and "
        f"markets in some detail, with remarks on competition and regulation number {i}.</p>"
        for i in range(n)
    )


def _risk_factors(company: str, risk_phrase: str, headlines: tuple[str, ...]) -> str:
    """Item 1A's body: one risk and two paragraphs; or, with headlines, the preamble about the Item every filer
    prints, then each risk as its headline over a paragraph that explains it."""
    if not headlines:
        return (f"<p>Supply of widget parts may be disrupted, which could harm results. {escape(risk_phrase)}</p>"
                f"{_paragraphs(company + ' risk', 2)}")
    preamble = ("<p>You should carefully consider the risk factors described below, together with the other "
                "information in this report. The risk factors below are not the only risks we face; risks not "
                "known to us may also harm our business.</p>")
    body = ("The company describes the exposure at some length, with the markets it touches, what has happened "
            "in earlier years, what it does to limit the harm and why those steps may fall short. ")
    return preamble + "".join(f"<p>{escape(h)}</p><p>{body * 3}</p>" for h in headlines)


def filing_html(
    *,
    company: str,
    ticker: str,
    fiscal_year: int,
    period_end: str,
    revenue: tuple[int, int],
    unique_phrase: str = "",
    risk_phrase: str = "",
    risk_headlines: tuple[str, ...] = (),
    business_paragraphs: int = 3,
    table_rows: int = 4,
    form: str = "10-K",
    fiscal_period: str = "FY",
) -> str:
    """A compact 10-K (or, with form/fiscal_period, a report of another period): cover with dei facts, a TOC, Items 1, 1A, 7, 8 in the body, page breaks, an income
    statement table whose numbers are ix:nonFraction facts in millions, and a signature block."""
    start = f"{fiscal_year - 1}{period_end[4:]}"
    rows = "".join(
        f"<tr><td>Other line {i}</td><td>$</td><td>{100 + i:,}</td><td>$</td><td>{90 + i:,}</td></tr>"
        for i in range(table_rows)
    )
    page_break = '<div style="page-break-after: always"></div>'
    return f"""<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
 xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:dei="http://xbrl.sec.gov/dei/2024">
<head><title>{escape(ticker.lower())}-10k</title><style>p {{ margin: 0 }}</style></head><body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric name="dei:DocumentFiscalYearFocus" contextRef="FY">{fiscal_year}</ix:nonNumeric>
<ix:nonNumeric name="dei:DocumentFiscalPeriodFocus" contextRef="FY">{fiscal_period}</ix:nonNumeric>
<ix:nonNumeric name="dei:EntityCentralIndexKey" contextRef="FY">0000999999</ix:nonNumeric>
</ix:hidden><ix:resources>
<xbrli:context id="FY"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000999999</xbrli:identifier></xbrli:entity><xbrli:period><xbrli:startDate>{start}</xbrli:startDate><xbrli:endDate>{period_end}</xbrli:endDate></xbrli:period></xbrli:context>
<xbrli:context id="PY"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000999999</xbrli:identifier></xbrli:entity><xbrli:period><xbrli:startDate>{fiscal_year - 2}{period_end[4:]}</xbrli:startDate><xbrli:endDate>{start}</xbrli:endDate></xbrli:period></xbrli:context>
</ix:resources></ix:header></div>
<p>UNITED STATES SECURITIES AND EXCHANGE COMMISSION</p>
<p>FORM <ix:nonNumeric name="dei:DocumentType" contextRef="FY">{form}</ix:nonNumeric></p>
<p>For the fiscal year ended <ix:nonNumeric name="dei:DocumentPeriodEndDate" contextRef="FY">{period_end}</ix:nonNumeric></p>
<p><ix:nonNumeric name="dei:EntityRegistrantName" contextRef="FY">{escape(company)}</ix:nonNumeric></p>
<p>Trading symbol: <ix:nonNumeric name="dei:TradingSymbol" contextRef="FY">{escape(ticker)}</ix:nonNumeric></p>
<table><tr><td>Item 1.</td><td>Business</td><td>3</td></tr><tr><td>Item 1A.</td><td>Risk Factors</td><td>4</td></tr>
<tr><td>Item 7.</td><td>Management's Discussion and Analysis</td><td>5</td></tr>
<tr><td>Item 8.</td><td>Financial Statements and Supplementary Data</td><td>6</td></tr></table>
{page_break}
<p style="font-weight:bold">PART I</p>
<p style="font-weight:bold">Item 1. Business</p>
<p>{escape(company)} makes widgets. {escape(unique_phrase)}</p>
{_paragraphs(company + " business", business_paragraphs)}
{page_break}
<p style="font-weight:bold">Item 1A. Risk Factors</p>
{_risk_factors(company, risk_phrase, risk_headlines)}
{page_break}
<p style="font-weight:bold">PART II</p>
<p style="font-weight:bold">Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations</p>
<p>Total net sales grew because widget demand rose.</p>
{_paragraphs(company + " results", 2)}
{page_break}
<p style="font-weight:bold">Item 8. Financial Statements and Supplementary Data</p>
<p>CONSOLIDATED STATEMENTS OF OPERATIONS (in millions)</p>
<table>
<tr><td></td><td colspan="2">{fiscal_year}</td><td colspan="2">{fiscal_year - 1}</td></tr>
<tr><td>Total net sales</td><td>$</td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="FY" unitRef="usd" decimals="-6" scale="6">{revenue[0]:,}</ix:nonFraction></td><td>$</td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="PY" unitRef="usd" decimals="-6" scale="6">{revenue[1]:,}</ix:nonFraction></td></tr>
<tr><td>Net loss on hedges</td><td>$</td><td>(<ix:nonFraction name="us-gaap:OtherNonoperatingIncomeExpense" contextRef="FY" unitRef="usd" decimals="-6" scale="6" sign="-">12</ix:nonFraction>)</td><td>$</td><td>(9)</td></tr>
{rows}
</table>
{page_break}
<p style="font-weight:bold">SIGNATURES</p>
<p>Pursuant to the requirements of the Securities Exchange Act of 1934, the registrant has duly caused this report to be signed.</p>
<p>{escape(company)}</p>
</body></html>
"""


def write_filing(folder: Path, name: str, **kwargs) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(filing_html(**kwargs), encoding="utf-8")
    return path


ACME = dict(company="Acme Widgets Inc.", ticker="ACME", fiscal_year=2024, period_end="2024-09-28",
            revenue=(391035, 383285), unique_phrase="Acme alone sells the zorblax coupler.")
BOLT = dict(company="Bolt Motors Corp.", ticker="BOLT", fiscal_year=2023, period_end="2023-12-31",
            revenue=(96773, 81462), unique_phrase="Bolt alone builds the quintaphonic drivetrain.")


def store_facts(store, chunker, path: Path, chunks: dict) -> tuple[object, dict]:
    """Parse and chunk a filing as the index does, without embedding: its facts go into `store` (a FactStore, or a
    list of them: one per backend), each mapped to its chunk, and the chunk texts into `chunks` (id -> (text,
    metadata)). Returns (parsed filing, its metadata)."""
    from rag.facts import filing_facts
    from rag.index import filing_meta
    from rag.parse import file_sha256, parse_file

    doc = parse_file(path)
    meta = filing_meta(path, doc, file_sha256(path))
    spans = []
    for i, c in enumerate(chunker.split(doc, meta)):
        cid = f"{meta['doc_id']}:{i:05d}"
        spans.append({"id": cid, "char_start": c["char_start"], "char_end": c["char_end"],
                      "section": c["section"], "page_start": c["page_start"]})
        chunks[cid] = (c["text"], {k: c[k] for k in ("section", "section_title", "page_start", "page_end",
                                                     "char_start", "char_end")})
    for one in store if isinstance(store, list) else [store]:
        one.add_filing(meta, filing_facts(doc, meta), spans, text=doc.text)
    return doc, meta
