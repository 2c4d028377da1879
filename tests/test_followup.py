"""Follow-up questions planned against the conversation (rag/followup.py): what a follow-up leaves unsaid comes from
the turn it follows, what it says replaces it."""

from __future__ import annotations

import pytest

from rag.catalog import Catalog
from rag.followup import is_follow_up, merge_plans, plan_conversation
from rag.question import plan_question
from rag.retrieve import search_text
from rag.schema import Filters, Intent
from tests.test_question import FILINGS, _Node

FIRST = "What were Apple's net sales in fiscal 2025?"


@pytest.fixture(scope="module")
def catalog():
    nodes = [_Node("GOOGL", "Google Search and Google Cloud grew. " * 30), _Node("AAPL", "We compete with Google.")]
    return Catalog.build(FILINGS, nodes)


def conversation(catalog, *questions):
    return plan_conversation([plan_question(q, catalog) for q in questions])


def test_a_change_of_year_keeps_the_company_and_the_figure(catalog):
    plan = conversation(catalog, FIRST, "And in fiscal 2024?")
    assert plan.tickers == ["AAPL"]
    assert plan.fiscal_years == [2024]
    assert [m.metric_key for m in plan.metrics] == ["revenue"]
    assert plan.carried == ["AAPL", "total revenue"]
    assert plan.label().endswith("(AAPL · total revenue, from the conversation)")
    assert plan.detected()["carried"] == ["AAPL", "total revenue"]
    # The earlier question is searched, without the year the follow-up replaced.
    text = search_text(plan.question, plan, Filters(tickers=["AAPL"], fiscal_years=[2024]))
    assert "net sales" in text and "2025" not in text


def test_a_change_of_company_keeps_the_year_and_the_figure(catalog):
    plan = conversation(catalog, FIRST, "And Alphabet?")
    assert plan.tickers == ["GOOGL"]
    assert plan.fiscal_years == [2025]
    assert [m.metric_key for m in plan.metrics] == ["revenue"]
    assert plan.carried == ["FY2025", "total revenue"]
    assert "Apple" not in search_text(plan.question, plan, Filters(tickers=["GOOGL"], fiscal_years=[2025]))


def test_a_comparison_with_another_company_keeps_the_first(catalog):
    plan = conversation(catalog, FIRST, "How does that compare with Alphabet?")
    assert plan.tickers == ["AAPL", "GOOGL"]
    assert plan.calculation.compares
    assert [m.metric_key for m in plan.metrics] == ["revenue"]


def test_why_keeps_company_year_and_topic_and_asks_for_prose(catalog):
    plan = conversation(catalog, FIRST, "Why?")
    assert (plan.tickers, plan.fiscal_years) == (["AAPL"], [2025])
    assert plan.prose_intent and "why" in plan.narrative_words
    assert plan_question(FIRST, catalog).statements and plan.statements == []  # MD&A tells why, not the statement
    assert [m.metric_key for m in plan.metrics] == ["revenue"]


def test_a_new_figure_inherits_company_and_year(catalog):
    plan = conversation(catalog, FIRST, "What about net income?")
    assert [m.metric_key for m in plan.metrics] == ["net_income"]
    assert (plan.tickers, plan.fiscal_years) == (["AAPL"], [2025])
    assert plan.carried == ["AAPL", "FY2025"]
    assert plan.question == "What about net income?"


def test_three_turns_chain(catalog):
    plan = conversation(catalog, FIRST, "And in fiscal 2024?", "And Alphabet?")
    assert (plan.tickers, plan.fiscal_years) == (["GOOGL"], [2024])
    assert [m.metric_key for m in plan.metrics] == ["revenue"]
    text = search_text(plan.question, plan, Filters(tickers=["GOOGL"], fiscal_years=[2024]))
    assert "Apple" not in text and "2025" not in text and "net sales" in text


def test_a_question_of_its_own_is_not_a_follow_up(catalog):
    first = plan_question(FIRST, catalog)
    own = plan_question("What was Alphabet's net income in 2024?", catalog)
    assert not is_follow_up(own, first)
    assert merge_plans(own, first) is own
    assert not is_follow_up(plan_question("And in fiscal 2024?", catalog), None)
    assert conversation(catalog, "And in fiscal 2024?").carried == []


def test_a_refused_follow_up_stays_refused(catalog):
    first = plan_question(FIRST, catalog)
    first.intent = Intent("figure", 0.9, 0.95)
    advice = plan_question("Should I buy it?", catalog)
    advice.intent = Intent("advice", 0.9, 0.01, refused_as="advice")
    merged = merge_plans(advice, first)
    assert merged.intent.refused_as == "advice"
    follow = plan_question("And in fiscal 2024?", catalog)
    follow.intent = Intent("figure", 0.7, 0.9)
    assert merge_plans(follow, first).intent == first.intent


def test_a_short_follow_up_read_as_off_topic_asks_what_the_earlier_turn_asked(catalog):
    first = plan_question(FIRST, catalog)
    first.intent = Intent("figure", 0.9, 0.95)
    short = plan_question("And Alphabet?", catalog)
    short.intent = Intent("off_topic", 0.5, 0.3, refused_as="off_topic")
    assert merge_plans(short, first).intent == first.intent


def test_eval_asks_a_question_within_its_history(tmp_path):
    import json

    from rag.config import get_settings
    from rag.eval import run_questions
    from tests.app_server import build_small_index

    env = build_small_index(tmp_path / "index")
    settings = get_settings(storage_dir=env["RAG_STORAGE_DIR"], data_dir=env["RAG_DATA_DIR"])
    row = {"id": "f1", "question": "And BOLT?", "history": ["What were ACME's total net sales?"], "kind": "lookup",
           "answerable": True, "filings": [{"ticker": "BOLT", "fiscal_year": 2023, "form": "10-K"}],
           "section": None, "evidence": [["96,773"]], "answer": "96,773 million", "value": 96773,
           "unit": "USD millions", "tolerance": 0.01}
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    within = run_questions(path, settings, top_k=5)
    assert within["history_used"] is True
    assert within["answer_accuracy"] == 1.0 and within["evidence_recall@5"] == 1.0
    alone = run_questions(path, settings, top_k=5, use_history=False)
    assert alone["history_used"] is False
    assert alone["questions"][0]["detected"] != within["questions"][0]["detected"]


def test_a_follow_up_read_as_off_topic_without_its_company_is_not_refused_for_it(catalog):
    first = plan_question(FIRST, catalog)
    own = plan_question("What is the Vision Pro?", catalog)
    own.intent = Intent("off_topic", 0.5, 0.4, refused_as="off_topic")
    merged = merge_plans(own, first)
    assert merged.tickers == ["AAPL"] and merged.intent is None
    advice = plan_question("Should I buy the stock of this company?", catalog)
    advice.intent = Intent("advice", 0.9, 0.01, refused_as="advice")
    assert merge_plans(advice, first).intent.refused_as == "advice"


def test_the_answer_to_a_follow_up_is_written_for_the_earlier_question_without_what_it_replaced(catalog):
    from rag.engine import answered_question
    from rag.schema import RetrievalResult

    plan = conversation(catalog, FIRST, "And Alphabet?")
    asked = answered_question("And Alphabet?", RetrievalResult("", "hybrid", [], plan, Filters()))
    assert "Apple" not in asked and "net sales" in asked and asked.endswith("And Alphabet?")
    alone = plan_question("What is Alphabet's net income?", catalog)
    assert answered_question(alone.question, RetrievalResult("", "hybrid", [], alone, Filters())) == alone.question


def test_an_amount_of_the_earlier_figure_from_a_named_part_asks_for_that_part(catalog):
    # The part's name starts with a word the company goes by: the follow-up still asks for the part's own amount.
    first = "What was Alphabet's revenue in fiscal 2024?"
    plan = conversation(catalog, first, "How much of that came from Google Search?")
    assert plan.tickers == ["GOOGL"] and plan.fiscal_years == [2024]
    assert [m.metric_key for m in plan.metrics] == ["revenue"]
    assert plan.names_part
    assert plan.statements == plan_question(first, catalog).statements != []
    assert plan.calculation.share_of_end is None and not plan.calculation.amount_of
    # Asked without naming a part, the amount is the earlier figure's, not a part of it.
    whole = conversation(catalog, first, "How much was that in fiscal 2023?")
    assert not whole.names_part
