"""The LlamaIndex IngestionPipeline steps that turn one parsed filing into embedded chunk nodes."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
from llama_index.core.schema import TransformComponent
from pydantic import PrivateAttr

from ..parse import ParsedFiling
from .chunking import FilingChunker
from .nodes import NODE_META_KEYS, make_node


class ChunkTransform(TransformComponent):
    """The IngestionPipeline step that turns a filing Document into chunk nodes, using the parsed structure."""

    _chunker: FilingChunker = PrivateAttr()
    _parsed: ParsedFiling = PrivateAttr()
    _seconds: float = PrivateAttr(default=0.0)

    def __init__(self, chunker: FilingChunker, parsed: ParsedFiling):
        super().__init__()
        self._chunker = chunker
        self._parsed = parsed

    @property
    def seconds(self) -> float:
        return self._seconds

    def __call__(self, nodes, **kwargs):
        t0 = time.perf_counter()
        out = []
        for document in nodes:
            meta = dict(document.metadata)
            for i, chunk in enumerate(self._chunker.split(self._parsed, meta)):
                text = chunk.pop("text")
                node_meta = {**meta, **chunk, "chunk_index": i}
                node_meta = {k: node_meta.get(k) for k in NODE_META_KEYS}
                out.append(make_node(f"{meta['doc_id']}:{i:05d}", text, node_meta))
        self._seconds += time.perf_counter() - t0
        return out


class EmbedChangedChunks(TransformComponent):
    """The pipeline's embedding step: chunks whose exact text was embedded before by the same model and backend
    (the caller's `known` holds only such vectors) keep that vector; only the others go through the model (the
    text embedded is the node text: metadata is excluded)."""

    _embed_model: object = PrivateAttr()
    _known: dict = PrivateAttr()
    _reused: int = PrivateAttr(default=0)
    _on_batch: object = PrivateAttr(default=None)

    def __init__(self, embed_model, known: dict[str, np.ndarray], on_batch: Callable[[int, int], None] | None = None):
        """on_batch(done, total): called after each batch the model embeds (a long filing takes minutes)."""
        super().__init__()
        self._embed_model = embed_model
        self._known = known
        self._on_batch = on_batch

    @property
    def reused(self) -> int:
        return self._reused

    def __call__(self, nodes, **kwargs):
        fresh = [node for node in nodes if node.text not in self._known]
        step = max(1, int(getattr(self._embed_model, "embed_batch_size", 0) or len(fresh) or 1))
        for start in range(0, len(fresh), step):  # the model's own batch size: the same batches it would make
            self._embed_model(fresh[start:start + step])
            if self._on_batch:
                self._on_batch(min(start + step, len(fresh)), len(fresh))
        for node in nodes:
            if node.text in self._known:
                node.embedding = self._known[node.text].tolist()
                self._reused += 1
        return nodes
