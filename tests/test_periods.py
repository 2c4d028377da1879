"""Fiscal periods in a question: quarters, halves, year to date, trailing twelve months, the latest quarters."""

from __future__ import annotations

import pytest

from rag.catalog import Catalog
from rag.periods import read_periods
from rag.question import plan_question
from rag.schema import PeriodAsk

# A company whose fiscal year ends in late January: its second quarter of fiscal 2026 ends in July 2025.
FILINGS = [
    {"ticker": "ACME", "company": "Acme Corp", "form": "10-Q", "fiscal_year": 2026, "fiscal_period": "Q2",
     "period_end": "2025-07-27"},
    {"ticker": "ACME", "company": "Acme Corp", "form": "10-Q", "fiscal_year": 2026, "fiscal_period": "Q1",
     "period_end": "2025-04-27"},
    {"ticker": "ACME", "company": "Acme Corp", "form": "10-K", "fiscal_year": 2025, "fiscal_period": "FY",
     "period_end": "2025-01-26"},
]


@pytest.mark.parametrize(
    "question, labels",
    [
        ("Acme's revenue in Q2 2026", ["Q2 FY2026"]),
        ("Acme's revenue in FY2026 Q1", ["Q1 FY2026"]),
        ("Acme's revenue in the second quarter of fiscal 2026", ["Q2 FY2026"]),
        ("Acme's revenue in Q1'26", ["Q1 FY2026"]),
        # A date names the filing whose period ends then: fiscal, not calendar.
        ("Acme's revenue for the three months ended July 27, 2025", ["Q2 FY2026"]),
        ("Acme's revenue for the quarter ended July 27, 2025", ["Q2 FY2026"]),
        ("Acme's revenue for the six months ended July 27, 2025", ["H1 FY2026"]),
        ("Acme's revenue in the first half of fiscal 2026", ["H1 FY2026"]),
        ("Acme's operating cash flow for the first nine months of fiscal 2026", ["9M FY2026"]),
        ("Acme's revenue from Q1 to Q3 2026", ["Q1 FY2026", "Q2 FY2026", "Q3 FY2026"]),
        ("Acme's year to date revenue through Q2 2026", ["H1 FY2026"]),
        ("Acme's trailing twelve months revenue", ["TTM"]),
        ("Acme's fourth quarter of fiscal 2025 revenue", ["Q4 FY2025"]),
        ("Acme's revenue in fiscal 2025", []),
        # A period the question sets aside is not asked for.
        ("Acme's revenue in Q2 2026 alone, not year to date", ["Q2 FY2026"]),
        ("Acme's revenue in Q2 2026 rather than the first half", ["Q2 FY2026"]),
        ("Acme's revenue for the first half of 2026, not Q2", ["H1 FY2026"]),
    ],
)
def test_periods_are_read_as_fiscal_periods(question, labels):
    assert [p.label() for p in read_periods(question.lower(), FILINGS).periods] == labels


def test_latest_quarters():
    assert read_periods("how did margins move over the last four quarters?", FILINGS).latest_quarters == 4
    assert read_periods("what was revenue in the latest quarter?", FILINGS).latest_quarters == 1
    assert read_periods("what was revenue in the most recent quarter?", FILINGS).latest_quarters == 1
    assert read_periods("what was revenue in the latest fiscal year?", FILINGS).latest_quarters == 0


def test_a_fourth_quarter_is_read_from_the_annual_report():
    assert PeriodAsk(4, 2025).fiscal_period == "FY"
    assert PeriodAsk(2, 2026, months=6).fiscal_period == "Q2"


def test_the_plan_carries_periods_and_their_years():
    plan = plan_question("What was Acme's revenue in the first half?  And in fiscal 2026?", Catalog.build(FILINGS))
    assert plan.tickers == ["ACME"]
    assert plan.periods == [PeriodAsk(2, 2026, months=6)]  # the one fiscal year named
    assert plan.label() == "ACME · H1 FY2026 · income statement"  # the year is shown once, with its period
    dated = plan_question("Acme's net income for the quarter ended July 27, 2025", Catalog.build(FILINGS))
    assert dated.periods == [PeriodAsk(2, 2026)] and dated.fiscal_years == [2026]


def test_a_quarter_named_by_its_month_is_the_filing_that_ends_then():
    assert [p.label() for p in read_periods("acme's revenue in the july 2025 quarter", FILINGS).periods] == ["Q2 FY2026"]
    assert [p.label() for p in read_periods("the quarter ended in april 2025", FILINGS).periods] == ["Q1 FY2026"]
    assert read_periods("the march 2025 quarter", FILINGS).periods == []  # no indexed quarter ends then


def test_a_fiscal_quarter_named_by_the_month_it_ends_in():
    # Acme's fiscal year ends in late January, so its quarters end in April, July, October and January.
    assert [p.label() for p in read_periods("acme's revenue in the july quarter of fiscal 2026", FILINGS).periods] == [
        "Q2 FY2026"]
    assert [p.label() for p in read_periods("acme's revenue in the january quarter of fiscal 2025",
                                            FILINGS).periods] == ["Q4 FY2025"]
    assert read_periods("acme's revenue in the october quarter", FILINGS).periods == [PeriodAsk(3, None)]
    assert read_periods("acme's revenue in the june quarter", FILINGS).periods == []  # no quarter ends in June
    # A 52/53-week year that ends in a month's first days ends the month before; companies with different year
    # ends give a month no single quarter.
    early = [{"ticker": "BETA", "form": "10-K", "fiscal_year": 2024, "fiscal_period": "FY", "period_end": "2025-02-02"}]
    assert read_periods("beta's sales in the october quarter", early).periods == [PeriodAsk(3, None)]
    assert read_periods("sales in the october quarter", FILINGS + early).periods == [PeriodAsk(3, None)]
    december = [{"ticker": "GAMA", "form": "10-K", "fiscal_year": 2024, "fiscal_period": "FY",
                 "period_end": "2024-12-31"}]
    assert read_periods("sales in the june quarter", FILINGS + december).periods == []


def test_the_plan_says_where_the_period_words_sit():
    question = "Acme's revenue in the second quarter of fiscal 2026, not year to date"
    reading = read_periods(question.lower(), FILINGS)
    assert [question[s:e] for s, e in reading.spans] == ["second quarter of fiscal 2026", "year to date"]
    plan = plan_question(question, Catalog.build(FILINGS))
    assert [question[s:e] for s, e, dim, _ in plan.spans if dim == "period"] == [
        "second quarter of fiscal 2026", "year to date"]


def test_a_date_no_indexed_report_ends_on_is_placed_by_the_fiscal_calendar():
    # Acme's fiscal 2026 third quarter (ending late October 2025) is not indexed: the date still names it, so
    # retrieval can say that report is missing rather than read the annual report as the quarter.
    assert read_periods("acme's revenue for the quarter ended october 26, 2025", FILINGS).periods == [
        PeriodAsk(3, 2026)]
    assert read_periods("acme's revenue for the nine months ended october 26, 2025", FILINGS).periods == [
        PeriodAsk(3, 2026, months=9)]
    # A retailer whose fiscal 2024 closed on February 2, 2025: the quarter closing August 3, 2025 is Q2 FY2025.
    early = [{"ticker": "BETA", "form": "10-K", "fiscal_year": 2024, "fiscal_period": "FY", "period_end": "2025-02-02"}]
    assert read_periods("beta's sales for the three months ended august 3, 2025", early).periods == [
        PeriodAsk(2, 2025)]
    # No quarter of the calendar closes that month, or calendars that differ: no quarter is guessed.
    assert read_periods("acme's revenue for the quarter ended june 30, 2025", FILINGS).periods == [
        PeriodAsk(None, None)]
    december = [{"ticker": "GAMA", "form": "10-K", "fiscal_year": 2024, "fiscal_period": "FY",
                 "period_end": "2024-12-31"}]
    assert read_periods("revenue for the quarter ended october 26, 2025", FILINGS + december).periods == [
        PeriodAsk(None, None)]
