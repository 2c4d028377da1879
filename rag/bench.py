"""Benchmarks that print numbers: `python -m rag bench index PATH...` (or `--synthetic-mb N`: a synthetic filing of
N MB, for peak memory), `python -m rag bench embed PATH...`, `python -m rag bench retrieve FILE...`,
`python -m rag bench answer FILE...` (the model's answers: prompt tokens and time to first token)."""

from __future__ import annotations

import json
import os
import resource
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from .config import Settings
from .schema import Filters
from .synthetic import write_synthetic_filing


def bench_index(paths: list[str], settings: Settings, backends: list[str] | None = None,
                synthetic_mb: float = 0.0) -> int:
    """Index PATHs once per backend (into --storage, or a fresh temporary folder), then again unchanged. Several
    backends run one after the other, each in a fresh temporary folder. With synthetic_mb, a synthetic 10-K of
    that size is indexed too (made in a temporary folder): the peak memory printed is that of a long filing."""
    if synthetic_mb > 0:
        with tempfile.TemporaryDirectory(prefix="rag-bench-synthetic-") as folder:
            path = write_synthetic_filing(Path(folder) / "synthetic-10k.htm", synthetic_mb)
            print(f"synthetic filing: {path.stat().st_size / 1024 / 1024:.1f} MB")
            return bench_index([*paths, str(path)], settings, backends)
    if not paths:
        print("give files or folders to index")
        return 2
    backends = backends or [settings.embed_backend]
    if len(backends) == 1:
        return _bench_index_one(paths, settings.with_overrides(embed_backend=backends[0]))
    code = 0
    for backend in backends:
        with tempfile.TemporaryDirectory(prefix=f"rag-bench-{backend}-") as tmp:
            print(f"\n=== backend {backend}")
            code = max(code, _bench_index_one(paths, settings.with_overrides(embed_backend=backend, storage_dir=tmp)))
    return code


def _rss_mb() -> float | None:
    """This process's resident memory now (Linux: /proc/self/statm), in MB."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024 / 1024
    except (OSError, ValueError, IndexError):
        return None


def _peak_mb() -> float:
    """The peak resident memory of this process so far (ru_maxrss is in KB on Linux), in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _StagePeaks:
    """Peak resident memory per indexing stage (parsing, chunking, embedding, publishing), sampled every 50 ms
    while `progress` tells the stage."""

    def __init__(self):
        self.stage = "starting"
        self.peaks: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def progress(self, _name: str, stage: str, _fraction: float) -> None:
        word = stage.split()[0].rstrip(":")  # "embedding 3/10" -> embedding
        self.stage = "publishing" if word == "indexed" else word  # the shard is written; the index is built next

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            rss = _rss_mb()
            if rss is not None:
                self.peaks[self.stage] = max(rss, self.peaks.get(self.stage, 0.0))

    def __enter__(self) -> "_StagePeaks":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _bench_index_one(paths: list[str], settings: Settings) -> int:
    from .index import IndexStore

    explicit = settings.storage_dir.resolve() != Settings().storage_dir.resolve()
    tmp = None if explicit else tempfile.TemporaryDirectory(prefix="rag-bench-")
    if tmp:
        settings = settings.with_overrides(storage_dir=tmp.name)
    print(f"storage: {settings.storage_dir}  backend: {settings.embed_backend}")
    t0 = time.perf_counter()
    store = IndexStore(settings)
    store.embed_model()
    print(f"model load (and ONNX export into an empty storage): {time.perf_counter() - t0:.2f} s "
          f"(one-off, not counted below)")
    store.chunker()  # tokenizer load, one-off as well
    start_mb = _rss_mb()
    with _StagePeaks() as stages:
        report = store.add(paths, progress=stages.progress)
    peak_mb = _peak_mb()
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
    print(f"index backend={settings.embed_backend} chunks={chunks - reused} embed_s={embed:.1f} "
          f"chunks_per_s={(chunks - reused) / embed if embed else 0:.1f}")
    # The process's own peak includes loading (an ONNX export peaks high, then frees): the stages are sampled.
    by_stage = "  ".join(f"{stage} {mb:.0f}" for stage, mb in stages.peaks.items())
    print(f"peak RSS while indexing: {max(stages.peaks.values(), default=0):.0f} MB (by stage, MB: "
          f"{by_stage or 'not sampled'}); when indexing began: {start_mb or 0:.0f} MB; process peak, loading "
          f"included: {peak_mb:.0f} MB")

    again = store.add(paths)
    skipped = sum(1 for r in again.rows if r["status"] == "skipped")
    print(f"re-index unchanged: {again.total_seconds:.2f} s  ({skipped} of {len(again.rows)} skipped, "
          f"{again.embed_seconds:.1f} s embedding)")
    if tmp:
        tmp.cleanup()
    return 0


def bench_embed(paths: list[str], settings: Settings, backends: list[str] | None = None, rounds: int = 1) -> int:
    """Embed the chunks of PATHs with each backend on the same texts, taking turns round by round so a busy
    machine slows them alike; one line per backend, with the cosine of its vectors to the first backend's."""
    from .embedding import get_embed_model

    texts = _chunk_texts(paths, settings)
    if not texts:
        print("no chunks: give filing files or folders")
        return 2
    backends = backends or [settings.embed_backend]
    models = {}
    for backend in backends:
        t0 = time.perf_counter()
        models[backend] = get_embed_model(settings.embed_model, settings.embed_batch_size, backend=backend,
                                          models_dir=settings.models_dir)
        models[backend].get_text_embedding_batch(texts[: settings.embed_batch_size])  # warm-up, not timed
        print(f"{backend}: load (and first export) {time.perf_counter() - t0:.1f} s")
    seconds = dict.fromkeys(backends, 0.0)
    vectors = {}
    for _ in range(max(rounds, 1)):
        for backend in backends:
            t0 = time.perf_counter()
            vectors[backend] = np.asarray(models[backend].get_text_embedding_batch(texts), dtype="float32")
            seconds[backend] += time.perf_counter() - t0
    first = backends[0]
    for backend in backends:
        cosine = np.sum(vectors[backend] * vectors[first], axis=1)
        total = len(texts) * max(rounds, 1)
        print(f"embed backend={backend} chunks={len(texts)} rounds={max(rounds, 1)} seconds={seconds[backend]:.1f} "
              f"cosine_vs_{first}_mean={cosine.mean():.4f} min={cosine.min():.4f} "
              f"chunks_per_s={total / seconds[backend]:.1f}")
    return 0


def _chunk_texts(paths: list[str], settings: Settings) -> list[str]:
    """The chunk texts indexing would embed for PATHs (parsed and chunked as the index does)."""
    from . import parse
    from .index import IndexStore
    from .index.filings import FILING_META_KEYS, filing_files, filing_meta

    chunker = IndexStore(settings).chunker()
    texts = []
    for path in filing_files(paths):
        doc = parse.parse_file(path)
        meta = filing_meta(path, doc, parse.file_sha256(path))
        texts.extend(chunk["text"] for chunk in chunker.split(doc, {k: meta.get(k) for k in FILING_META_KEYS}))
    return texts


def _questions_of(question_files: list[str]) -> list[str]:
    """The `question` of every line of the question files (the eval's JSONL), in order."""
    questions = []
    for path in question_files:
        with open(path, encoding="utf-8") as fh:
            questions.extend(json.loads(line)["question"] for line in fh if line.strip())
    return questions


def bench_retrieve(question_files: list[str], settings: Settings, *, mode: str, top_k: int,
                   filters: Filters | None = None) -> int:
    """Retrieval latency (query embedding included) over the questions of FILEs, on the current index."""
    from .engine import Engine

    engine = Engine(settings)
    if not len(engine.index()):
        print("the index is empty")
        return 1
    questions = _questions_of(question_files)
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


def bench_answer(question_files: list[str], settings: Settings, *, mode: str, top_k: int,
                 filters: Filters | None = None, limit: int | None = None) -> int:
    """The model's answers to the questions of FILEs, through the engine as the app asks: per answer the prompt
    tokens and answer tokens Ollama reports (its done line), the wait for the first words and the whole answer;
    then p50 and p95. Whatever OLLAMA_HOST and RAG_LLM_MODEL point at: a real Ollama or the llama.cpp test server."""
    from .answer import ollama_status
    from .engine import Engine, answered_question
    from .eval import OllamaCounts, llm_fields

    status = ollama_status(settings)
    if not (status.reachable and status.model_available):
        print(status.message)
        return 1
    engine = Engine(settings)
    if not len(engine.index()):
        print("the index is empty")
        return 1
    questions = _questions_of(question_files)
    questions = questions[:limit] if limit else questions
    engine.warm(mode)
    print(f"model {settings.llm_model} at {settings.ollama_url}, context {settings.llm_context_window}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '-')} here (the server's own setting decides)")
    # first s: the answer's first words (an exact figure leads before the model speaks); model s: the model's own.
    print(f"{'#':>3} {'by':<10} {'prompt':>7} {'answer':>7} {'first s':>8} {'model s':>8} {'total s':>8} "
          f"{'tok/s':>6}  question")
    rows = []
    with OllamaCounts() as counts:
        for i, question in enumerate(questions, 1):
            retrieval = engine.retrieve(question, mode=mode, top_k=top_k, filters=filters, for_llm=True)
            seen = len(counts.seen)
            t0 = time.perf_counter()
            result = engine.answer_stream_for(answered_question(question, retrieval), retrieval,
                                              filters=filters).consume()
            total = time.perf_counter() - t0
            done = counts.seen[-1] if len(counts.seen) > seen else {}
            row = {**llm_fields(result, done), "total_s": total}
            rate = (done.get("eval_count") or 0) / (done.get("eval_duration") or 1) * 1e9 if done else None
            rows.append(row)
            by = "model" if row["llm_answered"] else ("refused" if result.refused else "extractive")
            print(f"{i:>3} {by:<10} {row['prompt_tokens'] or '-':>7} {row['eval_tokens'] or '-':>7} "
                  f"{_secs(row['first_token_s']):>8} {_secs(row['model_first_token_s']):>8} {total:>8.1f} "
                  f"{_secs(rate):>6}  {question[:60]}", flush=True)
    answered = [r for r in rows if r["llm_answered"]]
    for key, label in (("prompt_tokens", "prompt tokens"), ("first_token_s", "first token s"),
                       ("model_first_token_s", "model first s"), ("total_s", "whole answer s")):
        values = np.array([r[key] for r in answered if r[key] is not None], dtype=float)
        if len(values):
            print(f"{label:<16} p50 {np.percentile(values, 50):.1f}  p95 {np.percentile(values, 95):.1f}  "
                  f"(over {len(values)} answers by the model)")
    print(f"answers by the model: {len(answered)} of {len(rows)}")
    return 0


def _secs(value) -> str:
    return "-" if value is None else f"{value:.1f}"
