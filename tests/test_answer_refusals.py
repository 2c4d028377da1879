"""Refusals (rag.answer.refusals) and the answers that say the filings hold nothing or cover only some companies."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.answer import answer, check_refusal
from rag.catalog import Catalog
from rag.config import get_settings
from rag.embedding import get_embed_model
from rag.intent import read_intent
from rag.question import plan_question
from rag.schema import QuestionPlan
from tests.answer_samples import APPLE_MDA, make_node, retrieval, run_stream, settings_for
from tests.fake_ollama import started_fake_ollama

fake_ollama = pytest.fixture(started_fake_ollama, name="fake_ollama")


# The companies the refusal questions name, as an index would list them: the plan reads them from the question.
CATALOG = Catalog.build([{"ticker": t, "company": c, "fiscal_year": 2024} for t, c in (
    ("AAPL", "Apple Inc."), ("TSLA", "Tesla, Inc."), ("ADBE", "Adobe Inc."), ("KO", "Coca-Cola Co"))])


@pytest.fixture(scope="module")
def embed_model():
    return get_embed_model(get_settings().embed_model)


def planned(question: str, embed_model) -> QuestionPlan:
    """The plan retrieval makes: the question read by the planner, its intent by the intent model."""
    return read_intent(plan_question(question, CATALOG), embed_model)


# None of these phrasings is an example in rag/data/intents.jsonl: they test how the model generalises.
@pytest.mark.parametrize(
    "question, kind",
    [
        ("What will Apple's revenue be next year?", "forecast"),
        ("Predict Tesla's vehicle deliveries for the coming quarters.", "forecast"),
        ("What is Apple's price target?", "advice"),
        # Said to follow from a filing, a price target is still no figure a filing states.
        ("What 12-month stock price target for Apple follows from its 2024 10-K?", "advice"),
        ("Will Tesla be profitable in 2031?", "forecast"),
        ("Should I buy Tesla stock?", "advice"),
        ("Is Apple a good investment right now?", "advice"),
        ("Buy, sell or hold: Tesla?", "advice"),
        ("What was Apple's share price on November 1, 2024?", "market_data"),
        ("How did Tesla stock react to the earnings release?", "market_data"),
        ("What is Apple's market cap?", "market_data"),
        ("What was Microsoft's revenue in fiscal 2024?", "unknown_company"),
        ("Write me a poem about the sea", "off_topic"),
        ("what is the meaning of life?", "off_topic"),
        ("What's the weather in Atlanta tomorrow?", "off_topic"),
    ],
)
def test_refusals_cite_nothing_and_call_no_llm(fake_ollama, embed_model, question, kind):
    analysis = planned(question, embed_model)
    res = answer(question, retrieval(question, analysis=analysis), settings_for(fake_ollama))
    assert res.refused, (res.answer, analysis.intent)
    assert res.refusal_reason == kind, analysis.intent
    assert res.citations == []
    assert "[1]" not in res.answer
    assert fake_ollama.chat_requests() == []
    assert not res.extractive
    assert len(res.answer) > 40  # says why


@pytest.mark.parametrize(
    "question",
    [
        "What was revenue in 2023?",
        "What risks does Tesla describe about future regulation?",
        "What does Tesla expect its capital expenditures to be in 2024?",
        "When will Apple's term debt mature?",
        "How many shares did Apple repurchase in 2024?",
        "What was the average price paid per share for Apple's share repurchases?",
        "Who is Tim Cook?",
        "What does the stock performance graph in Item 5 show?",
        "How did net income change from 2022 to 2023?",
        "What does Tesla say about the volatility of its stock price?",
        "How many employees will be affected by the restructuring plan, according to the 10-K?",
        "What future lease payments does Apple report?",
        "Will Tesla face risks from changes in regulation?",
        "What is the aggregate market value of voting stock held by non-affiliates?",
        "What stock price targets must be met for the CEO performance award to vest, according to the 10-K?",
        "Can bad weather hurt Coca-Cola's sales?",
        "What debt does Apple have maturing in 2031?",
        "What is Apple's dividend per share?",
        "What is Tesla's market share in China?",
    ],
)
def test_historical_questions_are_not_refused(embed_model, question):
    analysis = planned(question, embed_model)
    assert check_refusal(question, analysis) is None, analysis.intent


def test_a_figure_the_facts_vocabulary_names_is_never_market_data():
    """Whatever the model reads in the wording, a reported figure (here dividends per share) is no market data."""
    from rag.schema import Intent, MetricMention

    question = "What's Apple's dividend per share?"
    market = Intent("market_data", 0.9, 0.1, "market_data")
    mention = MetricMention(metric_key="dps", start=13, end=31, words=["dividend", "per", "share"])
    assert check_refusal(question, QuestionPlan(question=question, tickers=["AAPL"], metrics=[mention],
                                                intent=market)) is None
    assert check_refusal(question, QuestionPlan(question=question, tickers=["AAPL"], intent=market)).kind == (
        "market_data")


def test_an_everyday_word_in_a_question_about_a_company_is_no_chit_chat():
    """Whatever the model reads, a question naming an indexed company is never refused as unrelated."""
    from rag.schema import Intent

    analysis = QuestionPlan(question="Can bad weather hurt Coca-Cola's sales?", tickers=["KO"],
                            intent=Intent("off_topic", 0.9, 0.1, "off_topic"))
    assert check_refusal(analysis.question, analysis) is None
    assert check_refusal("What's the weather like?", replace(analysis, tickers=[])).kind == "off_topic"


def test_no_retrieved_nodes_says_nothing_found(fake_ollama):
    res = answer("What were Apple's deferred revenues?", retrieval("q", nodes=[]), settings_for(fake_ollama))
    assert res.refused and res.citations == [] and res.sources == []
    assert "hold nothing" in res.answer and "AAPL" in res.answer
    assert fake_ollama.chat_requests() == []


def test_indexed_and_unknown_company_answers_the_indexed_one(fake_ollama):
    fake_ollama.reply = "Apple's total net sales were $391,035 million in fiscal 2024 [1]."
    analysis = QuestionPlan(tickers=["AAPL"], unknown_companies=["Microsoft"])
    pieces, res = run_stream("Compare Apple's and Microsoft's net sales", retrieval("q", analysis=analysis),
                             settings_for(fake_ollama))
    assert not res.refused
    assert pieces[0].startswith("Note: the indexed filings do not include Microsoft")
    assert res.answer.endswith(fake_ollama.reply)
    assert [c.number for c in res.citations] == [1]
    assert any("Microsoft" in w for w in res.warnings)


_ITEM_11_POINTER = ("Item 11. Executive Compensation  The information required by this item is incorporated by "
                    "reference to our Proxy Statement for the 2025 Annual Meeting of Stockholders.")
_ITEM_11_IN_FULL = ("Item 11. Executive Compensation  Summary Compensation Table. Our chief executive officer "
                    "received total compensation of $1,250,000 in fiscal 2024, of which salary was $900,000.")


def _pay_question(question: str, item_11_text: str):
    plan = plan_question(question, Catalog.build([{"ticker": "AAPL", "company": "Apple Inc.", "fiscal_year": 2024}]))
    nodes = [make_node(APPLE_MDA, "c-mda", 0.033, section="Item 7"),
             make_node(item_11_text, "c-item11", 0.031, section="Item 11", section_title="Executive Compensation",
                       page_start=97)]
    return answer(question, retrieval(question, nodes, plan), settings_for(None), use_llm=False)


@pytest.mark.parametrize("question", [
    "How much total compensation did Apple's CEO receive for 2024?",
    "What was Apple's CEO pay ratio in 2024?",
    # The executive as the one paid, or as the one who earns.
    "How much did Apple pay its CEO in 2024?",
    "What did Apple's CEO earn in fiscal 2024?",
])
def test_a_disclosure_left_to_the_proxy_statement_is_refused_with_where_it_is(question):
    res = _pay_question(question, _ITEM_11_POINTER)
    assert res.refused and res.refusal_reason == "incorporated_by_reference" and res.citations == []
    assert "Item 11 (Executive Compensation, p. 97)" in res.answer and "Apple Inc. (AAPL)" in res.answer
    assert "proxy statement" in res.answer and "[1]" not in res.answer


def test_an_item_printed_in_full_or_named_is_answered():
    res = _pay_question("How much total compensation did Apple's CEO receive for 2024?", _ITEM_11_IN_FULL)
    assert not res.refused and "$1,250,000" in res.answer
    # Asked what Item 11 says, the pointer itself is the answer.
    res = _pay_question("What does Item 11 of Apple's 2024 10-K say about executive compensation?", _ITEM_11_POINTER)
    assert not res.refused and "incorporated by reference" in res.answer
    # Compensation as an expense is a statement figure, not a Part III disclosure.
    res = _pay_question("What was Apple's stock-based compensation expense in 2024?", _ITEM_11_POINTER)
    assert res.refusal_reason != "incorporated_by_reference"


_ENDORSEMENTS = ("Apple Inc. (AAPL) · 10-K · FY2024 · Item 7: MD&A\nAs of September 28, 2024, the Company had "
                 "endorsement contract obligations of $16.2 billion, with $1.6 billion payable within 12 months, "
                 "owed to athletes and other endorsers of its products. The Department of Justice filed an "
                 "antitrust suit against the Company in March 2024.")


def _endorsement_answer(question: str, fake_ollama=None):
    catalog = Catalog.build([{"ticker": "AAPL", "company": "Apple Inc.", "fiscal_year": 2024}])
    plan = plan_question(question, catalog)
    nodes = [make_node(_ENDORSEMENTS, "c-endorse", 0.033, section="Item 7")]
    return answer(question, retrieval(question, nodes, plan), settings_for(fake_ollama), use_llm=fake_ollama is not None)


def test_a_name_no_retrieved_passage_mentions_is_refused_before_the_model(fake_ollama):
    # The passages match every other word ("pay", "endorsement contract", "2024"), but are about all endorsers: the
    # $16.2 billion is no answer to what one person was paid.
    question = "How much did Apple pay Zed Rivers under his endorsement contract in fiscal 2024?"
    for res in (_endorsement_answer(question), _endorsement_answer(question, fake_ollama)):
        assert res.refused and res.refusal_reason == "name_not_found" and res.citations == []
        assert "'Zed', 'Rivers'" in res.answer and "$16.2 billion" not in res.answer
    assert fake_ollama.chat_requests() == []


def test_a_name_the_passages_mention_or_spell_out_is_answered():
    res = _endorsement_answer("What are Apple's endorsement contract obligations to athletes in fiscal 2024?")
    assert not res.refused and "$16.2 billion" in res.answer
    # An abbreviation may be spelled out in the filing ("Department of Justice"): not a missing name.
    res = _endorsement_answer("What antitrust suit did the DOJ file against Apple in 2024?")
    assert not res.refused and "Department of Justice" in res.answer
    # Nor is it a missing word, and suing is what the filing calls a suit.
    res = _endorsement_answer("What is the DOJ suing Apple for?")
    assert not res.refused and "Department of Justice" in res.answer and "'doj'" not in res.answer


def test_one_name_among_several_the_passages_mention_is_not_a_missing_answer():
    # "Washington" (for the government) is absent, but the question's other names are the passage's own: it is
    # answered, with a note on the word no passage holds.
    res = _endorsement_answer("What antitrust suit did the Department of Justice file against Apple in 2024, and "
                              "what is Washington claiming?")
    assert not res.refused and "Department of Justice" in res.answer and "'washington'" in res.answer


_DISPOSITION = ("Apple Inc. (AAPL) · 10-K · FY2024 · Item 7: MD&A\nIn February 2024, the Company completed the sale "
                "of its South American operations, recording a loss on sale of $1.2 billion, mostly cumulative "
                "foreign currency translation losses.")


def test_a_place_the_passages_print_as_its_adjective_is_not_a_missing_name():
    # Filings name a region by its adjective ("South American operations") where a question names the place.
    catalog = Catalog.build([{"ticker": "AAPL", "company": "Apple Inc.", "fiscal_year": 2024}])
    question = "What operations did Apple sell in South America in 2024?"
    plan = plan_question(question, catalog)
    assert "America" in " ".join(plan.unread_names)
    res = answer(question, retrieval(question, [make_node(_DISPOSITION, "c-sale", 0.033, section="Item 7")], plan),
                 settings_for(None), use_llm=False)
    assert not res.refused and "South American operations" in res.answer
    # A name the passages print in no form is still missing.
    question = "What did Apple sell in Patagonia in 2024?"
    plan = plan_question(question, catalog)
    res = answer(question, retrieval(question, [make_node(_DISPOSITION, "c-sale", 0.033, section="Item 7")], plan),
                 settings_for(None), use_llm=False)
    assert res.refused and res.refusal_reason == "name_not_found" and "'Patagonia'" in res.answer


def test_a_year_after_the_index_that_no_passage_mentions_is_refused_before_the_model(fake_ollama):
    from dataclasses import replace

    question = "What iPhone revenue does Apple forecast for fiscal 2026?"
    plan = QuestionPlan(tickers=["AAPL"], fiscal_years=[2026], narrative_words=["forecast"], question=question)
    found = replace(retrieval(question, analysis=plan), unavailable=["AAPL FY2026"])
    res = answer(question, found, settings_for(fake_ollama))
    assert res.refused and res.refusal_reason == "period_not_covered" and res.citations == []
    assert "AAPL FY2026" in res.answer and fake_ollama.chat_requests() == []
    # A passage of the latest report that speaks of that year is what the filings say of it: answered.
    ahead = make_node("The Company's iPhone revenue forecast for fiscal 2026 is not provided.", "c-ahead", 0.03,
                      section="Item 7")
    found = replace(retrieval(question, [ahead], plan), unavailable=["AAPL FY2026"])
    res = answer(question, found, settings_for(None), use_llm=False)
    assert not res.refused and "fiscal 2026" in res.answer


def test_a_year_before_the_reports_reach_that_no_passage_mentions_is_refused(fake_ollama):
    from dataclasses import replace

    question = "How many paid memberships did Netflix have at the end of 2019?"
    plan = QuestionPlan(tickers=["NFLX"], fiscal_years=[2019], question=question)
    later = make_node("Paid memberships at end of period | 301.63 | 260.28 | 230.75", "c-later", 0.03,
                      section="Item 7")
    found = replace(retrieval(question, [later], plan), unavailable=["NFLX FY2019"])
    res = answer(question, found, settings_for(fake_ollama))
    assert res.refused and res.refusal_reason == "period_not_covered" and res.citations == []
    assert "NFLX FY2019" in res.answer and "301.63" not in res.answer and fake_ollama.chat_requests() == []


def test_a_year_before_the_reports_reach_named_only_in_passing_is_refused():
    from dataclasses import replace

    from rag.schema import MetricMention

    # A statement line asked for a year no report covers: a passage that names the year for something else (a plan
    # adopted that year) states no figure of it; one that prints the line beside the year does.
    question = "What was Acme's revenue in 2019?"
    plan = QuestionPlan(tickers=["ACME"], fiscal_years=[2019], question=question,
                        metrics=[MetricMention("revenue", 0, 0, ["revenue"])])
    passing = make_node("Revenues | $52,000 | $48,000 | $45,000\nOur equity incentive plan was adopted in 2019.",
                        "c-passing", 0.03, section="Item 8")
    found = replace(retrieval(question, [passing], plan), unavailable=["ACME FY2019"])
    res = answer(question, found, settings_for(None), use_llm=False)
    assert res.refused and res.refusal_reason == "period_not_covered" and "52,000" not in res.answer
    stated = make_node("Revenue grew from $41,000 million in 2019 to $52,000 million in 2024.", "c-stated", 0.03,
                       section="Item 7")
    found = replace(retrieval(question, [stated], plan), unavailable=["ACME FY2019"])
    assert not answer(question, found, settings_for(None), use_llm=False).refused



def test_a_count_for_a_year_before_the_reports_reach_needs_that_year_beside_what_is_counted():
    from dataclasses import replace

    # "How many employees in <year>": a passage that names the year for a note due then states no headcount of
    # it, so the year no report covers is refused; a sentence giving the count for that year answers.
    question = "How many employees did Acme have in 2019?"
    plan = QuestionPlan(tickers=["ACME"], fiscal_years=[2019], question=question, counted=["employees"])
    passing = make_node("As of September 30, 2024, we had approximately 31,600 employees. Our 2.15% notes matured "
                        "in 2019.", "c-passing", 0.03, section="Item 1")
    found = replace(retrieval(question, [passing], plan), unavailable=["ACME FY2019"])
    res = answer(question, found, settings_for(None), use_llm=False)
    assert res.refused and res.refusal_reason == "period_not_covered" and "31,600" not in res.answer
    stated = make_node("We grew our workforce from 19,500 employees in 2019 to 31,600 employees in 2024.", "c-stated",
                       0.03, section="Item 1")
    found = replace(retrieval(question, [stated], plan), unavailable=["ACME FY2019"])
    assert not answer(question, found, settings_for(None), use_llm=False).refused

def test_a_fourth_quarter_no_filing_gives_alone_is_refused_unless_a_passage_states_it(fake_ollama):
    from dataclasses import replace

    from rag.schema import MetricMention, PeriodAsk

    # Retrieval lists "AAPL Q4 FY2024" as not covered when only the annual report is indexed: the year's figures
    # are not the quarter's, and a passage that names the fourth quarter for something else (a product shipped)
    # does not state the figure asked.
    question = "What was Apple's iPhone revenue in Q4 of fiscal 2024 alone?"
    plan = QuestionPlan(tickers=["AAPL"], fiscal_years=[2024], question=question,
                        periods=[PeriodAsk(quarter=4, fiscal_year=2024)],
                        metrics=[MetricMention("revenue", 0, 0, ["revenue"], before=["iphone"])])
    year = make_node("iPhone net sales were $201.2 billion in fiscal 2024. The Company began shipping a new iPhone "
                     "model in the fourth quarter of fiscal 2024.", "c-year", 0.03, section="Item 7")
    found = replace(retrieval(question, [year], plan), unavailable=["AAPL Q4 FY2024"])
    res = answer(question, found, settings_for(fake_ollama))
    assert res.refused and res.refusal_reason == "period_not_covered" and res.citations == []
    assert "AAPL Q4 FY2024" in res.answer and "$201.2 billion" not in res.answer and fake_ollama.chat_requests() == []
    # A passage that states the figure for the fourth quarter answers it.
    quarter = make_node("iPhone revenue in the fourth quarter of fiscal 2024 was $46.2 billion.", "c-q4", 0.03,
                        section="Item 7")
    found = replace(retrieval(question, [quarter], plan), unavailable=["AAPL Q4 FY2024"])
    res = answer(question, found, settings_for(None), use_llm=False)
    assert not res.refused and "$46.2 billion" in res.answer


def test_a_statement_line_no_passage_prints_and_no_fact_holds_is_refused(fake_ollama):
    from rag.schema import MetricMention

    # A bank's 10-K that leaves its statements to the annual report to shareholders: the passages share the
    # question's words ("interest", "income") and state other figures.
    question = "What was Wells Fargo's net interest income for 2024?"
    plan = QuestionPlan(tickers=["WFC"], fiscal_years=[2024], question=question,
                        metrics=[MetricMention("net_interest_income", 23, 42, ["net", "interest", "income"])])
    other = make_node("Interest income on deferred compensation accrues at 4.5% and is paid in cash.", "c-other", 0.03,
                      section="Item 12")
    res = answer(question, retrieval(question, [other], plan), settings_for(fake_ollama))
    assert res.refused and res.refusal_reason == "figure_not_printed" and res.citations == []
    assert "net interest income" in res.answer and fake_ollama.chat_requests() == []
    # A passage that prints the line by its name answers.
    printed = make_node("Net interest income was $47.7 billion in 2024, down 9%.", "c-nii", 0.03, section="Item 7")
    res = answer(question, retrieval(question, [other, printed], plan), settings_for(None), use_llm=False)
    assert not res.refused and "$47.7 billion" in res.answer
    # A figure each filer words its own way (what is left of a buyback program) is never refused so.
    left = "How much was left under Wells Fargo's buyback authorization at the end of 2024?"
    plan = QuestionPlan(tickers=["WFC"], fiscal_years=[2024], question=left,
                        metrics=[MetricMention("repurchase_remaining", 18, 60, ["left", "under", "buyback"])])
    room = make_node("Approximately 91 million shares may yet be purchased under the plans.", "c-703", 0.03,
                     section="Item 5")
    res = answer(left, retrieval(left, [room], plan), settings_for(None), use_llm=False)
    assert res.refusal_reason != "figure_not_printed"


# A product line's passages as annual reports print them: its models by name, its sales in dollars (the "$" on the
# table's first row only), its share of revenue; and a segment's table that lists its deliveries among amounts.
_PRODUCT_LINE = ("Acme Corp. (ACME) · 10-K · FY2024 · Item 7\n"
                 "The Widget line includes Widget 17 Pro, Widget Air, Widget 17 and Widget 16e.\n"
                 "| 2024 | 2023\nWidget | $209,586 | $201,183\nGadget | 29,984 | 29,357\n"
                 "Widget net sales increased 4% during 2024, and accounted for 52% of total net sales.")
_SEGMENT_TABLE = ("Acme Corp. (ACME) · 10-K · FY2024 · Item 7\n"
                  "| 2024 | 2023\nRevenues | $22,861 | $33,901\nDeliveries | 348 | 528\n")


def _acme_answer(question: str, *texts: str):
    plan = plan_question(question, Catalog.build([{"ticker": "ACME", "company": "Acme Corp.", "fiscal_year": 2024}]))
    nodes = [make_node(text, f"c-{i}", 0.03 - i * 0.001, section="Item 7") for i, text in enumerate(texts)]
    return answer(question, retrieval(question, nodes, plan), settings_for(None), use_llm=False)


def test_a_count_no_passage_states_is_refused():
    # The passages name the widgets, number their models and state their sales: none says how many were sold.
    res = _acme_answer("How many Widgets did Acme sell in fiscal 2024?", _PRODUCT_LINE)
    assert res.refused and res.refusal_reason == "count_not_stated" and res.citations == []
    assert "how many Widgets" in res.answer and "209,586" not in res.answer
    # A line of a table of amounts is an amount, its "$" printed on another row: never read as a count.
    res = _acme_answer("How many Gadgets did Acme sell in fiscal 2024?", _PRODUCT_LINE)
    assert "29,984 million" not in res.answer and "Figure read from the table" not in res.answer


def test_a_count_a_row_states_under_the_questions_verb_is_answered():
    # "Deliveries | 348" counts what "how many ... did it deliver" asks, though the row never says "airplanes".
    res = _acme_answer("How many airplanes did Acme deliver in 2024?", _SEGMENT_TABLE)
    assert not res.refused and "348" in res.answer
    # People are counted in each filer's own words: a passage that counts "individuals" is not refused for
    # missing "people".
    res = _acme_answer("How many people were affected by Acme's data breach?",
                       "Acme Corp. (ACME) · 10-K · FY2024 · Item 1A\nThe incident affected personal data of "
                       "approximately 190 million individuals.")
    assert not res.refused


_LICENSING = ("Acme Corp. (ACME) · 10-K · FY2024 · Item 7\nLicensing and other revenue includes amounts earned "
              "under arrangements with search providers, including Bolt. Content licensing commitments were "
              "$8.8 billion at year end.")
_TRAFFIC = ("Bolt Motors Corp. (BOLT) · 10-K · FY2024 · Item 7\nTraffic acquisition costs paid to distribution "
            "partners were $55.0 billion in 2024.")


def _two_company_answer(question: str, *texts: tuple[str, str], fake_ollama=None):
    catalog = Catalog.build([{"ticker": "ACME", "company": "Acme Corp.", "fiscal_year": 2024},
                             {"ticker": "BOLT", "company": "Bolt Motors Corp.", "fiscal_year": 2024}])
    plan = plan_question(question, catalog)
    nodes = [make_node(text, f"c-{i}", 0.03 - i * 0.001, section="Item 7", ticker=ticker, doc_id=f"d-{ticker}")
             for i, (ticker, text) in enumerate(texts)]
    return answer(question, retrieval(question, nodes, plan), settings_for(fake_ollama),
                  use_llm=fake_ollama is not None)


def test_a_payment_between_two_companies_no_passage_states_is_refused(fake_ollama):
    # Each filing names the other or the kind of payment, but gives only totals and other arrangements' amounts.
    texts = (("ACME", _LICENSING), ("BOLT", _TRAFFIC))
    for question in ("How much did Bolt Motors pay Acme in 2024 under their search deal?",
                     "How much did Acme receive from Bolt Motors in 2024?"):
        for res in (_two_company_answer(question, *texts), _two_company_answer(question, *texts,
                                                                               fake_ollama=fake_ollama)):
            assert res.refused and res.refusal_reason == "payment_not_stated" and res.citations == []
            assert "$8.8 billion" not in res.answer and "$55.0 billion" not in res.answer
    assert "how much Bolt Motors paid Acme" in _two_company_answer(
        "How much did Acme receive from Bolt Motors in 2024?", *texts).answer
    assert fake_ollama.chat_requests() == []
    # Stated beside the other's name, the amount is answered; two companies' own payments are no payment between
    # them.
    stated = ("ACME", "Acme Corp. (ACME) · 10-K · FY2024 · Item 7\nPayments received from Bolt under the search "
                      "arrangement were $2.1 billion in 2024.")
    assert not _two_company_answer("How much did Bolt Motors pay Acme in 2024?", stated, texts[1]).refused
    res = _two_company_answer("How much did Acme pay in taxes in 2024 compared with Bolt Motors?", *texts)
    assert res.refusal_reason != "payment_not_stated"
