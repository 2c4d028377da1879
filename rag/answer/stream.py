"""The answer as a stream: AnswerStream runs the steps of one answer (see the package docstring) and yields its
text in pieces; `answer_stream` makes one and `answer` consumes one. The think filter keeps a model's hidden
reasoning (<think>...</think>) out of the stream.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from ollama import ResponseError

from ..config import Settings
from ..schema import AnswerResult, Citation, QuestionPlan, RetrievalResult
from .citations import CITATION_MARKER, CitationFilter, citation_numbers
from .extractive import extractive_answer
from .figures import check_citations
from .llm import StreamBroken, answer_tokens, make_llm, translate_error
from .prompt import SYSTEM_PROMPT, build_messages, fit_sources
from .refusals import check_refusal, partial_company_note, where_filings_are_listed
from .sources import prepare_facts, sources_from_retrieval

CUT_MARK = "\n\n*[Answer cut off before the end (see the warning); the text above is what arrived.]*"




class _ThinkFilter:
    """Drops <think>...</think> (and <thinking>...</thinking>) from a stream of pieces, across piece borders."""

    OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)

    def __init__(self):
        self.buf = ""
        self.inside: str | None = None
        self.saw_orphan_close = False

    def feed(self, piece: str) -> str:
        self.buf += piece
        out = []
        while self.buf:
            if self.inside:
                close = re.search(rf"</{self.inside}>", self.buf, re.IGNORECASE)
                if not close:
                    self.buf = self.buf[-(len(self.inside) + 3):]  # keep a possible partial closing tag
                    break
                self.buf = self.buf[close.end():].lstrip("\n")
                self.inside = None
                continue
            m = self.OPEN.search(self.buf)
            if m:
                out.append(self.buf[: m.start()])
                self.inside = m.group(1).lower()
                self.buf = self.buf[m.end():]
                continue
            orphan = re.search(r"</(?:think|thinking|reasoning)>", self.buf, re.IGNORECASE)
            if orphan:
                self.saw_orphan_close = True
                out.append(self.buf[: orphan.start()])
                self.buf = self.buf[orphan.end():]
                continue
            lt = self.buf.rfind("<")
            if lt != -1 and len(self.buf) - lt < 13 and ">" not in self.buf[lt:]:
                out.append(self.buf[:lt])
                self.buf = self.buf[lt:]
            else:
                out.append(self.buf)
                self.buf = ""
            break
        return "".join(out)

    def flush(self) -> str:
        rest = "" if self.inside else self.buf
        self.buf = ""
        return rest


_NOT_FOUND = re.compile(
    r"\b(?:do(?:es)?\s+not|don't|doesn't|cannot|can't|no)\s+(?:\w+\s+){0,2}?(?:contain|include|provide|hold|"
    r"mention|state|disclose|address|cover|answer|say|specify|information|data|details)\b",
    re.IGNORECASE,
)


class AnswerStream:
    """Iterate for str pieces (e.g. `st.write_stream(stream)`); after the iteration `.result` is the AnswerResult.
    Iterating a second time yields nothing. `consume()` runs it to the end and returns the result."""

    def __init__(
        self,
        question: str,
        retrieval: RetrievalResult,
        settings: Settings,
        *,
        use_llm: bool = True,
        facts_block: str | None = None,
        fact_citations: list[Citation] | None = None,
    ):
        self.question = question
        self.retrieval = retrieval
        self.settings = settings
        self.use_llm = use_llm
        self.facts_block = facts_block
        self.fact_citations = list(fact_citations or [])
        self.result: AnswerResult | None = None
        self._started = False
        # The answer being built, its pieces so far and its start time: set when the iteration starts.
        self._res: AnswerResult | None = None
        self._pieces: list[str] = []
        self._t0 = 0.0
        self._cites: CitationFilter | None = None  # the LLM stream's citation filter, read by the final checks

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

        fallback_reason = None
        if self.use_llm:
            fallback_reason = yield from self._llm_answer(chunk_sources, facts_text, fact_sources)
            if fallback_reason is None:  # the LLM answered (fully or cut)
                self._finish()
                return
            del self._pieces[1 if partial_note else 0:]
        yield from self._extractive(fact_sources + chunk_sources, facts_text, fallback_reason)
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
            timings={"retrieval_ms": round(float(retrieval.retrieval_ms or 0.0), 2), "first_token_ms": None,
                     "total_ms": None},
            warnings=list(getattr(retrieval, "warnings", None) or []),
            generated_queries=list(getattr(retrieval, "generated_queries", None) or []),
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
        given, dropped = fit_sources(chunk_sources, self.settings, fixed)
        # Fact citations keep their numbers (before all retrieved sources) even when passages are dropped.
        given_all = fact_sources + given
        messages = build_messages(self.question, given, facts_text=facts_text)
        outcome = yield from self._stream_llm(messages, given_all, res, self._emit)
        if outcome is not None:
            return outcome
        res.sources = given_all
        if dropped:
            res.warnings.append(
                f"Only the first {len(given)} of {len(chunk_sources)} retrieved passages fit the model's "
                f"context window ({self.settings.llm_context_window} tokens)."
            )
        self._check_llm_answer(res, self._pieces, given_all)
        return None

    def _extractive(self, sources: list[Citation], facts_text: str | None, fallback_reason: str | None):
        """Yields the extractive answer in blocks and records its citations."""
        res = self._res
        res.extractive = True
        res.model = None
        res.sources = sources
        if fallback_reason:
            res.warnings.insert(0, fallback_reason)
        reason = "Ollama unavailable" if fallback_reason else None
        text, refused = extractive_answer(
            self.question, res.sources, self.retrieval.plan, facts_text=facts_text, reason=reason
        )
        if refused:
            res.refused, res.refusal_reason = True, "no_evidence"
        for block in re.split(r"(?<=\n\n)", text):
            if block:
                yield self._emit(block)
        if not refused:
            by_number = {c.number: c for c in res.sources}
            cited = {n for m in CITATION_MARKER.finditer(text) for n in citation_numbers(m.group(1))}
            res.citations = [by_number[n] for n in sorted(cited) if n in by_number]

    def _stream_llm(self, messages, given: list[Citation], res: AnswerResult, emit):
        """Yields answer pieces. Returns None when the LLM answered (res.cut set when the stream broke), or the
        reason (a user message) to fall back to the extractive answer when no text arrived."""
        settings = self.settings
        model = settings.llm_model
        think = _ThinkFilter()
        cites = CitationFilter({c.number for c in given})
        self._cites = cites
        got_text = False
        raw_seen = False
        done = False
        done_reason = None
        thinking_setting: bool | None = False
        for attempt in range(2):
            llm = make_llm(settings, thinking=thinking_setting)
            try:
                for response in llm.stream_chat(messages):
                    raw = response.raw if isinstance(response.raw, dict) else {}
                    if raw.get("done"):
                        done = True
                        done_reason = raw.get("done_reason")
                    delta = response.delta or ""
                    if not delta:
                        continue
                    raw_seen = True
                    out = cites.feed(think.feed(delta))
                    if out:
                        got_text = True
                        res.model = model
                        yield emit(out)
                break
            except Exception as exc:  # noqa: BLE001 - mapped to a user message below
                if (
                    attempt == 0 and not raw_seen and isinstance(exc, ResponseError) and exc.status_code == 400
                    and "think" in str(exc.error).lower()
                ):
                    thinking_setting = None  # an Ollama that rejects think=false: ask again without the field
                    continue
                err = translate_error(exc, settings, model, got_text)
                if not got_text:
                    return str(err)
                res.cut = True
                res.warnings.append(str(err) if isinstance(err, StreamBroken) else
                                    f"The answer is cut off: {err}")
                break
            finally:
                llm.client.close()
        tail = cites.feed(think.flush()) + cites.flush()
        if tail:
            got_text = got_text or bool(tail.strip())
            yield emit(tail)
        if not got_text:
            if raw_seen:
                return "The model returned only its hidden reasoning and no answer text; showing passages instead."
            return f"Ollama ({model}) returned an empty answer; showing passages instead."
        res.model = model
        if not res.cut and not done:
            res.cut = True
            res.warnings.append(
                "The connection to Ollama ended before the answer was complete; the text that arrived is kept."
            )
        if done_reason == "length":
            res.cut = True
            res.warnings.append(
                f"The answer reached the length limit ({answer_tokens(settings)} tokens) and is cut off."
            )
        if res.cut:
            yield emit(CUT_MARK)
        if think.saw_orphan_close:
            res.warnings.append("The model's output held a stray </think> tag; check that no reasoning text remains.")
        return None

    def _check_llm_answer(self, res: AnswerResult, pieces: list[str], given: list[Citation]) -> None:
        text = "".join(pieces).replace(CUT_MARK, "")
        note = partial_company_note(self.retrieval.plan)
        if note and text.startswith(note):
            text = text[len(note):]
        cites: CitationFilter = self._cites
        for n in cites.invalid:
            res.warnings.append(f"Removed citation [{n}]: no source {n} was given to the model.")
        cited, warnings, unverified = check_citations(text, given, question=self.question)
        res.warnings.extend(w for w in warnings if w not in res.warnings)
        res.unverified_figures = unverified
        by_number = {c.number: c for c in given}
        res.citations = [by_number[n] for n in sorted(cited)]
        if not cited and _NOT_FOUND.search(text):
            res.refused, res.refusal_reason = True, "not_in_sources"
        elif not cited and text.strip():
            res.warnings.append("The answer cites no source; treat it as unverified.")


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
) -> AnswerStream:
    """Stream an answer: iterate the AnswerStream for str pieces, then read `.result`. `facts_block` (lines citing
    [F1], [F2] ... that name `fact_citations`) comes from the facts layer; the rag.answer docstring says how."""
    return AnswerStream(
        question, retrieval, settings, use_llm=use_llm, facts_block=facts_block, fact_citations=fact_citations
    )


def answer(
    question: str,
    retrieval: RetrievalResult,
    settings: Settings,
    use_llm: bool = True,
    *,
    facts_block: str | None = None,
    fact_citations: list[Citation] | None = None,
) -> AnswerResult:
    """answer_stream(...) consumed: the AnswerResult."""
    return answer_stream(
        question, retrieval, settings, use_llm=use_llm, facts_block=facts_block, fact_citations=fact_citations
    ).consume()
