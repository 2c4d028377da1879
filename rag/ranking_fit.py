"""Fits the ranking's weights (rag/data/ranking.json) on labelled questions, and reports them on held-out companies.

    python -m rag.ranking_fit --set ../shared/eval/questions.jsonl:STORE --set tests/eval/questions-own.jsonl:STORE \
        --financebench ../shared/corpus/financebench:FINANCEBENCH_STORE

Each question is retrieved as `rag eval` retrieves it; every search it makes records its candidates' features
(rag.ranking.FEATURES). A candidate is relevant when it comes from the question's gold filing and holds a piece of
its evidence, as `rag eval` scores recall (for FinanceBench: when its pages span an evidence page). The weights
are a pairwise logistic regression on the tune halves' companies (each relevant candidate against each other
candidate of the same search, every search weighing the same); the blind halves' companies are only scored, with
fusion's own order beside them.
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path

import numpy as np

from .config import get_settings
from .engine import Engine
from .eval import (
    company_halves,
    evidence_found,
    financebench_questions,
    from_gold_filing,
    load_questions,
    on_evidence_page,
    question_half,
)
from .ranking import FEATURES, WEIGHTS_PATH

# Regularisation of the fit (scikit-learn's C, on standardised features): chosen among these by cross-validation
# over the tune half's questions (FOLDS folds, each question's searches in one), never by the blind half.
C_GRID = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
FOLDS = 5
# Negatives per search: the first this many in fusion's order beside every relevant one (the rest never compete).
NEGATIVES = 40


def _searches(engine: Engine, question: str, top_k: int, history: list | None = None) -> list[tuple]:
    """(candidates, features) of every search one question makes, retrieved as `rag eval` retrieves it."""
    retriever = engine.retriever()
    searches: list = []
    retriever.recorder = lambda candidates, x: searches.append((candidates, x))
    try:
        engine.retrieve(question, mode="hybrid", top_k=top_k, generated_queries=0, history=history or [])
    finally:
        retriever.recorder = None
    return searches


def _row(name: str, qid, half: str, x, relevant: list[bool]) -> dict | None:
    """A search worth fitting: one with both relevant candidates and others."""
    if any(relevant) and not all(relevant):
        return {"set": name, "id": qid, "half": half, "x": x, "relevant": np.asarray(relevant)}
    return None


def record_set(path: Path, storage: str, top_k: int) -> list[dict]:
    """One row per search of each question: its features and which candidates are relevant."""
    engine = Engine(get_settings(storage_dir=storage))
    questions = load_questions(path)
    halves = company_halves(questions)
    rows: list[dict] = []
    for question in questions:
        if not question.get("answerable", True) or not question.get("evidence"):
            continue
        for candidates, x in _searches(engine, question["question"], top_k, list(question.get("history") or [])):
            relevant = [from_gold_filing(question, c.result.node.metadata)
                        and any(evidence_found(piece, c.result.node.get_content()) for piece in question["evidence"])
                        for c in candidates]
            row = _row(path.name, question["id"], question_half(question, halves), x, relevant)
            rows += [row] if row else []
    return rows


def record_financebench(folder: Path, storage: str, top_k: int) -> list[dict]:
    """The same for FinanceBench's questions over its PDFs (indexed first by `rag eval --financebench`): a
    candidate is relevant when it comes from the question's PDF and its pages span one of the evidence pages, as
    page hit@k is scored. Each half of its companies is recorded as `rag eval --split` halves them."""
    engine = Engine(get_settings(storage_dir=storage))
    by_name = {Path(f["path"]).stem: f["doc_id"] for f in engine.index().filings.values()}
    rows: list[dict] = []
    for half in ("tune", "blind"):
        for question in financebench_questions(folder, half)[1]:
            gold = by_name.get(question["doc_name"])
            pages = {int(e["evidence_page_num"]) + 1 for e in question.get("evidence", [])}
            if gold is None or not pages:
                continue
            for candidates, x in _searches(engine, question["question"], top_k):
                relevant = [on_evidence_page(c.result.node.metadata, gold, pages) for c in candidates]
                row = _row(folder.name, question.get("financebench_id"), half, x, relevant)
                rows += [row] if row else []
    return rows


def pairs(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Differences relevant - other for each search's pairs, each search's pairs weighing 1 in all."""
    diffs, weights = [], []
    for row in rows:
        x, relevant = row["x"], row["relevant"]
        negatives = [i for i in range(len(x)) if not relevant[i]][:NEGATIVES]
        positives = [i for i in range(len(x)) if relevant[i]]
        for p in positives:
            for n in negatives:
                diffs.append(x[p] - x[n])
                weights.append(1.0 / (len(positives) * len(negatives)))
    return np.asarray(diffs).reshape(-1, rows[0]["x"].shape[1]), np.asarray(weights)


def _ranking_mark(result: dict) -> float:
    return (result["mrr"] + result["top5"]) / 2


def cross_validated_c(rows: list[dict], fitter=None, mark=_ranking_mark) -> tuple[float, dict]:
    """The C whose fits (`fitter(rows, C)`, the ranking's `fit` unless given), each on all folds but one, score the
    left-out fold's searches best by `mark` of their `scores` (for the ranking, the mean of MRR and the share with a
    relevant passage in the first five), with every C's figure."""
    fitter = fitter or fit
    fold_of = {key: i % FOLDS for i, key in enumerate(sorted({(r["set"], r["id"]) for r in rows}))}
    figures = {}
    for c in C_GRID:
        marks = []
        for fold in range(FOLDS):
            held = [r for r in rows if fold_of[(r["set"], r["id"])] == fold]
            weights = fitter([r for r in rows if fold_of[(r["set"], r["id"])] != fold], c)
            result = scores(held, weights)
            marks += [mark(result)] * result["searches"]
        figures[c] = round(float(np.mean(marks)), 4)
    return max(C_GRID, key=lambda c: (figures[c], -c)), figures


def fit(rows: list[dict], c: float) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    d, w = pairs(rows)
    scale = d.std(axis=0)
    scale[scale == 0] = 1.0
    x = np.vstack([d / scale, -d / scale])
    y = np.concatenate([np.ones(len(d)), np.zeros(len(d))])
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=2000)
    model.fit(x, y, sample_weight=np.concatenate([w, w]))
    return model.coef_[0] / scale


def scores(rows: list[dict], weights: np.ndarray) -> dict:
    """Over searches holding a relevant passage: the mean reciprocal rank of the first, and the shares with one
    first and with one in the first five."""
    if not rows:
        return {"searches": 0}
    firsts = []
    for row in rows:
        s = row["x"] @ weights
        order = sorted(range(len(s)), key=lambda i: (-s[i], i))
        firsts.append(next(rank for rank, i in enumerate(order) if row["relevant"][i]))
    return {"searches": len(rows), "mrr": round(float(np.mean([1.0 / (1 + f) for f in firsts])), 4),
            "top1": round(float(np.mean([f == 0 for f in firsts])), 4),
            "top5": round(float(np.mean([f < 5 for f in firsts])), 4)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.ranking_fit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], metavar="QUESTIONS:STORAGE",
                        help="a question set and the index store it is asked of (repeat)")
    parser.add_argument("--financebench", action="append", default=[], metavar="FOLDER:STORAGE",
                        help="FinanceBench's folder and the store `rag eval --financebench` indexed it in (repeat)")
    parser.add_argument("--save", type=Path, help="also keep the searches recorded here (a pickle), to fit again")
    parser.add_argument("--recorded", type=Path, action="append", default=[],
                        help="searches recorded by an earlier --save, fitted with the rest (repeat)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--out", type=Path, default=WEIGHTS_PATH)
    args = parser.parse_args(argv)
    rows: list[dict] = []
    for spec in args.set:
        path, _, storage = spec.rpartition(":")
        rows += record_set(Path(path), storage, args.top_k)
    for spec in args.financebench:
        folder, _, storage = spec.rpartition(":")
        rows += record_financebench(Path(folder), storage, args.top_k)
    if args.save:
        args.save.write_bytes(pickle.dumps(rows))
    for saved in args.recorded:
        rows += pickle.loads(saved.read_bytes())  # written by this script, never downloaded
    if not any(r["half"] == "tune" for r in rows):
        parser.error("no tune-half search holds a relevant passage: give --set or --recorded")
    tune = [r for r in rows if r["half"] == "tune"]
    blind = [r for r in rows if r["half"] == "blind"]
    c, by_c = cross_validated_c(tune)
    weights = fit(tune, c)
    fusion_only = np.asarray([1.0 if name == "fused_place" else 0.0 for name in FEATURES])
    report = {
        "tune": {"fitted": scores(tune, weights), "fusion": scores(tune, fusion_only)},
        "blind": {"fitted": scores(blind, weights), "fusion": scores(blind, fusion_only)},
    }
    data = {
        "features": list(FEATURES),
        "weights": [round(float(v), 5) for v in weights],
        "fitted_on": {"sets": sorted({r["set"] for r in rows}), "half": "tune", "searches": len(tune),
                      "questions": len({(r["set"], r["id"]) for r in tune}), "C": c, "cross_validated": {str(k): v for k, v in by_c.items()},
                      "negatives": NEGATIVES},
        "held_out": report,
    }
    args.out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({"weights": dict(zip(FEATURES, data["weights"])), **report}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
