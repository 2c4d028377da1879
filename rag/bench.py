"""Benchmarks that print numbers: `python -m rag bench index PATH...`, `python -m rag bench retrieve FILE...`."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np

from .config import Settings
from .schema import Filters


def bench_index(paths: list[str], settings: Settings) -> int:
    """Index PATHs (into --storage, or a fresh temporary folder), then index them again unchanged."""
    from .embedding import get_embed_model
    from .index import IndexStore

    if not paths:
        print("give files or folders to index")
        return 2
    explicit = settings.storage_dir.resolve() != Settings().storage_dir.resolve()
    tmp = None if explicit else tempfile.TemporaryDirectory(prefix="rag-bench-")
    if tmp:
        settings = settings.with_overrides(storage_dir=tmp.name)
    print(f"storage: {settings.storage_dir}")
    t0 = time.perf_counter()
    get_embed_model(settings.embed_model, settings.embed_batch_size)
    print(f"model load: {time.perf_counter() - t0:.2f} s (one-off, not counted below)")

    store = IndexStore(settings)
    store.chunker()  # tokenizer load, one-off as well
    report = store.add(paths)
    print(f"\n{'filing':<48} {'parse s':>8} {'chunks':>7} {'reused':>7} {'embed s':>8} {'chunks/s':>9} {'status':>8}")
    for row in report.rows:
        embedded = row["chunks"] - row.get("reused", 0)
        rate = embedded / row["embed_s"] if row.get("embed_s") else 0.0
        print(f"{Path(row['file']).name[:48]:<48} {row['parse_s']:>8.2f} {row['chunks']:>7} {row.get('reused', 0):>7} "
              f"{row['embed_s']:>8.2f} {rate:>9.1f} {row['status']:>8}")
    indexed = [r for r in report.rows if r["status"] == "indexed"]
    parse_total = sum(r["parse_s"] for r in indexed)
    chunks = sum(r["chunks"] for r in indexed)
    reused = sum(r.get("reused", 0) for r in indexed)
    embed = report.embed_seconds
    outside = report.total_seconds - embed
    print(f"\nfilings indexed: {len(indexed)}  failed: {len(report.errors)}  chunks: {chunks}  "
          f"(vectors reused from the previous index: {reused})")
    print(f"total: {report.total_seconds:.1f} s  embedding: {embed:.1f} s  "
          f"({(chunks - reused) / embed if embed else 0:.1f} chunks/s)  publish (FAISS + BM25 build, write): "
          f"{report.build_seconds:.1f} s")
    print(f"parse: {parse_total:.1f} s in all, {parse_total / max(len(indexed), 1):.2f} s per filing on average")
    print(f"time outside embedding: {outside:.1f} s = {100 * outside / max(report.total_seconds, 1e-9):.1f}% of total")

    again = store.add(paths)
    skipped = sum(1 for r in again.rows if r["status"] == "skipped")
    print(f"re-index unchanged: {again.total_seconds:.2f} s  ({skipped} of {len(again.rows)} skipped, "
          f"{again.embed_seconds:.1f} s embedding)")
    if tmp:
        tmp.cleanup()
    return 0


def bench_retrieve(question_files: list[str], settings: Settings, *, mode: str, top_k: int,
                   filters: Filters | None = None) -> int:
    """Retrieval latency (query embedding included) over the questions of FILEs, on the current index."""
    from .engine import Engine

    engine = Engine(settings)
    if not len(engine.index()):
        print("the index is empty")
        return 1
    questions = []
    for path in question_files:
        with open(path, encoding="utf-8") as fh:
            questions.extend(json.loads(line)["question"] for line in fh if line.strip())
    engine.warm(mode)
    times = []
    for q in questions:
        t0 = time.perf_counter()
        engine.retrieve(q, mode=mode, top_k=top_k, filters=filters)
        times.append((time.perf_counter() - t0) * 1000)
    arr = np.array(times)
    print(f"{len(times)} queries, mode {mode}, top-k {top_k}, {len(engine.index())} chunks: "
          f"p50 {np.percentile(arr, 50):.1f} ms  p95 {np.percentile(arr, 95):.1f} ms  max {arr.max():.1f} ms")
    return 0
