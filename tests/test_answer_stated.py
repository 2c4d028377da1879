"""Figures only the filer states (rag.answer.stated): an operating figure no taxonomy tags, read from the table cell
or the clause that states it, with the index's embedding model, or not read at all when nothing scores well enough.
The companies, tables and figures here are invented."""

from __future__ import annotations

from functools import lru_cache

import pytest

from rag.answer import Citation, answer, extractive_answer
from rag.answer.stated import asks
from rag.catalog import Catalog
from rag.config import get_settings
from rag.embedding import get_embed_model
from rag.intent import read_intent
from rag.question import plan_question
from tests.answer_samples import make_node, retrieval, settings_for


@lru_cache(maxsize=1)
def _model():
    return get_embed_model(get_settings().embed_model)


_COMPANY = "Zenith Pay Inc."
_CATALOG = Catalog.build([{"ticker": "ZPAY", "company": _COMPANY, "fiscal_year": 2024},
                          {"ticker": "ORBT", "company": "Orbit Apparel Inc.", "fiscal_year": 2025}])

# A table with no column a year: a group head spans three columns and another two, and each group's unit note sits
# in the line under it; the table's first note is not the cards column's.
_CARDS = """Zenith Pay Inc. (ZPAY) · 10-K · FY2024 · Item 1: Business
The following chart provides purchase volume (“PV”) and the number of cards carrying our brands in 2024:

| PV | Cards
| Year Ended December 31, 2024 | As of December 31, 2024
Zenith-branded Programs | (in billions) | % Increase from 2023 | % of Total PV | (in millions) | % Increase from 2023
Consumer Credit | $2,410 | 8% | 41% | 812 | 6%
Consumer Debit | 3,115 | 10% | 53% | 1,264 | 7%
Commercial | 352 | 9% | 6% | 98 | 11%"""

# Two tables of one row label, each introduced by the sentence that says where its stores are.
_STORES = """Orbit Apparel Inc. (ORBT) · 10-K · FY2025 · Item 1: Business
Our direct to consumer business operates the following number of retail stores in the United States:

U.S. RETAIL STORES | NUMBER
Outlet stores | 204
Flagship stores | 31
TOTAL | 235

Our direct to consumer business operates the following number of retail stores outside the United States:

NON-U.S. RETAIL STORES | NUMBER
Outlet stores | 488
Flagship stores | 57
TOTAL | 545"""


def _source(text: str, ticker: str, fiscal_year: int, number: int = 1) -> Citation:
    company = _COMPANY if ticker == "ZPAY" else "Orbit Apparel Inc."
    return Citation(number=number, text=text, ticker=ticker, company=company, fiscal_year=fiscal_year, form="10-K",
                    section="Item 1")


def _answer(question: str, sources: list[Citation], *, model=True) -> str:
    embed = _model() if model else None
    plan = read_intent(plan_question(question, _CATALOG), embed) if embed else plan_question(question, _CATALOG)
    return extractive_answer(question, sources, plan, embed_model=embed)[0]


def test_a_count_is_read_from_its_column_under_a_head_that_spans_several():
    text = _answer("How many Zenith-branded consumer debit cards were there at the end of 2024?",
                   [_source(_CARDS, "ZPAY", 2024)])
    # The cards column's own unit ("in millions"), not the table's first note ("in billions"), and the row asked,
    # not the volume beside it nor another program's cards.
    assert text.startswith("Figure read from the table: **1,264 million**"), text
    assert "`Consumer Debit`" in text and "Cards" in text and "[1]" in text
    for other in ("3,115", "812", "98"):
        assert other not in text


def test_an_amount_is_read_from_the_column_its_words_name():
    # The column is headed by the short form the passage defines ("purchase volume (“PV”)"), read with its words.
    text = _answer("What purchase volume went through Zenith's consumer debit programs in 2024?",
                   [_source(_CARDS, "ZPAY", 2024)])
    assert text.startswith("Figure read from the table: **$3,115 billion**"), text
    assert "1,264" not in text


def test_the_sentence_that_introduces_a_table_tells_two_tables_of_one_label_apart():
    text = _answer("How many outlet stores did Orbit Apparel run outside the United States at the end of fiscal 2025?",
                   [_source(_STORES, "ORBT", 2025)])
    assert text.startswith("Figure read from the table: **488**"), text
    assert "NON-U.S. RETAIL STORES" in text and "204" not in text


def test_two_figures_that_fit_alike_are_not_guessed_between():
    # Without the sentences that say where each table's stores are, and with no place asked, the two outlet counts
    # fit the question alike: neither is read, and the passage is quoted as before.
    bare = "\n".join(line for line in _STORES.splitlines() if not line.endswith(":"))
    text = _answer("How many outlet stores did Orbit Apparel run at the end of fiscal 2025?", [_source(bare, "ORBT", 2025)])
    assert "Figure read" not in text, text
    assert "Extractive answer" in text and "488" in text and "204" in text


def test_a_figure_in_prose_is_read_from_the_clause_that_states_what_is_asked():
    # One sentence states two volumes of two products; "how much" asks an amount that is no money, which the readers
    # of counts and of amounts of money leave to the passage.
    passages = [
        "Orbit Apparel Inc. (ORBT) · 10-K · FY2025 · Item 1: Business\nIn fiscal 2025 our mills produced 2.4 million "
        "tonnes of cotton yarn and 910,000 tonnes of knitted fabric for our own factories.",
        "Orbit Apparel Inc. (ORBT) · 10-K · FY2025 · Item 1: Business\nWe buy cotton from growers in more than 12 "
        "countries under contracts of one to three years.",
    ]
    sources = [_source(text, "ORBT", 2025, number=i + 1) for i, text in enumerate(passages)]
    text = _answer("How much knitted fabric did Orbit Apparel's mills produce in fiscal 2025?", sources)
    assert text.startswith("Figure read from prose: **910,000** for 2025"), text
    assert "2.4 million" not in text and "[1]" in text


def test_a_clause_that_names_more_than_the_question_is_not_read():
    # "Throughout the U.S., Canada, and Mexico": the count is of more than the stores asked about.
    passage = ("Orbit Apparel Inc. (ORBT) · 10-K · FY2025 · Item 1: Business\nAt the end of fiscal 2025 we operated "
               "1,512 stores located throughout the U.S., Canada, and Mexico. Our stores average 9,800 square feet.")
    text = _answer("How many stores did Orbit Apparel operate in the U.S. at the end of fiscal 2025?",
                   [_source(passage, "ORBT", 2025)])
    assert "Figure read from prose: **1,512**" not in text


def test_a_table_without_year_columns_speaks_for_its_own_filing_only():
    # Asked for another year than the filing's own, an undated table's cell is not that year's figure.
    text = _answer("How many Zenith-branded consumer debit cards were there at the end of 2022?",
                   [_source(_CARDS, "ZPAY", 2024)])
    assert "Figure read" not in text, text


def test_without_the_embedding_model_the_answer_is_as_before():
    text = _answer("How many Zenith-branded consumer debit cards were there at the end of 2024?",
                   [_source(_CARDS, "ZPAY", 2024)], model=False)
    assert text.startswith("Extractive answer") and "Consumer Debit | 3,115" in text


@pytest.mark.parametrize("question, expected", [
    ("What did Zenith get from the deal, what did it pay, and how was the purchase booked?", 3),
    ("How many stores were open in the U.S., counting its territories, at the end of fiscal 2025?", 1),
    ("As of December 31, 2024, how many cards carried the brand?", 1),
])
def test_a_question_of_several_asks_is_not_one_figure(question, expected):
    assert asks(question) == expected


def test_the_answer_stream_reads_the_figure_with_the_engines_model():
    question = "How many Zenith-branded consumer debit cards were there at the end of 2024?"
    plan = read_intent(plan_question(question, _CATALOG), _model())
    node = make_node(_CARDS, "c-cards", ticker="ZPAY", company=_COMPANY, fiscal_year=2024, section="Item 1")
    res = answer(question, retrieval(question, nodes=[node], analysis=plan), settings_for(None), use_llm=False,
                 embed_model=_model())
    assert res.answer.startswith("Figure read from the table: **1,264 million**"), res.answer
    assert [c.number for c in res.citations] == [1]


def test_a_row_that_is_one_of_the_lines_the_question_names_is_not_read():
    # "Orbit and Nova stores": a row of one brand is neither the other's nor both, and the total row names neither.
    passage = """Orbit Apparel Inc. (ORBT) · 10-K · FY2025 · Item 1: Business
U.S. RETAIL STORES | NUMBER
Orbit stores (including outlet stores) | 164
Nova stores (including outlet stores) | 71
TOTAL | 235"""
    text = _answer("How many Orbit and Nova retail stores are there in the United States?",
                   [_source(passage, "ORBT", 2025)])
    assert "Figure read" not in text, text
