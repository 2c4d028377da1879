"""The served dense and keyword store: chunks in PostgreSQL (pgvector, full-text search) behind LlamaIndex's
vector-store interface, answering the same queries and filters as FilingVectorStore.

Why our own SQL rather than llama-index-vector-stores-postgres (PGVectorStore): its table holds the metadata as one
JSON column, so filters become JSON path tests no plain index serves and "section" cannot also match the tiny Item
merged into a section; its hybrid search keeps a text-search table of its own; it brings SQLAlchemy and asyncpg;
and it returns fewer than k hits when a filter leaves few rows near the query. Here every filter is a column with a
plain index, written as a WHERE clause; a small selection is searched exactly (every selected vector compared,
which for a few thousand rows costs less than a graph walk) and a large one through the HNSW index with pgvector's
iterative scan (`hnsw.iterative_scan = relaxed_order`), falling back to the exact scan should it come back short,
so k hits come back whenever the selection holds k chunks.

Vectors are unit-normalised, so the inner product (`<#>`, negated) is the cosine FAISS scores with.
"""

from __future__ import annotations

import json
import math
import threading
from typing import Any, Iterable, Sequence

import numpy as np
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode, NodeWithScore
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)

from ..database import connect
from .columns import FILTER_COLUMNS, filter_values, fiscal_period_of, is_exhibit_list, merged_item, normalised
from .nodes import make_node, node_to_json

# A selection of at most this many chunks is searched exactly rather than through the HNSW index: below it a
# sequential comparison of the selected vectors is as fast as the graph walk and never misses (`rag bench scale`).
EXACT_BELOW = 20_000
# BM25's parameters, bm25s's defaults (the embedded store's keyword search).
BM25_K1, BM25_B = 1.5, 0.75
# A stem in more than this share of the chunks is common: it adds to a chunk's score but does not make it a candidate.
COMMON_SHARE = 0.05
# Chunks an unfiltered keyword search scores at most (by the stems' counts): the rarest stems' chunks first, as
# they score highest. Reached only past a few hundred thousand chunks, where scoring every chunk that holds any
# rarer stem took seconds (`rag bench scale`); a filtered search scores its selection's chunks, however many.
MAX_SCORED = 20_000
# Candidates the HNSW walk keeps (pgvector's default is 40): recall close to the exact search's at top-k 60.
EF_SEARCH = 200

CHUNK_COLUMNS = ("doc_id", "node_id", "position", "text", "node", "ticker", "fiscal_year", "fiscal_period", "form",
                 "section", "merged_section", "statement", "exhibit_list", "embedding")


def chunk_table_statements(dim: int) -> list[str]:
    """The chunks table for vectors of `dim` numbers, with its HNSW, full-text and filter indexes."""
    return [
        f"""CREATE TABLE IF NOT EXISTS rag_chunks (
            id bigserial PRIMARY KEY,
            doc_id text NOT NULL REFERENCES rag_filings (doc_id) ON DELETE CASCADE,
            node_id text NOT NULL UNIQUE,
            position integer NOT NULL,
            text text NOT NULL,
            node jsonb NOT NULL,
            ticker text NOT NULL,
            fiscal_year integer NOT NULL,
            fiscal_period text NOT NULL,
            form text NOT NULL,
            section text NOT NULL,
            merged_section text NOT NULL,
            statement text NOT NULL,
            exhibit_list boolean NOT NULL,
            embedding vector({int(dim)}) NOT NULL,
            search tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
        )""",
        "CREATE INDEX IF NOT EXISTS rag_chunks_embedding ON rag_chunks USING hnsw (embedding vector_ip_ops)",
        "CREATE INDEX IF NOT EXISTS rag_chunks_search ON rag_chunks USING gin (search)",
        "CREATE INDEX IF NOT EXISTS rag_chunks_doc ON rag_chunks (doc_id, position)",
        "CREATE INDEX IF NOT EXISTS rag_chunks_ticker ON rag_chunks (ticker, fiscal_year)",
    ]


def vector_literal(vector) -> str:
    """A vector as pgvector reads it ('[0.1,0.2,...]')."""
    return "[" + ",".join(f"{x:.8g}" for x in np.asarray(vector, dtype="float32").ravel().tolist()) + "]"


def chunk_row(node, vector, position: int) -> tuple:
    """One rag_chunks row (CHUNK_COLUMNS) of a node and its vector."""
    meta = node.metadata
    return (
        meta.get("doc_id") or "", node.node_id, position, node.text, node_to_json(node),
        str(meta.get("ticker") or "").upper(), int(meta.get("fiscal_year") or 0), fiscal_period_of(meta),
        str(meta.get("form") or "").upper(), meta.get("section") or "", merged_item(meta.get("section_title") or ""),
        meta.get("statement") or "", is_exhibit_list(node.text), vector_literal(vector),
    )


def insert_chunks(conn, rows: Iterable[tuple]) -> int:
    """COPY rows (see chunk_row) into rag_chunks on `conn`, inside the caller's transaction; returns how many."""
    count = 0
    with conn.cursor() as cur, cur.copy(f"COPY rag_chunks ({', '.join(CHUNK_COLUMNS)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            count += 1
    return count


def node_of(payload) -> BaseNode:
    """A chunk node from its stored JSON (a dict when psycopg decoded the jsonb, else its text)."""
    row = payload if isinstance(payload, dict) else json.loads(payload)
    return make_node(row["id"], row["text"], row["metadata"])


# ---- filters as SQL


def _column_clause(column: str, values: list) -> tuple[str, list]:
    if column not in FILTER_COLUMNS:
        raise ValueError(f"no filter on {column!r}: filters apply to {', '.join(FILTER_COLUMNS)}")
    wanted = normalised(column, values)
    if column == "section":  # a tiny Item merged into the next one is found under its own name too
        return "(section = ANY(%s) OR merged_section = ANY(%s))", [wanted, wanted]
    return f"{column} = ANY(%s)", [wanted]


def filters_clause(filters: MetadataFilters) -> tuple[str, list]:
    """LlamaIndex filters (EQ or IN, AND or OR, nested) as a WHERE clause and its parameters."""
    parts, params = [], []
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            sql, more = filters_clause(item)
        else:
            values = filter_values(item)
            sql, more = _column_clause(item.key, values)
        parts.append(sql)
        params.extend(more)
    if not parts:
        return "TRUE", []
    condition = filters.condition or FilterCondition.AND
    if condition not in (FilterCondition.AND, FilterCondition.OR):
        raise ValueError(f"filter condition {condition.value!r} is not supported here (only and, or)")
    return "(" + f" {condition.value.upper()} ".join(parts) + ")", params


def selection_clause(*, filters: MetadataFilters | None = None, doc_ids: Sequence[str] | None = None,
                     node_ids: Sequence[str] | None = None, ids: Sequence[int] | None = None) -> tuple[str, list]:
    """The WHERE clause every given selection admits ('TRUE' for none); empty lists restrict nothing, as in
    FilingVectorStore. `ids`: rows by their key in rag_chunks."""
    parts, params = [], []
    if filters is not None:
        sql, more = filters_clause(filters)
        parts.append(sql)
        params.extend(more)
    for column, values in (("doc_id", doc_ids), ("node_id", node_ids)):
        if values:
            parts.append(f"{column} = ANY(%s)")
            params.append(list(values))
    if ids is not None:
        parts.append("id = ANY(%s)")
        params.append([int(i) for i in ids])
    return (" AND ".join(parts) or "TRUE"), params


class PgFilingVectorStore(BasePydanticVectorStore):
    """Chunks and their vectors in PostgreSQL (table rag_chunks), queried like FilingVectorStore: `filters` (EQ or IN
    on the filter columns, AND or OR, nested), `doc_ids` and `node_ids` narrow a query exactly."""

    stores_text: bool = True
    is_embedding_query: bool = True

    _url: str = PrivateAttr()
    _conn: Any = PrivateAttr(default=None)
    _lock: Any = PrivateAttr()
    _stats: Any = PrivateAttr(default=None)
    _df: dict = PrivateAttr(default_factory=dict)
    _common: Any = PrivateAttr(default=None)

    def __init__(self, url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._url = url
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The store's own connection (autocommit; every query runs in a transaction of its own)."""
        if self._conn is None or self._conn.closed:
            self._conn = connect(self._url, autocommit=True)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def run(self, work):
        """work(connection) inside one transaction, one caller at a time on this store's connection."""
        with self._lock:
            conn = self.client
            with conn.transaction():
                return work(conn)

    # ---- writing (the index store writes a filing in one transaction through insert_chunks; these serve callers
    # of the LlamaIndex interface, whose filing is already recorded)
    def add(self, nodes: list[BaseNode], **add_kwargs: Any) -> list[str]:
        """Insert nodes that carry their embedding (their filing must be indexed already); returns their ids."""
        def work(conn):
            insert_chunks(conn, (chunk_row(node, node.get_embedding(), int(node.metadata.get("chunk_index") or 0))
                                 for node in nodes))
        if nodes:
            self.run(work)
        return [node.node_id for node in nodes]

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Remove one filing's chunks (by doc id)."""
        self.run(lambda conn: conn.execute("DELETE FROM rag_chunks WHERE doc_id = %s", (ref_doc_id,)))

    def delete_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None,
                     **delete_kwargs: Any) -> None:
        if not node_ids and filters is None:
            return
        where, params = selection_clause(filters=filters, node_ids=node_ids)
        self.run(lambda conn: conn.execute(f"DELETE FROM rag_chunks WHERE {where}", params))

    # ---- reading
    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The similarity_top_k chunks nearest the query embedding among the selected ones, best first."""
        if query.query_embedding is None:
            raise ValueError("a dense query needs query_embedding")
        where, params = selection_clause(filters=query.filters, doc_ids=query.doc_ids, node_ids=query.node_ids)
        return self.search(vector_literal(query.query_embedding), query.similarity_top_k, where, params)

    def search(self, vector: str, k: int, where: str, params: list) -> VectorStoreQueryResult:
        """The k nearest among the rows `where` admits: exactly for a small selection, else through HNSW."""
        if k <= 0:
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        nearest = (f"SELECT node, embedding <#> %s::vector AS distance FROM rag_chunks WHERE {where} "
                   "ORDER BY distance LIMIT %s")

        def work(conn):
            selected = None
            if where != "TRUE":  # counted up to the limit only: a broad filter must not cost a full count
                selected = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM rag_chunks WHERE {where} LIMIT %s) s",
                                        [*params, EXACT_BELOW + 1]).fetchone()[0]
            if selected is not None and selected <= EXACT_BELOW:
                conn.execute("SET LOCAL enable_indexscan = off")  # no HNSW: every selected vector compared
                return conn.execute(nearest, [vector, *params, k]).fetchall()
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, 2 * k)}")
            rows = conn.execute(nearest, [vector, *params, k]).fetchall()
            if len(rows) < min(k, selected if selected is not None else k):
                conn.execute("SET LOCAL enable_indexscan = off")
                rows = conn.execute(nearest, [vector, *params, k]).fetchall()
            return sorted(rows, key=lambda r: r[1])  # relaxed order: nearly sorted, so sort

        rows = self.run(work)
        nodes = [node_of(payload) for payload, _ in rows]
        return VectorStoreQueryResult(nodes=nodes, similarities=[-float(d) for _, d in rows],
                                      ids=[n.node_id for n in nodes])

    def keyword_search(self, text: str, k: int, where: str = "TRUE", params: Sequence = ()) -> list[NodeWithScore]:
        """BM25 over the full-text column among the rows `where` admits, best first: the words of `text` as the
        english configuration stems them, any of them matching (GIN), each weighted by its rarity across the index
        as the embedded store's BM25 weighs it (ts_rank knows no rarity, and ranked passages that repeat a common
        word above those holding the rare one a question turns on)."""
        if k <= 0:
            return []
        weights = self._term_weights(text)
        if not weights:
            return []
        rows, average = self._corpus_stats()
        terms = list(weights)
        sql = (
            "WITH q AS (SELECT unnest(%s::text[]) AS lexeme, unnest(%s::float8[]) AS idf), "
            f"hits AS (SELECT id, search, length(search) AS dl FROM rag_chunks WHERE search @@ %s::tsquery AND {where}) "
            "SELECT h.id, sum(q.idf * t.tf * %s / (t.tf + %s * (1 - %s + %s * h.dl / %s))) AS score "
            "FROM hits h CROSS JOIN LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf "
            "FROM unnest(h.search) u) t JOIN q ON q.lexeme = t.lexeme GROUP BY h.id ORDER BY score DESC, h.id LIMIT %s"
        )
        # The chunks scored are those holding a stem that is not common, when the question has one: a chunk holding
        # only common stems scores below every chunk holding a rare one, and scoring every chunk that says
        # "company" or "year" would read most of the index.
        rare = sorted((t for t in terms if self._df[t] <= COMMON_SHARE * rows), key=self._df.get) or sorted(
            terms, key=self._df.get)
        if where == "TRUE":
            rare = _within_budget(rare, self._df, MAX_SCORED)
        query = " | ".join(_quoted(term) for term in rare)
        args = [terms, [weights[t] for t in terms], query, *params,
                BM25_K1 + 1, BM25_K1, BM25_B, BM25_B, max(average, 1.0), k]

        def work(conn):
            ranked = conn.execute(sql, args).fetchall()
            nodes = dict(conn.execute("SELECT id, node FROM rag_chunks WHERE id = ANY(%s)",
                                      ([i for i, _ in ranked],)).fetchall())
            return [(nodes[i], score) for i, score in ranked]

        return [NodeWithScore(node=node_of(payload), score=float(score)) for payload, score in self.run(work)]

    def _corpus_stats(self) -> tuple[int, float]:
        """(chunks, their average count of distinct stems), read once per store (a store serves one load)."""
        if self._stats is None:
            count, average = self.run(lambda conn: conn.execute(
                "SELECT count(*), coalesce(avg(length(search)), 0) FROM rag_chunks").fetchone())
            self._stats = (int(count), float(average))
        return self._stats

    def _common_stems(self, rows: int) -> dict[str, int]:
        """The stems too common to count quickly -> how many chunks hold them, from the planner's statistics of the
        search column (ANALYZE's most common elements, a share of its sample each); {} before the first ANALYZE.
        Counting such a stem reads a large part of the GIN index (seconds at a million chunks); a rarer one, not
        among them, is counted exactly, and fast."""
        if self._common is None:
            found = self.run(lambda conn: conn.execute(
                "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats "
                "WHERE tablename = 'rag_chunks' AND attname = 'search'").fetchone())
            elems, shares = found if found and found[0] else ([], [])
            self._common = {stem: round(share * rows) for stem, share in zip(elems, shares)}
        return self._common

    def _term_weights(self, text: str) -> dict[str, float]:
        """Each stem of `text` (english configuration, stop words out) -> its BM25 inverse document frequency
        (Lucene's form, as bm25s computes it); a stem no chunk holds is left out."""
        stems = self.run(lambda conn: conn.execute(
            "SELECT coalesce(tsvector_to_array(to_tsvector('english', %s)), '{}')", (text,)).fetchone()[0])
        rows, _ = self._corpus_stats()
        common = self._common_stems(rows)
        self._df.update({s: common[s] for s in stems if s not in self._df and s in common})
        unknown = [s for s in stems if s not in self._df]
        if unknown:
            counts = self.run(lambda conn: [conn.execute(
                "SELECT count(*) FROM rag_chunks WHERE search @@ %s::tsquery", (_quoted(s),)).fetchone()[0]
                for s in unknown])
            self._df.update(zip(unknown, counts))
        return {s: math.log(1 + (rows - self._df[s] + 0.5) / (self._df[s] + 0.5)) for s in stems if self._df[s]}


def _within_budget(stems: list[str], counts: dict[str, int], budget: int) -> list[str]:
    """The first of `stems` (rarest first) whose chunk counts add up to at most `budget`, the first one always."""
    chosen, total = [], 0
    for stem in stems:
        if chosen and total + counts[stem] > budget:
            break
        chosen.append(stem)
        total += counts[stem]
    return chosen


def _quoted(stem: str) -> str:
    """A stem as a tsquery operand, taken as written (no second stemming)."""
    return "'" + stem.replace("\\", "\\\\").replace("'", "''") + "'"
