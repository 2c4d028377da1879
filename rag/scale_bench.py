"""`python -m rag bench scale --backend embedded|postgres --chunks N`: the index at a size no test corpus reaches.

A synthetic index of N chunks is built from the real chunks of the --storage index (read only): its filings are
repeated under new filing ids and tickers, each copy's vectors perturbed a little and normalised again, so the
copies are near but not equal to the originals, as filings of a sector are. Embedding is left out everywhere (a
copy carries its vectors), so the times are the store's own:

    build_s          writing all N chunks (embedded: every shard, then the one FAISS + BM25 build; postgres: a
                     transaction per filing, the HNSW and full-text indexes growing as rows arrive)
    add_s            adding one more filing to the built index (embedded: its shard and the rebuild it needs;
                     postgres: its rows in one transaction)
    p50_ms, p95_ms   one search (a dense and a keyword query, k 30, as hybrid retrieval makes them) over every chunk
    p95_filtered_ms  the same within one company's chunks (a ticker filter)
    rss_mb           the resident memory of a fresh process that loaded the index and ran those searches

The embedded index goes into a temporary folder; the postgres one into the database at RAG_DATABASE_URL, which
must hold no filings (a database made for the benchmark).
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from llama_index.core.vector_stores.types import VectorStoreQuery

from .bench import _rss_mb
from .config import Settings, get_settings
from .database import transaction, xact_lock
from .index import IndexStore, ServedIndexStore, open_store
from .index.nodes import make_node, node_to_json, read_nodes

QUERIES = 40
SEARCH_K = 30
NOISE = 0.02  # the spread of each copy's vectors around the original's (they are unit length)


def _source(settings: Settings) -> list[tuple[dict, Path]]:
    """The real filings to repeat: (record, shard folder) of the --storage index's live generation."""
    store = IndexStore(settings)
    filings = store._manifest().get("filings", {})
    return [(entry, store.root / "shards" / entry["shard"]) for _, entry in sorted(filings.items())]


def _copies(source: list[tuple[dict, Path]], rng: np.random.Generator):
    """(record, nodes, vectors, text, sections) of synthetic filings, without end."""
    copy = 0
    while True:
        copy += 1
        for entry, shard in source:
            vectors = np.load(shard / "vectors.npy")
            vectors = vectors + rng.normal(0.0, NOISE, vectors.shape).astype("float32")
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            doc_id, ticker = f"{entry['doc_id']}-x{copy}", f"{entry.get('ticker') or 'X'}{copy}"
            record = {**entry, "doc_id": doc_id, "ticker": ticker, "sha256": f"{doc_id}-synthetic"}
            nodes = [make_node(f"{n.node_id}-x{copy}", n.text, {**n.metadata, "doc_id": doc_id, "ticker": ticker})
                     for n in read_nodes(shard / "nodes.jsonl")]
            yield record, nodes, vectors, (shard / "text.txt").read_text(encoding="utf-8"), \
                json.loads((shard / "sections.json").read_text())


def _filings(source, chunks: int, rng):
    """The synthetic filings of exactly `chunks` chunks (the last one cut short), then one more whole one."""
    copies = _copies(source, rng)
    made = 0
    while made < chunks:
        record, nodes, vectors, text, sections = next(copies)
        nodes, vectors = nodes[: chunks - made], vectors[: chunks - made]
        made += len(nodes)
        yield {**record, "chunks": len(nodes)}, nodes, vectors, text, sections
    yield next(copies)


def _write_shard(root: Path, record: dict, nodes, vectors, text: str, sections) -> dict:
    shard = root / "shards" / record["doc_id"]
    shard.mkdir(parents=True, exist_ok=True)
    (shard / "nodes.jsonl").write_text("".join(node_to_json(n) + "\n" for n in nodes), encoding="utf-8")
    np.save(shard / "vectors.npy", vectors.astype("float32"))
    (shard / "text.txt").write_text(text, encoding="utf-8")
    (shard / "sections.json").write_text(json.dumps(sections))
    return {**record, "shard": record["doc_id"]}


def _progress(done: int, total: int, started: float, shown: list) -> None:
    tenth = done * 10 // max(total, 1)
    if tenth > shown[0]:
        shown[0] = tenth
        print(f"  {done}/{total} chunks written, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)


def _build(backend: str, settings: Settings, source, chunks: int, rng) -> tuple[float, float, list[str]]:
    """Build the synthetic index and add one more filing: (build_s, add_s, the tickers built)."""
    copies = _filings(source, chunks, rng)
    tickers, made, shown = [], 0, [0]
    started = time.perf_counter()
    if backend == "embedded":
        store = IndexStore(settings)
        filings = {}
        for record, nodes, vectors, text, sections in copies:
            if made >= chunks:  # the one more filing, added once the index is built
                extra = (record, nodes, vectors, text, sections)
                break
            filings[record["doc_id"]] = _write_shard(store.root, record, nodes, vectors, text, sections)
            tickers.append(record["ticker"])
            made += len(nodes)
            _progress(made, chunks, started, shown)
        store._publish(filings)
        build_s = time.perf_counter() - started
        t0 = time.perf_counter()
        filings[extra[0]["doc_id"]] = _write_shard(store.root, *extra)
        store._publish(filings)
        return build_s, time.perf_counter() - t0, tickers
    store = ServedIndexStore(settings)
    with store._connect() as conn:
        store.ensure_chunk_table(conn, source and np.load(source[0][1] / "vectors.npy").shape[1])
        conn.commit()

        def insert(record, nodes, vectors, text, sections):
            with transaction(conn):
                xact_lock(conn, "filing", record["doc_id"])
                store.insert_filing(conn, record, nodes, vectors, text, sections)

        for record, nodes, vectors, text, sections in copies:
            if made >= chunks:
                extra = (record, nodes, vectors, text, sections)
                break
            insert(record, nodes, vectors, text, sections)
            tickers.append(record["ticker"])
            made += len(nodes)
            _progress(made, chunks, started, shown)
        conn.execute("ANALYZE rag_chunks")
        build_s = time.perf_counter() - started
        t0 = time.perf_counter()
        insert(*extra)
        return build_s, time.perf_counter() - t0, tickers


def _build_in_process(backend: str, settings: Settings, source, chunks: int, seed: int):
    return _build(backend, settings, source, chunks, np.random.default_rng(seed))


def _probe(storage_dir: str, database_url: str, queries: list[tuple[str, list[float]]], tickers: list[str]) -> dict:
    """In a fresh process: load the index, run the searches, report their times and the memory it took."""
    t0 = time.perf_counter()
    index = open_store(get_settings(storage_dir=Path(storage_dir), database_url=database_url)).load()
    print(f"  loaded in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    rss = _rss_mb() or 0.0

    def search(text, vector, rows):
        t0 = time.perf_counter()
        index.vector_store.query(VectorStoreQuery(query_embedding=vector, similarity_top_k=SEARCH_K,
                                                  **index.restriction(rows)))
        index.keyword_search(text, SEARCH_K, rows)
        return (time.perf_counter() - t0) * 1000

    search(*queries[0], None)  # the first search warms caches
    plain = [search(text, vector, None) for text, vector in queries]
    filtered = [search(text, vector, index.subset(tickers=[ticker]))
                for (text, vector), ticker in zip(queries, tickers)]
    return {"p50_ms": float(np.percentile(plain, 50)), "p95_ms": float(np.percentile(plain, 95)),
            "p95_filtered_ms": float(np.percentile(filtered, 95)), "rss_mb": max(rss, _rss_mb() or 0.0)}


def bench_scale(settings: Settings, backend: str, chunks: int) -> int:
    source = _source(settings)
    if not source:
        print(f"no indexed filings under {settings.storage_dir} to repeat: give --storage an index", file=sys.stderr)
        return 1
    if backend == "postgres" and not settings.served:
        print("bench scale --backend postgres needs RAG_DATABASE_URL (an empty database)", file=sys.stderr)
        return 2
    rng = np.random.default_rng(7)
    picks = [source[i % len(source)] for i in rng.permutation(len(source) * 3)[:QUERIES]]
    queries = []
    for _entry, shard in picks:  # a query near a real chunk: its opening words and its vector, perturbed
        nodes = read_nodes(shard / "nodes.jsonl")
        i = int(rng.integers(len(nodes)))
        vector = np.load(shard / "vectors.npy")[i]
        vector = vector + rng.normal(0.0, NOISE * 5, vector.shape)
        words = nodes[i].text.split("\n", 1)[-1].split()[:12]
        queries.append((" ".join(words), (vector / np.linalg.norm(vector)).astype("float32").tolist()))
    with tempfile.TemporaryDirectory(prefix="rag-scale-") as tmp:
        built = settings.with_overrides(storage_dir=Path(tmp), database_url=settings.database_url
                                        if backend == "postgres" else "")
        if backend == "postgres" and ServedIndexStore(built).list_filings():
            print("bench scale writes into the database at RAG_DATABASE_URL: give it an empty one", file=sys.stderr)
            return 2
        # Built in a process of its own, which ends before the probe starts: at millions of chunks the embedded
        # build's memory would otherwise still be held beside the loaded index the probe measures.
        spawn = multiprocessing.get_context("spawn")
        with spawn.Pool(1) as pool:
            build_s, add_s, tickers = pool.apply(_build_in_process, (backend, built, source, chunks, 11))
        chosen = [tickers[int(i)] for i in rng.integers(len(tickers), size=len(queries))]
        with spawn.Pool(1) as pool:
            found = pool.apply(_probe, (str(built.storage_dir), built.database_url, queries, chosen))
    print(f"backend={backend} chunks={chunks} build_s={build_s:.1f} add_s={add_s:.2f} p50_ms={found['p50_ms']:.1f} "
          f"p95_ms={found['p95_ms']:.1f} p95_filtered_ms={found['p95_filtered_ms']:.1f} rss_mb={found['rss_mb']:.0f}",
          flush=True)
    return 0
