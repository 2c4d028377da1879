"""A second look inside the best passages: each one read sentence by sentence, and ranked by its best sentence.

A chunk's vector averages all it says. An Item 1 passage that answers a question in one sentence, among others on
neighbouring matters, can rank below a passage that touches the question's subject throughout without answering
it. The best sentence's similarity to the question tells them apart. Sentences are embedded when a passage is first
looked at this way and kept for later questions, so the index itself stays one vector per chunk.
"""

from __future__ import annotations

import threading

import numpy as np

from .words import split_sentences

SECOND_LOOK = 5  # the passages read again: what a top-k of 10 can still lift into the first five
MIN_SENTENCE_WORDS = 4  # a heading or a label alone says too little to answer anything
_KEPT_PASSAGES = 4096


def passage_sentences(text: str) -> list[str]:
    """The sentences of a chunk's text, its one-line header (company, form, year, Item) left out."""
    body = text.split("\n", 1)[1] if "\n" in text else text
    return [s for line in body.split("\n") for s in split_sentences(line.strip())
            if len(s.split()) >= MIN_SENTENCE_WORDS]


class SentenceVectors:
    """Each passage's sentence vectors, embedded on first use; at most _KEPT_PASSAGES passages are kept."""

    def __init__(self, embed_model):
        self.embed_model = embed_model
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def of(self, nodes: list) -> list[np.ndarray]:
        """The sentence vectors of each node, in order (an empty array for a node without sentences)."""
        with self._lock:
            missing = [n for n in nodes if n.node_id not in self._vectors]
        if missing:
            texts = [passage_sentences(n.get_content()) for n in missing]
            flat = [s for sentences in texts for s in sentences]
            vectors = np.asarray(self.embed_model.get_text_embedding_batch(flat), dtype=np.float32) if flat else (
                np.zeros((0, 0), dtype=np.float32))
            with self._lock:
                if len(self._vectors) + len(missing) > _KEPT_PASSAGES:
                    self._vectors.clear()
                at = 0
                for node, sentences in zip(missing, texts):
                    self._vectors[node.node_id] = vectors[at:at + len(sentences)]
                    at += len(sentences)
        with self._lock:
            return [self._vectors.get(n.node_id, np.zeros((0, 0), dtype=np.float32)) for n in nodes]

    def by_best_sentence(self, found: list, query_vector, k: int = SECOND_LOOK) -> list:
        """`found` with its first k reordered by each passage's best sentence's similarity to the query (vectors
        are unit length, so the inner product is the cosine); a passage without sentences keeps its chunk score's
        place after them. The rest follow unchanged."""
        head = found[:k]
        if len(head) < 2 or query_vector is None:
            return found
        query = np.asarray(query_vector, dtype=np.float32)
        best = [float((vectors @ query).max()) if vectors.size else float("-inf")
                for vectors in self.of([r.node for r in head])]
        order = sorted(range(len(head)), key=lambda i: (-best[i], i))
        return [head[i] for i in order] + found[k:]
