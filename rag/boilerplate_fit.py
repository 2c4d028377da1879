"""Fits the boilerplate model (rag/data/boilerplate.json) on the sentences of indexed filings, labelled by recurrence.

    python -m rag.boilerplate_fit --storage STORE [--storage STORE ...] [--leave-out DIR]

Sentences are sampled from every company's passages, each labelled by rag.recurring (do several other companies'
filings print it near word for word?) over its own index, and embedded with the index's model. A logistic regression
on the vectors is fitted on half of the companies and scored on the other half, then fitted again on all of them
and saved. Filings under a --leave-out folder (a set kept for measuring) give no sentences.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

import numpy as np

from .answer.quotable import quotable_units
from .boilerplate import MODEL_PATH, PROBE
from .config import get_settings
from .embedding import text_vectors
from .engine import Engine
from .recurring import MIN_WORDS
from .schema import Citation

PER_COMPANY = 400  # sentences sampled per company: enough that each brings its few boilerplate sentences
C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)


def company_half(ticker: str) -> str:
    """A company's half by a hash of its ticker: stable, and blind to anything the company's filings say."""
    return "fit" if int(hashlib.sha256(ticker.encode()).hexdigest(), 16) % 2 else "held_out"


def sample_sentences(storage: str, leave_out: list[Path], per_company: int, seed: int) -> list[dict]:
    """Sentences of each company's passages (at most `per_company`, sampled), labelled by recurrence and embedded."""
    engine = Engine(get_settings(storage_dir=storage))
    retriever = engine.retriever()
    index, recurring, embed_model = retriever.index, retriever.recurring, retriever.embed_model
    left_out = [str(d.resolve()) for d in leave_out]
    by_company: dict[str, list[str]] = {}
    for node in index.nodes:
        meta = node.metadata
        ticker = meta.get("ticker") or ""
        if not ticker or any(str(meta.get("path") or "").startswith(d) for d in left_out):
            continue
        source = Citation(number=1, ticker=ticker, form=meta.get("form"), fiscal_year=meta.get("fiscal_year"),
                          section=meta.get("section"), text=node.get_content())
        by_company.setdefault(ticker, []).extend(
            u.text for u in quotable_units(source) if u.kind == "sentence" and len(u.text.split()) >= MIN_WORDS)
    rng = random.Random(seed)
    rows: list[dict] = []
    for ticker in sorted(by_company):
        sentences = sorted(set(by_company[ticker]))
        picked = rng.sample(sentences, min(per_company, len(sentences)))
        labels = recurring([(s, ticker) for s in picked])
        vectors = text_vectors(embed_model, picked)
        rows += [{"ticker": ticker, "text": s, "recurs": flag, "vector": v}
                 for s, flag, v in zip(picked, labels, vectors, strict=True)]
        print(f"{ticker}: {len(picked)} sentences, {sum(labels)} recur", flush=True)
    return rows


def fitted(x: np.ndarray, y: np.ndarray, c: float):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=c, class_weight="balanced", max_iter=2000).fit(x, y)


def scored(model, x: np.ndarray, y: np.ndarray) -> dict:
    """Area under the ROC curve, and precision and recall at a likelihood of one half."""
    from sklearn.metrics import roc_auc_score

    p = model.predict_proba(x)[:, 1]
    said = p >= 0.5
    return {"sentences": int(len(y)), "recurring": int(y.sum()),
            "auc": round(float(roc_auc_score(y, p)), 4) if 0 < y.sum() < len(y) else None,
            "precision": round(float((said & y).sum() / max(1, said.sum())), 4),
            "recall": round(float((said & y).sum() / max(1, y.sum())), 4)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rag.boilerplate_fit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--storage", action="append", required=True, help="an index store to sample (repeat)")
    parser.add_argument("--leave-out", type=Path, action="append", default=[],
                        help="filings under this folder give no sentences (repeat)")
    parser.add_argument("--per-company", type=int, default=PER_COMPANY)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    args = parser.parse_args(argv)
    rows = [r for storage in args.storage for r in sample_sentences(storage, args.leave_out, args.per_company,
                                                                     args.seed)]
    x = np.stack([r["vector"] for r in rows])
    y = np.asarray([r["recurs"] for r in rows], dtype=bool)
    half = np.asarray([company_half(r["ticker"]) for r in rows])
    fit, held = half == "fit", half == "held_out"
    if y[fit].sum() == 0 or y[held].sum() == 0:
        parser.error("too few recurring sentences in one half of the companies: sample more, or a larger index")
    by_c = {c: scored(fitted(x[fit], y[fit], c), x[held], y[held]) for c in C_GRID}
    c = max(C_GRID, key=lambda k: by_c[k]["auc"] or 0.0)
    model = fitted(x, y, c)
    engine = Engine(get_settings(storage_dir=args.storage[0]))
    data = {
        "coef": [round(float(v), 6) for v in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
        "probe": [round(float(v), 6) for v in text_vectors(engine.retriever().embed_model, [PROBE])[0]],
        "fitted_on": {"sentences": int(len(y)), "recurring": int(y.sum()),
                      "companies": len({r["ticker"] for r in rows}), "C": c},
        "held_out": {"by_C": {str(k): v for k, v in by_c.items()}, "chosen": by_c[c]},
    }
    args.out.write_text(json.dumps(data) + "\n", encoding="utf-8")
    print(json.dumps({k: data[k] for k in ("fitted_on", "held_out")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
