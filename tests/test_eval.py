"""Scoring a question set (rag/eval.py): gold-filing matching, evidence recall, the number rule, distractors, the
company split and the report rows. Tiny in-memory questions and fake nodes: no index, no model."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rag import eval as ev
from rag.__main__ import build_parser

SHARED_EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"


class _TextNode:
    """A node that only has .text (no get_content), as some fakes and older node types do."""

    def __init__(self, metadata, text):
        self.metadata = metadata
        self.text = text


class _ContentNode(_TextNode):
    def get_content(self):
        return self.text


def hit(text, score=0.5, node_type=_ContentNode, **metadata):
    return SimpleNamespace(node=node_type(metadata, text), score=score)


def q10(**extra):
    """A 10-Q question whose gold filing names its quarter."""
    question = {
        "id": "t-1", "kind": "lookup", "question": "Net sales in the third quarter?", "answerable": True,
        "filings": [{"ticker": "ACME", "fiscal_year": 2025, "fiscal_period": "Q3", "form": "10-Q"}],
        "evidence": [["Total net sales", "94,036"], ["Services", "27,423"]],
        "value": 94036, "unit": "USD millions", "tolerance": 0.005,
    }
    question.update(extra)
    return question


def q_annual(**extra):
    """A 10-K question whose gold filing gives no period (the older question sets)."""
    question = {
        "id": "t-2", "kind": "lookup", "question": "Revenue?", "answerable": True,
        "filings": [{"ticker": "ACME", "fiscal_year": 2024, "form": "10-K"}],
        "evidence": [["Total revenue", "391,035"]], "value": 391035, "unit": "USD millions", "tolerance": 0.005,
    }
    question.update(extra)
    return question


Q3 = dict(ticker="ACME", fiscal_year=2025, form="10-Q")

# --------------------------------------------------------------------------------------------------------------
# Gold filings, evidence recall and filing precision


def test_fiscal_period_must_match_when_the_gold_filing_names_it():
    nodes = [
        hit("Total net sales 313,695 (nine months)", **Q3, fiscal_period="Q2"),  # the wrong quarter's filing
        hit("Total net sales $ 94,036 $ 85,777", **Q3, fiscal_period="Q3"),
        hit("Services 27,423", **Q3),  # indexed before periods existed: a 10-Q with no period matches nothing
    ]
    row = ev.score_retrieval(q10(), nodes)
    assert row["evidence_recall@5"] == 0.5  # the Services piece sits only in the period-less chunk
    assert row["filing_precision@5"] == pytest.approx(1 / 3)
    assert row["rr"] == 0.5
    assert row["evidence_found"] == [{"piece": ["Total net sales", "94,036"], "rank": 2},
                                     {"piece": ["Services", "27,423"], "rank": None}]


def test_gold_filing_without_a_period_matches_any_period_of_that_filing():
    question = q10(filings=[{"ticker": "ACME", "fiscal_year": 2025, "form": "10-Q"}])
    nodes = [hit("Services 27,423", **Q3), hit("Total net sales 94,036", **Q3, fiscal_period="Q2")]
    row = ev.score_retrieval(question, nodes)
    assert row["evidence_recall@5"] == 1.0
    assert row["filing_precision@5"] == 1.0


def test_a_10k_chunk_without_a_period_counts_as_the_full_year():
    question = q10(filings=[{"ticker": "ACME", "fiscal_year": 2025, "fiscal_period": "FY", "form": "10-K"}],
                   evidence=[["Total net sales", "416,161"]])
    annual = hit("Total net sales 416,161", ticker="acme", fiscal_year="2025", form="10-K")
    assert ev.score_retrieval(question, [annual])["evidence_recall@5"] == 1.0
    assert ev.chunk_filing(annual.node.metadata) == {"ticker": "ACME", "fiscal_year": 2025, "form": "10-K",
                                                     "fiscal_period": "FY"}
    # ...but not as a quarter, and not as another year.
    assert not ev.from_gold_filing(q10(), annual.node.metadata)
    assert not ev.from_gold_filing(question, {"ticker": "ACME", "fiscal_year": 2024, "form": "10-K"})


def test_evidence_counts_only_from_a_gold_filing_and_within_k():
    other_company = hit("Total revenue 391,035", ticker="ZETA", fiscal_year=2024, form="10-K")
    filler = [hit("unrelated", ticker="ACME", fiscal_year=2024, form="10-K") for _ in range(6)]
    late = hit("TOTAL   revenue $391,035", ticker="ACME", fiscal_year=2024, form="10-K")
    row = ev.score_retrieval(q_annual(), [other_company, *filler, late])
    assert row["evidence_recall@5"] == 0.0  # found at rank 8 only
    assert row["evidence_recall@10"] == 1.0
    assert row["evidence_found"][0]["rank"] == 8
    assert row["rr"] == pytest.approx(1 / 8)
    assert row["filing_precision@5"] == 0.8
    assert row["filing_precision@10"] == pytest.approx(7 / 8)


def test_text_only_nodes_are_read_too():
    node = hit("Total revenue 391,035", node_type=_TextNode, ticker="ACME", fiscal_year=2024, form="10-K")
    assert ev.score_retrieval(q_annual(), [node])["evidence_recall@5"] == 1.0


def test_questions_without_gold_filings_or_evidence_score_none():
    refusal = {"id": "r", "kind": "refusal", "answerable": False, "filings": [], "evidence": []}
    row = ev.score_retrieval(refusal, [hit("anything", ticker="ACME", fiscal_year=2024, form="10-K")])
    assert row["evidence_recall@5"] is None and row["filing_precision@5"] is None and row["rr"] is None
    assert ev.score_retrieval(q_annual(), [])["filing_precision@5"] == 0.0


# --------------------------------------------------------------------------------------------------------------
# Numbers: magnitude, units, labels


@pytest.mark.parametrize("answer", [
    "The company reported a net loss of $1,234 million.",
    "Net income was -$1,234 million.",
    "Net income: ($1,234) million.",
    "Net income: $(1,234) million.",
    "A loss of $1.234 billion.",
    "Operating cash flow was (1,234).",
    "$1,234,000,000 of losses.",
])
def test_magnitude_rule_matches_either_sign(answer):
    assert ev.numeric_correct(answer, -1234, "USD millions", 0.005)
    assert ev.numeric_correct(answer, 1234, "USD millions", 0.005)


def test_signs_are_read_but_dropped_for_matching():
    assert [n for n, _, _ in ev.numbers_in("-$5 and ($6) and 7")] == [-5.0, -6.0, 7.0]
    assert not ev.numeric_correct("a net loss of $1,300 million", -1234, "USD millions", 0.005)


@pytest.mark.parametrize("answer, value, unit, expected", [
    ("$9.7 billion", 9.7, "USD billions", True),
    ("$9,700 million", 9.7, "USD billions", True),
    ("$41.1 billion", 41096, "USD millions", True),  # 0.01% off
    ("$41 billion", 41096, "USD millions", False),  # 0.23% off: outside the 0.1% tolerance used for 41096
    ("$1,234 thousand", 1.234, "USD millions", True),
    ("$5,000,000", 5000, "USD thousands", True),  # whole dollars
    ("fined the Company €500 million", 500, "EUR millions", True),  # any currency's code, with its scale
    ("¥2.1 billion", 2.1, "JPY billions", True),
    ("15,115,823,000 shares", 15115823000, "shares", True),
    ("15.1 billion shares", 15115823000, "shares", True),
    ("about 161,000 employees", 161000, "employees", True),
    ("161 thousand employees", 161000, "employees", True),
    ("approximately 1.7 million square feet", 1.7, "million square feet", True),
    ("1,700,000 square feet", 1.7, "million square feet", True),
    ("approximately 1.7 square feet", 1700000, "square feet", False),
    ("63,000,000 shares", 63, "shares millions", True),  # a count unit scaled as "USD millions" is
    ("63 million shares", 63, "shares millions", True),
    ("63 shares", 63_000_000, "shares", False),
    ("$0.88 per diluted share", 0.88, "USD per share", True),
    ("a gross margin of 45.6%", 45.59, "percent", True),
    ("a gross margin of 45.6 percent", 45.59, "percent", True),
    ("up 10% to $94,036 million", 10, "USD millions", False),  # a percentage is not a dollar figure
    ("$46 million", 46, "percent", False),  # nor a figure with a scale word a percentage
])
def test_units_are_normalised(answer, value, unit, expected):
    tolerance = 0.001 if value == 41096 else 0.005
    assert ev.numeric_correct(answer, value, unit, tolerance) is expected


def test_labels_are_not_figures():
    answer = "For the three months ended June 28, 2025 (Q3 FY2025, Item 2 of the 10-Q) [1][2, 3], per Note 12."
    assert ev.numbers_in(answer) == []
    assert ev.figures_in_unit("$28 million on 28 June 2025 and 2025-06-28, May 2024", "USD millions") == [28.0]


# --------------------------------------------------------------------------------------------------------------
# Distractors and answer scoring


def trap(**extra):
    question = q10(kind="period-trap", value=5519, distractors=[2789])
    question.update(extra)
    return question


def test_a_stated_distractor_makes_the_answer_wrong_even_with_the_value():
    both = "$5,519 million for the six months; the quarter alone was $2,789 million."
    assert ev.numeric_correct("$5,519 million for the six months.", 5519, "USD millions", 0.005, [2789])
    assert not ev.numeric_correct(both, 5519, "USD millions", 0.005, [2789])
    scored = ev.score_answer(trap(), both, refused=False, cited=True)
    assert (scored["answer_correct"], scored["distractor_stated"]) == (False, True)


def test_a_figure_counts_where_the_answer_states_it_not_as_an_operand_of_arithmetic():
    """"A + B = C" states C: the gold figure inside a sum that ends in another figure is not credited; the result of
    arithmetic is, and so is the same figure stated on its own before its arithmetic."""
    wrong_sum = "Total: $1,200 million + $300 million = $1,400 million [1]."
    assert not ev.numeric_correct(wrong_sum, 1200, "USD millions", 0.005)
    assert not ev.numeric_correct(wrong_sum, 300, "USD millions", 0.005)
    assert ev.numeric_correct(wrong_sum, 1400, "USD millions", 0.005)
    growth = "Net sales were $1,250 million [1]. Growth: (1,250 - 1,000) / 1,000 = 25.0% [1]."
    assert ev.numeric_correct(growth, 1250, "USD millions", 0.005)  # stated on its own first
    assert not ev.numeric_correct(growth, 1000, "USD millions", 0.005)  # only ever an operand
    assert ev.numeric_correct(growth, 25.0, "percent", 0.005)
    # An operand that is a distractor is not stated either; a "=" with no arithmetic before it blanks nothing.
    assert ev.numeric_correct("$5,519 million - $2,789 million = $2,730 million", 2730, "USD millions", 0.005, [2789])
    assert ev.without_operands("Margin = 46.2%") == "Margin = 46.2%"
    assert ev.without_operands("It was 500. 500 + 20 = 520") == "It was 500.          = 520"


def test_distractors_match_by_magnitude_and_unit():
    assert ev.distractor_stated("a loss of ($2.789) billion", [-2789], "USD millions", 0.005)
    assert not ev.distractor_stated("up 2,789%", [2789], "USD millions", 0.005)  # a percentage, not dollars
    assert not ev.distractor_stated("$2,850 million", [2789], "USD millions", 0.005)


def test_answer_evidence_is_the_share_of_evidence_strings_the_answer_itself_quotes():
    # Four strings in two pieces: a heading-only quote of the right passage scores nothing.
    assert ev.answer_evidence(q10(), "ITEM 2. MANAGEMENT'S DISCUSSION AND ANALYSIS [1]") == 0.0
    assert ev.answer_evidence(q10(), "**Total net sales**  were $94,036 million; `Services`: 27,423 [1]") == 1.0
    assert ev.answer_evidence(q10(), "total   NET sales of 94,036 [1]") == 0.5  # case and spaces as evidence
    assert ev.answer_evidence({"id": "r", "kind": "refusal", "answerable": False, "evidence": [["x"]]}, "x") is None
    assert ev.answer_evidence(q10(evidence=[]), "anything") is None
    retrieval = {"evidence_recall@5": 1.0, "evidence_recall@10": 1.0, "filing_precision@5": 1.0, "rr": 1.0}
    rows = [{**retrieval, **ev.score_answer(q10(), answer, False, True)}
            for answer in ("Total net sales 94,036 Services 27,423", "nothing")]
    assert ev._block(rows)["answer_evidence"] == 0.5  # the set's mean


def test_score_answer_reports_distractor_only_when_the_question_has_some():
    assert ev.score_answer(q10(), "$94,036 million", False, True) == {
        "answer_correct": True, "distractor_stated": None, "answer_evidence": 0.25}
    assert ev.score_answer(trap(), "$5,519 million", False, True) == {
        "answer_correct": True, "distractor_stated": False, "answer_evidence": 0.0}
    assert ev.score_answer(trap(), "$5,519 million", True, False)["answer_correct"] is False  # refused
    prose = q10(value=None, unit=None)
    assert ev.score_answer(prose, "anything", False, True)["answer_correct"] is None
    refusal = {"id": "r", "kind": "refusal", "answerable": False, "filings": []}
    assert ev.score_answer(refusal, "I can't say.", True, False)["answer_correct"] is True
    assert ev.score_answer(refusal, "I can't say.", True, True)["answer_correct"] is False


# --------------------------------------------------------------------------------------------------------------
# The report: rows and summaries


def _result(answer, refused=False, cited=("ACME", "10-Q", 2025)):
    citations = [SimpleNamespace(ticker=cited[0], form=cited[1], fiscal_year=cited[2], fiscal_period=None)] if cited else []
    return SimpleNamespace(answer=answer, refused=refused, citations=citations)


def test_question_row_lists_what_was_retrieved():
    nodes = [
        hit("Total net sales 94,036", score=0.91234, **Q3, fiscal_period="Q3", section="Part I Item 1",
            page_start=4, page_end=5, path="/data/filings/ACME/acme-20250628.htm"),
        hit("Other", score=0.5, ticker="ACME", fiscal_year=2024, form="10-K", section="Item 7", page_start=30,
            source="https://www.sec.gov/Archives/acme-2024.htm"),
    ]
    row = ev.question_row(q10(), nodes, _result("$94,036 million [1]"))
    assert row["retrieved"] == [
        {"rank": 1, "file": "acme-20250628.htm", "ticker": "ACME", "form": "10-Q", "fiscal_year": 2025,
         "fiscal_period": "Q3", "section": "Part I Item 1", "page": 4, "pages": "4-5", "score": 0.9123,
         "gold_filing": True},
        {"rank": 2, "file": "acme-2024.htm", "ticker": "ACME", "form": "10-K", "fiscal_year": 2024,
         "fiscal_period": None, "section": "Item 7", "page": 30, "pages": "30-30", "score": 0.5,
         "gold_filing": False},
    ]
    assert row["evidence_found"][0]["rank"] == 1
    assert row["answer_correct"] is True and row["cited_filings"] == ["ACME 10-Q FY2025"]
    for key in ("id", "kind", "evidence_recall@5", "evidence_recall@10", "filing_precision@5", "rr", "answer",
                "refused", "distractor_stated"):
        assert key in row


def test_summary_keeps_todays_figures_and_adds_kinds_and_distractors():
    rows = []
    for question, answer in ((q10(id="a"), "$94,036 million"), (trap(id="b"), "$5,519M, quarter $2,789M"),
                             (trap(id="c", kind="cross-form"), "$5,519 million")):
        row = ev.question_row(question, [hit("Total net sales 94,036", **Q3, fiscal_period="Q3")], _result(answer))
        rows.append({**row, "detected": "", "retrieval_ms": 10.0})
    report = ev.summarize(rows, mode="hybrid", split="all", split_companies=["ACME"])
    for key in ("questions_total", "evidence_recall@5", "evidence_recall@10", "filing_precision@5", "mrr",
                "answer_accuracy", "refusal_accuracy", "latency_ms", "by_kind", "questions"):
        assert key in report
    assert report["answer_accuracy"] == 0.6667  # rounded to 4 places, as today
    by_kind = report["answer_accuracy_by_kind"]
    assert list(by_kind)[:len(ev.KINDS)] == list(ev.KINDS)
    assert by_kind["lookup"] == 1.0 and by_kind["period-trap"] == 0.0 and by_kind["cross-form"] == 1.0
    assert by_kind["narrative"] is None
    assert report["distractor_questions"] == 2 and report["distractor_stated"] == 1
    assert report["by_kind"]["period-trap"]["distractor_stated"] == 1
    assert report["split"] == "all" and report["split_companies"] == ["ACME"]


def test_pages_are_scored_for_a_set_that_names_evidence_pages():
    question = q10(evidence_pages=[7])
    pdf = dict(**Q3, fiscal_period="Q3")
    nodes = [hit("x", **pdf, page_start=3, page_end=4),  # the gold filing, another page
             hit("x", ticker="OTHER", fiscal_year=2025, form="10-Q", fiscal_period="Q3", page_start=7, page_end=7),
             hit("x", **pdf, page_start=1), hit("x", **pdf, page_start=2), hit("x", **pdf, page_start=9),
             hit("x", **pdf, page_start=6, page_end=8)]  # covers page 7, at rank 6
    scores = ev.score_pages(question, nodes)
    # Another filing's page 7 is no hit; the gold filing's span 6-8 is, at rank 6 only.
    assert scores == {"page_hit@5": False, "page_hit@10": True, "doc_hit@5": True}
    assert ev.score_pages(q10(), nodes) == {"page_hit@5": None, "page_hit@10": None, "doc_hit@5": None}
    row = ev.question_row(question, nodes, _result("$94,036 million"))
    assert row["page_hit@10"] is True and row["doc_hit@5"] is True
    report = ev.summarize([{**row, "detected": "", "retrieval_ms": 1.0},
                           {**ev.question_row(q10(id="t-2", evidence_pages=[3]), nodes, _result("none")),
                            "detected": "", "retrieval_ms": 1.0}])
    assert report["page_hit@5"] == 0.5 and report["page_hit@10"] == 1.0 and report["doc_hit@5"] == 1.0
    assert report["numeric_accuracy"] == 0.5
    # A set without pages reports none.
    assert "page_hit@5" not in ev.summarize([{**ev.question_row(q10(), nodes, _result("x")), "detected": "",
                                               "retrieval_ms": 1.0}])


# --------------------------------------------------------------------------------------------------------------
# The company split


def _set():
    def question(qid, *tickers):
        return {"id": qid, "kind": "lookup", "filings": [{"ticker": t, "fiscal_year": 2024, "form": "10-K"}
                                                         for t in tickers]}
    refusals = [{"id": f"r-{i}", "kind": "refusal", "answerable": False, "filings": []} for i in range(8)]
    return [question("1", "DDD"), question("2", "aaa"), question("3", "CCC", "BBB"), question("4", "BBB"),
            question("5", "EEE"), *refusals]


def test_split_by_company_is_deterministic_and_disjoint():
    questions = _set()
    tune, tune_companies = ev.split_questions(questions, "tune")
    blind, blind_companies = ev.split_questions(questions, "blind")
    # A company's half comes from its ticker alone (the same in every question set).
    assert tune_companies == ["BBB", "CCC", "DDD", "EEE"] and blind_companies == ["AAA"]
    assert ev.company_halves([questions[1]]) == {"AAA": "blind"}
    assert [q["id"] for q in tune if q["filings"]] == ["1", "3", "4", "5"]  # "3" goes by its first filing: CCC
    assert [q["id"] for q in blind if q["filings"]] == ["2"]
    assert {q["id"] for q in tune} | {q["id"] for q in blind} == {q["id"] for q in questions}
    assert not {q["id"] for q in tune} & {q["id"] for q in blind}
    # The same set in another order splits the same way; refusals go by their id, not their position.
    again, _ = ev.split_questions(list(reversed(questions)), "tune")
    assert sorted(q["id"] for q in again) == sorted(q["id"] for q in tune)
    assert 0 < sum(1 for q in tune if not q["filings"]) < 8  # the hash spreads refusals over both halves
    everything, companies = ev.split_questions(questions, "all")
    assert len(everything) == len(questions) and companies == ["AAA", "BBB", "CCC", "DDD", "EEE"]
    with pytest.raises(ValueError):
        ev.split_questions(questions, "half")


def test_eval_command_takes_a_split():
    args = build_parser().parse_args(["eval", "--questions", "q.jsonl", "--split", "blind"])
    assert args.split == "blind"
    assert build_parser().parse_args(["eval", "--questions", "q.jsonl"]).split == "all"


def test_the_shared_sets_split_into_two_nonempty_halves():
    paths = sorted(SHARED_EVAL.glob("questions*.jsonl"))
    if not paths:
        pytest.skip(f"no question sets at {SHARED_EVAL} (../shared is absent)")
    for path in paths:
        questions = ev.load_questions(path)
        tune, _ = ev.split_questions(questions, "tune")
        blind, _ = ev.split_questions(questions, "blind")
        assert tune and blind and len(tune) + len(blind) == len(questions), path.name
        # Every gold answer of the set passes its own number rule (the rule is not stricter than the gold).
        for q in questions:
            if q.get("value") is not None and not q.get("distractors"):
                assert ev.numeric_correct(q["answer"], q["value"], q["unit"], q["tolerance"]), (q["id"], q["answer"])


# --------------------------------------------------------------------------------------------------------------
# The model's figures (rag eval --llm)


def _llm_result(answer, *, model="m:1b", refused=False, cited=(1,), sources=(1, 2), warnings=(), first_ms=1500.0):
    return SimpleNamespace(
        answer=answer, refused=refused, model=model, extractive=model is None, cut=False,
        citations=[SimpleNamespace(number=n, ticker="ACME", form="10-K", fiscal_year=2024, fiscal_period="FY")
                   for n in cited],
        sources=[SimpleNamespace(number=n) for n in sources], warnings=list(warnings),
        timings={"first_token_ms": first_ms})


def test_llm_fields_read_the_answer_and_ollamas_counts():
    res = _llm_result("Sales were $5 million [1][2]. The CEO is someone [n].",
                      warnings=["Removed citation [7]: no source 7 was given to the model.",
                                'Check this claim: "x" shares no name, figure or key word with its cited source [2]: '
                                "the citation does not support it. Verify before use."])
    row = ev.llm_fields(res, {"prompt_eval_count": 2400, "eval_count": 80})
    assert row["llm_answered"] and row["first_token_s"] == 1.5
    assert row["prompt_tokens"] == 2400 and row["eval_tokens"] == 80
    assert row["citations_kept"] == 2 and row["citations_removed"] == 1
    assert row["unsupported"] == 1 and row["placeholder_left"]
    assert row["model_first_token_s"] is None  # the result's timings hold no model's first words
    # A model asked whose refusal gave way to quoted passages: its prompt counts, the answer is not the model's.
    quoted = _llm_result("Sales were $5 million [1].", model=None)
    quoted.timings["model_first_token_ms"] = 41000.0
    extractive = ev.llm_fields(quoted, {"prompt_eval_count": 9})
    assert not extractive["llm_answered"] and extractive["first_token_s"] is None
    assert extractive["prompt_tokens"] == 9 and extractive["model_first_token_s"] == 41.0
    assert ev.llm_fields(_llm_result("Sales [1].", model=None), None)["prompt_tokens"] is None  # never asked


def test_llm_summary_has_the_issue_keys_and_counts_what_it_says():
    rows = []
    cases = [(q10(id="n1"), "$94,036 million [1]", 2000, 10.0), (q10(id="n2"), "$1 million [1]", 3000, 30.0),
             (q10(id="p1", kind="narrative", value=None), "Prose without a source.", 2500, 20.0)]
    for question, answer, tokens, first in cases:
        cited = () if "without" in answer else (1,)
        result = _llm_result(answer, cited=cited, first_ms=first * 1000)
        row = ev.question_row(question, [hit("Total net sales 94,036", **Q3, fiscal_period="Q3")], result)
        row.update(ev.llm_fields(result, {"prompt_eval_count": tokens, "eval_count": 50}),
                   detected="", retrieval_ms=1.0)
        rows.append(row)
    refusal = {"id": "r1", "kind": "refusal", "answerable": False, "question": "Buy?", "filings": []}
    result = _llm_result("I cannot give investment advice.", model=None, refused=True, cited=())
    row = ev.question_row(refusal, [], result)
    row.update(ev.llm_fields(result, None), detected="", retrieval_ms=1.0)
    rows.append(row)
    summary = ev.llm_summary(rows, "m:1b")
    assert set(summary) >= {"llm_model", "cited_answer_rate", "unsupported_flagged", "prompt_tokens_p50",
                            "prompt_tokens_p95", "first_token_s_p50", "first_token_s_p95"}
    assert summary["llm_model"] == "m:1b" and summary["llm_answers"] == 3
    assert (summary["numeric_right"], summary["numeric_questions"]) == (1, 2)
    assert (summary["refusals_right"], summary["refusal_questions"]) == (1, 1)
    assert summary["cited_answer_rate"] == round(2 / 3, 4)
    assert summary["prompt_tokens_p50"] == 2500 and summary["first_token_s_p50"] == 20.0
    assert 2900 <= summary["prompt_tokens_p95"] <= 3000
    assert ev.llm_summary(rows[3:], "m:1b")["llm_model"] is None  # no answer came from the model


def test_eval_command_takes_llm_and_a_subset():
    args = build_parser().parse_args(["eval", "--questions", "q.jsonl", "--llm", "--kind", "refusal", "--id", "d-1"])
    assert args.llm and not args.no_llm and args.kind == ["refusal"] and args.id == ["d-1"]
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "--questions", "q.jsonl", "--llm", "--no-llm"])


def test_eval_llm_fails_with_the_products_message_when_no_model_answers(tmp_path, monkeypatch, capsys):
    from rag.__main__ import main
    from tests.fake_ollama import free_port

    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")  # nothing listens there
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "x", "kind": "lookup", "question": "Net sales?"}\n')
    code = main(["eval", "--questions", str(questions), "--llm", "--storage", str(tmp_path / "storage")])
    err = capsys.readouterr().err
    assert code == 1 and "--llm: Ollama is not reachable" in err and "OLLAMA_HOST" in err
