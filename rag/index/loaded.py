"""One index generation, loaded: what retrieval searches (nodes, the dense store, BM25, the filter columns).

Retrieval reads an index through this class's methods only (subset, restriction, keyword_search, rows_with_*,
node, nodes_at, following_chunk, filing_text, filing_sections), so the served index (rag/index/served.py), which
fetches chunks from PostgreSQL on demand instead of holding them, takes its place without retrieval knowing which it
reads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from llama_index.core.schema import NodeWithScore

from .columns import rows_matching
from .vector_store import FilingVectorStore
from .word_uses import WordUses, word_uses


def keyword_stemmer():
    """The stemmer BM25 uses at index and at query time (bm25s does not persist it)."""
    return Stemmer.Stemmer("english")


def phrase_pattern(phrase: str) -> tuple[re.Pattern, str] | None:
    """(the pattern of a phrase's words in a row as written, its longest word to look for first), None if empty."""
    words = phrase.split()
    if not words:
        return None
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)")
    return pattern, max(words, key=len)


def row_label_pattern(words: list[str]) -> tuple[re.Pattern, str] | None:
    """(the pattern of a table row labelled with these words and no other, its longest word in lower case)."""
    if not words:
        return None
    # A question's words are read singular ("visit"); the label may print them plural ("Home Visits").
    pattern = re.compile(r"(?im)^" + r"\s+".join(re.escape(w) + "(?:e?s)?" for w in words) + r"\W{0,4}\|")
    return pattern, max(words, key=len).lower()


@dataclass
class LoadedIndex:
    """One generation, loaded. Row i is nodes[i] everywhere: in the dense store, in BM25 and in the columns."""

    generation: str
    manifest: dict
    nodes: list  # TextNode
    vector_store: FilingVectorStore
    bm25: object | None  # bm25s.BM25 (None when empty)
    root: Path
    columns: dict[str, np.ndarray] = field(default_factory=dict)
    _by_id: dict | None = field(default=None, repr=False)
    _word_uses: WordUses | None = field(default=None, repr=False)

    @property
    def filings(self) -> dict[str, dict]:
        return self.manifest.get("filings", {})

    def __len__(self) -> int:
        return len(self.nodes)

    def subset(self, tickers=(), fiscal_years=(), forms=(), sections=(), doc_ids=(), statements=(),
               fiscal_periods=(), without_exhibit_lists: bool = False) -> np.ndarray | None:
        """Row ids matching every given filter (None = no filter at all); `without_exhibit_lists` leaves out the
        chunks of exhibit indexes."""
        rows = rows_matching(self.columns, {
            "statement": statements, "ticker": tickers, "fiscal_year": fiscal_years, "form": forms,
            "section": sections, "doc_id": doc_ids, "fiscal_period": fiscal_periods,
        })
        exhibits = self.columns["exhibit_list"]
        if not without_exhibit_lists or not exhibits.any():
            return rows
        if rows is None:
            return np.flatnonzero(~exhibits)
        return rows[~exhibits[rows]]

    def rows_with_phrase(self, phrase: str, rows: np.ndarray | None = None) -> np.ndarray:
        """The rows (of `rows`, else of all) whose chunk holds the phrase's words in a row, as written (case kept,
        any white space between, whole words)."""
        found = phrase_pattern(phrase)
        if found is None:
            return np.array([], dtype=np.int64)
        pattern, longest = found
        candidates = range(len(self.nodes)) if rows is None else rows.tolist()
        return np.array([r for r in candidates if longest in self.nodes[r].text
                         and pattern.search(self.nodes[r].text)], dtype=np.int64)

    def rows_with_row_label(self, words: list[str], rows: np.ndarray | None = None) -> np.ndarray:
        """The rows (of `rows`, else of all) holding a table row labelled with these words and no other, in any case
        ("Consumer Products | 1,234" for ["consumer", "products"], not "Consumer Products ARR"), each word singular or
        plural: a part's line in a table."""
        found = row_label_pattern(words)
        if found is None:
            return np.array([], dtype=np.int64)
        pattern, longest = found
        candidates = range(len(self.nodes)) if rows is None else rows.tolist()
        return np.array([r for r in candidates if longest in self.nodes[r].text.lower()
                         and pattern.search(self.nodes[r].text)], dtype=np.int64)

    def restriction(self, rows: np.ndarray | None) -> dict:
        """What a VectorStoreQuery names to search only `rows` (None: everything): their chunk ids."""
        return {} if rows is None else {"node_ids": self.columns["node_id"][rows].tolist()}

    def keyword_search(self, text: str, k: int, rows: np.ndarray | None = None) -> list[NodeWithScore]:
        """BM25's best k chunks for `text` among `rows` (None: all), best first; chunks with no query word left out."""
        if self.bm25 is None or (rows is not None and not len(rows)):
            return []
        tokens = bm25s.tokenize(text, stopwords="en", stemmer=keyword_stemmer(), show_progress=False)
        if not tokens.vocab:
            return []
        mask = None
        if rows is not None:
            mask = np.zeros(len(self), dtype="float32")
            mask[rows] = 1.0
        k = min(k, len(self) if rows is None else len(rows))
        ids, scores = self.bm25.retrieve(tokens, k=k, weight_mask=mask, show_progress=False, n_threads=1)
        return [NodeWithScore(node=self.nodes[int(i)], score=float(s)) for i, s in zip(ids[0], scores[0]) if s > 0]

    def word_uses(self) -> WordUses:
        """How this index's text writes its words (counted once, when first asked)."""
        if self._word_uses is None:
            self._word_uses = word_uses(self.nodes)
        return self._word_uses

    def nodes_at(self, rows) -> list:
        """The chunks of some rows, in their order."""
        return [self.nodes[int(r)] for r in rows]

    def node(self, chunk_id: str):
        """A chunk by its id (None when this index does not hold it)."""
        if self._by_id is None:
            self._by_id = {n.node_id: n for n in self.nodes}
        return self._by_id.get(chunk_id)

    def following_chunk(self, chunk_id: str):
        """The chunk after this one in its filing (a filing's chunks are added in reading order), or None."""
        row = np.flatnonzero(self.columns["node_id"] == chunk_id) if "node_id" in self.columns else []
        if not len(row) or row[0] + 1 >= len(self.nodes):
            return None
        node, following = self.nodes[int(row[0])], self.nodes[int(row[0]) + 1]
        return following if following.metadata.get("doc_id") == node.metadata.get("doc_id") else None

    def shard_dir(self, doc_id: str) -> Path | None:
        entry = self.filings.get(doc_id)
        return self.root / "shards" / entry["shard"] if entry else None

    def filing_text(self, doc_id: str) -> str:
        shard = self.shard_dir(doc_id)
        return (shard / "text.txt").read_text(encoding="utf-8") if shard else ""

    def filing_sections(self, doc_id: str) -> list[dict]:
        shard = self.shard_dir(doc_id)
        return json.loads((shard / "sections.json").read_text()) if shard else []

