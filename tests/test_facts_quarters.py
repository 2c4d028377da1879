"""Quarters and years to date from real inline XBRL 10-Qs (../shared/corpus/outside/10Q-ixbrl) beside a 10-K
(../shared/corpus/filings): the three months never mixed with the year to date, growth against the same quarter a
year earlier, a fourth quarter computed from the 10-K and the third-quarter 10-Q, losses and outflows worded as
the filings word them, and the Financials page's quarters.

Facts are stored straight from parse_file() with the chunk spans of a chunker-only pass (no embedding), as in
tests/test_facts.py. Expected figures are read from the filings' own statements:
- Apple 10-Q for the quarter ended June 28, 2025: Total net sales 94,036 (three months) and 313,695 (nine months),
  85,777 and 296,105 a year earlier; Net income 23,434 (three months).
- Apple FY2025 10-K: Total net sales 416,161 (2025) and 391,035 (2024).
- Boeing 10-Q for the quarter ended June 30, 2025 (six-month columns printed first): Total revenues 42,245 and
  33,435 (six months), 22,749 and 16,866 (three months); Net loss attributable to Boeing shareholders (611) for
  the three months and (648) for the six; Net loss (612) before noncontrolling interests.
- Walmart 10-Q for the quarter ended July 31, 2023: Payments for property and equipment (9,216) for six months.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.catalog import Catalog
from rag.config import get_settings
from rag.facts import FactsLayer, FactStore
from rag.facts.labels import duration_months
from rag.question import plan_question
from tests.filings import SHARED, store_facts

QUARTERLY = SHARED / "corpus" / "outside" / "10Q-ixbrl"
ANNUAL = SHARED / "corpus" / "filings"
FILES = {
    "AAPL 10-Q Q3 FY2025": QUARTERLY / "edgartools-aapl-10-q-2025-08-01.html",
    "AAPL 10-K FY2025": ANNUAL / "AAPL" / "aapl-20250927.htm",
    "BA 10-Q Q2 FY2025": QUARTERLY / "edgartools-ba-10-q-2025-07-29.html",
    "WMT 10-Q Q2 FY2024": QUARTERLY / "sp-10Q-WMT-0000104169-23-000097.html",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    missing = [str(p) for p in FILES.values() if not p.exists()]
    if missing:
        pytest.skip(f"{missing[0]} is absent: the shared corpus (../shared beside the project) is needed")
    from rag.index import IndexStore

    settings = get_settings(storage_dir=tmp_path_factory.mktemp("facts-quarters"))
    chunker = IndexStore(settings).chunker()
    store = FactStore.for_settings(settings)
    chunks: dict[str, tuple[str, dict]] = {}
    docs: dict[str, dict] = {}
    for key, path in FILES.items():
        doc, meta = store_facts(store, chunker, path, chunks)
        docs[key] = meta
    layer = FactsLayer(settings, store=store, chunk_lookup=chunks.get)
    return {"settings": settings, "layer": layer, "docs": docs}


def ask(corpus, question: str):
    layer = corpus["layer"]
    return layer.answer_for(plan_question(question, Catalog.build(layer.filings())))


def test_the_filings_are_read_as_the_quarters_they_are(corpus):
    meta = corpus["docs"]
    assert (meta["AAPL 10-Q Q3 FY2025"]["form"], meta["AAPL 10-Q Q3 FY2025"]["fiscal_period"]) == ("10-Q", "Q3")
    assert (meta["BA 10-Q Q2 FY2025"]["fiscal_year"], meta["BA 10-Q Q2 FY2025"]["fiscal_period"]) == (2025, "Q2")
    assert corpus["layer"].quarters_held("AAPL") == [(2025, 4), (2025, 3)]


@pytest.mark.parametrize(("start", "end", "months"), [
    ("2025-03-30", "2025-06-28", 3),  # a 13-week quarter as XBRL dates it (90 days)
    ("2023-02-01", "2023-04-30", 3),  # an 88-day first quarter
    ("2022-06-26", "2022-10-01", 3),  # a 14-week quarter (97 days)
    ("2025-01-01", "2025-06-27", 6), ("2024-01-01", "2024-06-30", 6),
    ("2024-09-29", "2025-06-28", 9),
    ("2023-10-01", "2024-09-28", 12), ("2022-09-25", "2023-09-30", 12),  # 52 and 53 weeks
    (None, "2025-06-28", 0),  # an instant
    ("2025-04-01", "2025-07-31", None),  # four months: no period a filing reports
])
def test_duration_classes(start, end, months):
    assert duration_months(start, end) == months


def test_a_quarter_is_its_three_months_not_the_year_to_date(corpus):
    fa = ask(corpus, "What were Apple's total net sales for the three months ended June 28, 2025?")
    assert "$94,036 million [F1]" in fa.block
    assert "313,695" not in fa.block and "85,777" not in fa.block
    assert "the three months ended June 28, 2025 (Q3 FY2025)" in fa.block
    (c,) = fa.citations
    assert c.form == "10-Q" and c.fiscal_year == 2025 and "94,036" in c.text
    nine = ask(corpus, "What were Apple's net sales in the first nine months of fiscal 2025?")
    assert "$313,695 million" in nine.block and "94,036" not in nine.block
    assert "the nine months ended June 28, 2025" in nine.block


def test_six_months_printed_first_do_not_answer_the_quarter(corpus):
    # Boeing's statement puts the six-month columns before the three-month ones.
    q2 = ask(corpus, "What was Boeing's total revenue in Q2 2025?")
    assert "$22,749 million" in q2.block and "42,245" not in q2.block
    half = ask(corpus, "What was Boeing's total revenue in the first half of 2025?")
    assert "$42,245 million" in half.block and "22,749" not in half.block
    assert "the six months ended June 30, 2025 (H1 FY2025)" in half.block


def test_growth_against_the_same_quarter_a_year_earlier(corpus):
    fa = ask(corpus, "How much did Boeing's revenue grow year over year in the three months ended June 30, 2025?")
    assert fa.operation == "growth"
    (r,) = fa.results
    assert r["value"] == pytest.approx((22_749 - 16_866) / 16_866 * 100)
    assert "+34.88%" in fa.block and "the same quarter a year earlier" in fa.block
    assert "the three months ended June 30, 2024 (Q2 FY2024): $16,866 million" in fa.block
    assert "42,245" not in fa.block and "33,435" not in fa.block
    # The previous quarter's 10-Q is not indexed: said, not guessed.
    assert "No comparison with the previous quarter" in fa.block
    assert {c.form for c in fa.citations} == {"10-Q"}


def test_fourth_quarter_is_the_year_minus_nine_months_with_both_filings_cited(corpus):
    fa = ask(corpus, "Using Apple's nine-month results through June 28, 2025 and its fiscal 2025 annual total, what "
                     "were Apple's net sales in the fourth quarter of fiscal 2025?")
    assert "$102,466 million" in fa.block  # 416,161 − 313,695
    assert "$416,161 million [F1]" in fa.block and "$313,695 million [F2]" in fa.block
    assert "computed" in fa.block and "the three months ended September 27, 2025 (Q4 FY2025)" in fa.block
    assert [c.form for c in fa.citations] == ["10-K", "10-Q"]
    # The fourth quarter against the third: the previous quarter's 10-Q is indexed.
    change = ask(corpus, "How did Apple's net sales change in Q4 2025?")
    assert "the previous quarter" in change.block and "$94,036 million" in change.block
    assert "+$8,430 million" in change.block  # 102,466 − 94,036
    # A part's fourth quarter is labelled with the part, though the 10-Q prints its name with a trademark sign.
    iphone = ask(corpus, "What were Apple's iPhone net sales in the fourth quarter of fiscal 2025?")
    assert "Total revenue — iPhone · the three months ended September 27, 2025 (Q4 FY2025): $49,025 million" in \
        iphone.block  # 209,586 − 160,561


def test_no_fourth_quarter_without_both_filings_and_none_for_per_share_figures(corpus):
    assert ask(corpus, "What were Apple's net sales in the fourth quarter of fiscal 2024?") is None  # no Q3 FY2024
    assert ask(corpus, "What was Apple's diluted EPS in the fourth quarter of fiscal 2025?") is None
    assert ask(corpus, "What was Boeing's total revenue in Q3 2025?") is None  # not filed: never another quarter


def test_a_net_loss_is_worded_as_a_loss(corpus):
    fa = ask(corpus, "What was Boeing's net income in Q2 2025?")
    assert "a net loss of $611 million [F1]" in fa.block  # attributable to Boeing shareholders, not the 612
    assert "-$611" not in fa.block and "(611" not in fa.block
    half = ask(corpus, "What was Boeing's net loss in the first half of 2025?")
    assert "a net loss of $648 million" in half.block


def test_a_cash_outflow_is_an_amount_spent(corpus):
    fa = ask(corpus, "How much did Walmart spend on capital expenditures in the first six months of fiscal 2024?")
    assert "$9,216 million [F1] spent on purchases of property and equipment" in fa.block
    assert "-$9,216" not in fa.block and "(9,216" not in fa.block


def test_the_last_four_quarters_as_a_series(corpus):
    fa = ask(corpus, "What was Apple's revenue over the last four quarters?")
    assert fa.operation == "series"
    assert "Q3 FY2025 $94,036 million → Q4 FY2025 $102,466 million" in fa.block
    assert "no Q1 FY2025 10-Q of AAPL" in fa.block and "no Q2 FY2025 10-Q of AAPL" in fa.block


@pytest.mark.parametrize("question", [
    "Why did Boeing's revenue grow in Q2 2025?",  # prose
    "What was Boeing's adjusted revenue in the second quarter of 2025?",
])
def test_prose_and_adjusted_figures_fall_through(corpus, question):
    assert ask(corpus, question) is None


def test_a_segment_of_a_quarter_is_its_member_for_the_three_months(corpus):
    # The segment table prints six months and three months side by side: the quarter's own column answers.
    fa = ask(corpus, "What was Boeing's Commercial Airplanes segment revenue in Q2 2025?")
    assert "Commercial Airplanes" in fa.block and "$10,874 million" in fa.block
    assert "19,021" not in fa.block and "the three months ended June 30, 2025" in fa.block
    # A quarter's figure with a part left out is not the whole quarter's: the facts do not answer it.
    assert ask(corpus, "What was Boeing's revenue excluding Commercial Airplanes in Q2 2025?") is None
    assert ask(corpus, "What was Boeing's revenue in Q2 2025?") is not None


def test_quarter_history_marks_the_computed_fourth_quarter(corpus):
    rows = corpus["layer"].quarter_history(["AAPL"], ["revenue", "net_income"])
    by = {(r["metric"], r["fiscal_year"], r["quarter"]): r for r in rows}
    assert by[("revenue", 2025, 3)]["value"] == 94_036_000_000 and not by[("revenue", 2025, 3)]["computed_q4"]
    q4 = by[("revenue", 2025, 4)]
    assert q4["value"] == 102_466_000_000 and q4["computed_q4"] and q4["months"] == 3
    assert {i["form"] for i in q4["inputs"]} == {"10-K", "10-Q"}
    assert by[("net_income", 2025, 4)]["value"] == (112_010 - 84_544) * 1_000_000


def test_financials_page_charts_quarters(corpus, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from rag.engine import Engine

    # The page reads the engine's facts layer; here it is the fact store above, with no search index beside it.
    monkeypatch.setattr(Engine, "facts", lambda self: corpus["layer"])
    settings = corpus["settings"]
    monkeypatch.setenv("RAG_STORAGE_DIR", str(settings.storage_dir))
    monkeypatch.setenv("RAG_DATA_DIR", str(Path(settings.storage_dir) / "data"))
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60)
    at.switch_page("pages/financials.py")
    at.run()
    assert not at.exception, at.exception
    at.multiselect(key="fin_companies").set_value(["AAPL"]).run()
    at.radio(key="fin_periods").set_value("Quarters").run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table.columns) == ["FY2025 Q3", "FY2025 Q4"]
    text = table.to_string()
    assert "$94,036 million" in text and "$102,466 million †" in text
    assert any("fourth quarter, computed" in str(c.value) for c in at.caption)


def test_a_year_to_date_figure_in_an_answer_is_not_flagged_against_the_year(corpus):
    layer = corpus["layer"]
    fine = "In its first nine months of fiscal 2025, Apple's total net sales were $313,695 million [1]."
    assert layer.check_answer(fine, ["AAPL"], [2025]) == []
    wrong = "Apple's total net sales for fiscal 2025 were $313,695 million [1]."
    assert layer.check_answer(wrong, ["AAPL"], [2025])


def test_a_quarters_listed_parts_are_added_as_a_years_are(corpus):
    # "<part> and <part> combined" in a quarter: the three months' figures of each, summed, and the share of the
    # quarter's whole they make (Apple's Q3 FY2025 10-Q: iPhone 44,582, Mac 8,046, total net sales 94,036).
    fa = ask(corpus, "What were Apple's iPhone and Mac net sales combined in Q3 fiscal 2025?")
    assert "the three months ended June 28, 2025 (Q3 FY2025)" in fa.block
    assert "= $52,628 million = $44,582 million [F1]" in fa.block and "+ $8,046 million [F2]" in fa.block
    fa = ask(corpus, "What percentage of Apple's net sales came from iPhone and Mac combined in Q3 fiscal 2025?")
    assert "= 55.97% = $52,628 million / $94,036 million" in fa.block
