"""One object the CLI, the tests and the app share: the loaded index, retrieval and answers.

It holds the heavy pieces (embedding model, loaded index) and reloads the index when another process has
published a new generation, so a long-running app picks up the CLI's work without a restart.
"""

from __future__ import annotations

import threading

from .config import Settings, get_settings
from .index import IndexStore, LoadedIndex
from .retrieve import Filters, RetrievalResult, Retriever


class Engine:
    def __init__(self, settings: Settings | None = None):
        self.settings = settings or get_settings()
        self.store = IndexStore(self.settings)
        self._lock = threading.Lock()
        self._index: LoadedIndex | None = None
        self._retriever: Retriever | None = None

    # ---- heavy pieces, loaded on first use
    def embed_model(self):
        return self.store.embed_model()

    def index(self) -> LoadedIndex:
        """The live index; reloaded when its generation on disk changed."""
        current = self.store.current_generation() or ""
        with self._lock:
            if self._index is None or self._index.generation != current:
                self._index = self.store.load()
                self._retriever = None
            return self._index

    def retriever(self) -> Retriever:
        index = self.index()
        with self._lock:
            if self._retriever is None or self._retriever.index is not index:
                self._retriever = Retriever(index, self.embed_model())
            return self._retriever

    # ---- operations
    def retrieve(
        self, question: str, *, mode: str = "hybrid", top_k: int | None = None, filters: Filters | None = None,
        use_analysis: bool = True,
    ) -> RetrievalResult:
        return self.retriever().retrieve(
            question, mode=mode, top_k=top_k or self.settings.top_k, filters=filters, use_analysis=use_analysis
        )

    def ask_stream(self, question: str, *, mode: str = "hybrid", top_k: int | None = None,
                   filters: Filters | None = None, use_llm: bool = True, use_analysis: bool = True):
        """An AnswerStream: iterate for text pieces, then read `.result`."""
        from .answer import answer_stream

        retrieval = self.retrieve(question, mode=mode, top_k=top_k, filters=filters, use_analysis=use_analysis)
        return answer_stream(question, retrieval, self.settings, use_llm=use_llm)

    def ask(self, question: str, **kwargs):
        stream = self.ask_stream(question, **kwargs)
        for _ in stream:
            pass
        return stream.result
