"""An optional cross-encoder reranker (RAG_RERANK_MODEL): a sentence-transformers CrossEncoder that scores each
(question, passage) pair and reorders a search's fused candidates by that score.

None ships with the app and none exists offline here, so it is a setting for users who have one (a local folder or
a model name their Hugging Face cache holds). It runs after fusion and before the hand-set ordering rules, on the
deeper candidate list fusion returns, so it can lift a passage fusion ranked low into the first k.
"""

from __future__ import annotations

import threading

from llama_index.core.schema import NodeWithScore

__all__ = ["Reranker", "RerankerUnavailable", "load_reranker"]


class RerankerUnavailable(RuntimeError):
    """RAG_RERANK_MODEL names a model that cannot be loaded; the message says which and why."""


class Reranker:
    """A CrossEncoder over (question, passage text) pairs; higher scores first."""

    def __init__(self, model, name: str):
        self.model = model
        self.name = name

    def scores(self, question: str, results: list[NodeWithScore]) -> list[float]:
        pairs = [(question, r.node.get_content()) for r in results]
        return [float(s) for s in self.model.predict(pairs, show_progress_bar=False)] if pairs else []

    def reranked(self, question: str, results: list[NodeWithScore]) -> list[NodeWithScore]:
        """`results` in the order of the model's scores (ties keep search order), each carrying its new score."""
        scores = self.scores(question, results)
        order = sorted(range(len(results)), key=lambda i: -scores[i])
        return [NodeWithScore(node=results[i].node, score=scores[i]) for i in order]


_LOADED: dict[str, Reranker] = {}
_LOCK = threading.Lock()


def load_reranker(name: str) -> Reranker:
    """The reranker `name` names (loaded once per process), or RerankerUnavailable saying why not."""
    with _LOCK:
        if name not in _LOADED:
            try:
                from sentence_transformers import CrossEncoder

                model = CrossEncoder(name, device="cpu")
            except Exception as exc:  # noqa: BLE001 - any loading failure is the same message to the user
                raise RerankerUnavailable(
                    f"RAG_RERANK_MODEL={name!r} cannot be loaded as a cross-encoder ({type(exc).__name__}: "
                    f"{str(exc).strip().splitlines()[0] if str(exc).strip() else 'no detail'}). Point it at a local "
                    "sentence-transformers CrossEncoder folder, or unset it to search without reranking."
                ) from exc
            _LOADED[name] = Reranker(model, name)
        return _LOADED[name]
