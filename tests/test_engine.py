"""The Engine (rag/engine.py): one object that loads the index, retrieves, answers and opens the facts layer, and
follows the index when another writer publishes a new generation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag.config import get_settings
from rag.engine import Engine
from rag.facts import FactsLayer
from rag.index import IndexStore
from rag.schema import AnswerResult, QuestionPlan, RetrievalResult
from tests.app_server import build_small_index, copy_index
from tests.fake_ollama import free_port
from tests.filings import write_filing

ACME_Q = "What were ACME's total net sales in fiscal 2024?"


@pytest.fixture(scope="module")
def built_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("engine-index")
    build_small_index(root)
    return root


@pytest.fixture
def settings(built_index, tmp_path, monkeypatch):
    """Settings over a private copy of the small index (ACME FY2024, BOLT FY2023), Ollama unreachable."""
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")  # nothing listens there
    monkeypatch.delenv("RAG_GENERATED_QUERIES", raising=False)
    monkeypatch.delenv("RAG_TOP_K", raising=False)
    env = copy_index(built_index, tmp_path)
    return get_settings(storage_dir=env["RAG_STORAGE_DIR"], data_dir=env["RAG_DATA_DIR"])


def chunk_ids(engine: Engine) -> set[str]:
    return {node.node_id for node in engine.index().nodes}


def test_retrieve_returns_chunks_of_the_index_with_the_question_plan(settings):
    engine = Engine(settings)
    result = engine.retrieve(ACME_Q, top_k=3)
    assert isinstance(result, RetrievalResult)
    assert isinstance(result.plan, QuestionPlan)
    assert result.plan.tickers == ["ACME"]
    assert result.plan.fiscal_years == [2024]
    assert result.filters.tickers == ["ACME"]  # what the question names is applied as a filter
    assert 0 < len(result.nodes) <= 3
    assert {n.node.node_id for n in result.nodes} <= chunk_ids(engine)
    assert {n.node.metadata["ticker"] for n in result.nodes} == {"ACME"}
    assert result.retrieval_ms > 0


def test_retrieval_for_the_model_reads_deeper_and_marks_what_is_shown(settings):
    engine = Engine(settings.with_overrides(llm_passages=5))
    plain = engine.retrieve(ACME_Q, top_k=2)
    deeper = engine.retrieve(ACME_Q, top_k=2, for_llm=True)
    assert len(plain.nodes) <= 2 and plain.shown is None
    assert deeper.shown == 2 and 2 < len(deeper.nodes) <= 5
    assert {n.node.metadata["ticker"] for n in deeper.nodes} == {"ACME"}  # the same filters, only deeper


def test_ask_without_ollama_gives_an_extractive_answer_citing_indexed_chunks(settings):
    engine = Engine(settings)
    result = engine.ask(ACME_Q, use_llm=False)
    assert isinstance(result, AnswerResult)
    assert result.extractive and not result.refused
    assert result.model is None
    assert "391,035" in result.answer
    assert result.citations
    indexed = chunk_ids(engine)
    assert all(c.chunk_id in indexed for c in result.citations)
    assert all(c.ticker == "ACME" and c.fiscal_year == 2024 for c in result.citations)
    # Every [n] in the text names one of the citations.
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", result.answer)}
    assert markers and markers <= {c.number for c in result.citations}


def test_a_generation_published_by_another_writer_is_seen_without_a_restart(settings, tmp_path):
    engine = Engine(settings)
    before = engine.index().generation
    assert {f["ticker"] for f in engine.index().filings.values()} == {"ACME", "BOLT"}
    engine.retrieve(ACME_Q)  # the retriever over the old generation is built

    path = write_filing(tmp_path / "cli", "dyna-20221231.htm", company="Dyna Corp.", ticker="DYNA",
                        fiscal_year=2022, period_end="2022-12-31", revenue=(10, 9),
                        unique_phrase="Dyna alone makes the flux capacitor.")
    assert IndexStore(settings).add([path]).changed  # another writer: the CLI, another app session

    assert engine.index().generation != before
    assert {f["ticker"] for f in engine.index().filings.values()} == {"ACME", "BOLT", "DYNA"}
    result = engine.retrieve("Who makes the flux capacitor?", mode="keyword", top_k=3)
    assert result.nodes[0].node.metadata["ticker"] == "DYNA"
    assert "DYNA" in {f["ticker"] for f in engine.facts().filings()}


def test_facts_layer_holds_the_indexed_figures_and_cites_indexed_chunks(settings):
    engine = Engine(settings)
    layer = engine.facts()
    assert isinstance(layer, FactsLayer)
    assert engine.facts() is layer  # opened once
    assert sorted((f["ticker"], f["fiscal_year"]) for f in layer.filings()) == [("ACME", 2024), ("BOLT", 2023)]
    rows = layer.history(["ACME"], ["revenue"])
    reported = next(r for r in rows if r["fiscal_year"] == 2024 and not r["comparative"])
    assert reported["value"] == 391_035e6
    assert reported["chunk_id"] in chunk_ids(engine)
    text, meta = layer.chunk(reported["chunk_id"])  # read through the engine's live index
    assert "391,035" in text and meta["ticker"] == "ACME"


def test_a_rate_per_item_reads_the_passages_of_each_retrieval(settings, monkeypatch):
    # The count a rate divides by comes from the retrieved passages: asking the same question again (another mode,
    # another filter) must read that retrieval's passages, not reuse the first one's answer.
    engine = Engine(settings)
    question = "How much net sales did ACME bring in per employee in fiscal 2024?"
    first = engine.retrieve(question, top_k=2, mode="keyword")
    second = engine.retrieve(question, top_k=3, mode="dense")
    read: list[list[str]] = []

    class CountingFacts:
        def answer_for(self, plan, tickers, years):
            return None

        def rate_per_item(self, plan, passages, tickers, years):
            read.append([chunk_id for chunk_id, _, _ in passages])
            return None

    monkeypatch.setattr(engine, "facts", lambda: CountingFacts())
    assert first.plan.per_item == ["employee"]
    for retrieval in (first, first, second):
        engine._fact_answer(retrieval, None)
    assert read == [[n.node.node_id for n in first.nodes], [n.node.node_id for n in second.nodes]]


def test_the_sources_lead_with_the_tagged_figure_then_a_passage_that_restates_it(settings, tmp_path):
    # MD&A and the business section restate the statements' figures; an analyst checks a figure in either.
    card = dict(company="Card Networks Inc.", ticker="CARD", fiscal_year=2024, period_end="2024-12-31",
                revenue=(57_420, 51_230), business_paragraphs=12,
                unique_phrase="Total net sales were $57,420 million in fiscal 2024, up on higher card volumes.")
    report = IndexStore(settings).add([write_filing(tmp_path / "in", "card-20241231.htm", **card)])
    assert not report.errors, report.errors
    engine = Engine(settings)
    question = "What were Card Networks' total net sales in fiscal 2024?"
    result = engine.retrieve(question, top_k=5)
    tagged = engine.facts().answer_for(result.plan).citations[0].chunk_id
    restates = next(n for n in engine.index().nodes if "Total net sales were $57,420 million" in n.text)
    assert [n.node.node_id for n in result.nodes[:2]] == [tagged, restates.node_id]
    # Wherever retrieval ranked it, or when it did not retrieve it at all, the restating passage comes second.
    for nodes in (result.nodes[2:] + result.nodes[:2], [n for n in result.nodes if n.node.node_id != restates.node_id]):
        result.nodes = nodes
        engine._lead_with_fact_chunks(result, None, 5)
        assert [n.node.node_id for n in result.nodes[:2]] == [tagged, restates.node_id]
    # A figure no other passage prints: the tagged passage alone leads.
    other = engine.retrieve("What were Card Networks' total net sales in fiscal 2023?", top_k=5).nodes
    assert "51,230" in other[0].node.text and "51,230" not in other[1].node.text


def test_a_follow_up_is_answered_within_its_conversation(settings):
    engine = Engine(settings)
    first = "What were ACME's total net sales?"
    result = engine.ask("And BOLT?", use_llm=False, history=[first])
    assert "96,773" in result.answer and "391,035" not in result.answer
    assert result.citations and all(c.ticker == "BOLT" for c in result.citations)
    assert result.detected["carried"] == ["total revenue"]
    assert "from the conversation" in result.detected["label"]
    # Asked on its own, the same words carry nothing over.
    assert engine.ask("And BOLT?", use_llm=False).detected["carried"] == []
    # A follow-up that names a figure of its own keeps it and inherits the company.
    plan = engine.plan_in_conversation("What was the net income?", [first, "And BOLT?"])
    assert plan.tickers == ["BOLT"] and [m.metric_key for m in plan.metrics] == ["net_income"]


def test_a_follow_up_the_plans_cannot_complete_is_rewritten_by_the_model(settings):
    """Neither turn names a figure or topic: plan inheritance cannot say what "And in fiscal 2024?" asks. With a
    model, it rewrites the follow-up into a standalone question (the conversation delimited as data); that question
    is searched and answered, and the Detected line shows it. Without one, inheritance alone serves."""
    from rag.followup import unresolved
    from tests.fake_ollama import FakeOllama

    history = ["Tell me about ACME."]
    follow_up = "And in fiscal 2024?"
    engine = Engine(settings)
    assert unresolved(engine._conversation_plans(follow_up, history))
    assert not unresolved(engine._conversation_plans("And BOLT?", ["What were ACME's total net sales?"]))
    with FakeOllama() as fake:
        fake.replies = ["Standalone question: What were ACME's total net sales in fiscal 2024?"]
        fake.reply = "ACME's total net sales were $391,035 million in fiscal 2024 [1]."
        llm_settings = settings.with_overrides(ollama_url=fake.url, llm_model="test-model")
        result = Engine(llm_settings).ask(follow_up, history=history)
        condense, answer_request = fake.chat_requests()[:2]
    assert result.rewritten_question == "What were ACME's total net sales in fiscal 2024?"
    assert result.detected["rewritten"] == result.rewritten_question
    assert 'asked as "What were ACME\'s total net sales in fiscal 2024?"' in result.detected["label"]
    assert result.detected["tickers"] == ["ACME"] and result.detected["fiscal_years"] == [2024]
    prompt = condense["messages"][-1]["content"]
    assert condense["stream"] is False
    assert prompt.startswith("<conversation>\nEarlier question 1: Tell me about ACME.\nFollow-up question: And in "
                             "fiscal 2024?\n</conversation>")
    assert "Question: What were ACME's total net sales in fiscal 2024?" in answer_request["messages"][-1]["content"]
    assert "391,035" in result.answer and not result.refused
    # Without a model: no rewrite, the inherited plan answers.
    alone = engine.ask(follow_up, use_llm=False, history=history)
    assert alone.rewritten_question is None and alone.detected["rewritten"] == ""


def test_a_follow_up_the_plans_complete_is_not_sent_to_the_model(settings):
    from tests.fake_ollama import FakeOllama

    with FakeOllama() as fake:
        fake.reply = "BOLT's revenues were $96,773 million [1]."
        llm_settings = settings.with_overrides(ollama_url=fake.url, llm_model="test-model")
        result = Engine(llm_settings).ask("And BOLT?", history=["What were ACME's total net sales?"])
        assert len(fake.chat_requests()) == 1  # the answer only: no rewrite asked
    assert result.rewritten_question is None and result.detected["carried"] == ["total revenue"]


def test_a_figure_question_naming_no_company_is_answered_for_each_indexed_company(settings):
    result = Engine(settings).ask("What were total net sales?", use_llm=False)
    # Not one company's figure silently: both, each named and cited.
    assert "Acme Widgets Inc. (ACME)" in result.answer and "$391,035 million" in result.answer
    assert "Bolt Motors Corp. (BOLT)" in result.answer and "$96,773 million" in result.answer
    assert {c.ticker for c in result.citations} == {"ACME", "BOLT"}
    assert result.detected["every_company"] and "each indexed one" in result.detected["label"]
    assert any("No company is named" in w and "ACME, BOLT" in w for w in result.warnings)
    # A question about prose, or one that names its company, is left as it was.
    assert not Engine(settings).retrieve("Why did total net sales grow?").plan.every_company
    assert Engine(settings).retrieve(ACME_Q).plan.tickers == ["ACME"]


ACME_RISKS = ("A fire at our only widget plant could halt production for months.",
              "Rising prices of specialty steel could squeeze our margins.",
              "Losing our largest distributor would cut our sales abroad.")
BOLT_RISKS = ("Delays in launching new motor lines could cost us market share.",
              "Recalls of faulty drivetrains could harm our reputation.",
              "Changes in fuel economy rules could raise our costs.")


def test_a_question_about_one_item_as_a_whole_outlines_each_companys_item(tmp_path, monkeypatch):
    """"What are the main risk factors?" with two companies indexed: each company's risk factors, as the headlines
    of its Item 1A in filing order, not the preamble about the Item that shares the question's words."""
    from tests.filings import ACME, BOLT

    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")
    settings = get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data")
    store = IndexStore(settings)
    report = store.add([write_filing(tmp_path / "in", "acme-20240928.htm", **ACME, risk_headlines=ACME_RISKS),
                        write_filing(tmp_path / "in", "bolt-20231231.htm", **BOLT, risk_headlines=BOLT_RISKS)])
    assert not report.errors, report.errors
    engine = Engine(settings)
    result = engine.ask("What are the main risk factors?", use_llm=False)
    assert result.detected["every_company"] and result.detected["tickers"] == ["ACME", "BOLT"]
    assert any("each indexed company's Item 1A is outlined" in w for w in result.warnings)
    for risks in (ACME_RISKS, BOLT_RISKS):
        shown = [r for r in risks if r in result.answer]
        assert len(shown) >= 2, (risks, result.answer)
        assert shown == sorted(shown, key=result.answer.index)  # in the order the filing gives them
    assert "carefully consider" not in result.answer and "not the only risks" not in result.answer
    # Asked of one company, only its own; a question with words of its own is not read as the whole Item.
    acme = engine.ask("What are Acme's key risks?", use_llm=False)
    assert sum(r in acme.answer for r in ACME_RISKS) >= 2 and not any(r in acme.answer for r in BOLT_RISKS)
    assert not engine.retrieve("What risks does Acme face from steel prices?").plan.whole_item


def test_with_more_companies_than_a_short_list_the_answer_asks_which_one(settings, monkeypatch):
    import rag.retrieve

    monkeypatch.setattr(rag.retrieve, "EACH_COMPANY_MAX", 1)  # two indexed companies count as many here
    engine = Engine(settings)
    result = engine.ask("What were total net sales?", use_llm=False)
    assert result.refused and result.refusal_reason == "which_company"
    assert "Which company?" in result.answer and "Acme Widgets Inc. (ACME)" in result.answer
    assert "Bolt Motors Corp. (BOLT)" in result.answer and "391,035" not in result.answer
    assert result.detected["which_company"] == {"ACME": "Acme Widgets Inc.", "BOLT": "Bolt Motors Corp."}
    # The app's choice asks the same words with the ticker after them: answered for that company alone.
    chosen = engine.ask("What were total net sales? (BOLT)", use_llm=False)
    assert not chosen.refused and "$96,773 million" in chosen.answer and "391,035" not in chosen.answer


def test_the_engine_keeps_the_exact_figure_over_a_models_refusal_or_other_figure(settings):
    """Through ask_stream (the seam the CLI, the app and the eval share): a model that refuses although the facts
    layer holds the figure leaves the figure as the answer; a model that states another figure is followed by a
    note that its text disagrees."""
    from tests.fake_ollama import FakeOllama

    with FakeOllama() as fake:
        llm_settings = settings.with_overrides(ollama_url=fake.url, llm_model="test-model")
        engine = Engine(llm_settings)
        fake.reply = "The provided filings do not contain this information."
        refused = engine.ask(ACME_Q)
        fake.reply = "ACME's total net sales in fiscal 2024 were $383,285 million [2]."
        other = engine.ask(ACME_Q)
    assert not refused.refused and not refused.extractive
    assert refused.answer.splitlines()[0].endswith("$391,035 million [1]")
    assert "do not contain" not in refused.answer and refused.citations[0].kind == "fact"
    assert other.answer.index("$391,035 million") < other.answer.index("$383,285 million")
    assert "disagrees with the exact figure shown first" in other.answer
    assert any(w.startswith("Check this figure") and "383,285" in w for w in other.warnings)
    assert other.prompt_tokens and other.prompt_tokens <= 2500


def test_the_engine_on_a_served_index_answers_and_sees_a_filing_another_writer_added(tmp_path, pg_url):
    from rag.index import ServedIndexStore
    from tests.filings import ACME, BOLT

    settings = get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data", database_url=pg_url)
    ServedIndexStore(settings).add([write_filing(tmp_path / "in", "acme.htm", **ACME)])
    engine = Engine(settings)
    result = engine.ask(ACME_Q, use_llm=False)
    assert "391,035" in result.answer and not result.refused
    assert all(c.ticker == "ACME" and engine.index().node(c.chunk_id) is not None
               for c in result.citations if c.chunk_id)
    # Another writer (another session, another machine) adds a filing: the next question sees it, no restart.
    ServedIndexStore(settings).add([write_filing(tmp_path / "in", "bolt.htm", **BOLT)])
    found = engine.retrieve("What does Bolt alone build?", top_k=3)
    assert any("quintaphonic drivetrain" in n.node.text for n in found.nodes)
