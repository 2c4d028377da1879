"""One index generation, loaded: what retrieval searches (nodes, the dense store, BM25, the filter columns)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .columns import rows_matching
from .vector_store import FilingVectorStore


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
        words = phrase.split()
        if not words:
            return np.array([], dtype=np.int64)
        pattern = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)")
        longest = max(words, key=len)
        candidates = range(len(self.nodes)) if rows is None else rows.tolist()
        return np.array([r for r in candidates if longest in self.nodes[r].text
                         and pattern.search(self.nodes[r].text)], dtype=np.int64)

    def rows_with_row_label(self, words: list[str], rows: np.ndarray | None = None) -> np.ndarray:
        """The rows (of `rows`, else of all) holding a table row labelled with these words and no other, in any case
        ("Consumer Products | 1,234" for ["consumer", "products"], not "Consumer Products ARR"), each word singular or
        plural: a part's line in a table."""
        if not words:
            return np.array([], dtype=np.int64)
        # A question's words are read singular ("visit"); the label may print them plural ("Home Visits").
        pattern = re.compile(r"(?im)^" + r"\s+".join(re.escape(w) + "(?:e?s)?" for w in words) + r"\W{0,4}\|")
        longest = max(words, key=len).lower()
        candidates = range(len(self.nodes)) if rows is None else rows.tolist()
        return np.array([r for r in candidates if longest in self.nodes[r].text.lower()
                         and pattern.search(self.nodes[r].text)], dtype=np.int64)

    def node_ids(self, rows: np.ndarray) -> list[str]:
        """The chunk ids of some rows (what a VectorStoreQuery names to search only those)."""
        return self.columns["node_id"][rows].tolist()

    def shard_dir(self, doc_id: str) -> Path | None:
        entry = self.filings.get(doc_id)
        return self.root / "shards" / entry["shard"] if entry else None

    def filing_text(self, doc_id: str) -> str:
        shard = self.shard_dir(doc_id)
        return (shard / "text.txt").read_text(encoding="utf-8") if shard else ""

    def filing_sections(self, doc_id: str) -> list[dict]:
        shard = self.shard_dir(doc_id)
        return json.loads((shard / "sections.json").read_text()) if shard else []

