"""The dense store: FAISS behind LlamaIndex's vector-store interface, with exact filters over the rows.

LlamaIndex's FaissVectorStore keeps vectors only, refuses metadata filters and cannot delete. A filtered search
that over-fetches and drops misses can return fewer than k; here FAISS itself searches only the selected rows
(an IDSelector), so k hits come back whenever the selection holds k chunks. The store also holds each row's
node, so a LlamaIndex retriever needs no docstore: row i of the FAISS index is nodes[i].

Retrieval talks to this class through `query(VectorStoreQuery)` only, so a served store (pgvector, Qdrant) that
answers the same filters can take its place.
"""

from __future__ import annotations

from typing import Any, Sequence

import faiss
import numpy as np
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from llama_index.vector_stores.faiss import FaissVectorStore

from .columns import FILTER_COLUMNS, column_mask, filter_values, metadata_columns


class FilingVectorStore(FaissVectorStore):
    """A flat inner-product FAISS index over chunk vectors (unit-normalised, so the score is cosine), row i being
    nodes[i]. Queries may be narrowed, exactly, by any mix of:

    - `filters`: LlamaIndex MetadataFilters, EQ or IN on ticker, fiscal_year, fiscal_period, form, section, doc_id,
      statement (the primary statement a chunk belongs to) or exhibit_list (1 or 0), combined with AND or OR,
      nested groups allowed;
    - `doc_ids`: the filings (doc ids) to search;
    - `node_ids`: the chunks to search.

    An empty `doc_ids` or `node_ids` list restricts nothing, as in the served stores (VectorStoreIndex passes an
    empty node_ids when built over an existing store). A filter the store cannot apply exactly raises ValueError rather than being ignored.
    """

    stores_text: bool = True

    _nodes: list = PrivateAttr()
    _columns: dict | None = PrivateAttr(default=None)
    _row_of_node: dict | None = PrivateAttr(default=None)

    def __init__(self, faiss_index: Any, nodes: Sequence[BaseNode] = (), columns: dict | None = None) -> None:
        super().__init__(faiss_index=faiss_index)
        if faiss_index.ntotal != len(nodes):
            raise ValueError(f"{faiss_index.ntotal} vectors but {len(nodes)} nodes: row i must be node i")
        self._nodes = nodes if isinstance(nodes, list) else list(nodes)
        self._columns = columns

    @classmethod
    def from_vectors(cls, nodes: Sequence[BaseNode], vectors: np.ndarray, dim: int) -> "FilingVectorStore":
        """A store over `vectors` (row i is the vector of nodes[i])."""
        flat = faiss.IndexFlatIP(dim)
        if len(vectors):
            flat.add(np.ascontiguousarray(vectors, dtype="float32"))
        return cls(flat, nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    @property
    def nodes(self) -> list:
        return self._nodes

    @property
    def columns(self) -> dict[str, np.ndarray]:
        """What filters match on, per row (computed on first use: a store built only to be persisted never is)."""
        if self._columns is None:
            self._columns = metadata_columns(self._nodes)
        return self._columns

    # ---- writing
    def add(self, nodes: list[BaseNode], **add_kwargs: Any) -> list[str]:
        """Append nodes that carry their embedding; returns their node ids."""
        if not nodes:
            return []
        matrix = np.asarray([node.get_embedding() for node in nodes], dtype="float32").reshape(len(nodes), -1)
        self.client.add(matrix)
        self._nodes = self._nodes + list(nodes)
        self._forget_row_maps()
        return [node.node_id for node in nodes]

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Remove one filing's vectors and nodes (by doc id).

        This edits the store in memory; the persisted index loses a filing through IndexStore.remove, which
        publishes a new generation. A LoadedIndex's own node list and keyword index do not follow a delete here,
        so delete from a store of your own, not from one a LoadedIndex is searching."""
        self._drop_rows(self.columns["doc_id"] == ref_doc_id)

    def delete_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None,
                     **delete_kwargs: Any) -> None:
        """Remove the given chunks, or those matching `filters` (both given: the chunks matching both)."""
        if not node_ids and filters is None:
            return
        rows = self._selected_rows(node_ids=node_ids, filters=filters)
        drop = np.zeros(len(self), dtype=bool)
        drop[rows] = True
        self._drop_rows(drop)

    def _drop_rows(self, drop: np.ndarray) -> None:
        if not drop.any():
            return
        self.client.remove_ids(np.flatnonzero(drop).astype("int64"))  # later rows move up: row i stays nodes[i]
        keep = ~drop
        columns = self._columns
        self._nodes = [node for node, kept in zip(self._nodes, keep) if kept]
        self._forget_row_maps()
        if columns is not None:
            self._columns = {name: values[keep] for name, values in columns.items()}

    def _forget_row_maps(self) -> None:
        self._columns = None
        self._row_of_node = None

    # ---- reading
    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The similarity_top_k rows nearest the query embedding among the selected rows, best first."""
        if query.query_embedding is None:
            raise ValueError("a dense query needs query_embedding")
        rows = self._selected_rows(node_ids=query.node_ids, doc_ids=query.doc_ids, filters=query.filters)
        k = min(query.similarity_top_k, len(self) if rows is None else len(rows))
        if k <= 0:
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        vector = np.asarray(query.query_embedding, dtype="float32").reshape(1, -1)
        params = None
        if rows is not None:
            params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(rows.astype("int64")))
        scores, ids = self.client.search(vector, k, params=params)
        hits = [(int(i), float(s)) for s, i in zip(scores[0], ids[0]) if i >= 0]
        all_nodes = self._nodes  # bound once: a pydantic private attribute costs a lookup per access
        nodes = [all_nodes[i] for i, _ in hits]
        return VectorStoreQueryResult(
            nodes=nodes, similarities=[s for _, s in hits], ids=[node.node_id for node in nodes]
        )

    def _selected_rows(self, *, node_ids=None, doc_ids=None, filters: MetadataFilters | None = None):
        """Row ids every given selection admits (None = all rows)."""
        mask = None
        if filters is not None:
            mask = self._filter_mask(filters)
        if doc_ids:
            hit = column_mask(self.columns, "doc_id", doc_ids)
            mask = hit if mask is None else mask & hit
        if node_ids:
            row_of_node = self._row_of_node
            if row_of_node is None:
                row_of_node = self._row_of_node = {node.node_id: row for row, node in enumerate(self._nodes)}
            hit = np.zeros(len(self), dtype=bool)
            hit[[row_of_node[i] for i in node_ids if i in row_of_node]] = True
            mask = hit if mask is None else mask & hit
        return None if mask is None else np.flatnonzero(mask)

    def _filter_mask(self, filters: MetadataFilters) -> np.ndarray:
        masks = []
        for item in filters.filters:
            if isinstance(item, MetadataFilters):
                masks.append(self._filter_mask(item))
                continue
            if item.key not in FILTER_COLUMNS:
                raise ValueError(f"no filter on {item.key!r}: filters apply to {', '.join(FILTER_COLUMNS)}")
            values = filter_values(item)
            masks.append(column_mask(self.columns, item.key, values))
        if not masks:
            return np.ones(len(self), dtype=bool)
        condition = filters.condition or FilterCondition.AND
        if condition == FilterCondition.AND:
            return np.logical_and.reduce(masks)
        if condition == FilterCondition.OR:
            return np.logical_or.reduce(masks)
        raise ValueError(f"filter condition {condition.value!r} is not supported here (only and, or)")
