"""The answer as a stream: AnswerStream runs the steps of one answer (see the package docstring) and yields its
text in pieces; `answer_stream` makes one and `answer` consumes one. The model's reply is read by
rag.answer.model_reply.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..config import Settings
from ..schema import AnswerResult, Citation, QuestionPlan, RetrievalResult
from .citations import CITATION_MARKER, CitationFilter, citation_numbers
from .extractive import extractive_answer, figure_reading, figure_source, quotes_to_check
from .figures import check_citations
from .injection import steered_warnings
from .llm import StreamBroken, answer_tokens, make_llm, model_context_length, translate_error
from .model_reply import ModelFeed, Progress, RefusalHold, ThinkFilter, rejects_think_field
from .prompt import SYSTEM_PROMPT, build_messages, estimate_tokens, fit_prompt, prompt_budget
from .refusals import (
    check_refusal,
    count_not_stated,
    figure_not_printed,
    incorporated_by_reference,
    names_not_found,
    partial_answer_warning,
    partial_company_note,
    payment_not_stated,
    period_not_covered,
    where_filings_are_listed,
    whole_refusal,
)
from .sources import prepare_facts, sources_from_retrieval

CUT_MARK = "\n\n*[Answer cut off before the end (see the warning); the text above is what arrived.]*"
WAIT_TICK_S = 0.25  # how often an answer waiting for the model yields "" and checks stop() and the deadline


def cut_mark(reason: str | None, deadline_s: float = 0.0) -> str:
    """The line that ends a cut answer's text, saying why it ended early."""
    if reason == "deadline":
        return (f"\n\n*[Answer cut off at the {deadline_s:g} s limit for a whole answer (RAG_LLM_DEADLINE); the "
                "text above is what arrived.]*")
    if reason == "stopped":
        return "\n\n*[Answer stopped before the end; the text above is what arrived.]*"
    return CUT_MARK


@dataclass(frozen=True)
class WaitState:
    """An answer waiting for the model's first words: which model, and since when (a time.monotonic() value)."""

    model: str
    since: float

    @property
    def seconds(self) -> float:
        return max(0.0, time.monotonic() - self.since)

    def label(self) -> str:
        """'waiting for llama3.1:8b, 12 s'"""
        return f"waiting for {self.model}, {int(self.seconds)} s"


class AnswerStream:
    """Iterate for str pieces (e.g. `st.write_stream(stream)`); after the iteration `.result` is the AnswerResult.
    Iterating a second time yields nothing. `consume()` runs it to the end and returns the result.

    Waiting for the model: while it has sent nothing, the stream yields "" every WAIT_TICK_S, so a consumer gets
    control back to show `.waiting` (a WaitState: "waiting for llama3.1:8b, 12 s") and may call `stop()`, which
    answers from the filings instead (or, once text arrived, keeps it and marks the answer cut). The setting
    llm_deadline_s bounds the whole answer the same way."""

    def __init__(
        self,
        question: str,
        retrieval: RetrievalResult,
        settings: Settings,
        *,
        use_llm: bool = True,
        facts_block: str | None = None,
        fact_citations: list[Citation] | None = None,
        llm_unavailable: str | None = None,
        embed_model=None,
        recurring=None,
    ):
        self.question = question
        # The index's embedding model: the extractive answer reads a figure only the filer states with it.
        self.embed_model = embed_model
        self.recurring = recurring  # rag.recurring.RecurringSentences: boilerplate the extractive answer skips
        self.retrieval = retrieval
        self.settings = settings
        self.use_llm = use_llm
        self.facts_block = facts_block
        self.fact_citations = list(fact_citations or [])
        # Why the model is not asked (a status check found it unreachable): the extractive answer says so.
        self.llm_unavailable = llm_unavailable
        self.result: AnswerResult | None = None
        self._started = False
        # The answer being built, its pieces so far and its start time: set when the iteration starts.
        self._res: AnswerResult | None = None
        self._pieces: list[str] = []
        self._t0 = 0.0
        self._cites: CitationFilter | None = None  # the LLM stream's citation filter, read by the final checks
        self._stop = threading.Event()
        self._waiting: WaitState | None = None
        self._cut_mark = CUT_MARK  # the mark this answer's text ends with, when cut
        self._fallback_label = "Ollama unavailable"  # why the answer is extractive, in its lead sentence
        # The exact figures shown before the model's text (the facts layer's answer): they stand whatever the model
        # writes. Set when emitted; the model's text starts after it.
        self._lead = ""
        self._lead_sources: list[Citation] = []
        self._model_refused = False  # the model's whole answer was its not-found sentence, under the lead
        # The passages the Sources list shows (what the extractive answer quotes), and that answer when it was
        # computed to decide whether it replaces the model's refusal.
        self._quotable: list[Citation] = []
        self._quoted: tuple[str, bool] | None = None
        self._quotes = ""  # the filings' own words shown under a model's answer in prose
        self._selected: list[Citation] = []  # the passages quoted there for the extractive answer's selection

    @property
    def waiting(self) -> WaitState | None:
        """The wait for the model's first words while it lasts; None before, after, and without a model."""
        return self._waiting

    def stop(self) -> None:
        """Stop waiting for the model (any thread may call it): without text yet, the answer becomes extractive;
        with some, that text is kept and the answer marked cut. Takes effect within WAIT_TICK_S."""
        self._stop.set()

    def __iter__(self) -> Iterator[str]:
        if self._started:
            return iter(())
        self._started = True
        return self._run()

    def consume(self) -> AnswerResult:
        for _ in self:
            pass
        assert self.result is not None
        return self.result

    # ---- internals
    def _run(self) -> Iterator[str]:
        """The steps of one answer, in the order the package docstring gives."""
        self._t0 = time.perf_counter()
        self._pieces = []
        res = self._res = self._new_result()
        analysis = self.retrieval.plan

        refusal = check_refusal(self.question, analysis, self.retrieval.filters, audience=self.settings.audience)
        if refusal:
            res.refused, res.refusal_reason = True, refusal.kind
            yield self._emit(refusal.message)
            self._finish()
            return

        partial_note = partial_company_note(analysis)
        if partial_note:
            warning = partial_note.strip().removeprefix("Note: ")
            res.warnings.append(warning[:1].upper() + warning[1:])
            yield self._emit(partial_note)

        # The exact figures are numbered first: they answer the question when they exist, and an answer made of
        # them alone then cites [1], [2] ... rather than numbers after every passage's.
        facts_text, fact_sources = prepare_facts(self.facts_block, self.fact_citations, 1)
        chunk_sources = sources_from_retrieval(self.retrieval, first=len(fact_sources) + 1)
        if not chunk_sources and not facts_text:
            res.refused, res.refusal_reason = True, "no_evidence"
            yield self._emit(_nothing_found(self.retrieval, self.settings.audience))
            self._finish()
            return
        elsewhere = (incorporated_by_reference(analysis, chunk_sources) or names_not_found(analysis, chunk_sources)
                     or period_not_covered(analysis, self.retrieval.unavailable, chunk_sources)
                     or figure_not_printed(analysis, chunk_sources) or count_not_stated(analysis, chunk_sources)
                     or payment_not_stated(analysis, chunk_sources))
        if elsewhere and not facts_text:
            res.refused, res.refusal_reason = True, elsewhere.kind
            yield self._emit(elsewhere.message)
            self._finish()
            return

        fallback_reason = None
        if self.use_llm:
            fallback_reason = yield from self._llm_answer(chunk_sources, facts_text, fact_sources)
            if fallback_reason is None:  # the LLM answered (fully or cut)
                self._finish()
                return
            # What the model sent goes; the exact figures shown first stay, and the extractive answer does not repeat them.
            del self._pieces[(1 if partial_note else 0) + (1 if self._lead else 0):]
        elif self.llm_unavailable:
            fallback_reason = self.llm_unavailable
        # The extractive answer quotes only what the Sources list shows.
        yield from self._extractive(fact_sources + chunk_sources[:self.retrieval.shown], facts_text, fallback_reason)
        self._finish()

    def _new_result(self) -> AnswerResult:
        retrieval = self.retrieval
        return AnswerResult(
            question=self.question,
            answer="",
            citations=[],
            sources=[],
            detected=(retrieval.plan or QuestionPlan()).detected(),
            mode=retrieval.mode,
            # first_token_ms: the answer's first words (an exact figure leads before the model speaks);
            # model_first_token_ms: the model's own first words, from the start of the answer.
            timings={"retrieval_ms": round(float(retrieval.retrieval_ms or 0.0), 2), "first_token_ms": None,
                     "model_first_token_ms": None, "total_ms": None},
            warnings=list(getattr(retrieval, "warnings", None) or []),
            generated_queries=list(getattr(retrieval, "generated_queries", None) or []),
            rewritten_question=(retrieval.plan.rewritten or None) if retrieval.plan is not None else None,
        )

    def _emit(self, piece: str) -> str:
        """Record a piece of the answer (the first one sets first_token_ms) and hand it back for yielding."""
        timings = self._res.timings
        if timings["first_token_ms"] is None:
            timings["first_token_ms"] = round((time.perf_counter() - self._t0) * 1000, 2)
        self._pieces.append(piece)
        return piece

    def _finish(self) -> None:
        res = self._res
        res.answer = "".join(self._pieces).strip()
        res.timings["total_ms"] = round((time.perf_counter() - self._t0) * 1000, 2)
        self.result = res

    def _llm_answer(self, chunk_sources: list[Citation], facts_text: str | None, fact_sources: list[Citation]):
        """Yields the LLM's answer pieces. Returns None when the LLM answered (and the answer is checked), or the
        reason to fall back to the extractive answer."""
        res = self._res
        fixed = len(SYSTEM_PROMPT) + len(self.question) + len(facts_text or "") + 600
        model_context = model_context_length(self.settings)
        given, _dropped = fit_prompt(self.question, chunk_sources, self.retrieval.plan, self.settings, fixed,
                                     model_context)
        # Fact citations keep their numbers (before all retrieved sources) even when passages are dropped.
        given_all = fact_sources + given
        messages = build_messages(self.question, given, facts_text=facts_text)
        res.prompt_tokens = estimate_tokens(messages)
        shown = len(chunk_sources) if self.retrieval.shown is None else self.retrieval.shown
        self._quotable = fact_sources + chunk_sources[:shown]
        # The facts layer's answer (read from XBRL, computed in code, cited) comes first and stands: the model adds
        # context after it, and neither its refusal nor another figure can take its place. Without one, a figure
        # the extractive reader finds in the passages shown (a table's cell, a count stated in prose) leads alike.
        lead = facts_text.strip() if facts_text and facts_text.strip() else None
        lead_sources = fact_sources
        if lead is None:
            lead = figure_reading(self.question, chunk_sources[:shown], self.retrieval.plan, self.embed_model)
            marks = {n for m in CITATION_MARKER.finditer(lead or "") for n in citation_numbers(m.group(1))}
            lead_sources = [c for c in chunk_sources if c.number in marks]
        if lead:
            self._lead, self._lead_sources = lead + "\n\n", lead_sources
            yield self._emit(self._lead)
        outcome = yield from self._stream_llm(messages, given_all, res, self._emit)
        if outcome is not None:
            return outcome
        # An answer in prose (as the intent model reads the question, or as its why or how asks), or one that
        # cites nothing whatever was asked, is followed by the filings' own words: what the answer without a model
        # quotes from the passages shown (whole, not as trimmed for the prompt), which the answer then cites, and
        # the best of what it cites.
        said, plan = "".join(self._pieces), self.retrieval.plan
        cited = {n for m in CITATION_MARKER.finditer(said) for n in citation_numbers(m.group(1))}
        prose = plan is not None and (plan.prose_intent or plan.intent is not None and plan.intent.label in (
            "prose", "list"))
        if (prose or not cited) and said.strip() and not (lead or res.cut or whole_refusal(said)):
            quotes = quotes_to_check(self.question, [c for c in given if c.number in cited], chunk_sources[:shown],
                                     plan, self.embed_model)
            marks = {n for m in CITATION_MARKER.finditer(quotes) for n in citation_numbers(m.group(1))}
            self._selected = [c for c in chunk_sources[:shown] if c.number in marks]
            if quotes:
                self._quotes = f"\n\n**In the filings' own words:**\n{quotes}"
                yield self._emit(self._quotes)
        read = list({c.number: c for c in [*self._shown_and_cited(given, shown), *self._selected]}.values())
        read.sort(key=lambda c: c.number)
        res.sources = fact_sources + read + [c for c in self._lead_sources
                                             if c.kind == "chunk" and all(c.number != r.number for r in read)]
        if len(given) < shown:
            res.warnings.append(
                f"Only the first {len(given)} of {shown} retrieved passages fit the prompt budget of "
                f"{prompt_budget(self.settings, model_context):,} tokens (RAG_LLM_PROMPT_TOKENS, within the model's "
                "context window)."
            )
        self._check_llm_answer(res, self._pieces, given_all)
        return None

    def _shown_and_cited(self, given: list[Citation], shown: int) -> list[Citation]:
        """The passages the Sources list shows: the first `shown` the model read, and any later one the answer
        cites (the model read more than the list shows; every [n] it writes must open its passage)."""
        cited = {n for m in CITATION_MARKER.finditer("".join(self._pieces)) for n in citation_numbers(m.group(1))}
        return [c for i, c in enumerate(given) if i < shown or c.number in cited]

    def _extractive(self, sources: list[Citation], facts_text: str | None, fallback_reason: str | None):
        """Yields the extractive answer in blocks and records its citations."""
        res = self._res
        res.extractive = True
        res.model = None
        res.sources = sources
        if fallback_reason:
            res.warnings.insert(0, fallback_reason)
        reason = self._fallback_label if fallback_reason else None
        text, refused = self._quoted or extractive_answer(
            self.question, res.sources, self.retrieval.plan, facts_text=facts_text, reason=reason,
            embed_model=self.embed_model, recurring=self.recurring,
        )
        if self._lead:  # the figures are shown already, with their numbers: only what they are and why no model
            text = text.replace(self._lead.strip(), "").strip() or text
        if refused:
            res.refused, res.refusal_reason = True, "no_evidence"
        elif not self._lead:
            text = self._number_in_order_of_use(text)
        for block in re.split(r"(?<=\n\n)", text):
            if block:
                yield self._emit(block)
        if not refused:
            by_number = {c.number: c for c in res.sources}
            cited = {n for m in CITATION_MARKER.finditer(self._lead + text) for n in citation_numbers(m.group(1))}
            res.citations = [by_number[n] for n in sorted(cited) if n in by_number]

    def _number_in_order_of_use(self, text: str) -> str:
        """Passages numbered in the order the answer first cites them, then the uncited ones in search order: the
        answer's first [n] is the first passage under it. A figure read from one passage (a table row, a sentence)
        makes that passage lead, as an exact figure's statement does. Renumbered in the text and the Sources."""
        res = self._res
        passages = [c for c in res.sources if c.kind == "chunk"]  # a figure's own citation keeps its number
        by_number = {c.number: c for c in passages}
        marks = [n for m in CITATION_MARKER.finditer(text) for n in citation_numbers(m.group(1))]
        used = list(dict.fromkeys(n for n in [figure_source(text), *marks] if n in by_number))
        ordered = [by_number[n] for n in used] + [c for c in passages if c.number not in used]
        if not passages or [c.number for c in ordered] == [c.number for c in passages]:
            return text
        first = passages[0].number
        renumbered = {c.number: first + i for i, c in enumerate(ordered)}
        res.sources = [c for c in res.sources if c.kind != "chunk"] + [
            replace(c, number=renumbered[c.number]) for c in ordered]
        # The retrieval keeps search's ranking (what recall is measured on), but for the passage a figure is read
        # from, which leads it as it leads the Sources.
        lead = next((c for c in passages if c.number == figure_source(text)), None)
        nodes = self.retrieval.nodes
        at = next((i for i, n in enumerate(nodes) if lead is not None and n.node.node_id == lead.chunk_id), None)
        if at is not None:
            nodes.insert(0, nodes.pop(at))

        def renumber(m: re.Match) -> str:
            return "".join(f"[{renumbered.get(n, n)}]" for n in citation_numbers(m.group(1)))

        return CITATION_MARKER.sub(renumber, text)

    def _stream_llm(self, messages, given: list[Citation], res: AnswerResult, emit):
        """Yields answer pieces (and "" while the model is silent). Returns None when the LLM answered (res.cut set
        when the answer ended early), or the reason (a user message) to fall back to the extractive answer when no
        text arrived."""
        settings = self.settings
        think = ThinkFilter()
        cites = CitationFilter({c.number for c in given})
        self._cites = cites
        self._hold = RefusalHold()
        got = Progress()
        started = time.monotonic()
        deadline = started + float(settings.llm_deadline_s) if settings.llm_deadline_s > 0 else None
        self._waiting = WaitState(settings.llm_model, started)
        thinking_setting: bool | None = False
        try:
            for attempt in range(2):
                feed = ModelFeed(make_llm(settings, thinking=thinking_setting), messages, int(settings.llm_max_chars))
                try:
                    yield from self._read_feed(feed, got, think, cites, emit, deadline)
                finally:
                    feed.cancel()
                if attempt == 0 and not got.raw_seen and rejects_think_field(got.error):
                    got.error = None
                    thinking_setting = None  # an Ollama that rejects think=false: ask again without the field
                    continue
                break
        finally:
            self._waiting = None
        got.seconds = time.monotonic() - started
        return (yield from self._end_llm(got, think, cites, res, emit))

    def _read_feed(self, feed: ModelFeed, got: Progress, think: ThinkFilter, cites: CitationFilter, emit,
                   deadline: float | None):
        """Yields the pieces of one request as they come, and "" every WAIT_TICK_S while none does. Ends with the
        stream, at an error (got.error), or at stop() or the deadline (got.halted)."""
        while True:
            if self._stop.is_set():
                got.halted = "stopped"
                return
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                got.halted = "deadline"
                return
            item = feed.next(WAIT_TICK_S if deadline is None else min(WAIT_TICK_S, deadline - now))
            if item is None:
                yield ""
                continue
            kind, piece = item
            if kind == "error":
                got.error = piece
                return
            if kind == "capped":
                got.capped = True
                return
            if kind == "end":
                return
            if piece.done:
                got.done, got.done_reason = True, piece.done_reason
            got.raw_seen = got.raw_seen or piece.hidden
            delta = piece.delta
            if not delta:
                continue
            got.raw_seen = True
            out = cites.feed(think.feed(delta))
            if out:
                if not got.got_text:
                    self._res.timings["model_first_token_ms"] = round((time.perf_counter() - self._t0) * 1000, 2)
                got.got_text = True
                self._waiting = None
                self._res.model = self.settings.llm_model
                out = self._hold.feed(out)
            if out:
                yield emit(out)

    def _end_llm(self, got: Progress, think: ThinkFilter, cites: CitationFilter, res: AnswerResult, emit):
        """The end of the model's answer: the fallback reason when no text came; else the held-back tail, and the
        cut mark and warning when the answer ended early."""
        settings = self.settings
        model = settings.llm_model
        if got.halted and not got.got_text:
            return self._halted_reason(got)
        if got.error is not None:
            err = translate_error(got.error, settings, model, got.got_text)
            if not got.got_text:
                return str(err)
            self._mark_cut(res, "connection",
                           str(err) if isinstance(err, StreamBroken) else f"The answer is cut off: {err}")
        tail = cites.feed(think.flush()) + cites.flush()
        got.got_text = got.got_text or bool(tail.strip())
        tail = self._hold.feed(tail)
        held = self._hold.flush()
        refused = bool(held) and whole_refusal(held)
        if refused and self._lead:
            # Under the exact figures, a model that found nothing in the passages adds nothing: its refusal is
            # not shown as the answer (the figures above are), and the answer says why the model adds nothing.
            self._model_refused = True
            res.warnings.append(f"The model ({model}) replied that the passages do not hold the answer; the exact "
                                "figures shown are the filing's own XBRL data, computed in code.")
            tail += (f"*The model ({model}) found nothing to add from the passages it read; the figures above are "
                     "the filing's own.*")
        elif refused and not res.cut and self._quotes_instead():
            # Nor is its refusal the answer when the extractive reader quotes passages that match the question (and
            # cites them): the product never answers worse with a model than without one. Nothing of the refusal
            # was shown (it was held back), so the quoted answer takes its place.
            return (f"The model ({model}) replied that the passages do not hold the answer, but passages that match "
                    "the question were found: they are quoted instead.")
        else:
            tail += held
        if tail:
            yield emit(tail)
        if not got.got_text:
            if got.raw_seen:
                return "The model returned only its hidden reasoning and no answer text; showing passages instead."
            return f"Ollama ({model}) returned an empty answer; showing passages instead."
        res.model = model
        if got.halted == "deadline":
            self._mark_cut(res, "deadline", f"The answer took longer than the {settings.llm_deadline_s:g} s allowed "
                           "for a whole answer (RAG_LLM_DEADLINE) and was cut there; the text that arrived is kept.")
        elif got.halted == "stopped":
            self._mark_cut(res, "stopped", f"You stopped the answer after {got.seconds:.0f} s; the text that "
                           "arrived is kept.")
        elif got.capped:
            self._mark_cut(res, "length", f"The model sent more than the {settings.llm_max_chars:,} characters allowed "
                           "for one answer (RAG_LLM_MAX_CHARS); the answer is cut there.")
        elif not res.cut and not got.done:
            self._mark_cut(res, "connection", "The connection to Ollama ended before the answer was complete; the "
                           "text that arrived is kept.")
        if got.done_reason == "length":
            self._mark_cut(res, "length", f"The answer reached the length limit ({answer_tokens(settings)} tokens) "
                           "and is cut off.")
        if res.cut:
            self._cut_mark = cut_mark(res.cut_reason, float(settings.llm_deadline_s))
            yield emit(self._cut_mark)
        if think.saw_orphan_close:
            res.warnings.append("The model's output held a stray </think> tag; check that no reasoning text remains.")
        return None

    @staticmethod
    def _mark_cut(res: AnswerResult, reason: str, warning: str) -> None:
        """The answer ended early: the first reason found is the one recorded; every warning is kept."""
        if not res.cut:
            res.cut, res.cut_reason = True, reason
        res.warnings.append(warning)

    def _quotes_instead(self) -> bool:
        """Does the extractive answer over the passages shown quote what matches the question, rather than say
        that none does? It is computed here once, under the label saying why no model answered, and is the answer
        the fallback then shows."""
        self._fallback_label = "the model found no answer in the passages"
        self._quoted = extractive_answer(self.question, self._quotable, self.retrieval.plan,
                                         reason=self._fallback_label, embed_model=self.embed_model,
                                         recurring=self.recurring)
        return not self._quoted[1]

    def _halted_reason(self, got: Progress) -> str:
        """Why the answer is extractive when it stopped reading a model that had sent no text."""
        model = self.settings.llm_model
        if got.halted == "stopped":
            self._fallback_label = "the model was stopped"
            return (f"You stopped waiting for {model} after {got.seconds:.0f} s; the answer below is quoted from "
                    "the filings instead.")
        self._fallback_label = "the model was too slow"
        return (f"Ollama ({model}) sent no answer within the {self.settings.llm_deadline_s:g} s allowed for a "
                "whole answer (RAG_LLM_DEADLINE); showing passages instead. On a CPU most of that wait is the model "
                f"reading the prompt: a smaller RAG_LLM_PROMPT_TOKENS (now {self.settings.llm_prompt_tokens:,} "
                "tokens) shortens it.")

    def _check_llm_answer(self, res: AnswerResult, pieces: list[str], given: list[Citation]) -> None:
        text = "".join(pieces).replace(self._cut_mark, "").replace(self._quotes, "")
        note = partial_company_note(self.retrieval.plan)
        if note and text.startswith(note):
            text = text[len(note):]
        if self._lead and text.startswith(self._lead):
            text = text[len(self._lead):]  # the model's own text: the lead is the facts layer's, checked there
        cites: CitationFilter = self._cites
        for n in cites.invalid:
            res.warnings.append(f"Removed citation [{n}]: no source {n} was given to the model.")
        if cites.placeholders:
            res.warnings.append(f"Removed {', '.join(cites.placeholders)}: the model wrote a placeholder where a "
                                "source's number belongs, so those claims cite nothing.")
        model_text = "" if self._model_refused else text
        res.unsupported_claims = []
        cited, warnings, unverified = check_citations(model_text, given, question=self.question,
                                                      unsupported=res.unsupported_claims)
        res.warnings.extend(w for w in warnings if w not in res.warnings)
        res.unverified_figures = unverified
        by_number = {c.number: c for c in [*self._lead_sources, *given, *self._selected]}
        lead_cited = [c.number for c in self._lead_sources
                      if any(c.number in citation_numbers(m.group(1)) for m in CITATION_MARKER.finditer(self._lead))]
        quoted = [c.number for c in self._selected]
        res.citations = [by_number[n] for n in sorted(set(cited) | set(lead_cited) | set(quoted)) if n in by_number]
        # Under the exact figures the answer stands whatever the model wrote after them: never a refusal.
        if not self._lead and not cited and whole_refusal(text):
            res.refused, res.refusal_reason = True, "not_in_sources"
        elif not cited and model_text.strip():
            res.warnings.append("The model's text after the exact figures cites no source; treat it as unverified."
                                if self._lead else "The model's answer cites no source; treat it as unverified"
                                + ("; the passages quoted under it are those the answer without a model quotes."
                                   if self._selected else "."))
        partial = None if res.refused or self._model_refused else partial_answer_warning(model_text)
        if partial:
            res.warnings.append(partial)
        if not res.refused and model_text.strip():
            res.warnings.extend(steered_warnings(self.question, model_text))


def _nothing_found(retrieval: RetrievalResult, audience: str) -> str:
    if retrieval.unavailable:
        return (
            f"These filings do not include {', '.join(retrieval.unavailable)}: no indexed report covers that period, "
            f"so there is nothing to cite. Add that report ({where_filings_are_listed(audience)}) and ask again."
        )
    applied = []
    f = retrieval.filters
    if f is not None:
        applied = list(f.tickers) + [f"FY{y}" for y in f.fiscal_years] + list(f.forms) + list(f.sections)
    where = f" selected ({' · '.join(map(str, applied))})" if applied else ""
    return (
        f"The indexed filings{where} hold nothing on that: no passage matched the question, so there is nothing "
        f"to cite. Check that the company's filings are indexed ({where_filings_are_listed(audience)}), or widen "
        "the filters."
    )


def answer_stream(
    question: str,
    retrieval: RetrievalResult,
    settings: Settings,
    *,
    use_llm: bool = True,
    facts_block: str | None = None,
    fact_citations: list[Citation] | None = None,
    llm_unavailable: str | None = None,
    embed_model=None,
    recurring=None,
) -> AnswerStream:
    """Stream an answer: iterate the AnswerStream for str pieces, then read `.result`. `facts_block` (lines citing
    [F1], [F2] ... that name `fact_citations`) comes from the facts layer; the rag.answer docstring says how.
    `llm_unavailable` (with use_llm=False): why the model is not asked, shown as the extractive answer's warning.
    `embed_model`: the index's, with which the extractive answer reads a figure only the filer states.
    `recurring`: which sentences other companies' filings print too (rag.recurring), not quoted."""
    return AnswerStream(
        question, retrieval, settings, use_llm=use_llm, facts_block=facts_block, fact_citations=fact_citations,
        llm_unavailable=llm_unavailable, embed_model=embed_model, recurring=recurring,
    )


def answer(
    question: str,
    retrieval: RetrievalResult,
    settings: Settings,
    use_llm: bool = True,
    *,
    facts_block: str | None = None,
    fact_citations: list[Citation] | None = None,
    embed_model=None,
) -> AnswerResult:
    """answer_stream(...) consumed: the AnswerResult."""
    return answer_stream(
        question, retrieval, settings, use_llm=use_llm, facts_block=facts_block, fact_citations=fact_citations,
        embed_model=embed_model,
    ).consume()
