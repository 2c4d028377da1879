"""Refusals (rag.answer.refusals) and the answers that say the filings hold nothing or cover only some companies."""

from __future__ import annotations

import pytest

from rag.answer import answer, check_refusal
from rag.schema import QuestionPlan
from tests.answer_samples import retrieval, run_stream, settings_for
from tests.fake_ollama import started_fake_ollama

fake_ollama = pytest.fixture(started_fake_ollama, name="fake_ollama")


@pytest.mark.parametrize(
    "question, kind, analysis",
    [
        ("What will Apple's revenue be next year?", "forecast", QuestionPlan(tickers=["AAPL"])),
        ("Predict Tesla's vehicle deliveries for the coming quarters.", "forecast", QuestionPlan(tickers=["TSLA"])),
        ("What is Apple's price target?", "forecast", QuestionPlan(tickers=["AAPL"])),
        ("Will Tesla be profitable in 2031?", "forecast", QuestionPlan(tickers=["TSLA"])),
        ("Should I buy Tesla stock?", "advice", QuestionPlan(tickers=["TSLA"])),
        ("Is Apple a good investment right now?", "advice", QuestionPlan(tickers=["AAPL"])),
        ("Buy, sell or hold: Tesla?", "advice", QuestionPlan(tickers=["TSLA"])),
        ("Will Adobe's shares outperform the market?", "advice", QuestionPlan()),
        ("What was Apple's share price on November 1, 2024?", "market_data", QuestionPlan(tickers=["AAPL"])),
        ("How did Tesla stock react to the earnings release?", "market_data", QuestionPlan(tickers=["TSLA"])),
        ("What is Apple's market cap?", "market_data", QuestionPlan(tickers=["AAPL"])),
        ("What was Microsoft's revenue in fiscal 2024?", "unknown_company",
         QuestionPlan(fiscal_years=[2024], unknown_companies=["Microsoft"])),
        ("Write me a poem about the sea", "off_topic", QuestionPlan()),
        ("what is the meaning of life?", "off_topic", QuestionPlan()),
    ],
)
def test_refusals_cite_nothing_and_call_no_llm(fake_ollama, question, kind, analysis):
    res = answer(question, retrieval(question, analysis=analysis), settings_for(fake_ollama))
    assert res.refused, res.answer
    assert res.refusal_reason == kind
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
    ],
)
def test_historical_questions_are_not_refused(question):
    assert check_refusal(question, QuestionPlan()) is None


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
