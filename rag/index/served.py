"""Team mode's index: every filing's chunks, vectors and text in PostgreSQL (RAG_DATABASE_URL), written a filing at
a time and read on demand.

Tables (created on first use): rag_filings (one row per filing: its record, as the embedded manifest holds it, its
text and sections, and how its text writes its words, counted when it is written, for the catalog), rag_chunks (see pg_vector_store) and rag_index_state (a generation number every write raises,
so a reader knows when to look again, and the embedding model the vectors come from).

Why one transaction per filing: adding a filing inserts its rows and nothing else (no rebuild, a cost independent
of the index's size); readers see the filing whole or not at all; a killed writer's transaction is rolled back by
the server, so nothing of it stays. Writers of the same filing take turns on an advisory lock; writers of different
filings do not wait for each other (only the generation number's row, for the moment of commit).

The loaded index keeps in memory only what filters match on (a few numbers and shared strings per chunk) and the
chunks' keys; a chunk's text and metadata are fetched when a search returns it.
"""

from __future__ import annotations

import json
import logging
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterable

import numpy as np
from llama_index.core.schema import NodeWithScore
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

from .. import parse as parse_module
from ..config import Settings
from ..database import connect, ensure_schema, xact_lock
from ..facts import forget_filings, record_filing
from .corrections import USER_SOURCE, checked_corrections, with_record
from .errors import IndexError_
from .filings import FILING_META_KEYS, filing_files, indexable
from .loaded import LoadedIndex, phrase_pattern, row_label_pattern
from .nodes import node_to_json, read_nodes
from .pg_vector_store import (
    PgFilingVectorStore,
    chunk_row,
    chunk_table_statements,
    insert_chunks,
    node_of,
    selection_clause,
)
from .store import IndexReport, IndexStore, Progress, _failed, sorted_filings
from .transforms import EmbedChangedChunks, embedded_batches
from .word_uses import WordUses, filing_counts

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
SCHEMA = [
    """CREATE TABLE IF NOT EXISTS rag_filings (
        doc_id text PRIMARY KEY,
        sha256 text NOT NULL,
        record jsonb NOT NULL,
        text text NOT NULL,
        sections jsonb NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS rag_index_state (
        id integer PRIMARY KEY CHECK (id = 1),
        generation bigint NOT NULL,
        embed_model text,
        embed_backend text,
        dim integer
    )""",
    "INSERT INTO rag_index_state (id, generation) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    # version 2: a filing's word counts (rag.index.word_uses.filing_counts); NULL for filings written before
    "ALTER TABLE rag_filings ADD COLUMN IF NOT EXISTS word_uses jsonb",
]
# The filter columns a loaded index keeps per row, as rag_chunks holds them.
_COLUMNS = ("ticker", "fiscal_year", "fiscal_period", "form", "section", "merged_section", "statement", "doc_id",
            "exhibit_list")
_FETCH_ROWS = 50_000


class FilteredRows(np.ndarray):
    """Rows a filter chose (ServedIndex.subset), carrying that filter so the database applies it as a WHERE clause
    rather than a list of every row. An array derived from it (a slice, a mask) is plain rows again."""

    filters: MetadataFilters | None = None

    def __array_finalize__(self, obj) -> None:
        self.filters = None


class ServedNodes:
    """The chunks of a served index as a sequence (row i), fetched from the database when read."""

    def __init__(self, index: "ServedIndex"):
        self._index = index

    def __len__(self) -> int:
        return len(self._index.ids)

    def __getitem__(self, row: int):
        return self._index.nodes_at([row])[0]

    def __iter__(self):
        """Every chunk, in row order, a page at a time (none is held after it was read)."""
        ids = self._index.ids
        for start in range(0, len(ids), 2_000):
            yield from self._index.nodes_at(range(start, min(start + 2_000, len(ids))))


class ServedIndex(LoadedIndex):
    """The served index as loaded: the same questions LoadedIndex answers, asked of the database."""

    def __init__(self, generation: str, manifest: dict, vector_store: PgFilingVectorStore,
                 columns: dict[str, np.ndarray], ids: np.ndarray, root: Path):
        super().__init__(generation, manifest, [], vector_store, None, root, columns)
        self.ids = ids  # row i is rag_chunks.id ids[i] (ascending)
        self.nodes = ServedNodes(self)

    def __len__(self) -> int:
        return len(self.ids)

    def _where(self, rows) -> tuple[str, list]:
        if rows is None:
            return "TRUE", []
        if isinstance(rows, FilteredRows) and rows.filters is not None:
            return selection_clause(filters=rows.filters)
        return selection_clause(ids=self.ids[np.asarray(rows, dtype=np.int64)])

    def _rows_of(self, ids: Iterable[int]) -> np.ndarray:
        """Rows of the given rag_chunks keys (keys written after this index was loaded are left out)."""
        ids = np.fromiter(ids, dtype=np.int64)
        at = np.searchsorted(self.ids, ids)
        at = np.minimum(at, max(len(self.ids) - 1, 0))
        known = (self.ids[at] == ids) if len(self.ids) else np.zeros(len(ids), dtype=bool)
        return np.sort(at[known])

    def subset(self, tickers=(), fiscal_years=(), forms=(), sections=(), doc_ids=(), statements=(),
               fiscal_periods=(), without_exhibit_lists: bool = False) -> np.ndarray | None:
        rows = super().subset(tickers=tickers, fiscal_years=fiscal_years, forms=forms, sections=sections,
                              doc_ids=doc_ids, statements=statements, fiscal_periods=fiscal_periods,
                              without_exhibit_lists=without_exhibit_lists)
        if rows is None:
            return None
        wanted = {"ticker": tickers, "fiscal_year": fiscal_years, "form": forms, "section": sections,
                  "doc_id": doc_ids, "statement": statements, "fiscal_period": fiscal_periods}
        conditions = [MetadataFilter(key=key, value=list(values), operator=FilterOperator.IN)
                      for key, values in wanted.items() if values]
        if without_exhibit_lists and self.columns["exhibit_list"].any():
            # 0 for False: MetadataFilter takes numbers and strings, not booleans.
            conditions.append(MetadataFilter(key="exhibit_list", value=0, operator=FilterOperator.EQ))
        chosen = np.asarray(rows).view(FilteredRows)
        chosen.filters = MetadataFilters(filters=conditions)
        return chosen

    def restriction(self, rows) -> dict:
        if rows is None:
            return {}
        if isinstance(rows, FilteredRows) and rows.filters is not None:
            return {"filters": rows.filters}
        ids = self.ids[np.asarray(rows, dtype=np.int64)]
        found = self.vector_store.run(lambda conn: conn.execute(
            "SELECT node_id FROM rag_chunks WHERE id = ANY(%s)", ([int(i) for i in ids],)).fetchall())
        # No chunk left (all removed since loading): a chunk id no row has, so the search finds nothing.
        return {"node_ids": [r[0] for r in found] or ["-"]}

    def keyword_search(self, text: str, k: int, rows=None) -> list[NodeWithScore]:
        if not len(self) or (rows is not None and not len(rows)):
            return []
        where, params = self._where(rows)
        return self.vector_store.keyword_search(text, k, where, params)

    def _matching_rows(self, probe_sql: str, probe: str, pattern, rows, words: str) -> np.ndarray:
        """Rows whose text holds `probe` (found in SQL) and matches `pattern` (checked here, as LoadedIndex does).
        Over the whole index the chunks holding every one of `words` are found first, through the full-text index:
        scanning every chunk's text took seconds at a million chunks."""
        if not len(self):
            return np.array([], dtype=np.int64)
        where, params = self._where(rows)

        def work(conn):
            sql, args = f"SELECT id, text FROM rag_chunks WHERE {probe_sql} AND {where}", [probe, *params]
            if where == "TRUE" and conn.execute("SELECT numnode(plainto_tsquery('english', %s))",
                                                (words,)).fetchone()[0]:
                sql += " AND search @@ plainto_tsquery('english', %s)"
                args.append(words)
            return conn.execute(sql, args).fetchall()

        found = self.vector_store.run(work)
        return self._rows_of(i for i, text in found if pattern.search(text))

    def rows_with_phrase(self, phrase: str, rows=None) -> np.ndarray:
        found = phrase_pattern(phrase)
        if found is None:
            return np.array([], dtype=np.int64)
        return self._matching_rows("strpos(text, %s) > 0", found[1], found[0], rows, phrase)

    def rows_with_row_label(self, words: list[str], rows=None) -> np.ndarray:
        found = row_label_pattern(words)
        if found is None:
            return np.array([], dtype=np.int64)
        return self._matching_rows("strpos(lower(text), %s) > 0", found[1], found[0], rows, " ".join(words))

    def word_uses(self) -> WordUses:
        """The loaded filings' word counts, added up in the database (no chunk is read, but those of a filing
        written before the counts were kept)."""
        if self._word_uses is None:
            self._word_uses = self.vector_store.run(self._added_word_uses)
        return self._word_uses

    def _added_word_uses(self, conn) -> WordUses:
        uses, doc_ids = WordUses(), list(self.filings)
        ticker = "upper(coalesce(record->>'ticker', ''))"
        for company, word, n in conn.execute(
                f"SELECT {ticker}, w.key, sum(w.value::bigint) FROM rag_filings, "
                "jsonb_each_text(word_uses->'capitalised') w WHERE doc_id = ANY(%s) GROUP BY 1, 2", (doc_ids,)):
            if company:
                uses.capitalised[company][word] = int(n)
        for (company,) in conn.execute(f"SELECT DISTINCT {ticker} FROM rag_filings WHERE doc_id = ANY(%s) "
                                       "AND word_uses IS NOT NULL", (doc_ids,)):
            if company:
                uses.capitalised[company].update({})  # a company whose text capitalises nothing is still one
        uses.lowercase_uses.update(dict(conn.execute(
            "SELECT w.key, sum(w.value::bigint)::int FROM rag_filings, jsonb_each_text(word_uses->'lowercase') w "
            "WHERE doc_id = ANY(%s) GROUP BY 1", (doc_ids,)).fetchall()))
        for key, into in (("heads", uses.entity_heads), ("every", uses.every)):
            into.update(r[0] for r in conn.execute(
                f"SELECT DISTINCT jsonb_array_elements_text(word_uses->'{key}') FROM rag_filings "
                "WHERE doc_id = ANY(%s)", (doc_ids,)))
        for doc_id, company in conn.execute(f"SELECT doc_id, {ticker} FROM rag_filings WHERE doc_id = ANY(%s) "
                                            "AND word_uses IS NULL", (doc_ids,)).fetchall():
            for (payload,) in conn.execute("SELECT node FROM rag_chunks WHERE doc_id = %s", (doc_id,)).fetchall():
                uses.add_text(node_of(payload).text, company)
        return uses

    def nodes_at(self, rows) -> list:
        rows = [int(r) for r in rows]
        if not rows:
            return []
        ids = [int(self.ids[r]) for r in rows]
        found = dict(self.vector_store.run(lambda conn: conn.execute(
            "SELECT id, node FROM rag_chunks WHERE id = ANY(%s)", (ids,)).fetchall()))
        return [node_of(found[i]) for i in ids if i in found]

    def following_chunk(self, chunk_id: str):
        """The chunk after this one in its filing (chunks are inserted in reading order), or None."""
        found = self.vector_store.run(lambda conn: conn.execute(
            "SELECT next.node FROM rag_chunks AS own JOIN rag_chunks AS next ON next.doc_id = own.doc_id "
            "AND next.id > own.id WHERE own.node_id = %s ORDER BY next.id LIMIT 1", (chunk_id,)).fetchone())
        return node_of(found[0]) if found else None

    def node(self, chunk_id: str):
        found = self.vector_store.run(lambda conn: conn.execute(
            "SELECT node FROM rag_chunks WHERE node_id = %s", (chunk_id,)).fetchone())
        return node_of(found[0]) if found else None

    def shard_dir(self, doc_id: str) -> Path | None:
        return None

    def filing_text(self, doc_id: str) -> str:
        found = self.vector_store.run(lambda conn: conn.execute(
            "SELECT text FROM rag_filings WHERE doc_id = %s", (doc_id,)).fetchone())
        return found[0] if found else ""

    def filing_sections(self, doc_id: str) -> list[dict]:
        found = self.vector_store.run(lambda conn: conn.execute(
            "SELECT sections FROM rag_filings WHERE doc_id = %s", (doc_id,)).fetchone())
        return list(found[0]) if found else []


class ServedIndexStore(IndexStore):
    """IndexStore's reading and writing, on the database at settings.database_url: same methods, same reports.
    Chunking, embedding and the reuse of a filing's vectors are IndexStore's own."""

    def __init__(self, settings: Settings | None = None, *, on_lock_wait=None):
        super().__init__(settings, on_lock_wait=on_lock_wait)
        self.url = self.settings.database_url
        self._schema_ready = False
        self._reader = None  # one connection for the cheap reads every question makes (the generation)
        self._reader_lock = threading.Lock()

    def _connect(self, *, autocommit: bool = False):
        conn = connect(self.url, autocommit=autocommit)
        if not self._schema_ready:
            ensure_schema(conn, "index", SCHEMA_VERSION, SCHEMA)
            self._schema_ready = True
        return conn

    @staticmethod
    def _has_chunks(conn) -> bool:
        return conn.execute("SELECT to_regclass('rag_chunks') IS NOT NULL").fetchone()[0]

    # ---- reading
    def _read(self, sql: str) -> list[tuple]:
        """A read on the store's own connection (made again should the server have dropped it)."""
        with self._reader_lock:
            if self._reader is None or self._reader.closed or self._reader.broken:
                self._reader = self._connect(autocommit=True)
            return self._reader.execute(sql).fetchall()

    def current_generation(self) -> str | None:
        found = self._read("SELECT generation FROM rag_index_state WHERE id = 1")
        return str(found[0][0]) if found and found[0][0] else None

    def list_filings(self) -> list[dict]:
        return sorted_filings(r[0] for r in self._read("SELECT record FROM rag_filings"))

    def load(self) -> ServedIndex:
        """The index as one consistent snapshot: its filings and the filter columns of every chunk."""
        with self._connect() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            generation, model, backend, dim = conn.execute(
                "SELECT generation, embed_model, embed_backend, dim FROM rag_index_state WHERE id = 1").fetchone()
            filings = {r[0]: r[1] for r in conn.execute("SELECT doc_id, record FROM rag_filings")}
            ids, values = [], {name: [] for name in _COLUMNS}
            if self._has_chunks(conn):
                shared: dict = {}  # one string object per distinct value: a column costs a pointer per row
                with conn.cursor(name="rag_columns") as cur:
                    cur.itersize = _FETCH_ROWS
                    cur.execute(f"SELECT id, {', '.join(_COLUMNS)} FROM rag_chunks ORDER BY id")
                    for row in cur:
                        ids.append(row[0])
                        for name, value in zip(_COLUMNS, row[1:]):
                            values[name].append(shared.setdefault(value, value))
        columns = {
            name: np.array(values[name], dtype=np.int64 if name == "fiscal_year" else
                           bool if name == "exhibit_list" else object)
            for name in _COLUMNS
        }
        manifest = {"version": 1, "embed_model": model, "embed_backend": backend, "dim": dim, "chunks": len(ids),
                    "filings": filings}
        return ServedIndex(str(generation) if generation else "", manifest, PgFilingVectorStore(self.url), columns,
                           np.array(ids, dtype=np.int64), self.root)

    # ---- writing
    def ensure_chunk_table(self, conn, dim: int | None = None) -> None:
        """rag_chunks for the embedding model's vectors (of `dim` numbers; by default the model embeds once to
        tell)."""
        state = conn.execute("SELECT dim, embed_model, embed_backend FROM rag_index_state WHERE id = 1").fetchone()
        if state[0] is not None:
            if (state[1], state[2]) != (self.settings.embed_model, self.settings.embed_backend):
                raise IndexError_(f"the database's index holds vectors of {state[1]} ({state[2]}), not of "
                                  f"{self.settings.embed_model} ({self.settings.embed_backend})")
            return
        dim = dim or len(self.embed_model().get_text_embedding("dimension"))
        with conn.transaction():
            xact_lock(conn, "schema")
            for statement in chunk_table_statements(dim):
                conn.execute(statement)
            conn.execute("UPDATE rag_index_state SET dim = %s, embed_model = %s, embed_backend = %s WHERE id = 1",
                         (dim, self.settings.embed_model, self.settings.embed_backend))

    def add(self, paths: Iterable[str | Path], *, overrides: dict | None = None, progress: Progress | None = None,
            lock_timeout: float = 600.0, parsed: dict | None = None) -> IndexReport:
        """Index files as IndexStore.add does, each filing in a transaction of its own."""
        files = list(filing_files(paths))
        report = IndexReport()
        started = time.perf_counter()
        with self._connect() as conn:
            self.ensure_chunk_table(conn)
            conn.commit()
            for path in files:
                row = {"file": str(path), "status": "skipped", "parse_s": 0.0, "chunks": 0, "embed_s": 0.0}
                try:
                    t0 = time.perf_counter()
                    indexable(path, self.settings.max_file_mb)
                    sha = parse_module.file_sha256(path)
                    same = conn.execute("SELECT record FROM rag_filings WHERE sha256 = %s", (sha,)).fetchone()
                    conn.commit()
                    if same and same[0].get("fingerprint") == self.fingerprint:
                        row.update(doc_id=same[0]["doc_id"], chunks=same[0].get("chunks", 0))
                        report.rows.append(row)
                        if progress:
                            progress(path.name, "unchanged", 1.0)
                        continue
                    doc, meta = self._read_filing(path, sha, row, t0, parsed, overrides, self.list_filings(), progress)
                    if self._write_filing(conn, doc, meta, row, progress, path.name, lock_timeout):
                        report.changed = True
                    report.rows.append(row)
                except Exception as exc:  # noqa: BLE001 - one bad filing must not stop the others
                    if not conn.closed and not conn.broken:
                        conn.rollback()
                    _failed(report, row, path, exc, progress)
                    report.rows.append(row)
        report.total_seconds = time.perf_counter() - started
        return report

    def _write_filing(self, conn, doc, meta: dict, row: dict, progress, name: str, lock_timeout: float) -> bool:
        """One filing's rows, replacing any earlier version of it, in one transaction. False when another writer
        indexed the same bytes meanwhile."""
        doc_id = meta["doc_id"]
        filing = {k: meta.get(k) for k in FILING_META_KEYS}
        with conn.transaction():
            conn.execute(f"SET LOCAL lock_timeout = '{int(lock_timeout * 1000)}ms'")
            xact_lock(conn, "filing", doc_id)
            old = conn.execute("SELECT record FROM rag_filings WHERE doc_id = %s", (doc_id,)).fetchone()
            old = old[0] if old else None
            if old and old.get("sha256") == meta["sha256"] and old.get("fingerprint") == self.fingerprint:
                row.update(doc_id=doc_id, chunks=old.get("chunks", 0))
                return False
            reuse = self._reusable_rows(conn, old)
            if progress:
                progress(name, "chunking", 0.15)
            chunks = self.chunker().split(doc, filing)
            if not chunks:
                raise IndexError_("no text to index was found in it")
            conn.execute("DELETE FROM rag_filings WHERE doc_id = %s", (doc_id,))
            conn.execute("INSERT INTO rag_filings (doc_id, sha256, record, text, sections) VALUES (%s, %s, %s, %s, %s)",
                         (doc_id, meta["sha256"], json.dumps(filing), doc.text,
                          json.dumps([s.__dict__ for s in doc.sections])))
            fresh = sum(1 for chunk in chunks if chunk["text"] not in reuse)
            on_batch = (lambda done, total: progress(name, f"embedding {done}/{total}", 0.3 + 0.6 * done / total)
                        ) if progress else None
            embedder = EmbedChangedChunks(self.embed_model(), reuse, on_batch, total=fresh)
            count, embed_s, texts = 0, 0.0, []
            with tempfile.TemporaryDirectory(prefix="rag-facts-") as spans:
                with open(Path(spans) / "nodes.jsonl", "w", encoding="utf-8") as nodes_fh:
                    t0 = time.perf_counter()
                    for nodes, vectors in embedded_batches(chunks, filing, embedder):
                        embed_s += time.perf_counter() - t0
                        insert_chunks(conn, (chunk_row(node, vector, count + i)
                                             for i, (node, vector) in enumerate(zip(nodes, vectors))))
                        nodes_fh.writelines(node_to_json(node) + "\n" for node in nodes)
                        texts.extend(node.text for node in nodes)
                        count += len(nodes)
                        t0 = time.perf_counter()
                entry = {**filing, "sha256": meta["sha256"], "fingerprint": self.fingerprint,
                         "embed_model": self.settings.embed_model, "embed_backend": self.settings.embed_backend,
                         "shard": None, "chunks": count, "indexed_at": time.strftime("%Y-%m-%dT%H:%M:%S")}
                conn.execute("UPDATE rag_filings SET record = %s, word_uses = %s WHERE doc_id = %s",
                             (json.dumps(entry), json.dumps(filing_counts(texts)), doc_id))
                # Its facts go in the same transaction: a filing is live with its facts or not at all.
                record_filing(self.settings, doc, meta, Path(spans), within=conn)
            self._next_generation(conn)
        row.update(status="indexed", doc_id=doc_id, chunks=count, embed_s=embed_s, reused=embedder.reused)
        if progress:
            progress(name, "indexed", 1.0)
        return True

    def _reusable_rows(self, conn, old: dict | None) -> dict[str, np.ndarray]:
        """Chunk text -> vector of the filing's earlier version, when the same model and backend made it."""
        if not old or (old.get("embed_model"), old.get("embed_backend")) != (self.settings.embed_model,
                                                                               self.settings.embed_backend):
            return {}
        rows = conn.execute("SELECT text, embedding::real[] FROM rag_chunks WHERE doc_id = %s", (old["doc_id"],))
        return {text: np.asarray(vector, dtype="float32") for text, vector in rows}

    @staticmethod
    def _next_generation(conn) -> None:
        """Raised last in a write's transaction: the row lock it takes is held only for the commit."""
        conn.execute("UPDATE rag_index_state SET generation = generation + 1 WHERE id = 1")

    def remove(self, keys: Iterable[str], *, lock_timeout: float = 600.0) -> list[str]:
        keys = [str(k) for k in keys]
        removed = []
        with self._connect() as conn:
            for entry in self.list_filings():
                as_paths = {str(Path(key).resolve()) for key in keys if key}
                if not ({entry.get("doc_id"), entry.get("accession")} & set(keys) or (entry.get("path") or "") in as_paths):
                    continue
                with conn.transaction():
                    conn.execute(f"SET LOCAL lock_timeout = '{int(lock_timeout * 1000)}ms'")
                    xact_lock(conn, "filing", entry["doc_id"])
                    if conn.execute("DELETE FROM rag_filings WHERE doc_id = %s", (entry["doc_id"],)).rowcount:
                        forget_filings(self.settings, [entry["doc_id"]], within=conn)
                        removed.append(entry["doc_id"])
                        self._next_generation(conn)
        return removed

    def update_filing(self, doc_id: str, changes: dict, *, lock_timeout: float = 600.0) -> dict:
        """IndexStore.update_filing's correction, in one transaction: the record and its chunks' metadata."""
        with self._connect() as conn, conn.transaction():
            xact_lock(conn, "filing", doc_id)
            found = conn.execute("SELECT record FROM rag_filings WHERE doc_id = %s", (doc_id,)).fetchone()
            if found is None:
                raise IndexError_(f"no indexed filing has the id {doc_id!r}")
            record = found[0]
            fields = checked_corrections(changes, record)
            if not fields:
                return dict(record)
            for key in ("fiscal_year", "fiscal_period"):
                if key in fields:
                    fields[f"{key}_source"] = USER_SOURCE
            corrected = sorted(set(record.get("corrected") or ()) | {k for k in fields if k in changes})
            entry = {**record, **fields, "corrected": corrected}
            conn.execute("UPDATE rag_filings SET record = %s WHERE doc_id = %s", (json.dumps(entry), doc_id))
            stored = conn.execute("SELECT id, node FROM rag_chunks WHERE doc_id = %s", (doc_id,)).fetchall()
            nodes = with_record([node_of(payload) for _, payload in stored], entry)
            with conn.cursor() as cur:
                cur.executemany(
                    "UPDATE rag_chunks SET node = %s, ticker = %s, fiscal_year = %s, fiscal_period = %s, form = %s "
                    "WHERE id = %s",
                    [(node_to_json(node), *chunk_row(node, np.zeros(1), 0)[5:9], key)
                     for (key, _), node in zip(stored, nodes)])
            self._next_generation(conn)
        self._facts_update(doc_id, fields)
        return dict(entry)

    def insert_filing(self, conn, entry: dict, nodes: list, vectors: np.ndarray, text: str, sections: list) -> None:
        """A filing embedded already (its record, chunks, their vectors, its text and sections), replacing any
        earlier version, inside the caller's transaction (which holds the filing's lock)."""
        conn.execute("DELETE FROM rag_filings WHERE doc_id = %s", (entry["doc_id"],))
        conn.execute("INSERT INTO rag_filings (doc_id, sha256, record, text, sections, word_uses) "
                     "VALUES (%s, %s, %s, %s, %s, %s)",
                     (entry["doc_id"], entry.get("sha256") or "", json.dumps(entry), text, json.dumps(sections),
                      json.dumps(filing_counts(n.text for n in nodes))))
        insert_chunks(conn, (chunk_row(node, vectors[i], i) for i, node in enumerate(nodes)))
        self._next_generation(conn)

    # ---- moving over
    def copy_from(self, source: IndexStore, progress=None) -> int:
        """Copy the live filings of an embedded index (its chunks, vectors, text and sections: nothing is embedded
        again), each in a transaction of its own; filings the database holds already with the same bytes are
        skipped. Returns how many were copied."""
        copied = 0
        manifest = source._manifest()
        if manifest.get("embed_model") and (manifest.get("embed_model"), manifest.get("embed_backend") or "torch") != (
                self.settings.embed_model, self.settings.embed_backend):
            raise IndexError_(f"the embedded index holds vectors of {manifest.get('embed_model')}; set "
                              "RAG_EMBED_MODEL and RAG_EMBED_BACKEND to match before copying it")
        with self._connect() as conn:
            self.ensure_chunk_table(conn, manifest.get("dim"))
            conn.commit()
            for n, (doc_id, entry) in enumerate(sorted(manifest.get("filings", {}).items())):
                shard = source.root / "shards" / entry["shard"]
                with conn.transaction():
                    xact_lock(conn, "filing", doc_id)
                    old = conn.execute("SELECT sha256 FROM rag_filings WHERE doc_id = %s", (doc_id,)).fetchone()
                    if old and old[0] == entry.get("sha256"):
                        continue
                    self.insert_filing(conn, {**entry, "shard": None},
                                       with_record(read_nodes(shard / "nodes.jsonl"), entry),
                                       np.load(shard / "vectors.npy"), (shard / "text.txt").read_text(encoding="utf-8"),
                                       json.loads((shard / "sections.json").read_text()))
                copied += 1
                if progress:
                    progress(n + 1, doc_id)
        return copied


def open_store(settings: Settings, *, on_lock_wait=None) -> IndexStore:
    """The index store the settings choose: served (RAG_DATABASE_URL) or embedded (files under storage_dir)."""
    if settings.served:
        return ServedIndexStore(settings, on_lock_wait=on_lock_wait)
    return IndexStore(settings, on_lock_wait=on_lock_wait)


__all__ = ["FilteredRows", "ServedIndex", "ServedIndexStore", "open_store"]
