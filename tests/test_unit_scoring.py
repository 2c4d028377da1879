"""The extractive answer's unit scorer (rag.answer.unit_scoring): its features, its weights file, and the fit that
makes it (rag.unit_fit)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rag.answer import Citation
from rag.answer.unit_scoring import UNIT_FEATURES, WEIGHTS_PATH, UnitScoring, UnitScoringError, scored_units
from rag.config import get_settings
from rag.embedding import get_embed_model
from rag.ranking_fit import scores
from rag.schema import Intent, QuestionPlan
from rag.unit_fit import answers, calibrated, fit_from, quotes_evidence, units_quoted

TABLE = ("ACME (ACME) · 10-K · FY2031 · Item 7\n"
         "Reconciliation of earnings per share\n"
         " | 2031 | 2030\n"
         "GAAP diluted earnings per share | $4.10 | $3.20\n"
         "Non-GAAP diluted earnings per share | $5.05 | $4.15\n")


def _source(text: str, number: int = 1, fiscal_year: int = 2031) -> Citation:
    return Citation(number=number, ticker="ACME", form="10-K", fiscal_year=fiscal_year, section="Item 7", text=text)


def _named(unit) -> dict[str, float]:
    return dict(zip(UNIT_FEATURES, unit.features, strict=True))


def test_a_units_score_is_its_word_match_times_a_factor_per_feature_it_holds():
    plan = QuestionPlan(tickers=["ACME"], fiscal_years=[2031])
    units = scored_units("What was ACME's GAAP diluted earnings per share in 2031?", [_source(TABLE)], plan)
    rows = {u.text.split("|")[0].strip(): u for u in units if u.kind == "row"}
    gaap, non_gaap = rows["GAAP diluted earnings per share"], rows["Non-GAAP diluted earnings per share"]
    assert _named(non_gaap)["negated_row"] == 1.0 and _named(gaap)["negated_row"] == 0.0
    assert _named(gaap)["figure_row"] == 1.0 and _named(gaap)["year_named"] == 1.0
    weights = UnitScoring.load().weights
    for unit in (gaap, non_gaap):
        assert math.isclose(unit.score, math.exp(float(np.dot(weights, unit.features))))
    assert gaap.score > non_gaap.score  # the figure the question rules out scores below the one it asks


def test_a_count_question_marks_the_sentence_that_counts_the_thing_and_the_one_that_states_only_dollars():
    text = ("ACME (ACME) · 10-K · FY2031 · Item 1\n"
            "As of December 31, 2031, we operated 1,204 stores in nine countries. "
            "Total store payroll was $412 million in 2031.")
    plan = QuestionPlan(tickers=["ACME"], counted=["stores"])
    units = {u.text.split(",")[0][:20]: _named(u) for u in
             scored_units("How many stores did ACME operate?", [_source(text)], plan)}
    counted = next(f for key, f in units.items() if key.startswith("As of December"))
    dollars = next(f for key, f in units.items() if key.startswith("Total store payroll"))
    assert counted["count_stated"] == 1.0 and dollars["no_count_sentence"] == 1.0


def test_for_prose_the_index_embedding_model_finds_the_sentence_that_says_what_is_asked_closer_in_meaning():
    # Both sentences hold the question's word "customers"; only one says why they stay.
    text = ("ACME (ACME) · 10-K · FY2031 · Item 1\n"
            "Customers renew their contracts because switching to another supplier would halt their production lines. "
            "Customers may send notices to the address printed on the back cover of this report.")
    question = "Why do ACME's customers keep buying from it?"
    plan = QuestionPlan(tickers=["ACME"], intent=Intent("prose", 0.9, 0.95, None))
    embed_model = get_embed_model(get_settings().embed_model)
    with_model = {u.text[:12]: u for u in scored_units(question, [_source(text)], plan, embed_model)}
    renew, notices = with_model["Customers re"], with_model["Customers ma"]
    assert _named(renew)["meaning"] > _named(notices)["meaning"] + 0.1
    assert all(_named(u)["meaning"] == 0.0 for u in scored_units(question, [_source(text)], plan))  # no model: no say
    figure = QuestionPlan(tickers=["ACME"], intent=Intent("figure", 0.9, 0.95, None))
    assert all(_named(u)["meaning"] == 0.0 for u in scored_units(question, [_source(text)], figure, embed_model))
    weight = UnitScoring.load().weights[UNIT_FEATURES.index("meaning")]
    assert weight >= 0.0 and math.isclose(renew.score / notices.score, math.exp(
        float(np.dot(UnitScoring.load().weights, np.subtract(renew.features, notices.features)))))


def test_for_prose_every_sentence_is_weighed_as_boilerplate_with_the_index_embedding_model_and_rows_are_not():
    text = ("ACME (ACME) · 10-K · FY2031 · Item 1A\n"
            "Statements in this report that are not historical facts are forward-looking statements within the "
            "meaning of the Private Securities Litigation Reform Act of 1995 and involve risks that could cause "
            "actual results to differ materially. "
            "Our only smelter depends on one hydroelectric dam whose water rights expire in 2034.\n"
            " | 2031 | 2030\n"
            "Smelter risk incidents (count) | 4 | 3\n")
    question = "What risks does ACME's smelter face?"
    embed_model = get_embed_model(get_settings().embed_model)
    prose = QuestionPlan(tickers=["ACME"], intent=Intent("prose", 0.9, 0.95, None))
    units = scored_units(question, [_source(text)], prose, embed_model)
    preamble = next(u for u in units if u.text.startswith("Statements in this report"))
    smelter = next(u for u in units if u.text.startswith("Our only smelter"))
    row = next(u for u in units if u.kind == "row")
    assert _named(preamble)["boilerplate"] > 0.5 > _named(smelter)["boilerplate"]
    assert _named(row)["boilerplate"] == 0.0 and _named(row)["meaning"] != 0.0  # a row is weighed by meaning only
    assert preamble.score < smelter.score
    # A figure asked: a count stated in the words every filer uses is not held against its sentence.
    figure = QuestionPlan(tickers=["ACME"], intent=Intent("figure", 0.9, 0.95, None))
    assert all(_named(u)["boilerplate"] == 0.0 for u in scored_units(question, [_source(text)], figure, embed_model))


def test_a_weights_file_for_other_features_or_with_nans_is_refused(tmp_path):
    path = tmp_path / "unit_scoring.json"
    path.write_text(json.dumps({"features": ["word_match"], "weights": [1.0]}), encoding="utf-8")
    with pytest.raises(UnitScoringError, match="fit it again"):
        UnitScoring.load(path)
    path.write_text(json.dumps({"features": list(UNIT_FEATURES), "weights": [float("nan")] * len(UNIT_FEATURES)}))
    with pytest.raises(UnitScoringError, match="finite"):
        UnitScoring.load(path)


def test_a_unit_quotes_the_evidence_when_it_holds_one_whole_piece_or_a_sentence_of_it():
    question = {"evidence": [["Net sales", "12,345"], ["we operated 1,204 stores in nine countries"]]}
    assert quotes_evidence(question, "Net sales | $12,345 | $11,000")
    assert not quotes_evidence(question, "Net sales | $13,000 | $12,000")  # the label without the figure
    assert quotes_evidence(question, "As of December 31, we operated 1,204 stores in nine countries.")
    assert not quotes_evidence(question, "We operated stores.")


def test_a_unit_answers_a_figure_when_its_gold_filing_states_the_value_in_any_words():
    question = {"filings": [{"ticker": "ACME", "fiscal_year": 2031, "form": "10-K"}], "value": 4.10, "unit": "USD",
                "evidence": [["diluted EPS of $4.10 for the year"]]}
    units = scored_units("What was ACME's GAAP diluted earnings per share in 2031?", [_source(TABLE)],
                         QuestionPlan(tickers=["ACME"], fiscal_years=[2031]))
    by_label = {u.text.split("|")[0].strip(): u for u in units if u.kind == "row"}
    assert answers(question, by_label["GAAP diluted earnings per share"])
    assert not answers(question, by_label["Non-GAAP diluted earnings per share"])
    other_year = scored_units("What was ACME's GAAP diluted earnings per share?", [_source(TABLE, fiscal_year=2032)],
                              QuestionPlan(tickers=["ACME"]))
    assert not any(answers(question, u) for u in other_year)  # the same row in another filing is not the gold one


def _rows(rng, n, half="tune"):
    """Questions whose answering unit matches the question's words a little better than most, and is the one row
    holding a figure; a unit without one matches them best: the fit has to find that the figure matters."""
    rows = []
    for _ in range(n):
        size = 15
        x = np.zeros((size, len(UNIT_FEATURES)))
        x[:, UNIT_FEATURES.index("word_match")] = rng.normal(1.0, 0.3, size)
        answer, wordy = rng.choice(size, 2, replace=False)
        x[answer, UNIT_FEATURES.index("word_match")] += 0.6
        x[wordy, UNIT_FEATURES.index("word_match")] = 2.5
        x[answer, UNIT_FEATURES.index("figure_row")] = 1.0
        x[:, UNIT_FEATURES.index("no_figure")] = 1.0 - x[:, UNIT_FEATURES.index("figure_row")]
        relevant = np.zeros(size, dtype=bool)
        relevant[answer] = True
        rows.append({"set": "synthetic", "id": str(len(rows)), "half": half, "x": x, "relevant": relevant})
    return rows


def test_the_fit_finds_what_sets_the_answering_unit_apart_and_keeps_what_the_questions_never_show():
    rng = np.random.default_rng(11)
    prior = np.asarray([{"word_match": 1.0, "negated_row": -1.2, "length": -0.5}.get(name, 0.0)
                        for name in UNIT_FEATURES])
    fitted = fit_from(_rows(rng, 60), 1.0, prior)
    # No synthetic question holds a negated row: its weight is the one it had.
    assert fitted[UNIT_FEATURES.index("negated_row")] == pytest.approx(-1.2)
    assert fitted[UNIT_FEATURES.index("figure_row")] > fitted[UNIT_FEATURES.index("no_figure")]
    assert fitted[UNIT_FEATURES.index("length")] <= 0  # a feature never changes the sign it was given
    held_out = _rows(rng, 40, half="blind")
    assert scores(held_out, fitted)["top1"] > 0.9 > scores(held_out, prior)["top1"]
    # A feature held fixed (a product decision) is not moved, however much the questions would move it.
    kept = fit_from(_rows(rng, 60), 1.0, prior, fixed=frozenset({UNIT_FEATURES.index("figure_row")}))
    assert kept[UNIT_FEATURES.index("figure_row")] == 0.0


def test_calibration_keeps_the_fitted_order_and_quotes_as_many_units_as_the_prior():
    rng = np.random.default_rng(5)
    rows = _rows(rng, 30)
    prior = np.asarray([1.0 if name == "word_match" else 0.0 for name in UNIT_FEATURES])
    sharp = 8 * fit_from(rows, 1.0, prior)
    weights = calibrated(rows, sharp, prior)
    assert scores(rows, weights) == scores(rows, sharp)
    assert units_quoted(rows, sharp) < units_quoted(rows, prior)
    assert abs(units_quoted(rows, weights) - units_quoted(rows, prior)) <= 1.0


def test_the_shipped_weights_load_and_keep_their_prior_and_how_they_were_fitted():
    data = json.loads(WEIGHTS_PATH.read_text(encoding="utf-8"))
    assert len(data["prior"]) == len(UNIT_FEATURES) and data["fitted_on"]
    assert set(data.get("fixed", [])) <= set(UNIT_FEATURES)
    weights = UnitScoring.load().weights
    prior = np.asarray(data["prior"])
    assert np.all(weights * prior >= 0)  # fitted sizes, the prior's directions (or none)
