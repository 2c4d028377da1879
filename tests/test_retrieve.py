"""Query analysis and retrieval over a small index."""

from __future__ import annotations

import pytest

from rag.config import get_settings
from rag.index import IndexStore
from rag.retrieve import Catalog, Filters, Retriever, analyze, short_names
from tests.filings import ACME, BOLT, write_filing

FILINGS = [
    {"ticker": "AAPL", "company": "Apple Inc.", "form": "10-K", "fiscal_year": 2024, "period_end": "2024-09-28"},
    {"ticker": "AAPL", "company": "Apple Inc.", "form": "10-K", "fiscal_year": 2025, "period_end": "2025-09-27"},
    {"ticker": "GOOGL", "company": "Alphabet Inc.", "form": "10-K", "fiscal_year": 2024, "period_end": "2024-12-31"},
    {"ticker": "HD", "company": "HOME DEPOT, INC.", "form": "10-K", "fiscal_year": 2024, "period_end": "2025-02-02"},
    {"ticker": "MA", "company": "Mastercard Incorporated", "form": "10-K", "fiscal_year": 2024,
     "period_end": "2024-12-31"},
    {"ticker": "WFC", "company": "WELLS FARGO & COMPANY/MN", "form": "10-K", "fiscal_year": 2024,
     "period_end": "2024-12-31"},
]


class _Node:
    def __init__(self, ticker, text):
        self.metadata = {"ticker": ticker}
        self.text = text


@pytest.fixture(scope="module")
def catalog():
    # Alphabet's filings say "Google" constantly; nobody else's do. Apple's mention it once.
    nodes = [_Node("GOOGL", "Google Search and Google Cloud grew. " * 30), _Node("AAPL", "We compete with Google.")]
    return Catalog.build(FILINGS, nodes)


def test_short_names():
    assert "apple" in short_names("Apple Inc.")
    assert "home depot" in short_names("HOME DEPOT, INC.")
    assert "wells fargo" in short_names("WELLS FARGO & COMPANY/MN")
    assert "mastercard" in short_names("Mastercard Incorporated")


@pytest.mark.parametrize(
    "question, tickers, years",
    [
        ("How did Apple's services revenue change from FY2023 to FY2024?", ["AAPL"], [2023, 2024]),
        ("What did AAPL report in fiscal 2025?", ["AAPL"], [2025]),
        ("Alphabet revenue in FY24", ["GOOGL"], [2024]),
        ("How much did Google Cloud earn in 2024?", ["GOOGL"], [2024]),
        ("Home Depot's net sales for the year ended February 2, 2025", ["HD"], [2024]),
        ("Compare Mastercard and Wells Fargo net income in 2024", ["MA", "WFC"], [2024]),
        ("What is the market for widgets?", [], []),
    ],
)
def test_companies_and_years(catalog, question, tickers, years):
    analysis = analyze(question, catalog)
    assert analysis.tickers == tickers
    assert analysis.fiscal_years == years


def test_latest_year_sections_forms_and_unknown_companies(catalog):
    analysis = analyze("What are the risk factors in Apple's latest annual report?", catalog)
    assert analysis.tickers == ["AAPL"]
    assert analysis.fiscal_years == [2025]
    assert analysis.sections == ["Item 1A"]
    assert analysis.forms == ["10-K"]
    assert set(analyze("Summarize the MD&A and Item 7A", catalog).sections) == {"Item 7", "Item 7A"}
    unknown = analyze("What was Microsoft's revenue in 2024?", catalog)
    assert unknown.tickers == [] and unknown.unknown_companies == ["Microsoft"]
    assert analyze("What was Apple's revenue?", catalog).unknown_companies == []
    assert analysis.label() == "AAPL · FY2025 · 10-K · Item 1A"


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("retrieve")
    store = IndexStore(get_settings(storage_dir=tmp / "storage"))
    store.add([write_filing(tmp / "in", "acme.htm", **ACME), write_filing(tmp / "in", "bolt.htm", **BOLT)])
    return store


def test_detected_filters_apply_and_user_filters_win(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    result = retriever.retrieve("What were Bolt Motors' total net sales?", mode="hybrid", top_k=4)
    assert result.analysis.tickers == ["BOLT"]
    assert {n.node.metadata["ticker"] for n in result.nodes} == {"BOLT"}
    # The user's own filter overrides what the question says.
    result = retriever.retrieve("What were Bolt Motors' total net sales?", mode="hybrid", top_k=4,
                                filters=Filters(tickers=["ACME"]))
    assert {n.node.metadata["ticker"] for n in result.nodes} == {"ACME"}
    # Analysis off: nothing detected, nothing applied.
    result = retriever.retrieve("What were Bolt Motors' total net sales?", top_k=4, use_analysis=False)
    assert result.analysis.tickers == [] and result.filters.tickers == []


def test_two_companies_each_get_their_share(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    result = retriever.retrieve("Compare total net sales of Acme Widgets and Bolt Motors", top_k=6)
    tickers = [n.node.metadata["ticker"] for n in result.nodes]
    assert tickers.count("ACME") == 3 and tickers.count("BOLT") == 3
    assert result.retrieval_ms > 0


def test_year_without_its_own_filing_reads_the_next_years_comparative(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    # Acme's FY2023 is only reported as the comparative in its FY2024 filing.
    result = retriever.retrieve("Acme Widgets total net sales in fiscal 2023", top_k=3)
    assert result.filters.fiscal_years == [2024]
    assert {n.node.metadata["fiscal_year"] for n in result.nodes} == {2024}


def test_modes_differ_and_bad_mode_is_rejected(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    for mode in ("dense", "keyword", "hybrid"):
        result = retriever.retrieve("zorblax coupler", mode=mode, top_k=3, use_analysis=False)
        assert result.mode == mode
        assert "zorblax" in result.nodes[0].node.text
    with pytest.raises(ValueError):
        retriever.retrieve("x", mode="magic")
