"""Fits the extractive answer's unit weights (rag/data/unit_scoring.json) on labelled questions, and reports them on
held-out companies.

    python -m rag.unit_fit --set ../shared/eval/questions.jsonl:STORE --set tests/eval/questions-own.jsonl:STORE

Each question is retrieved as `rag eval` retrieves it, and every sentence and table row of the passages shown is
scored as the extractive answer scores them, recording its features (rag.answer.unit_scoring.UNIT_FEATURES). A
unit is relevant when it comes from the question's gold filing and quotes its evidence (every string of one piece
of it, or one string of a sentence's length) or, for a figure, states its value. The weights are a pairwise logistic regression on the tune halves'
companies, each question weighing the same, that starts from the prior in the weights file (the factors set by
hand before any fit) and is held near it (a feature
the questions seldom show keeps its weight, and none changes sign), its C cross-validated on mean reciprocal rank,
then scaled so the answer's quoting cut passes as many units as the prior does; the blind halves' companies are only
scored, with the prior's figures beside them.
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path

import numpy as np

from .answer.extractive import QUOTED_SHARE
from .answer.sources import sources_from_retrieval
from .answer.unit_scoring import UNIT_FEATURES, WEIGHTS_PATH, scored_units
from .config import get_settings
from .engine import Engine
from .eval import (
    FILING_FIELDS,
    company_halves,
    from_gold_filing,
    load_questions,
    normalize,
    numeric_correct,
    question_half,
)
from .ranking_fit import cross_validated_c, pairs, scores

# A string of evidence this many words long is a sentence's worth: a unit that quotes it quotes the evidence.
SENTENCE_WORDS = 4


def answers(question: dict, unit) -> bool:
    """A unit of the question's gold filing that quotes its evidence or, for a figure, states its value (as `rag
    eval` credits an answer's figure)."""
    if not from_gold_filing(question, {name: getattr(unit.source, name) for name in FILING_FIELDS}):
        return False
    if quotes_evidence(question, unit.text):
        return True
    value = question.get("value")
    return value is not None and numeric_correct(f"{unit.text} {unit.note}", float(value), question.get("unit"),
                                                 float(question.get("tolerance") or 0.005))


def quotes_evidence(question: dict, unit_text: str) -> bool:
    """A unit's text holds every string of one piece of the question's evidence, or one string of a sentence's
    length ("Total net sales" and "391,035" in one row; a sentence that says what the evidence says)."""
    text = normalize(unit_text)
    for piece in question.get("evidence") or []:
        strings = [normalize(s) for s in piece if s.strip()]
        sentences = [s for s in strings if s.count(" ") + 1 >= SENTENCE_WORDS]  # normalised: one space a word
        if strings and all(s in text for s in strings) or any(s in text for s in sentences):
            return True
    return False


def record_set(path: Path, storage: str, top_k: int) -> list[dict]:
    """One row per question: the features of every unit the extractive answer scores, strongest (by the weights
    in use) first, and which of them are relevant."""
    engine = Engine(get_settings(storage_dir=storage))
    embed_model = engine.retriever().embed_model
    questions = load_questions(path)
    halves = company_halves(questions)
    rows: list[dict] = []
    for question in questions:
        if not question.get("answerable", True) or not question.get("evidence"):
            continue
        retrieval = engine.retrieve(question["question"], mode="hybrid", top_k=top_k, generated_queries=0,
                                    history=list(question.get("history") or []))
        shown = sources_from_retrieval(retrieval)[:retrieval.shown]
        units = sorted(scored_units(question["question"], [c for c in shown if c.kind != "fact"], retrieval.plan,
                                    embed_model), key=lambda u: -u.score)
        relevant = [answers(question, u) for u in units]
        if any(relevant) and not all(relevant):
            rows.append({"set": path.name, "id": question["id"], "half": question_half(question, halves),
                         "x": np.asarray([u.features for u in units], dtype=float), "relevant": np.asarray(relevant)})
    return rows


def fit_from(rows: list[dict], c: float, prior: np.ndarray, fixed: frozenset[int] = frozenset()) -> np.ndarray:
    """Pairwise logistic regression (each relevant unit against each other unit of its question, each question
    weighing 1) whose weights start from `prior` and move as far as the data carries them. The penalty is on the
    move, in the weights' own units (log factors; `c` as scikit-learn's C), not on standardised features: a feature
    few questions show (which standardising would make cheap to move) keeps about the weight it had. No weight
    changes sign: which way a feature counts (a negated row down, the word match up) is the design, how much it
    counts is the data's. Features in `fixed` (their indices) keep the prior's weight (and `main` restores it
    after `calibrated` scales the rest): a product decision, not a regularity of the questions to learn."""
    from scipy.optimize import minimize

    d, w = pairs(rows)
    base = d @ prior

    def loss(move: np.ndarray) -> tuple[float, np.ndarray]:
        margin = base + d @ move
        value = 2 * np.sum(w * np.logaddexp(0.0, -margin)) + 0.5 * np.dot(move, move) / c
        grad = -2 * d.T @ (w / (1.0 + np.exp(np.clip(margin, -50, 50)))) + move / c
        return value, grad

    bounds = [(0.0, 0.0) if i in fixed else (-p, None) if p > 0 else (None, -p) if p < 0 else (None, None)
              for i, p in enumerate(prior)]
    return prior + minimize(loss, np.zeros(d.shape[1]), jac=True, method="L-BFGS-B", bounds=bounds).x


def units_quoted(rows: list[dict], weights: np.ndarray) -> float:
    """The mean number of units per question within the extractive answer's quoting cut of its best one."""
    counts = []
    for row in rows:
        s = row["x"] @ weights
        counts.append(int(np.sum(s >= s.max() + np.log(QUOTED_SHARE))))
    return float(np.mean(counts))


def calibrated(rows: list[dict], weights: np.ndarray, before: np.ndarray) -> np.ndarray:
    """The weights times the factor (their order unchanged) at which as many units per question pass the quoting
    cut (rag.answer.extractive.QUOTED_SHARE) as with the weights before: the fit decides which unit is first, not
    how many are quoted beside it."""
    target = units_quoted(rows, before)
    low, high = 0.01, 10.0
    for _ in range(40):
        mid = (low * high) ** 0.5
        low, high = (mid, high) if units_quoted(rows, weights * mid) > target else (low, mid)
    return weights * high


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.unit_fit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], metavar="QUESTIONS:STORAGE",
                        help="a question set and the index store it is asked of (repeat)")
    parser.add_argument("--save", type=Path, help="also keep the units recorded here (a pickle), to fit again")
    parser.add_argument("--recorded", type=Path, action="append", default=[],
                        help="units recorded by an earlier --save, fitted with the rest (repeat)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--out", type=Path, default=WEIGHTS_PATH)
    args = parser.parse_args(argv)
    # Every fit starts from the same prior (the factors set by hand before any fit), not from the last fit's weights.
    shipped = json.loads(WEIGHTS_PATH.read_text(encoding="utf-8"))
    prior = np.asarray(shipped["prior"], dtype=float)
    fixed = frozenset(UNIT_FEATURES.index(name) for name in shipped.get("fixed", []))
    rows: list[dict] = []
    for spec in args.set:
        path, _, storage = spec.rpartition(":")
        rows += record_set(Path(path), storage, args.top_k)
    if args.save:
        args.save.write_bytes(pickle.dumps(rows))
    for saved in args.recorded:
        rows += pickle.loads(saved.read_bytes())  # written by this script, never downloaded
    tune = [r for r in rows if r["half"] == "tune"]
    blind = [r for r in rows if r["half"] == "blind"]
    if not tune:
        parser.error("no tune-half question has a relevant unit: give --set or --recorded")
    c, by_c = cross_validated_c(tune, lambda part, c: fit_from(part, c, prior, fixed), mark=lambda r: r["mrr"])
    weights = calibrated(tune, fit_from(tune, c, prior, fixed), prior)
    weights[sorted(fixed)] = prior[sorted(fixed)]  # a product decision keeps its size, whatever the scale
    report = {half: {"fitted": scores(part, weights), "prior": scores(part, prior)}
              for half, part in (("tune", tune), ("blind", blind))}
    data = {
        "features": list(UNIT_FEATURES),
        "weights": [round(float(v), 5) for v in weights],
        "prior": [float(v) for v in prior],
        "fixed": [UNIT_FEATURES[i] for i in sorted(fixed)],
        "fitted_on": {"sets": sorted({r["set"] for r in rows}), "half": "tune",
                      "questions": len(tune), "C": c, "cross_validated": {str(k): v for k, v in by_c.items()}},
        "held_out": report,
    }
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"weights": dict(zip(UNIT_FEATURES, data["weights"], strict=True)), **report}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
