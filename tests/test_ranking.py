"""The fitted ranking: its features, its weights file, and the fit that makes it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from rag.catalog import Catalog
from rag.question import plan_question
from rag.ranking import (
    FEATURES,
    WEIGHTS_PATH,
    Candidate,
    RankContext,
    Ranking,
    RankingError,
    features,
    rank_context,
)
from rag.ranking_fit import fit, scores
from rag.schema import Filters

HEAD = "ACME (ACME) · 10-K · FY2024 · Item 8: Financial Statements\n"
CATALOG = Catalog.build([{"ticker": "ACME", "company": "Acme Widgets Inc.", "fiscal_year": 2024}])


def _candidate(body, rank=0, dense=None, keyword=None, **metadata):
    node = TextNode(text=HEAD + body, metadata=metadata)
    return Candidate(NodeWithScore(node=node, score=1.0), fused_rank=rank, dense_rank=dense, keyword_rank=keyword)


def _named(candidate, context):
    return dict(zip(FEATURES, features(candidate, context)))


def test_a_note_on_an_accounting_standard_is_a_feature_unless_the_question_is_about_standards():
    issued = _candidate("In November 2031, the FASB issued ASU 2031-07, Segment Reporting, which requires ...")
    headed = _candidate("Recently issued accounting pronouncements not yet adopted In December 2031, the Financial "
                        "Accounting Standards Board issued guidance on income tax disclosures.")
    own = _candidate("We report two segments, Widgets and Gadgets. We adopted ASU 2031-07 this year.")
    plain = RankContext()
    assert _named(issued, plain)["standard_note"] == _named(headed, plain)["standard_note"] == 1.0
    assert _named(own, plain)["standard_note"] == 0.0
    assert _named(issued, RankContext(standards_asked=True))["standard_note"] == 0.0


def test_table_lines_count_against_a_question_told_in_prose_only():
    table = _candidate("| 2024 | 2023\nRevenues | 46,309 | 51,362\nGross margin | 42.7% | 44.6%\nSome words after.")
    assert _named(table, RankContext())["table_share"] == pytest.approx(0.75)
    assert _named(table, RankContext())["table_for_prose"] == 0.0
    assert _named(table, RankContext(prose=True))["table_for_prose"] == pytest.approx(0.75)


def test_places_fall_with_rank_and_a_list_that_missed_a_passage_gives_it_nothing():
    first = _named(_candidate("words", rank=0, dense=0, keyword=3), RankContext())
    later = _named(_candidate("words", rank=5, dense=None, keyword=1), RankContext())
    assert first["fused_place"] == 1.0 and later["fused_place"] == pytest.approx(1 / 6)
    assert first["fused_log_place"] > later["fused_log_place"]
    assert first["both_lists"] == 1.0 and later["both_lists"] == 0.0
    assert later["dense_place"] == 0.0 and later["keyword_place"] == 0.5


def test_the_items_a_topic_points_to_count_only_for_a_question_told_in_prose():
    prose = plan_question("What kind of company is Acme?", CATALOG)
    figure = plan_question("How many employees did Acme have?", CATALOG)
    assert prose.topic_sections == figure.topic_sections == ["Item 1"]
    item1 = _candidate("We make widgets.", section="Item 1")
    item7 = _candidate("We make widgets.", section="Item 7")
    context = rank_context(prose, Filters(), standards_asked=False)
    assert _named(item1, context)["topic_item"] == 1.0 and _named(item7, context)["topic_item"] == 0.0
    # A figure is printed in MD&A and the statements as often as in the Item; an Item named is a filter already.
    assert _named(item1, rank_context(figure, Filters(), False))["topic_item"] == 0.0
    assert _named(item1, rank_context(prose, Filters(sections=["Item 7"]), False))["topic_item"] == 0.0


def test_a_statement_the_question_names_is_a_feature():
    plan = plan_question("Show Acme's balance sheet for fiscal 2024", CATALOG)
    assert plan.statements
    sheet = _candidate("Total assets | 1,000", statement=plan.statements[0])
    other = _candidate("Total assets | 1,000", statement="")
    context = rank_context(plan, Filters(), False)
    assert _named(sheet, context)["statement_named"] == 1.0 and _named(other, context)["statement_named"] == 0.0


def test_a_table_of_other_years_than_its_filings_own_is_a_feature_when_that_filing_is_asked():
    plan = plan_question("What were Acme's segment revenues in the second quarter of fiscal 2031?", CATALOG)
    filing = {"fiscal_year": 2031, "period_end": "2031-06-30"}
    prior = _candidate("| Widgets | Gadgets | Total\nThree months ended June 30, 2030\nRevenues | 12 | 34 | 46",
                       **filing)
    current = _candidate("| Widgets | Gadgets | Total\nThree months ended June 30, 2031\nRevenues | 15 | 30 | 45",
                         **filing)
    both = _candidate("| June 30, 2031 | June 30, 2030\nRevenues | 45 | 46", **filing)
    prose = _candidate("Revenues fell from the record set in 2029.", **filing)
    context = rank_context(plan, Filters(fiscal_years=[2031]), False)
    assert _named(prior, context)["other_years_table"] == 1.0
    assert [_named(c, context)["other_years_table"] for c in (current, both, prose)] == [0.0, 0.0, 0.0]
    # A question of the year before, asked of this filing's comparatives: its prior-year table is what it wants.
    assert _named(prior, rank_context(plan, Filters(fiscal_years=[2030]), False))["other_years_table"] == 0.0
    # A fiscal year that ends in the next calendar year: its period's end year is its own too.
    retail = _candidate("| February 1, 2031 | February 2, 2030\nRevenues | 45 | 46", fiscal_year=2030,
                        period_end="2031-02-01")
    assert _named(retail, rank_context(plan, Filters(), False))["other_years_table"] == 0.0


def test_the_ranking_orders_by_its_score_and_keeps_fusions_order_on_a_tie():
    weights = np.zeros(len(FEATURES))
    weights[FEATURES.index("keyword_place")] = 1.0
    ranking = Ranking(weights)
    a, b, c = (_candidate(name, rank=i, keyword=k) for i, (name, k) in enumerate([("a", None), ("b", 0), ("c", None)]))
    seen = []
    order = ranking.ordered([a, b, c], RankContext(), recorder=lambda cands, x: seen.append(x.shape))
    assert [r.node.text.split("\n")[1] for r in order] == ["b", "a", "c"]
    assert seen == [(3, len(FEATURES))]


def test_a_weights_file_for_other_features_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "ranking.json"
    path.write_text(json.dumps({"features": ["fused_place"], "weights": [1.0]}), encoding="utf-8")
    with pytest.raises(RankingError, match="fit it again"):
        Ranking.load(path)
    path.write_text(json.dumps({"features": list(FEATURES), "weights": [float("nan")] * len(FEATURES)}))
    with pytest.raises(RankingError, match="finite"):
        Ranking.load(path)


def test_the_shipped_weights_load_and_beat_fusion_alone_on_held_out_companies():
    ranking = Ranking.load()
    assert ranking.weights.shape == (len(FEATURES),)
    data = json.loads(WEIGHTS_PATH.read_text(encoding="utf-8"))
    blind = data["held_out"]["blind"]
    assert data["fitted_on"]["half"] == "tune" and blind["fitted"]["searches"] > 50
    assert blind["fitted"]["mrr"] >= blind["fusion"]["mrr"]


def _rows(rng, n, half="tune"):
    """Searches where the relevant passage is the one keyword search put first, and fusion ranks a note on an
    accounting standard above it half the time."""
    rows = []
    for _ in range(n):
        size = 12
        relevant_at = int(rng.integers(1, size))
        x = np.zeros((size, len(FEATURES)))
        for i in range(size):
            x[i, FEATURES.index("fused_place")] = 1 / (1 + i)
            x[i, FEATURES.index("fused_log_place")] = -np.log2(2 + i)
            x[i, FEATURES.index("keyword_place")] = 1 / (2 + i) if i != relevant_at else 1.0
        x[0, FEATURES.index("standard_note")] = float(rng.random() < 0.5)
        relevant = np.zeros(size, dtype=bool)
        relevant[relevant_at] = True
        rows.append({"set": "synthetic", "id": str(len(rows)), "half": half, "x": x, "relevant": relevant})
    return rows


def test_the_fit_learns_what_sets_the_relevant_passage_apart_and_scores_it_on_other_searches():
    rng = np.random.default_rng(7)
    weights = fit(_rows(rng, 60), 1.0)
    held_out = _rows(rng, 40, half="blind")
    fusion_only = np.asarray([1.0 if name == "fused_place" else 0.0 for name in FEATURES])
    assert weights[FEATURES.index("keyword_place")] > 0
    fitted, fusion = scores(held_out, weights), scores(held_out, fusion_only)
    assert fitted["searches"] == 40 and fitted["mrr"] > 0.9 > fusion["mrr"]


def test_the_shipped_weights_put_a_standards_note_and_a_why_questions_table_below_passages_found_as_well():
    ranking = Ranking.load()
    note = _candidate("In November 2031, the FASB issued ASU 2031-07, which requires segment disclosures.", 0, 0, 0)
    own = _candidate("We report two segments, Widgets and Gadgets, and review each one's margin.", 1, 1, 1)
    assert ranking.ordered([note, own], RankContext())[0] is own.result
    assert ranking.ordered([note, own], RankContext(standards_asked=True))[0] is note.result
    table = _candidate("| 2031 | 2030\nGross margin | 42.7% | 44.6%\nRevenues | 46,309 | 51,362", 0, 0, 0)
    prose = _candidate("Gross margin fell because of higher discounts and a weaker product mix.", 2, 2, 2)
    assert ranking.ordered([table, prose], RankContext(prose=True))[0] is prose.result


def test_financebench_searches_are_recorded_with_the_passages_on_an_evidence_page_as_relevant(tmp_path):
    # A FinanceBench-shaped folder around the invented PDF of tests/test_pdf_layout.py (its statement on page 4).
    from rag.config import get_settings
    from rag.eval import run_financebench
    from rag.ranking_fit import record_financebench
    from tests.pdf_maker import write_pdf
    from tests.test_pdf_layout import _filing_pages

    folder = tmp_path / "financebench"
    (folder / "pdfs").mkdir(parents=True)
    write_pdf(folder / "pdfs" / "ACME_2019_10K.pdf", _filing_pages())
    (folder / "documents.jsonl").write_text(json.dumps(
        {"doc_name": "ACME_2019_10K", "company": "Acme Widgets", "doc_period": 2019}) + "\n")
    (folder / "questions.jsonl").write_text(json.dumps(
        {"financebench_id": "fb-1", "doc_name": "ACME_2019_10K", "evidence": [{"evidence_page_num": 3}],
         "question": "What were Acme Widgets' net sales and net income in fiscal 2019?"}) + "\n")
    storage = tmp_path / "store"
    report = run_financebench(folder, get_settings(storage_dir=storage), top_k=10)
    assert report["doc_hit@5"] == 1.0  # indexed, and the question asked of it
    rows = record_financebench(folder, str(storage), top_k=10)
    assert rows and {r["id"] for r in rows} == {"fb-1"} and rows[0]["half"] in ("tune", "blind")
    for row in rows:
        assert row["x"].shape == (len(row["relevant"]), len(FEATURES))
        assert 0 < row["relevant"].sum() < len(row["relevant"])
