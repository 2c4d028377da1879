"""Scoring question sets against the current index (format: ../shared/eval/FORMAT.md) and FinanceBench."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from .config import Settings

_SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "k": 1e3, "m": 1e6, "bn": 1e9,
                "b": 1e9}
_UNIT_BASE = {"usd millions": 1e6, "usd thousands": 1e3, "usd billions": 1e9, "usd": 1.0}


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip().lower()


def evidence_found(piece: list[str], chunk_text: str) -> bool:
    text = normalize(chunk_text)
    return all(normalize(s) in text for s in piece)


def numbers_in(text: str) -> list[tuple[float, float | None, bool]]:
    """(number, scale factor named after it or None, followed by %) for every number in an answer."""
    out = []
    pattern = r"(\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?)\s*(%|percent\b|thousand\b|million\b|billion\b|trillion\b|bn\b|[kmb]\b)?"
    for m in re.finditer(pattern, text, flags=re.I):
        raw = m.group(1)
        negative = raw.startswith("(") and raw.endswith(")") or "-" in raw
        digits = re.sub(r"[^\d.]", "", raw)
        if not digits or digits == ".":
            continue
        try:
            value = float(digits)
        except ValueError:
            continue
        word = (m.group(2) or "").lower()
        pct = word in ("%", "percent")
        scale = None if pct or not word else _SCALE_WORDS.get(word)
        out.append((-value if negative else value, scale, pct))
    return out


def numeric_correct(answer: str, value: float, unit: str | None, tolerance: float) -> bool:
    """A number in the answer within tolerance of the reference value, with units normalised."""
    unit = (unit or "").lower()
    base = _UNIT_BASE.get(unit)
    tol = max(tolerance, 1e-9)
    for number, scale, _pct in numbers_in(answer):
        candidates = [number]
        if scale is not None:
            if base:
                candidates = [number * scale / base]
            else:  # shares, employees: absolute counts
                candidates = [number * scale]
        elif base and abs(number) >= 1e6 * max(abs(value), 1):
            candidates.append(number / base)  # written out in dollars
        for c in candidates:
            if abs(c - value) <= tol * max(abs(value), 1e-9):
                return True
    return False


def _chunk_filing(node) -> tuple[str, int | None, str]:
    m = node.metadata
    return (str(m.get("ticker") or "").upper(), m.get("fiscal_year"), str(m.get("form") or "").upper())


def _gold_set(question: dict) -> set[tuple[str, int, str]]:
    return {(f["ticker"].upper(), int(f["fiscal_year"]), f.get("form", "10-K").upper()) for f in question["filings"]}


def score_retrieval(question: dict, nodes: list) -> dict:
    gold = _gold_set(question)
    pieces = question.get("evidence") or []
    row: dict = {}
    for k in (5, 10):
        top = [n.node for n in nodes[:k]]
        if pieces:
            found = sum(
                1 for piece in pieces
                if any(_chunk_filing(node) in gold and evidence_found(piece, node.get_content()) for node in top)
            )
            row[f"evidence_recall@{k}"] = found / len(pieces)
        else:
            row[f"evidence_recall@{k}"] = None
    top5 = [n.node for n in nodes[:5]]
    row["filing_precision@5"] = (sum(1 for n in top5 if _chunk_filing(n) in gold) / len(top5)) if gold and top5 else (
        0.0 if gold else None)
    rr = 0.0
    if pieces:
        for rank, n in enumerate(nodes, 1):
            if _chunk_filing(n.node) in gold and any(evidence_found(p, n.node.get_content()) for p in pieces):
                rr = 1.0 / rank
                break
        row["rr"] = rr
    else:
        row["rr"] = None
    return row


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(float(np.mean(values)), 4) if values else None


def run_questions(
    path: Path, settings: Settings, *, mode: str = "hybrid", top_k: int = 10, use_llm: bool = False,
    use_analysis: bool = True,
) -> dict:
    from .engine import Engine

    engine = Engine(settings)
    if not len(engine.index()):
        raise SystemExit("the index is empty: index the filings first (python -m rag index PATH)")
    questions = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    engine.warm(mode)  # model, index and fact views loaded before timing
    rows = []
    for q in questions:
        retrieval = engine.retrieve(q["question"], mode=mode, top_k=top_k, use_analysis=use_analysis,
                                    generated_queries=None if use_llm else 0)
        # Through the engine, as the app and the CLI answer: exact XBRL figures first (facts hook, rag/facts.py).
        result = engine.answer_stream_for(q["question"], retrieval, use_llm=use_llm).consume()
        row = {"id": q["id"], "kind": q["kind"], **score_retrieval(q, retrieval.nodes)}
        refused = bool(result.refused) and not result.citations
        if not q.get("answerable", True):
            correct = refused
        elif q.get("value") is not None:
            correct = (not result.refused) and numeric_correct(result.answer, float(q["value"]), q.get("unit"),
                                                               float(q.get("tolerance") or 0.0))
        else:
            correct = None  # prose answers are not scored automatically
        row.update(
            answer=result.answer,
            answer_correct=correct,
            refused=bool(result.refused),
            cited_filings=sorted({f"{c.ticker} {c.form} FY{c.fiscal_year}" for c in result.citations}),
            retrieved=[
                {"ticker": n.node.metadata.get("ticker"), "fiscal_year": n.node.metadata.get("fiscal_year"),
                 "section": n.node.metadata.get("section"), "page": n.node.metadata.get("page_start"),
                 "score": round(float(n.score or 0.0), 4)}
                for n in retrieval.nodes
            ],
            detected=retrieval.plan.label(),
            retrieval_ms=round(retrieval.retrieval_ms, 2),
        )
        rows.append(row)
    return summarize(rows, mode=mode, top_k=top_k, use_analysis=use_analysis, use_llm=use_llm,
                     fusion=settings.fusion + (f" {settings.fusion_weights}" if settings.fusion_weights else ""))


def summarize(rows: list[dict], **info) -> dict:
    latencies = np.array([r["retrieval_ms"] for r in rows]) if rows else np.zeros(1)
    answerable = [r for r in rows if r["kind"] != "refusal"]
    refusals = [r for r in rows if r["kind"] == "refusal"]
    scored = [r for r in rows if r["answer_correct"] is not None]

    def block(subset):
        return {
            "count": len(subset),
            "evidence_recall@5": _mean(r["evidence_recall@5"] for r in subset),
            "evidence_recall@10": _mean(r["evidence_recall@10"] for r in subset),
            "filing_precision@5": _mean(r["filing_precision@5"] for r in subset),
            "mrr": _mean(r["rr"] for r in subset),
            "answer_accuracy": _mean(float(r["answer_correct"]) for r in subset if r["answer_correct"] is not None),
        }

    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    overall = block(answerable)
    return {
        **info,
        "questions_total": len(rows),
        "evidence_recall@5": overall["evidence_recall@5"],
        "evidence_recall@10": overall["evidence_recall@10"],
        "filing_precision@5": overall["filing_precision@5"],
        "mrr": overall["mrr"],
        "answer_accuracy": _mean(float(r["answer_correct"]) for r in scored),
        "refusal_accuracy": _mean(float(r["answer_correct"]) for r in refusals),
        "latency_ms": {"p50": round(float(np.percentile(latencies, 50)), 2),
                       "p95": round(float(np.percentile(latencies, 95)), 2)},
        "by_kind": {kind: block(subset) for kind, subset in sorted(by_kind.items())},
        "questions": rows,
    }


def print_report(report: dict) -> None:
    keys = [k for k in ("evidence_recall@5", "evidence_recall@10", "filing_precision@5", "mrr", "answer_accuracy",
                        "refusal_accuracy", "page_hit@5", "page_hit@10", "doc_hit@5") if k in report]
    info = {k: report[k] for k in ("mode", "top_k", "use_analysis", "use_llm") if k in report}
    print("settings: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    for key in keys:
        print(f"{key:<20} {report[key]}")
    print(f"{'latency_ms':<20} p50 {report['latency_ms']['p50']}  p95 {report['latency_ms']['p95']}")
    if report.get("by_kind"):
        print(f"\n{'kind':<14} {'n':>3} {'rec@5':>6} {'rec@10':>6} {'prec@5':>6} {'mrr':>6} {'acc':>6}")
        for kind, b in report["by_kind"].items():
            def f(v):
                return "-" if v is None else f"{v:.2f}"
            print(f"{kind:<14} {b['count']:>3} {f(b['evidence_recall@5']):>6} {f(b['evidence_recall@10']):>6} "
                  f"{f(b['filing_precision@5']):>6} {f(b['mrr']):>6} {f(b['answer_accuracy']):>6}")


# --------------------------------------------------------------------------------------------------------------
# FinanceBench: one shared store over all its PDFs


def run_financebench(folder: Path, settings: Settings, *, mode: str = "hybrid", top_k: int = 10,
                     progress=None, use_analysis: bool = True) -> dict:
    from .engine import Engine
    from .index import IndexStore

    if settings.storage_dir.resolve() == Settings().storage_dir.resolve():
        settings = settings.with_overrides(storage_dir=settings.storage_dir / "financebench")
    documents = {d["doc_name"]: d for d in map(json.loads, open(folder / "documents.jsonl", encoding="utf-8"))}
    questions = [json.loads(line) for line in open(folder / "questions.jsonl", encoding="utf-8") if line.strip()]
    store = IndexStore(settings)
    # Held by the current chunker and model; a PDF indexed by an older one is brought up to date (and re-embeds only
    # its changed chunks).
    indexed_paths = {Path(f.get("path") or "").name for f in store.list_filings()
                     if f.get("fingerprint") == store.fingerprint}
    for name, doc in documents.items():
        pdf = folder / "pdfs" / f"{name}.pdf"
        if not pdf.exists() or pdf.name in indexed_paths:
            continue
        store.add([pdf], progress=progress, overrides={
            "ticker": re.sub(r"[^A-Z0-9]", "", doc["company"].upper())[:12] or name.split("_")[0],
            "company": doc["company"], "form": "10-K", "fiscal_year": doc.get("doc_period"),
        })
    engine = Engine(settings)
    by_path = {Path(f["path"]).stem: f["doc_id"] for f in engine.index().filings.values()}
    engine.warm(mode)
    rows = []
    for q in questions:
        gold_doc = by_path.get(q["doc_name"])
        pages = {int(e["evidence_page_num"]) + 1 for e in q.get("evidence", [])}
        retrieval = engine.retrieve(q["question"], mode=mode, top_k=top_k, use_analysis=use_analysis)
        row = {"id": q.get("financebench_id"), "doc_name": q["doc_name"], "retrieval_ms": retrieval.retrieval_ms}
        for k in (5, 10):
            top = [n.node.metadata for n in retrieval.nodes[:k]]
            row[f"page_hit@{k}"] = any(
                m.get("doc_id") == gold_doc and any(m["page_start"] <= p <= m["page_end"] for p in pages) for m in top
            )
        row["doc_hit@5"] = any(n.node.metadata.get("doc_id") == gold_doc for n in retrieval.nodes[:5])
        row["detected"] = retrieval.plan.label()
        rows.append(row)
    lat = np.array([r["retrieval_ms"] for r in rows]) if rows else np.zeros(1)
    return {
        "mode": mode, "top_k": top_k, "use_analysis": use_analysis, "storage": str(settings.storage_dir),
        "fusion": settings.fusion + (f" {settings.fusion_weights}" if settings.fusion_weights else ""),
        "questions_total": len(rows),
        "page_hit@5": _mean(float(r["page_hit@5"]) for r in rows),
        "page_hit@10": _mean(float(r["page_hit@10"]) for r in rows),
        "doc_hit@5": _mean(float(r["doc_hit@5"]) for r in rows),
        "latency_ms": {"p50": round(float(np.percentile(lat, 50)), 2), "p95": round(float(np.percentile(lat, 95)), 2)},
        "questions": rows,
    }
