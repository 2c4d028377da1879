"""The LlamaIndex IngestionPipeline step that embeds a filing's chunk nodes, fed a batch at a time."""

from __future__ import annotations

from typing import Callable, Iterator

import numpy as np
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.schema import TextNode, TransformComponent
from pydantic import PrivateAttr

from .nodes import NODE_META_KEYS, make_node

# Chunks held at once between the chunker and the shard on disk: the memory of indexing a filing is this many
# nodes and vectors, however long the filing (every node of a 200 MB file, with its embedding as a Python list of
# floats, took 8.9 GB). A few of the model's batches each, so a batch boundary costs the model nothing.
STREAM_BATCH = 256


def chunk_nodes(chunks: list[dict], meta: dict, start: int = 0) -> list[TextNode]:
    """Nodes of chunks as FilingChunker.split makes them (text plus their place), numbered from `start`, with the
    filing's metadata."""
    out = []
    for i, chunk in enumerate(chunks, start=start):
        node_meta = {**meta, **{k: v for k, v in chunk.items() if k != "text"}, "chunk_index": i}
        out.append(make_node(f"{meta['doc_id']}:{i:05d}", chunk["text"], {k: node_meta.get(k) for k in NODE_META_KEYS}))
    return out


def embedded_batches(chunks: list[dict], meta: dict, embedder: "EmbedChangedChunks",
                     batch: int | None = None) -> Iterator[tuple[list[TextNode], np.ndarray]]:
    """(nodes, their vectors as float32 rows), `batch` (default STREAM_BATCH, read now) chunks at a time, each batch
    through a LlamaIndex IngestionPipeline whose step is `embedder`. The nodes come back without their embedding:
    the vectors hold it."""
    batch = batch or STREAM_BATCH
    pipeline = IngestionPipeline(transformations=[embedder], disable_cache=True)
    for start in range(0, len(chunks), batch):
        nodes = pipeline.run(nodes=chunk_nodes(chunks[start:start + batch], meta, start))
        vectors = np.asarray([node.embedding for node in nodes], dtype="<f4").reshape(len(nodes), -1)
        for node in nodes:
            node.embedding = None
        yield nodes, vectors


class EmbedChangedChunks(TransformComponent):
    """The pipeline's embedding step: chunks whose exact text was embedded before by the same model and backend
    (the caller's `known` holds only such vectors) keep that vector; only the others go through the model (the
    text embedded is the node text: metadata is excluded)."""

    _embed_model: object = PrivateAttr()
    _known: dict = PrivateAttr()
    _reused: int = PrivateAttr(default=0)
    _on_batch: object = PrivateAttr(default=None)
    _total: int | None = PrivateAttr(default=None)
    _done: int = PrivateAttr(default=0)

    def __init__(self, embed_model, known: dict[str, np.ndarray], on_batch: Callable[[int, int], None] | None = None,
                 total: int | None = None):
        """on_batch(done, total): called after each batch the model embeds (a long filing takes minutes). With
        `total` (the chunks to embed over every call, when the nodes come a batch at a time), done counts across
        calls; without it, within each call."""
        super().__init__()
        self._embed_model = embed_model
        self._known = known
        self._on_batch = on_batch
        self._total = total

    @property
    def reused(self) -> int:
        return self._reused

    def __call__(self, nodes, **kwargs):
        fresh = [node for node in nodes if node.text not in self._known]
        base, total = (self._done, self._total) if self._total is not None else (0, len(fresh))
        step = max(1, int(getattr(self._embed_model, "embed_batch_size", 0) or len(fresh) or 1))
        for start in range(0, len(fresh), step):  # the model's own batch size: the same batches it would make
            self._embed_model(fresh[start:start + step])
            if self._on_batch:
                self._on_batch(base + min(start + step, len(fresh)), total)
        self._done += len(fresh)
        for node in nodes:
            if node.text in self._known:
                node.embedding = self._known[node.text].tolist()
                self._reused += 1
        return nodes
