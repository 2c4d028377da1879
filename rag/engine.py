"""One object the CLI, the tests and the app share: the loaded index, retrieval and answers.

It holds the heavy pieces (embedding model, loaded index) and reloads the index when another process has
published a new generation, so a long-running app picks up the CLI's work without a restart.
"""

from __future__ import annotations

import logging
import threading
import time

from llama_index.core.schema import NodeWithScore

from .answer import answer_stream, make_llm, ollama_status
from .answer.condense import condense_question
from .config import Settings, get_settings
from .facts import CheckedStream, FactsLayer, FactStoreUnavailable
from .facts.restated import reported_values, restating
from .followup import plan_conversation, unresolved
from .index import LoadedIndex, open_store
from .rerank import load_reranker
from .retrieve import Retriever
from .schema import Filters, QuestionPlan, RetrievalResult

log = logging.getLogger(__name__)

QUERY_TIMEOUT_S = 30.0  # Ollama writing search queries; a cold model load can take most of it
MAX_GENERATED_QUERIES = 5  # each one is another dense and keyword search per list


def answered_question(question: str, retrieval: RetrievalResult) -> str:
    """The question the answer is written for: a follow-up that names no topic of its own ("And in fiscal 2024?")
    is asked after the earlier question its plan repeats, so the reader (or model) sees both."""
    plan = retrieval.plan
    if plan.rewritten:  # the model's standalone rewrite of a follow-up: searched, and answered, as asked
        return plan.rewritten
    if not plan.question or plan.question == question or not (plan.carried or plan.replaced):
        return question
    # Without the company or year the follow-up replaced: the answer must not look for the earlier one's.
    asked = " ".join(plan.question_without(lambda dimension, _value: dimension in plan.replaced).split())
    return f"{asked} {question}"


class Engine:
    def __init__(self, settings: Settings | None = None):
        self.settings = settings or get_settings()
        self.store = open_store(self.settings)
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
                fusion, weights = self.settings.fusion_options()
                reranker = load_reranker(self.settings.rerank_model) if self.settings.rerank_model else None
                self._retriever = Retriever(index, self.store.query_embed_model(index), fusion=fusion,
                                            weights=weights, reranker=reranker)
            return self._retriever

    def warm(self, mode: str = "hybrid") -> None:
        """Load everything a first question would (model, index, fact views), so its latency is a query's own."""
        self.retrieve("warm up", mode=mode)
        try:
            self.facts().warm()
        except Exception:  # noqa: BLE001 - no facts database yet: questions fall through to retrieval
            pass

    # ---- operations
    def retrieve(
        self, question: str, *, mode: str = "hybrid", top_k: int | None = None, filters: Filters | None = None,
        use_analysis: bool = True, generated_queries: int | None = None, for_llm: bool = False,
        history: list[str] | None = None,
    ) -> RetrievalResult:
        """generated_queries: extra search queries Ollama writes for the question (None: the setting, 0: off).
        for_llm: retrieve the llm_passages the model reads; the first top_k are the ones shown.
        history: the conversation's earlier questions, oldest first; a follow-up is planned against them (and, for
        the model, one they cannot complete is rewritten by it into a standalone question: see _condensed)."""
        shown = top_k or self.settings.top_k
        k = max(shown, self.settings.llm_passages) if for_llm else shown
        n = self.settings.generated_queries if generated_queries is None else generated_queries
        n = max(0, min(int(n), MAX_GENERATED_QUERIES))
        t0 = time.perf_counter()
        plans = self._conversation_plans(question, history) if history and use_analysis else None
        plan = plan_conversation(plans) if plans else None
        rewritten = self._condensed(question, history, plans) if plans and for_llm else None
        if rewritten:
            plan = self.retriever().plan(rewritten)
            plan.rewritten = rewritten
        result = self.retriever().retrieve(
            rewritten or question, mode=mode, top_k=k, filters=filters, use_analysis=use_analysis,
            llm=self._query_llm() if n > 0 else None, generated_queries=n, plan=plan,
        )
        problem = self._facts_problem()
        if problem:  # answered from the passages, saying why there is no exact figure (and no traceback)
            result.plan.facts_unreadable = True
            result.warnings.append(problem)
        else:
            self._lead_with_fact_chunks(result, filters, k)
            if self._fact_answer(result, filters) is None:
                result.warnings.extend(self._unreported(result, filters))
        result.shown = shown if k > shown else None
        result.retrieval_ms = (time.perf_counter() - t0) * 1000
        return result

    def plan_in_conversation(self, question: str, history: list[str] | None) -> QuestionPlan:
        """The question's plan as its conversation makes it mean: each earlier question (oldest first) planned and
        merged with the turn before it, then the question merged with the last (rag.followup)."""
        return plan_conversation(self._conversation_plans(question, history))

    def _conversation_plans(self, question: str, history: list[str] | None) -> list[QuestionPlan]:
        """Each question of the conversation planned alone, oldest first, the question last."""
        retriever = self.retriever()
        return [retriever.plan(q) for q in [*(history or []), question] if q and q.strip()]

    def _condensed(self, question: str, history: list[str] | None, plans: list[QuestionPlan]) -> str | None:
        """A follow-up its conversation's plans cannot complete (rag.followup.unresolved), rewritten by the model
        into a standalone question; None when the plans complete it, or no model answers (plan inheritance then
        serves, as without a model)."""
        if not unresolved(plans):
            return None
        status = ollama_status(self.settings)
        if not status.reachable or not status.model_available:
            return None
        return condense_question(list(history or []), question, self.settings)

    def _query_llm(self):
        """The Ollama model that writes search queries, or None when Ollama does not answer. A query must not
        hold a question up the way an answer may: its request timeout is short."""
        status = ollama_status(self.settings)
        if not status.reachable or not status.model_available:
            return None
        quick = self.settings.with_overrides(llm_timeout_s=min(float(self.settings.llm_timeout_s), QUERY_TIMEOUT_S))
        return make_llm(quick)

    def _lead_with_fact_chunks(self, result: RetrievalResult, filters: Filters | None, k: int):
        """A question for reported figures ("Acme's total net sales in fiscal 2024") is best sourced by the
        chunks where those figures are tagged: put them first. Search text alone often ranks an MD&A table that
        restates a figure, or a prior-year comparative, above the statement that reports it."""
        found = self._fact_answer(result, filters)
        if found is None:
            return
        by_id = {n.node.node_id: n for n in result.nodes}
        lead, ids = [], set()
        for citation in found.citations:
            chunk_id = getattr(citation, "chunk_id", None)
            if not chunk_id or chunk_id in ids:
                continue
            node = by_id.get(chunk_id) or self._node_with_score(chunk_id, result)
            if node is not None:
                lead.append(node)
                ids.add(chunk_id)
        # Then, for each figure, a passage that restates it (an MD&A table or sentence), where an analyst also
        # checks it: among those retrieved first, else the first in the filing.
        for value in reported_values(found.values):
            doc_id = value.filing.get("doc_id")
            pool = [n.node for n in result.nodes if n.node.metadata.get("doc_id") == doc_id]
            for node in restating(value, pool + self._filing_nodes(doc_id), ids):
                found_node = by_id.get(node.node_id) or self._node_with_score(node.node_id, result)
                if found_node is not None:
                    lead.append(found_node)
                    ids.add(node.node_id)
        if lead:
            result.nodes = (lead + [n for n in result.nodes if n.node.node_id not in ids])[: max(k, len(lead))]

    def _filing_nodes(self, doc_id: str | None) -> list:
        """One indexed filing's chunks in the order of its text, from the live generation."""
        index = self.index()
        rows = index.subset(doc_ids=[doc_id]) if doc_id else None
        nodes = index.nodes_at(rows if rows is not None else [])
        return sorted(nodes, key=lambda n: int(n.metadata.get("char_start") or 0))

    def _node_with_score(self, chunk_id: str, result: RetrievalResult):
        node = self._node(chunk_id)
        # Scores only order a result; a chunk put first takes the top one so the list reads in order.
        top = max((n.score or 0.0 for n in result.nodes), default=0.0)
        return NodeWithScore(node=node, score=top) if node is not None else None

    def _fact_answer(self, retrieval: RetrievalResult, filters: Filters | None):
        """The facts layer's exact figures for the question's plan, or None (also when the layer fails: it must
        never stop an answer). The user's own company and year filters override the plan's."""
        tickers, years = self._fact_scope(retrieval, filters)
        plan = retrieval.plan
        if plan.facts_unreadable:
            return None
        # Retrieval and the answer that follows it ask the same thing of the same passages: look it up once per
        # retrieval. Another retrieval of the same question may hold other passages, and a rate per item reads
        # its count from them.
        key = (plan.question, tuple(tickers), tuple(years), tuple(plan.unknown_companies), self.index().generation)
        memo = getattr(self, "_fact_memo", None)
        if memo is not None and memo[0] is retrieval and memo[1] == key:
            return memo[2]
        try:
            found = self.facts().answer_for(plan, tickers, years)
            if found is None and plan.per_item:
                passages = [(n.node.node_id, n.node.text, dict(n.node.metadata)) for n in retrieval.nodes]
                found = self.facts().rate_per_item(plan, passages, tickers, years)
        except FactStoreUnavailable:  # broken since retrieval looked: the answer's warning comes from retrieve()
            return None
        except Exception:  # noqa: BLE001
            log.exception("facts lookup failed for %r", plan.question)
            return None
        self._fact_memo = (retrieval, key, found)
        return found

    def _unreported(self, retrieval: RetrievalResult, filters: Filters | None) -> list[str]:
        """The facts layer's notes on metrics asked for that a named filing does not tag (never an error)."""
        tickers, years = self._fact_scope(retrieval, filters)
        try:
            return self.facts().unreported(retrieval.plan, tickers, years)
        except FactStoreUnavailable:
            return []
        except Exception:  # noqa: BLE001 - a note, not an answer: its failure must not stop one
            log.exception("facts notes failed for %r", retrieval.plan.question)
            return []

    @staticmethod
    def _fact_scope(retrieval: RetrievalResult, filters: Filters | None) -> tuple[list[str], list[int]]:
        user = filters or Filters()
        return list(user.tickers or retrieval.plan.tickers), list(user.fiscal_years or retrieval.plan.fiscal_years)

    def ask_stream(self, question: str, *, mode: str = "hybrid", top_k: int | None = None,
                   filters: Filters | None = None, use_llm: bool = True, use_analysis: bool = True,
                   generated_queries: int | None = None, history: list[str] | None = None):
        """An AnswerStream: iterate for text pieces, then read `.result`. history: the conversation's earlier
        questions, oldest first (a follow-up is planned against them)."""
        retrieval = self.retrieve(question, mode=mode, top_k=top_k, filters=filters, use_analysis=use_analysis,
                                  generated_queries=generated_queries if use_llm else 0, for_llm=use_llm,
                                  history=history)
        return self.answer_stream_for(answered_question(question, retrieval), retrieval, use_llm=use_llm,
                                      filters=filters)

    # ---- exact XBRL figures first, computed in code and cited; the finished answer's figures are checked against
    # them (warnings). Without facts for the question, the answer is unchanged.
    def answer_stream_for(self, question: str, retrieval: RetrievalResult, *, use_llm: bool = True,
                          filters: Filters | None = None):
        """The answer stream for a retrieval already done (the CLI, the app and the eval share it)."""
        tickers, years = self._fact_scope(retrieval, filters)
        found = self._fact_answer(retrieval, filters)
        unavailable = self._llm_unavailable() if use_llm else None
        stream = answer_stream(
            question, retrieval, self.settings, use_llm=use_llm and unavailable is None,
            facts_block=found.block if found else None, fact_citations=found.citations if found else None,
            llm_unavailable=unavailable, embed_model=self.retriever().embed_model,
            recurring=self.retriever().recurring,
        )
        return CheckedStream(stream, self.facts(), tickers, years, facts=found)

    def _llm_unavailable(self) -> str | None:
        """Why the model cannot answer now (Ollama down, stuck, or without the model), from a status check with a
        short timeout; None when it can. A server that accepts connections and never answers then costs seconds,
        not the whole answer timeout."""
        status = ollama_status(self.settings)
        return None if status.reachable and status.model_available else status.message

    def _facts_problem(self) -> str | None:
        """Why the fact store cannot be read now (its file, and how to rebuild it), or None."""
        try:
            return self.facts().store.problem()
        except Exception as exc:  # noqa: BLE001 - a probe: whatever stops it, the facts are not readable
            return f"The XBRL facts could not be read ({type(exc).__name__}: {exc}): answers come from the passages."

    def facts(self):
        """The facts layer over storage/facts.sqlite3, citing chunks of the live index."""
        if getattr(self, "_facts", None) is None:
            self._facts = FactsLayer(self.settings, chunk_lookup=self._chunk,
                                     live_doc_ids=lambda: list(self.index().filings))
        return self._facts

    def _node(self, chunk_id: str):
        """An indexed chunk's node, by id, from the live generation (None when it is gone)."""
        return self.index().node(chunk_id)

    def _chunk(self, chunk_id: str):
        """(text, metadata) of an indexed chunk, by node id."""
        node = self._node(chunk_id)
        return (node.text, dict(node.metadata)) if node is not None else None

    def ask(self, question: str, **kwargs):
        stream = self.ask_stream(question, **kwargs)
        for _ in stream:
            pass
        return stream.result
