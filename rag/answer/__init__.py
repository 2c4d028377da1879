"""The answer layer: refusals, the prompt, Ollama streaming, citation checks and the extractive fallback.

    stream = answer_stream(question, retrieval, settings)      # an AnswerStream
    for piece in stream:                                       # str pieces, e.g. for st.write_stream
        ...
    result = stream.result                                     # AnswerResult, once the stream is exhausted

    result = answer(question, retrieval, settings)             # the same, consumed in one call

Order of events in one answer:
1. Refusal rules (no LLM call): predictions, investment advice, market data, companies that are not indexed,
   questions that have nothing to do with filings. The refusal says why and cites nothing.
2. No retrieved passages and no facts: say the indexed filings hold nothing on it (no citations).
3. With `use_llm`: the exact figures of the facts layer (or, without them, a figure the extractive reader finds in
   the passages shown) are yielded first and stand: the model's text follows them, is held back while it is no
   more than a not-found sentence (a model that only refuses adds a line saying so, never a refusal), and a figure
   of its that contradicts the XBRL fact is followed by a note saying so (rag.facts.CheckedStream). Without a
   figure leading, a model whose whole reply is the not-found sentence gives way to the extractive answer (4.)
   whenever that quotes passages matching the question; it is a refusal only when that finds none too. A model's
   answer in prose (no figure leads it, none is asked) is followed by the sentences and rows of the passages it
   cites that best match the question, in the filings' own words, to check it by; when it cites none that has any
   (or nothing at all), by those the extractive answer (4.) quotes from the passages shown, which it then cites.
   The prompt (rules + numbered, delimited sources) fits a budget (RAG_LLM_PROMPT_TOKENS within the model's
   context from /api/show): passages trimmed to their matching sentences and rows before more passages
   (`fit_prompt`); its estimated size is `prompt_tokens`. It streams through llama-index's `Ollama`.
   If Ollama is not running, the model is not pulled or the request times out before any text arrives, the
   answer falls back to 4. with the reason (and how to fix it) in `warnings`. A stream that breaks after text
   arrived keeps that text and is marked `cut`. Every wait is bounded and visible: while the model is silent
   the stream yields "" every WAIT_TICK_S with `stream.waiting` set ("waiting for llama3.1:8b, 12 s"), and
   `stream.stop()` answers from the filings instead; a whole answer may take llm_deadline_s (RAG_LLM_DEADLINE),
   after which the text that arrived is kept and marked cut (`cut_reason` says why an answer was cut).
4. Extractive answer: the sentences and table rows (with their column years) of the retrieved passages that
   best match the question, each with its [n].
5. Checks on the final text: every [n] must name a given source (others are removed, with a warning), and
   placeholder markers ("[n]", "[citation]") are removed with a warning; the not-found sentence is a refusal only
   when it is the whole answer (a partial answer keeps its text, with a warning quoting what it says is missing);
   a claim sentence whose cited sources share none of its content words is listed (`unsupported_claims`); figures
   that appear in none of the cited sources are listed in warnings (`unverified_figures`); arithmetic written as
   `a / b = c` is recomputed; an answer that recites the model's own instructions, or names nothing the question
   asks about, is flagged as one a passage may have steered (`injection`).

Exact figures from the facts layer: rag/engine.py asks rag/facts.py for them and passes them on as
    answer_stream(..., facts_block="Total revenue FY2024: $48,210 million [F1]", fact_citations=[Citation(...)])
`facts_block` is plain text whose lines cite `[F1]`, `[F2]`, ... meaning `fact_citations[0]`, `[1]`, ... These
citations are numbered after the retrieved sources (N+1, N+2, ...) and the markers are rewritten to match. The
prompt puts the block before the sources as exact figures computed in code; the extractive answer leads with
it. For the citation and figure checks, a fact citation's evidence is its `text` plus the block's lines that
cite it. Nothing is required of a fact Citation but `text` (and ideally company/ticker/form/fiscal_year/url).

Modules: llm (the Ollama client, its errors, status and the model's context length), refusals, sources (the
numbered citations), prompt (and its budget), citations (the [n] markers and placeholders), figures (numbers,
arithmetic and the final check), support (claims against their cited passages), injection (an answer a passage
steered), terms, quotable and extractive (the extractive answer), stream (AnswerStream, answer_stream, answer),
model_reply (the model's streamed reply read in a thread, hidden reasoning and a bare refusal held back),
condense (a follow-up rewritten into a standalone question by the model, for rag.engine).

This package imports no streamlit: the CLI, the tests and the app share it.
"""

from __future__ import annotations

from ..schema import AnswerResult, Citation
from .extractive import extractive_answer
from .figures import answer_figures, check_arithmetic, check_citations
from .llm import (
    LLMError,
    LLMTimeout,
    LLMUnavailable,
    ModelNotFound,
    OllamaStatus,
    StreamBroken,
    list_models,
    make_llm,
    ollama_status,
)
from .prompt import SYSTEM_PROMPT, build_messages, build_user_prompt, format_sources, neutralize
from .refusals import Refusal, check_refusal
from .sources import sources_from_retrieval
from .stream import CUT_MARK, AnswerStream, WaitState, answer, answer_stream, cut_mark

__all__ = [
    "CUT_MARK",
    "SYSTEM_PROMPT",
    "AnswerResult",
    "AnswerStream",
    "Citation",
    "LLMError",
    "LLMTimeout",
    "LLMUnavailable",
    "ModelNotFound",
    "OllamaStatus",
    "Refusal",
    "StreamBroken",
    "WaitState",
    "answer",
    "answer_figures",
    "answer_stream",
    "build_messages",
    "build_user_prompt",
    "check_arithmetic",
    "check_citations",
    "check_refusal",
    "cut_mark",
    "extractive_answer",
    "format_sources",
    "list_models",
    "make_llm",
    "neutralize",
    "ollama_status",
    "sources_from_retrieval",
]
