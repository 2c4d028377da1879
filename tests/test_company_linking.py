"""Which indexed filer a question names: the longest name any filer goes by (its registrant name with and without its
legal suffix, its ticker, the leading words of its name), so a filer whose name shares a word with another's is still
found, and a word several filers' names share is said to be ambiguous rather than guessed. And a date that closes a
fiscal year is read in the named filer's own fiscal calendar. Every company here is invented."""

from __future__ import annotations

import pytest

from rag.answer import answer, check_refusal
from rag.catalog import Catalog
from rag.companies import short_names
from rag.question import plan_question
from rag.schema import Filters, QuestionPlan
from tests.answer_samples import make_node, retrieval, settings_for


def _filing(ticker, company, year, period_end):
    return {"ticker": ticker, "company": company, "form": "10-K", "fiscal_year": year, "fiscal_period": "FY",
            "period_end": period_end}


FILINGS = [
    _filing("NWHX", "Northwind Holdings Inc", 2024, "2024-12-31"),
    # A fiscal year that ends on the Saturday nearest June 30; the older filing names the filer as EDGAR writes it.
    _filing("NWEP", "Northwind Energy Partners LP", 2024, "2024-06-29"),
    _filing("NWEP", "NORTHWIND ENERGY PARTNERS, L.P.", 2023, "2023-07-01"),
    # A retailer whose fiscal 2024 ends on February 1, 2025: its fiscal year is named for the year it starts in.
    _filing("LRKS", "Larkspur Outfitters, Inc.", 2024, "2025-02-01"),
    _filing("QFTR", "Quillfeather Software Corp.", 2024, "2024-09-28"),
    # Filers whose names open with an everyday word, which other filings write too.
    _filing("GNWC", "General Widget Company", 2024, "2024-12-31"),
    _filing("UFLX", "United Ferry Lines, Inc.", 2024, "2024-12-31"),
    _filing("ULWX", "Union Loom Works, Inc.", 2024, "2024-12-31"),
]


class _Node:
    def __init__(self, ticker, text):
        self.metadata = {"ticker": ticker}
        self.text = text


# How each filer's own filings write: its name in full and by its leading words, everyday words as prose has them.
NODES = [
    _Node("NWHX", "Northwind Holdings insures freight. Northwind reported general and administrative costs. " * 20),
    _Node("NWEP", "Northwind Energy runs pipelines, and energy prices fell. Northwind paid distributions. " * 20),
    _Node("LRKS", "Larkspur stores sell gear in the United States. General and administrative costs rose. " * 20),
    _Node("QFTR", "Quillfeather licenses software. Our General Counsel reviewed the United States contracts. " * 20),
    _Node("GNWC", "General Widget makes widgets. In general, demand rose. " * 20 + "Sold in the European Union. " * 10),
    _Node("UFLX", "United Ferry runs ferries. Each ferry sails daily. " * 20 + "Routes in the European Union. " * 10),
    _Node("ULWX", "Union Loom weaves cloth. Union Loom ships it. " * 20),
]


@pytest.fixture(scope="module")
def catalog():
    return Catalog.build(FILINGS, NODES)


@pytest.mark.parametrize(
    "question, tickers",
    [
        # The registrant name in full, with and without its legal suffix, and as EDGAR spells it.
        ("What was Northwind Holdings Inc's revenue in 2024?", ["NWHX"]),
        ("What was Northwind Energy Partners LP's revenue in fiscal 2024?", ["NWEP"]),
        ("What was Northwind Energy Partners, L.P.'s revenue?", ["NWEP"]),
        ("How much debt did Northwind Energy Partners carry?", ["NWEP"]),
        ("How much debt did Northwind Holdings carry?", ["NWHX"]),
        # The distinctive part: the leading words only one filer's name starts with.
        ("How much debt did Northwind Energy carry?", ["NWEP"]),
        ("Why did Northwind Energy's distributions fall in fiscal 2024?", ["NWEP"]),
        ("northwind energy capex fy24", ["NWEP"]),
        # By ticker.
        ("NWEP distributions in fiscal 2024", ["NWEP"]),
        ("What did NWHX report as revenue?", ["NWHX"]),
        # Both, each by the words that tell it from the other, in the order the question names them.
        ("Compare the revenue of Northwind Holdings and Northwind Energy in 2024", ["NWHX", "NWEP"]),
        ("Which had more debt, Northwind Energy or Northwind Holdings Inc?", ["NWEP", "NWHX"]),
        ("Compare NWHX and Northwind Energy on revenue", ["NWHX", "NWEP"]),
        # One filer's name by its first word, when no other filer's name starts with it.
        ("What did Quillfeather spend on research?", ["QFTR"]),
        ("How many stores does Larkspur run?", ["LRKS"]),
        ("What did United Ferry spend on fuel?", ["UFLX"]),
        ("What did Union Loom spend on cotton?", ["ULWX"]),
        ("What did General Widget Company spend on steel?", ["GNWC"]),
        # An everyday word that opens a filer's name is no name of its own ("General", "United"), nor is a
        # filer's first word inside another name ("European Union").
        ("What were General and administrative expenses at Larkspur in fiscal 2024?", ["LRKS"]),
        ("How much of Quillfeather's revenue came from the United States?", ["QFTR"]),
        ("How do European Union rules affect Quillfeather?", ["QFTR"]),
    ],
)
def test_a_filer_is_found_by_the_longest_name_it_goes_by(catalog, question, tickers):
    plan = plan_question(question, catalog)
    assert plan.tickers == tickers, question
    assert plan.unknown_companies == [] and plan.ambiguous_companies == {}, question


def test_a_word_several_filers_names_share_is_ambiguous_not_a_guess(catalog):
    plan = plan_question("What was Northwind's revenue in 2024?", catalog)
    assert plan.tickers == [] and plan.unknown_companies == []
    assert plan.ambiguous_companies == {"Northwind": ["NWHX", "NWEP"]}
    # With one of them named too, the shared word alone still names neither for sure.
    plan = plan_question("Did Northwind Energy grow faster than Northwind?", catalog)
    assert plan.tickers == ["NWEP"] and plan.ambiguous_companies == {"Northwind": ["NWHX", "NWEP"]}
    # A company not indexed whose name opens with the shared word is that company, not one of them.
    plan = plan_question("What was Northwind Atlantic's revenue?", catalog)
    assert plan.tickers == [] and plan.ambiguous_companies == {} and plan.unknown_companies == ["Northwind Atlantic"]
    # With only one such filer indexed, its first word names it.
    alone = Catalog.build(FILINGS[1:], NODES[1:])
    plan = plan_question("What was Northwind's revenue in 2024?", alone)
    assert plan.tickers == ["NWEP"] and plan.ambiguous_companies == {}


def test_an_ambiguous_name_is_answered_with_a_question_back(catalog):
    plan = plan_question("What was Northwind's revenue in 2024?", catalog)
    refusal = check_refusal(plan.question, plan)
    assert refusal is not None and refusal.kind == "ambiguous_company"
    assert "Northwind" in refusal.message and "NWHX" in refusal.message and "NWEP" in refusal.message
    # The answer asks back and cites nothing, though a passage of one of them was found.
    found = [make_node("Northwind reported revenue of $41.0 million in 2024.", "c1", ticker="NWHX")]
    res = answer(plan.question, retrieval(plan.question, found, plan), settings_for(None), use_llm=False)
    assert res.refused and res.refusal_reason == "ambiguous_company" and res.citations == []
    # A company chosen as a filter says which one is meant.
    assert check_refusal(plan.question, plan, Filters(tickers=["NWEP"])) is None
    # A name that is no indexed filer's at all is still a company not indexed.
    assert check_refusal("What was Zyntrox's revenue?", QuestionPlan(
        question="What was Zyntrox's revenue?", unknown_companies=["Zyntrox"])).kind == "unknown_company"


def test_a_name_without_its_legal_suffix():
    for written in ("Northwind Energy Partners, L.P.", "NORTHWIND ENERGY PARTNERS LP", "Northwind Energy Partners LLC"):
        assert "northwind energy partners" in short_names(written), written
    assert "larkspur outfitters" in short_names("The Larkspur Outfitters Company")
    assert "brightwater" in short_names("BRIGHTWATER N.V.")
    assert {"acme", "acme.com"} <= short_names("ACME.COM, INC.") and "wells fargo" in short_names("WELLS FARGO & CO/MN")


@pytest.mark.parametrize(
    "question, years",
    [
        # Named by its own label, in every filer's calendar.
        ("What was Northwind Energy's revenue in fiscal 2024?", [2024]),
        ("Compare Larkspur's and Northwind Energy's revenue for fiscal 2024", [2024]),
        # A date that closes the filer's fiscal year, a few days off its 52/53-week end: the year it closes.
        ("What were Northwind Energy's revenues for the year ended June 30, 2024?", [2024]),
        ("What were Larkspur's net sales for the year ended January 31, 2025?", [2024]),
        # A year end before any indexed filing: still the filer's label for it, not the calendar year.
        ("What were Larkspur's net sales for the fiscal year ended February 3, 2024?", [2023]),
        ("What was Quillfeather's revenue for the year ended September 30, 2023?", [2023]),
        # A date exactly on an indexed filing's period end names that filing's year, whoever is named.
        ("What were net sales for the year ended February 1, 2025?", [2024]),
    ],
)
def test_a_fiscal_year_is_read_in_the_filers_own_calendar(catalog, question, years):
    assert plan_question(question, catalog).fiscal_years == years, question


def test_each_company_gets_the_year_its_own_calendar_gives_the_date_named_after_it(catalog):
    plan = plan_question("Which sold more: Larkspur in the year ended January 31, 2025, or Quillfeather in fiscal "
                         "2023?", catalog)
    assert plan.tickers == ["LRKS", "QFTR"] and plan.year_of_company == {"LRKS": 2024, "QFTR": 2023}
