"""Query analysis and retrieval over a small index."""

from __future__ import annotations

import pytest
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from rag.catalog import Catalog
from rag.config import get_settings
from rag.index import IndexStore
from rag.index.loaded import LoadedIndex
from rag.question import plan_question
from rag.retrieve import Retriever, _counting_first
from rag.schema import Filters
from tests.filings import ACME, BOLT, write_filing


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("retrieve")
    store = IndexStore(get_settings(storage_dir=tmp / "storage"))
    store.add([write_filing(tmp / "in", "acme.htm", **ACME), write_filing(tmp / "in", "bolt.htm", **BOLT)])
    return store


def test_detected_filters_apply_and_user_filters_win(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    result = retriever.retrieve("What were Bolt Motors' total net sales?", mode="hybrid", top_k=4)
    assert result.plan.tickers == ["BOLT"]
    assert {n.node.metadata["ticker"] for n in result.nodes} == {"BOLT"}
    # The user's own filter overrides what the question says.
    result = retriever.retrieve("What were Bolt Motors' total net sales?", mode="hybrid", top_k=4,
                                filters=Filters(tickers=["ACME"]))
    assert {n.node.metadata["ticker"] for n in result.nodes} == {"ACME"}
    # Analysis off: nothing detected, nothing applied.
    result = retriever.retrieve("What were Bolt Motors' total net sales?", top_k=4, use_analysis=False)
    assert result.plan.tickers == [] and result.filters.tickers == []


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


def test_a_tiny_item_merged_into_the_next_is_found_by_its_own_name(tmp_path):
    from rag.index import IndexStore
    from tests.filings import filing_html

    html = filing_html(**ACME).replace(
        '<p style="font-weight:bold">PART II</p>',
        '<p style="font-weight:bold">Item 1B. Unresolved Staff Comments</p><p>None.</p>\n'
        '<p style="font-weight:bold">PART II</p>', 1)
    path = tmp_path / "in" / "acme.htm"
    path.parent.mkdir()
    path.write_text(html, encoding="utf-8")
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage"))
    store.add([path])
    index = store.load()
    # "Item 1B ... None." is too small to stand alone: it rides with Item 7, under Item 7's label.
    merged = [n for n in index.nodes if "(with Item 1B" in n.metadata["section_title"]]
    assert merged and all(n.metadata["section"] == "Item 7" for n in merged)
    assert "Unresolved Staff Comments" in merged[0].text
    rows = index.subset(sections=["Item 1B"])
    assert {index.nodes[i].node_id for i in rows} == {n.node_id for n in merged}
    result = Retriever(index, store.embed_model()).retrieve("Does Acme have unresolved staff comments?", top_k=2)
    assert result.filters.sections == ["Item 1B"]
    assert result.nodes and "Unresolved Staff Comments" in result.nodes[0].node.text


def test_fusion_is_a_checked_setting(small_index, monkeypatch):
    assert get_settings().fusion_options() == ("reciprocal_rerank", None)
    assert get_settings(fusion="relative", fusion_weights="3,1").fusion_options() == ("relative_score", [0.75, 0.25])
    for bad in (dict(fusion="borda"), dict(fusion="relative", fusion_weights="1"),
                dict(fusion="relative", fusion_weights="a,b")):
        with pytest.raises(ValueError, match="RAG_FUSION"):
            get_settings(**bad).fusion_options()
    monkeypatch.setenv("RAG_FUSION", "relative")
    monkeypatch.setenv("RAG_FUSION_WEIGHTS", "0.2,0.8")
    from rag.engine import Engine

    engine = Engine(get_settings(storage_dir=small_index.settings.storage_dir))
    retriever = engine.retriever()
    assert (retriever.fusion, retriever.weights) == ("relative_score", [0.2, 0.8])
    result = engine.retrieve("Which company sells the zorblax coupler?", mode="hybrid", top_k=3)
    assert "zorblax" in result.nodes[0].node.text


def test_a_named_statement_is_searched_first(small_index):
    index = small_index.load()
    kinds = list(index.columns["statement"])
    statement_rows = [n for n, k in zip(index.nodes, kinds) if k == "income statement"]
    # The synthetic statement of operations is found; prose is never taken for a statement.
    assert statement_rows and all("Total net sales" in n.text or "|" in n.text for n in statement_rows)
    assert not any(k for n, k in zip(index.nodes, kinds) if n.metadata["section"] in ("Item 1", "Item 1A"))

    result = Retriever(index, small_index.embed_model()).retrieve(
        "According to the income statement, what were Acme's total net sales?", mode="dense", top_k=4)
    assert result.plan.statements == ["income statement"] and "income statement" in result.plan.label()
    first = result.nodes[0].node
    assert first.metadata["ticker"] == "ACME" and first.node_id in {n.node_id for n in statement_rows}


def _hit(ticker, year, body, score=1.0):
    from llama_index.core.schema import NodeWithScore, TextNode

    node = TextNode(text=f"{ticker} · 10-K · FY{year} · Item 1: Business\n{body}",
                    metadata={"ticker": ticker, "fiscal_year": year})
    return NodeWithScore(node=node, score=score)


def test_a_passage_repeated_across_years_takes_one_place_with_the_latest_wording():
    from rag.ordering import drop_repeats

    repeated = ("We currently manufacture five different consumer vehicles, the Model 3, Y, S, X and Cybertruck, "
                "and we sell them directly to customers.")
    results = [
        _hit("TSLA", 2023, repeated, 0.9),
        _hit("TSLA", 2023, "Our Gigafactory in Texas builds batteries and vehicles for North America.", 0.8),
        _hit("TSLA", 2024, repeated, 0.7),
        _hit("TSLA", 2024, "Energy storage deployments grew strongly during the year.", 0.6),
    ]
    kept = drop_repeats(results, 10)
    assert len(kept) == 3
    assert kept[0].node.metadata["fiscal_year"] == 2024 and kept[0].score == 0.9  # latest copy, best place
    assert [k.node.text.split("\n")[1][:8] for k in kept[1:]] == ["Our Giga", "Energy s"]
    assert len(drop_repeats(results, 2)) == 2


def test_tables_whose_figures_changed_are_not_repeats():
    from rag.ordering import drop_repeats

    year_2023 = "Total revenues | 96,773 | 81,462 | 53,823\nAutomotive sales | 78,509 | 67,210 | 44,125"
    year_2024 = "Total revenues | 97,690 | 96,773 | 81,462\nAutomotive sales | 72,480 | 78,509 | 67,210"
    kept = drop_repeats([_hit("TSLA", 2024, year_2024), _hit("TSLA", 2023, year_2023)], 10)
    assert len(kept) == 2
    # Another company's identical boilerplate is still a repeat, and the first one found stays.
    boiler = "Item 1B. Unresolved Staff Comments. None."
    kept = drop_repeats([_hit("AAPL", 2024, boiler), _hit("MSFT", 2025, boiler)], 10)
    assert [k.node.metadata["ticker"] for k in kept] == ["AAPL"]


def test_generated_queries_are_cleaned():
    from rag.retrieve import generate_queries

    class _LLM:
        def __init__(self, text):
            self.text, self.prompts = text, []

        def complete(self, prompt):
            self.prompts.append(prompt)
            return type("R", (), {"text": self.text})()

    llm = _LLM("<think>The user wants vehicles.</think>\nQueries:\n1. consumer vehicles we manufacture\n"
               "- \"Model 3, Model Y, Cybertruck production\"\n2) consumer vehicles we manufacture\n\n"
               "What types of vehicles does Tesla make?\n3. fourth query beyond the limit\n4. a fifth")
    queries = generate_queries(llm, "What types of vehicles does Tesla make?", 3)
    assert queries == ["consumer vehicles we manufacture", "Model 3, Model Y, Cybertruck production",
                       "fourth query beyond the limit"]
    assert "What types of vehicles does Tesla make?" in llm.prompts[0] and "3 different" in llm.prompts[0]


def test_generated_queries_through_ollama_widen_the_search(small_index, tmp_path):
    """The engine asks Ollama (a fake on 127.0.0.1) once per question and fuses its queries with the question:
    a passage only the generated query's words reach comes back; without Ollama the question alone is searched."""
    from rag.engine import Engine
    from tests.fake_ollama import FakeOllama

    question = "Which component is Acme the sole seller of?"
    with FakeOllama() as fake:
        fake.reply = "zorblax coupler\nAcme alone sells"
        settings = get_settings(storage_dir=small_index.root.parent, ollama_url=fake.url, llm_model="test-model",
                                llm_timeout_s=5.0)
        engine = Engine(settings)
        plain = engine.retrieve(question, mode="keyword", top_k=2, generated_queries=0)
        assert not fake.chat_requests()
        widened = engine.retrieve(question, mode="keyword", top_k=2, generated_queries=2)
        assert widened.generated_queries == ["zorblax coupler", "Acme alone sells"]
        assert len(fake.chat_requests()) == 1  # once per question, not once per list
        assert question in fake.chat_requests()[0]["messages"][-1]["content"]
        assert any("zorblax" in n.node.text for n in widened.nodes)
        assert [n.node.node_id for n in plain.nodes] != [n.node.node_id for n in widened.nodes]
        result = engine.ask(question, mode="hybrid", top_k=3, generated_queries=1)
        assert result.generated_queries == ["zorblax coupler"] and not result.extractive

        fake.fail = "error"  # Ollama answers 500: the question alone, and a warning that says so
        failed = engine.retrieve(question, mode="hybrid", top_k=2, generated_queries=2)
        assert failed.generated_queries == [] and len(failed.nodes) == 2
        assert "did not write search queries" in failed.warnings[0]

    down = Engine(get_settings(storage_dir=small_index.root.parent, ollama_url="http://127.0.0.1:1",
                               llm_model="test-model"))
    result = down.retrieve(question, mode="hybrid", top_k=2, generated_queries=2)
    assert result.nodes and "needs Ollama" in result.warnings[0]


def test_a_quarter_is_an_exact_filter_and_several_quarters_are_retrieved_each(tmp_path):
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage"))
    quarter = dict(ACME, fiscal_year=2025, period_end="2025-03-29", form="10-Q", fiscal_period="Q2",
                   unique_phrase="Acme's sprocket line was launched this quarter.")
    store.add([write_filing(tmp_path / "in", "acme-10k.htm", **ACME),
               write_filing(tmp_path / "in", "acme-10q.htm", **quarter)])
    retriever = Retriever(store.load(), store.embed_model())

    result = retriever.retrieve("What were Acme's total net sales in Q2 2025?", top_k=6)
    assert result.filters.fiscal_periods == ["Q2"] and "Q2 FY2025" in result.plan.label()
    assert {(n.node.metadata["form"], n.node.metadata["fiscal_period"]) for n in result.nodes} == {("10-Q", "Q2")}
    assert result.nodes[0].node.text.split("\n")[0].count("Q2 FY2025") == 1  # the chunk header names the quarter

    both = retriever.retrieve("How did Acme's total net sales move over the last two quarters?", top_k=6)
    periods = {n.node.metadata.get("fiscal_period") for n in both.nodes}
    assert periods == {"FY", "Q2"}  # the annual report's fourth quarter and the 10-Q's second

    # A quarter the index does not hold: nothing is retrieved, and the answer says which report is missing.
    missing = retriever.retrieve("What were Acme Widgets' total net sales in Q3 2025?", top_k=6)
    assert missing.nodes == [] and missing.unavailable == ["ACME Q3 FY2025"]
    assert retriever.retrieve("What were total net sales in Q1 2025?", top_k=6).unavailable == ["Q1 FY2025"]
    # A fourth quarter is read from its annual report, but with no Q3 10-Q of that year no filing gives it alone.
    fourth = retriever.retrieve("What were Acme's total net sales in Q4 of fiscal 2024?", top_k=6)
    assert fourth.nodes and {n.node.metadata["fiscal_period"] for n in fourth.nodes} == {"FY"}
    assert fourth.unavailable == ["ACME Q4 FY2024"]
    # The warning says why (no Q3 10-Q to compute it from), not that no report covers the quarter: the annual
    # report does, and may print it.
    assert any(w.startswith("ACME Q4 FY2024 is filed only inside its annual report") and "third-quarter 10-Q" in w
               for w in fourth.warnings)
    assert not any("No indexed report covers" in w for w in fourth.warnings)
    from rag.answer import answer

    result = answer(missing.query, missing, get_settings(storage_dir=tmp_path / "storage"), use_llm=False)
    assert result.refused and "ACME Q3 FY2025" in result.answer and not result.citations


def test_exhibit_index_chunks_are_told_apart():
    from rag.index.columns import is_exhibit_list

    head = "ACME (ACME) · 10-K · FY2024 · Item 15: Exhibits, Financial Statement Schedules\n"
    table = ("Exhibit Number | Exhibit Description | Form | Filing Date\n"
             "10.1† | Employment Agreement with the Chief Executive Officer | 8-K | 3/1/2022\n"
             "10.2† | 2020 Stock Incentive Plan | DEF 14A | 4/22/2020\n")
    long_rows = ("10.5 | Supplemental Executive Retirement Plan, as amended, is incorporated by reference to Exhibit "
                 "10.5 to the Annual Report on Form 10-K for the fiscal year ended January 31, 2023 (C)\n")
    assert is_exhibit_list(head + table) and is_exhibit_list(head + long_rows)
    # A chunk of the index's rows alone, under no header: the form each was filed with is a cell of its own.
    rows_only = ("10.17 | Settlement Agreement to resolve the Interchange Antitrust Litigation | 8-K | 001-33977 | "
                 "10.1 | 9/18/2018\n10.18 | Form of Makewhole Agreement | S-4/A | 333-276747 | 99.2 | 3/11/2024\n")
    assert is_exhibit_list(head + rows_only)
    # Figures in numbered rows, and prose that names a form, are not an exhibit index.
    assert not is_exhibit_list(head + "1.5 | Medical cost trend | (1.0)% | 2.0%\n2.5 | Completion factor | 3 | 4\n")
    assert not is_exhibit_list(head + "We employed 32,439 people, as our Form 10-K for 2023 also said.")


def test_only_a_question_about_accounting_standards_asks_for_their_notes():
    from rag.retrieve import _STANDARDS_QUESTION

    assert not _STANDARDS_QUESTION.search("What reportable segments does Acme have?")
    assert _STANDARDS_QUESTION.search("Which new accounting standards did Acme adopt in 2024?")
    assert _STANDARDS_QUESTION.search("How does ASU 2023-07 change Acme's segment disclosures?")


def test_a_question_about_why_is_told_from_one_asking_for_the_figure():
    catalog = Catalog.build([{"ticker": "ACME", "company": "Acme Widgets Inc.", "fiscal_year": 2024}])
    assert plan_question("Why did Acme's gross margin fall in fiscal 2024?", catalog).prose_intent
    assert plan_question("What drove Acme's gross margin decline?", catalog).prose_intent
    assert not plan_question("What was Acme's gross margin in fiscal 2024?", catalog).prose_intent


def test_exhibit_index_is_searched_only_when_asked(small_index, monkeypatch):
    import numpy as np

    index = small_index.load()
    exhibits = np.zeros(len(index), dtype=bool)
    exhibits[0] = True  # pretend the first chunk is an exhibit index
    monkeypatch.setitem(index.columns, "exhibit_list", exhibits)
    everything = index.subset()
    assert everything is None
    assert 0 not in set(index.subset(without_exhibit_lists=True).tolist())
    assert len(index.subset(without_exhibit_lists=True)) == len(index) - 1
    acme = index.subset(tickers=["ACME"], without_exhibit_lists=True)
    assert 0 not in set(acme.tolist()) and len(acme)

    retriever = Retriever(index, small_index.embed_model())
    first = index.nodes[0].node_id
    words = "securities exchange commission trading symbol"  # the cover's own words, in no other chunk
    plain = retriever.retrieve(words, mode="keyword", top_k=len(index))
    asked = retriever.retrieve(f"Which agreements are filed as exhibits? {words}", mode="keyword", top_k=len(index))
    assert first not in {n.node.node_id for n in plain.nodes}
    assert first in {n.node.node_id for n in asked.nodes}


def test_the_item_a_question_points_to_joins_the_top(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    # Keyword search ranks the risk paragraphs first for these words; the number of employees is Item 1's to
    # disclose (Regulation S-K 101(c)), so Acme's best Item 1 passage comes right after the first result.
    result = retriever.retrieve("How many employees does Acme have, given the supply of widget parts?",
                                mode="keyword", top_k=4)
    assert result.plan.topic_sections == ["Item 1"]
    sections = [n.node.metadata["section"] for n in result.nodes]
    assert sections[0] != "Item 1" and sections[1] == "Item 1"
    # A question asking no Item's content joins nothing to the top. Asked of every filer: within Acme's few
    # passages alone, its Item 1 ranks second on the question's words anyway.
    plain = retriever.retrieve("How does the supply of widget parts look?", mode="keyword", top_k=4)
    assert not plain.plan.topic_sections and "Item 1" not in [n.node.metadata["section"] for n in plain.nodes[:2]]


def test_prose_about_a_quarter_no_quarterly_report_covers_reads_the_years_annual_report(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    prose = retriever.retrieve("What weighed on ACME's supply of parts in the second quarter of fiscal 2024?",
                               mode="keyword", top_k=4)
    assert prose.plan.narrative and prose.unavailable == ["ACME Q2 FY2024"]
    assert prose.nodes and {n.node.metadata["fiscal_year"] for n in prose.nodes} == {2024}
    assert any("No indexed report covers ACME Q2 FY2024" in w for w in prose.warnings)
    # A figure for that quarter is another matter: the annual report's figure would be a wrong answer.
    figure = retriever.retrieve("What were ACME's total net sales in the second quarter of fiscal 2024?",
                                mode="keyword", top_k=4)
    assert figure.nodes == [] and figure.unavailable == ["ACME Q2 FY2024"]


def test_prose_about_a_quarter_with_no_year_reads_the_latest_annual_report(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    latest = max(f["fiscal_year"] for f in retriever.index.filings.values()
                 if f["ticker"] == "ACME" and f["form"] == "10-K")
    prose = retriever.retrieve("What did ACME say about supply of parts in the second quarter?", mode="keyword",
                               top_k=4)
    assert prose.plan.narrative and prose.unavailable
    assert prose.nodes and {(n.node.metadata["form"], n.node.metadata["fiscal_year"]) for n in prose.nodes} == {
        ("10-K", latest)}
    figure = retriever.retrieve("What were ACME's total net sales in the second quarter?", mode="keyword", top_k=4)
    assert figure.nodes == [] and figure.unavailable


def test_every_item_a_question_can_point_to_has_the_regulations_words():
    from rag.item_topics import ITEM_CONTENT

    assert all(len(words.split()) >= 5 for _pattern, _item, words in ITEM_CONTENT)
    catalog = Catalog.build([{"ticker": "ACME", "company": "Acme Inc."}])
    plan = plan_question("How many employees does Acme have, and where is its headquarters?", catalog)
    assert plan.topic_sections == ["Item 1", "Item 2"]
    assert [words.split()[0] for words in plan.topic_words] == ["human", "location"]


def test_a_count_question_puts_the_passage_that_counts_first():
    from rag.item_topics import ITEM_CONTENT

    def node(text: str) -> NodeWithScore:
        return NodeWithScore(node=TextNode(text=text), score=1.0)

    erisa = node("ERISA. The Employee Retirement Income Security Act regulates employee benefit plans for employees.")
    mission = node("Our nearly 400,000 employees, as of December 31, 2024, are guided by our mission.")
    officers = node("Jane Doe has served as Chief People Officer since 2021.")
    nodes = [erisa, officers, mission]
    # The passage where a number counts what is asked (or what the Item's rule asks for) leads; the rest keep order.
    def counted(question: str) -> list[str]:
        return plan_question(question, Catalog.build([{"ticker": "ACME", "company": "Acme Inc."}])).counted

    human_capital = [ITEM_CONTENT[0][2]]
    assert _counting_first(nodes, counted("How many employees did Acme have at the end of 2024?"), human_capital) == [
        mission, erisa, officers]
    # "people": the regulation's words for Item 1 count "employees" too.
    assert _counting_first(nodes, counted("How many people work at Acme?"), human_capital)[0] is mission
    # No count asked: the search's own order.
    assert _counting_first(nodes, counted("What does Acme say about its employees?"), human_capital) == nodes
    # The count after its noun counts too.
    headcount = node("As of December 31, 2024, our employee headcount worldwide was 125,665.")
    assert _counting_first([erisa, headcount], counted("How many employees does Acme have?"), human_capital) == [
        headcount, erisa]
    # A compound names its kind last: "stockholders of record" are holders of record.
    item_5 = [words for _pattern, item, words in ITEM_CONTENT if item == "5"]
    pointer = node("Holders of record are listed by our transfer agent; beneficial owners hold shares in street name.")
    holders = node("As of November 6, 2024, we had 319 stockholders of record of our class A common stock.")
    assert _counting_first([pointer, holders], counted("How many holders of record does Acme have?"), item_5) == [
        holders, pointer]
    # A noun that runs on into "of record" counts holders of record, whatever the filer calls them.
    accounts = node("As of February 18, 2025, there were 176,283 shareowner accounts of record.")
    assert _counting_first([pointer, accounts], counted("How many shareholders of record does Acme have?"),
                           item_5) == [accounts, pointer]
    # "The number of" counts as "how many" does, in a question asking how it changed.
    question = "By how much did Acme's number of stockholders of record drop between its FY24 and FY25 reports?"
    number_of = plan_question(question, Catalog.build([{"ticker": "ACME", "company": "Acme Inc."}])).number_of
    assert counted(question) == [] and number_of == ["stockholders", "of", "record"]
    assert _counting_first([pointer, holders], number_of, item_5) == [holders, pointer]


def test_a_question_about_what_the_company_is_gets_item_1s_opening(tmp_path):
    """Regulation S-K 101(c) has Item 1 open with what the company does, in its own words ("Acme makes widgets"),
    which seldom share the question's ("what kind of company"): that opening passage joins the top results."""
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage"))
    store.add([write_filing(tmp_path / "in", "acme.htm", **ACME, business_paragraphs=30)])
    index = store.load()
    retriever = Retriever(index, store.embed_model())
    item_1 = sorted((n for n in index.nodes if n.metadata["section"] == "Item 1"),
                    key=lambda n: n.metadata["char_start"])
    assert len(item_1) >= 3 and "makes widgets" in item_1[0].text
    asked = retriever.retrieve("What kind of company is Acme, and what does paragraph 20 discuss?", mode="keyword",
                               top_k=4)
    assert asked.plan.topic_sections == ["Item 1"]
    assert item_1[0].node_id in [n.node.node_id for n in asked.nodes[:3]]
    plain = retriever.retrieve("What does paragraph 20 of Acme's business section discuss?", mode="keyword", top_k=4)
    assert not plain.plan.topic_sections and item_1[0].node_id not in [n.node.node_id for n in plain.nodes[:3]]


def test_a_question_that_names_no_year_gets_the_latest_filings_item_passage(tmp_path):
    """Two years of one company state their headcount in Item 1; asked without a year, the count of the latest
    filing is the Item passage that joins the top (the company as it is now), not an older year's."""
    # The older passage matches the question's words better, and is no copy of the newer one.
    older = dict(ACME, fiscal_year=2023, period_end="2023-09-30", business_paragraphs=1,
                 unique_phrase="As of the end of fiscal 2023 we had 1,100 employees: people work at Acme in shifts.")
    newer = dict(ACME, business_paragraphs=4, unique_phrase="As of the end of fiscal 2024 we had 1,250 employees.")
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage"))
    store.add([write_filing(tmp_path / "in", "acme-2023.htm", **older),
               write_filing(tmp_path / "in", "acme-2024.htm", **newer)])
    retriever = Retriever(store.load(), store.embed_model())
    result = retriever.retrieve("How many people work at Acme, given the supply of widget parts?", mode="keyword",
                                top_k=4)
    assert result.plan.topic_sections == ["Item 1"] and not result.filters.fiscal_years
    # The older passage is the first result; the latest count joins right after it.
    assert "1,100 employees" in result.nodes[0].node.text
    assert "1,250 employees" in result.nodes[1].node.text, [n.node.text[:120] for n in result.nodes]


def test_a_name_in_common_words_finds_its_company_and_its_passage(tmp_path):
    """A question that names no company but a deal, product or program in common words ("Future Labs") searches
    the one company whose filings print that name, and the passage that holds it joins the top."""
    acme = dict(ACME, business_paragraphs=12,
                unique_phrase="In June 2024 Acme acquired Future Labs, a maker of sensors, to add sensing to widgets.")
    bolt = dict(BOLT, business_paragraphs=12,
                unique_phrase="Future demand for drivetrains depends on the labs of our partners and on the deal flow.")
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage"))
    store.add([write_filing(tmp_path / "in", "acme.htm", **acme), write_filing(tmp_path / "in", "bolt.htm", **bolt)])
    retriever = Retriever(store.load(), store.embed_model())
    result = retriever.retrieve("Tell me about the Future Labs deal: what does it add?", mode="keyword", top_k=3)
    assert result.plan.name_phrases == ["Future Labs"] and result.plan.tickers == []
    assert result.filters.tickers == ["ACME"]
    assert any("only ACME's filings mention \"Future Labs\"" in w for w in result.warnings)
    assert any("acquired Future Labs" in n.node.text for n in result.nodes)
    # A name both companies print points to neither: every company is searched.
    both = dict(bolt, unique_phrase="Bolt sold its stake in Future Labs in 2023.")
    store2 = IndexStore(get_settings(storage_dir=tmp_path / "storage2"))
    store2.add([write_filing(tmp_path / "in2", "acme.htm", **acme), write_filing(tmp_path / "in2", "bolt.htm", **both)])
    result = Retriever(store2.load(), store2.embed_model()).retrieve(
        "Tell me about the Future Labs deal: what does it add?", mode="keyword", top_k=3)
    assert result.filters.tickers == [] and not result.warnings


def test_a_figure_per_item_brings_the_passage_that_counts_the_item(tmp_path):
    """"Revenue per employee" divides by the headcount Item 1 states: the Item passage that joins the top is the
    one where a number counts employees, not the one that best repeats the question's words."""
    def part(n: int) -> str:  # a chunk's worth of text that repeats the question's words and counts nothing
        filler = " ".join(f"Widget line {n}{i} is assembled in stages at the plant." for i in range(40))
        return f"Revenue per employee matters to us, and every employee shares in revenue growth. {filler}"

    phrase = f"{part(1)} {part(2)} {part(3)} {part(4)} At the end of fiscal 2024 we had 1,250 employees."
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage"))
    store.add([write_filing(tmp_path / "in", "acme.htm", **dict(ACME, unique_phrase=phrase))])
    retriever = Retriever(store.load(), store.embed_model())
    result = retriever.retrieve("What was Acme's revenue per employee in fiscal 2024?", mode="keyword", top_k=4)
    assert result.plan.per_item == ["employee"] and result.plan.topic_sections == ["Item 1"]
    assert any("1,250 employees" in n.node.text for n in result.nodes[:3]), [n.node.text[:80] for n in result.nodes]


def test_an_item_that_counts_the_thing_twice_brings_both_counts(tmp_path):
    """An Item may count what is asked more than once (holders of each class of stock, employees by business): the
    Item passages that join the top are the two best that count it, so the one the question means is there even
    when the other one matches the question's words better."""
    def part(n: int) -> str:  # a chunk's worth of text that repeats the question's words and counts nothing
        filler = " ".join(f"Widget line {n}{i} is assembled in stages at the plant." for i in range(40))
        return f"Employees in widget assembly at Acme matter to us; widget assembly employees share in growth. {filler}"

    phrase = (f"{part(1)} {part(2)} Widget assembly had 300 employees. {part(3)} {part(4)} "
              f"In all, 1,250 employees at the end of fiscal 2024. {part(5)}")
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage"))
    store.add([write_filing(tmp_path / "in", "acme.htm", **dict(ACME, unique_phrase=phrase))])
    retriever = Retriever(store.load(), store.embed_model())
    question = "How many employees does Acme have in total?"
    plan = plan_question(question, retriever.catalog)
    assert plan.topic_sections == ["Item 1"] and plan.counted
    item_passages = retriever._item_passage(plan, Filters(tickers=["ACME"]), QueryBundle(question), "keyword", 8, [])
    assert len(item_passages) == 2
    assert {count for count in ("300 employees", "1,250 employees") for r in item_passages if count in r.node.text} \
        == {"300 employees", "1,250 employees"}
    result = retriever.retrieve(question, mode="keyword", top_k=4)
    for count in ("300 employees", "1,250 employees"):
        assert any(count in n.node.text for n in result.nodes), count


def test_a_compound_questions_later_question_is_searched_too(small_index):
    """"What does it say about X, and what Y does it carry?": the passage answering the second question shares few
    words with the first, so every search fuses the later question with the whole one, as it fuses queries the
    language model writes; it is not reported as one of those."""
    searched: list[list[str]] = []

    class Recording(Retriever):
        def _search(self, bundle, mode, k, subset, extra_queries, context):
            searched.append(list(extra_queries))
            return super()._search(bundle, mode, k, subset, extra_queries, context)

    retriever = Recording(small_index.load(), small_index.embed_model())
    question = "What does Acme say about its supply of widget parts, and what zorblax coupler does it sell?"
    result = retriever.retrieve(question, mode="keyword", top_k=3)
    assert result.plan.follow_ups == ["what zorblax coupler does it sell?"] and result.generated_queries == []
    assert searched and all(extra == ["what zorblax coupler does it sell?"] for extra in searched)
    assert any("zorblax" in n.node.text for n in result.nodes)
    searched.clear()
    retriever.retrieve("What does Acme say about its supply of widget parts?", mode="keyword", top_k=3)
    assert searched and all(extra == [] for extra in searched)


def test_a_year_after_every_indexed_report_is_not_covered(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    # The index holds Acme's FY2024 10-K: fiscal 2027 has no report, and another year's figure would be wrong.
    figure = retriever.retrieve("What revenue is ACME guiding to for fiscal 2027?", mode="keyword", top_k=4)
    assert figure.nodes == [] and figure.unavailable == ["ACME FY2027"]
    # What the latest report says the company expects for that year is prose, still read from the reports held.
    prose = retriever.retrieve("What does ACME expect for its supply of parts in fiscal 2027?", mode="keyword",
                               top_k=4)
    assert prose.plan.narrative and prose.nodes and prose.unavailable == ["ACME FY2027"]
    # A year written bare may be the calendar year the latest annual report was filed in, which it still speaks of.
    assert retriever.retrieve("How many holders of record did ACME have in early 2025?", mode="keyword",
                              top_k=4).unavailable == []
    assert retriever.retrieve("ACME net sales 2026", mode="keyword", top_k=4).unavailable == ["ACME FY2026"]
    # A year the index holds, or the year before one (its comparative column), is covered.
    assert retriever.retrieve("What were ACME's total net sales in fiscal 2023?", mode="keyword",
                              top_k=4).unavailable == []


def test_a_year_before_every_indexed_reports_reach_is_not_covered_but_still_searched(small_index):
    retriever = Retriever(small_index.load(), small_index.embed_model())
    # A FY2024 10-K reports fiscal 2022 to 2024 at most: fiscal 2019 is listed as not covered, while the search
    # goes on, since a passage of the report may still speak of that year.
    old = retriever.retrieve("How many widgets did ACME sell in fiscal 2019?", mode="keyword", top_k=4)
    assert old.unavailable == ["ACME FY2019"] and old.nodes
    for question in ("How many widgets did ACME sell in fiscal 2022?", "ACME widgets sold 2024"):
        assert retriever.retrieve(question, mode="keyword", top_k=4).unavailable == [], question


def test_keyword_search_looks_for_the_words_a_short_form_stands_for(tmp_path):
    from rag.retrieve import with_spelled_out

    assert "department of justice" in with_spelled_out("What is the DOJ suing Acme for?")
    assert with_spelled_out("Is the dojo open?") == "Is the dojo open?"  # only the short form as a word
    # An officer by initials is found under the title filings print (signatures, the executive officers).
    assert with_spelled_out("Who is Acme's CFO?").endswith("chief financial officer")
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage"))
    acme = dict(ACME, unique_phrase="In September 2024 the Department of Justice filed a complaint alleging that "
                                    "Acme monopolized the zorblax market.")
    store.add([write_filing(tmp_path / "in", "acme.htm", **acme)])
    retriever = Retriever(store.load(), store.embed_model())
    result = retriever.retrieve("What is the DOJ suing Acme for?", mode="keyword", top_k=3)
    assert "Department of Justice" in result.nodes[0].node.text


def test_a_parts_figure_asked_in_short_words_finds_the_table_row_of_that_part():
    """'acme home visits rev fy24', 'doc cloud rev': a part's figure whose line sits in a revenue-by-offering
    table. The passage holding a row labelled with the part's words (short forms spelled out), and no other words,
    joins the results; a label that only begins with them ("Home Visits ARR") is another figure."""
    texts = ["Home Visits grew with demand for care at home.",
             "(in millions) | 2024 | 2023\nHome Visits ARR | 4,100 | 3,500",
             "(in millions) | 2024 | 2023\nClinics | $12,682 | $11,517\nhome visits | 3,182 | 2,699\nTotal | 15,864 | 14,216",
             "(in millions) | 2024 | 2023\nDocument Cloud | 3,182 | 2,699"]
    nodes = [TextNode(id_=f"n{i}", text=t) for i, t in enumerate(texts)]
    index = LoadedIndex("g", {}, nodes, None, None, None)
    assert index.rows_with_row_label(["home", "visit"]).tolist() == [2]
    assert index.rows_with_row_label(["document", "cloud"]).tolist() == [3]
    assert index.rows_with_row_label(["visits"]).tolist() == []

    class Searched:
        """A retriever whose search returns the rows it is given, in order."""
        def __init__(self):
            self.index = index

        def _search(self, bundle, mode, depth, rows, extra, context):
            return [NodeWithScore(node=nodes[int(r)], score=1.0) for r in rows]

    catalog = Catalog.build([{"ticker": "ACME", "company": "Acme Inc."}])

    def part_rows(question):
        return [n.node.node_id for n in Retriever._part_rows(Searched(), plan_question(question, catalog), None,
                                                             None, "keyword", 10, [])]
    assert part_rows("acme home visits rev fy24") == ["n2"]
    assert part_rows("acme doc cloud revenue 2024") == ["n3"]
    # A part inside a part: the row printed by its own last words under its group's heading.
    assert part_rows("acme care home visits revenue 2024") == ["n2"]
    # Why a part's figure moved is told in prose: no row is added.
    assert part_rows("why did acme home visits revenue grow in 2024?") == []


def test_a_query_embedding_is_reused_only_by_the_model_that_made_it():
    from rag import retrieve

    class Counting:
        def __init__(self, value: float):
            self.value, self.calls = value, 0

        def get_query_embedding(self, text: str) -> list[float]:
            self.calls += 1
            return [self.value]

    first, second = Counting(1.0), Counting(2.0)
    assert retrieve._embed_query(first, "net sales") == [1.0]
    assert retrieve._embed_query(first, "net sales") == [1.0] and first.calls == 1
    # Another model under the first's id (as when the first is gone and its id is reused) gets its own vectors.
    retrieve._QUERY_CACHE[id(second)] = retrieve._QUERY_CACHE[id(first)]
    assert retrieve._embed_query(second, "net sales") == [2.0] and second.calls == 1


def test_the_items_passages_get_a_second_look_for_a_question_told_in_prose(small_index, monkeypatch):
    """The Item prior's best passages are read again sentence by sentence (rag.second_look) when the question asks
    about prose; a figure's question keeps the search's order, and keyword mode has no vectors to look with."""
    retriever = Retriever(small_index.load(), small_index.embed_model())
    looked = []

    def spy(found, query_vector, k=5):
        looked.append(query_vector is not None)
        return found[::-1]  # last first: the passage that joins the top is the one the second look put first

    monkeypatch.setattr(retriever._sentence_vectors, "by_best_sentence", spy)
    prose = retriever.retrieve("What kind of company is Acme?", mode="hybrid", top_k=4)
    assert prose.plan.topic_sections == ["Item 1"] and looked == [True]
    retriever.retrieve("How many employees does Acme have?", mode="hybrid", top_k=4)
    retriever.retrieve("What kind of company is Acme?", mode="keyword", top_k=4)
    assert looked == [True]


def test_item_1s_opening_reads_past_a_short_preamble():
    """Many a 10-K opens Item 1 with a preamble (where the company was incorporated, what "we" means) that the
    chunker keeps apart; the description of the business (Regulation S-K 101(c)) is the chunk after it. A first
    chunk that already describes the business is the opening alone."""
    import numpy as np

    head = "ACME (ACME) · 10-K · FY2024 · Item 1: Business\n"
    preamble = head + 'Acme Inc. was incorporated in 1967 in Oregon. "We", "us" and "our" refer to Acme Inc.'
    description = head + " ".join(["Our principal business is the design and sale of widgets."] * 12)
    later = head + "Our widgets are sold through distributors in forty countries."
    older = "ACME (ACME) · 10-K · FY2023 · Item 1: Business\nAcme makes widgets."

    def opening(texts, years):
        nodes = [TextNode(id_=f"n{i}", text=t, metadata={"char_start": i * 100, "doc_id": f"d{y}"})
                 for i, (t, y) in enumerate(zip(texts, years))]
        index = LoadedIndex("g", {}, nodes, None, None, None, columns={
            "section": np.array(["Item 1"] * len(nodes)), "ticker": np.array(["ACME"] * len(nodes)),
            "fiscal_year": np.array(years)})

        class Holder:
            pass
        holder = Holder()
        holder.index = index
        rows = np.arange(len(nodes))
        return [n.node.node_id for n in Retriever._opening_passages(holder, rows, "Item 1")]

    assert opening([older, preamble, description, later], [2023, 2024, 2024, 2024]) == ["n1", "n2"]
    assert opening([older, description, later], [2023, 2024, 2024]) == ["n1"]


def test_a_leading_passage_cut_at_a_lead_in_brings_the_chunk_that_continues_it(small_index):
    """A passage among the first that ends leading in to what follows ("... as set out below:") is followed by the
    next chunk of its filing; a passage that ends its point, or one too far down, brings nothing."""
    retriever = Retriever(small_index.load(), small_index.embed_model())
    nodes = retriever.index.nodes
    k = next(i for i in range(len(nodes) - 1) if nodes[i].metadata["doc_id"] == nodes[i + 1].metadata["doc_id"]
             and int(nodes[i + 1].metadata["char_start"]) > int(nodes[i].metadata["char_start"]))
    cut = TextNode(id_=nodes[k].node_id, text=nodes[k].text.rstrip(" .") + ", as set out below:",
                   metadata=nodes[k].metadata)
    others = [NodeWithScore(node=n, score=0.5) for n in nodes if n.node_id not in (nodes[k].node_id,
                                                                                 nodes[k + 1].node_id)][:6]
    found = retriever._with_continuations([NodeWithScore(node=cut, score=1.0)] + others, 5)
    assert [r.node.node_id for r in found[:2]] == [nodes[k].node_id, nodes[k + 1].node_id] and len(found) == 5
    whole = retriever._with_continuations([NodeWithScore(node=nodes[k], score=1.0)] + others, 5)
    assert nodes[k + 1].node_id not in {r.node.node_id for r in whole}
    late = retriever._with_continuations(others[:5] + [NodeWithScore(node=cut, score=0.1)], 8)
    assert nodes[k + 1].node_id not in {r.node.node_id for r in late}
