"""The chat page: history, the question box, streamed answers, citations that open their passage."""

from __future__ import annotations

import logging
import time
from pathlib import PurePath

import streamlit as st

from rag.companies import reader_name
from rag.conversations import to_markdown
from rag.edgar.record import filing_index_url
from rag.schema import pages_label, period_label

from . import core, history, page_view, waiting
from .safe import download_name, join, md, plain
from .text import (
    EXPORT_ESCAPER,
    PAGE_DASH,
    PASSAGE_CSS,
    chunk_body,
    code_inline,
    context_window,
    escaped_stream,
    highlight_html,
    locate_passage,
    long_label,
    safe_inline,
    safe_markdown,
    safe_url,
    section_label,
    short_label,
    source_kind,
    supporting_quotes,
    timings_label,
)

log = logging.getLogger(__name__)

USER_AVATAR = ":material/person:"
ASSISTANT_AVATAR = ":material/query_stats:"
# How many of the conversation's earlier questions a new one is planned against (rag.followup): its recent turns.
HISTORY_TURNS = 6
EXAMPLES = (
    "What were total net sales in the latest fiscal year?",
    "What are the main risk factors?",
    "How did revenue change from the prior year?",
)
OLLAMA_DOWN_HELP = (
    "Start Ollama with `ollama serve` and get a model with {pull}, then press **Check again** in "
    "the sidebar. Until then answers are extractive: the passages and exact reported figures that best match "
    "the question, each cited."
)


def render(pages: dict) -> None:
    s = core.settings()
    conv_id = core.current_conversation_id()
    history.flush(s)  # what an earlier run could not save, tried again first (oldest first)
    conv = history.get(conv_id, s) if conv_id else None
    if conv_id and conv is None and not history.problem():
        core.open_conversation(None)
        st.warning("That conversation no longer exists (it was deleted). A new one starts with your next question.")
        conv_id = None
    messages = history.messages(conv_id, s) if conv else []
    known = core.filings(s)
    stopped = waiting.take_stopped(conv_id)  # an answer whose wait for the model was stopped: finished below

    # The page's furniture in one container: the messages below start at the same place whether or not the
    # welcome shows, so a finished answer's rerun draws it over the streamed one instead of beside it.
    with st.container():
        _header(conv, messages)
        core.show_notice()
        history.banner()
        _ollama_banner(s)
        if not known:
            _empty_index(bool(messages))
        elif not messages:
            _welcome(known)

    for i, msg in enumerate(messages):
        _render_message(msg, messages[i - 1] if i else None)
        following = messages[i + 1] if i + 1 < len(messages) else None
        if msg["role"] == "user" and (following is None or following["role"] == "user") and not (
                stopped and following is None):
            _unanswered(msg, known)

    placeholder = "Ask about the indexed filings…" if known else "Add filings first (sidebar: Add filings)"
    prompt = st.chat_input(placeholder, key="question", disabled=not known, max_chars=2000)
    pending = st.session_state.pop(core.K_PENDING, None)
    if stopped:
        _finish_stopped(stopped)
    if prompt and prompt.strip():
        ask(prompt.strip(), conv_id=conv_id)
    elif pending and known:
        ask(pending["question"], conv_id=conv_id, use_analysis=pending.get("use_analysis", True),
            alone=pending.get("alone", False))


# --------------------------------------------------------------------------------------------------------------
# Page furniture


def _header(conv: dict | None, messages: list[dict]) -> None:
    left, right = st.columns([0.72, 0.28], vertical_alignment="bottom")
    with left:
        if conv:
            st.caption(":material/forum: Conversation")
            st.subheader(safe_inline(conv["title"]), anchor=False)
        else:
            st.title("Chat with your filings", anchor=False)
    with right:
        if conv and messages:
            st.download_button(
                "Export Markdown", data=to_markdown(conv, messages, escape=EXPORT_ESCAPER),
                file_name=download_name(conv["title"], ".md", fallback="conversation"),
                mime="text/markdown", icon=":material/download:", key="export_md", on_click="ignore",
                width="stretch", help="This conversation with every citation, as a Markdown file.",
            )


def _ollama_banner(s) -> None:
    info = core.ollama(s)
    if not info.reachable:
        st.warning(
            f"**Ollama is not running** at {safe_inline(s.ollama_url)}. "
            + OLLAMA_DOWN_HELP.format(pull=code_inline(f"ollama pull {s.llm_model}")),
            icon=":material/cloud_off:",
        )
    elif info.models and s.llm_model not in info.models:
        st.warning(
            f"Ollama runs, but the model **{safe_inline(s.llm_model)}** is not installed: "
            f"{code_inline('ollama pull ' + s.llm_model)}, or pick an installed model in the sidebar.",
            icon=":material/model_training:",
        )
    elif not info.models:
        st.warning(f"Ollama runs but has no models: {code_inline('ollama pull ' + s.llm_model)}.",
                   icon=":material/model_training:")


def _empty_index(has_history: bool) -> None:
    with st.container(border=True):
        st.markdown("#### No filings are indexed yet")
        st.markdown(
            "Add some first, in the sidebar under **Add filings**:\n\n"
            "1. **From EDGAR**: type tickers (e.g. `AAPL, MSFT`), pick 10-K or 10-Q and how many of the latest, "
            "then **Download & index**. SEC asks for your name and e-mail (the *SEC user agent*).\n"
            "2. **Upload**: drop EDGAR `.htm`/`.html` documents, full-submission `.txt` files or PDFs, press "
            "**Read files**, check what was read about each, then **Index**.\n\n"
            "Or from a terminal: `python -m rag download AAPL --limit 2`, or `python -m rag index PATH`. "
            "The app picks up the new index without a restart."
        )
        if has_history:
            st.caption("Earlier answers stay readable below; asking again needs indexed filings.")


def _welcome(known: dict) -> None:
    tickers = sorted({str(f.get("ticker")) for f in known.values() if f.get("ticker")})
    years = sorted({int(f["fiscal_year"]) for f in known.values() if f.get("fiscal_year")})
    span = f"FY{years[0]}–FY{years[-1]}" if len(years) > 1 else (f"FY{years[0]}" if years else "")
    who = ", ".join(tickers[:12]) + (f" and {len(tickers) - 12} more" if len(tickers) > 12 else "")
    st.markdown(
        md("{} filing{} indexed", len(known), "s" if len(known) != 1 else "")
        + (md(": {}", who) if who else "") + (md(" · {}", span) if span else "") + ". "
        "Ask a question: name the company and fiscal year for exact figures. Every answer cites its passages; "
        "click a citation to read it in its filing."
    )
    cols = st.columns(len(EXAMPLES))
    for i, (col, example) in enumerate(zip(cols, EXAMPLES)):
        if col.button(plain(example), key=f"example_{i}", icon=":material/lightbulb:",
                      width="stretch", type="secondary"):
            st.session_state[core.K_PENDING] = {"question": example, "use_analysis": True}


# --------------------------------------------------------------------------------------------------------------
# History


def _unanswered(msg: dict, known: dict) -> None:
    """A question whose answer never arrived (the page was left or another question sent while it streamed)."""
    with st.chat_message("assistant", avatar=ASSISTANT_AVATAR):
        st.caption(":material/hourglass_disabled: No answer was recorded for this question: it was interrupted.")
        if known and st.button("Ask again", key=f"retry_{msg['id']}", icon=":material/replay:", type="tertiary"):
            st.session_state[core.K_PENDING] = {"question": msg["content"], "use_analysis": True}


def _render_message(msg: dict, previous: dict | None) -> None:
    if msg["role"] == "user":
        with st.chat_message("user", avatar=USER_AVATAR):
            st.markdown(safe_markdown(msg["content"], citation_color=None))
        return
    result = msg.get("result") or {}
    with st.chat_message("assistant", avatar=ASSISTANT_AVATAR):
        if result.get("error"):
            st.error(safe_inline(result["error"]), icon=":material/error:")
            return
        st.markdown(safe_markdown(msg["content"]))
        _answer_details(msg["id"], result, previous)


def _answer_details(msg_id: int, result: dict, previous: dict | None) -> None:
    citations = result.get("citations") or []
    sources = result.get("sources") or []

    if citations:
        with st.container(horizontal=True, gap="xsmall", key=f"cites_{msg_id}"):
            for c in citations:
                if st.button(md("\\[{}\\] {}", c.get("number"), short_label(c)),
                             key=f"cite_{msg_id}_{c.get('number')}", type="secondary", icon=":material/article:",
                             help=safe_inline(long_label(c))):
                    show_citation(c, result.get("mode"), result.get("answer"))

    _company_choices(msg_id, result, previous)
    _meta_row(msg_id, result, previous)
    _warnings(result)

    if sources:
        _sources(msg_id, result, sources, {c.get("number") for c in citations})


def _company_choices(msg_id: int, result: dict, previous: dict | None) -> None:
    """A figure question that named no company, with too many indexed to answer for each: one button a company,
    asking the same question of it (the ticker written after the user's own words, so the question shows whose)."""
    choices = (result.get("detected") or {}).get("which_company") or {}
    if result.get("refusal_reason") != "which_company" or not choices:
        return
    question = (previous or {}).get("content") or result.get("question") or ""
    with st.container(horizontal=True, gap="xsmall", key=f"which_{msg_id}"):
        for ticker, name in choices.items():
            if st.button(safe_inline(reader_name(name) or ticker), key=f"which_{msg_id}_{ticker}", type="secondary",
                         icon=":material/domain:", help=safe_inline(f"Ask it of {ticker}")):
                st.session_state[core.K_PENDING] = {"question": f"{question} ({ticker})", "use_analysis": True}


def _sources(msg_id: int, result: dict, sources: list[dict], cited: set) -> None:
    """The cited sources first, one line each (company · form · period · Item · page), opened in place; the
    passages retrieved but not cited folded under "N more passages", each a line that opens the citation panel.
    No score on the lines: fused ranks and exact figures have no common scale (the panel gives a passage's)."""
    used = [c for c in sources if c.get("number") in cited]
    rest = [c for c in sources if c.get("number") not in cited]
    st.caption(f"Sources · {len(used)} cited" if used else "Sources · none cited")
    for c in used:
        with st.expander(md("\\[{}\\] {}", c.get("number"), long_label(c)), icon=":material/format_quote:"):
            _source_meta(c, result.get("mode"))
            st.html(PASSAGE_CSS + highlight_html("", chunk_body(c.get("text") or ""), "", mark=False))
            if st.button("Show in filing", key=f"src_{msg_id}_{c.get('number')}", icon=":material/open_in_new:",
                         type="tertiary"):
                show_citation(c, result.get("mode"), result.get("answer"))
    if rest:
        with st.expander(f"{len(rest)} more passage{'s' if len(rest) != 1 else ''}", icon=":material/description:"):
            for c in rest:
                if st.button(md("\\[{}\\] {}", c.get("number"), long_label(c)), key=f"src_{msg_id}_{c.get('number')}",
                             type="tertiary", icon=":material/description:"):
                    show_citation(c, result.get("mode"), result.get("answer"))


def _meta_row(msg_id: int, result: dict, previous: dict | None) -> None:
    request = result.get("request") or {}
    detected = (result.get("detected") or {}).get("label") or ""
    # The user's own words (a follow-up's result holds the question it was answered as, the earlier one with it).
    question = (previous or {}).get("content") or result.get("question") or ""
    bits = []
    mode = result.get("mode") or request.get("mode")
    if mode:
        bits.append(md("**{}** retrieval", mode))
    if result.get("model"):
        bits.append(md("model {}", result["model"]))
    elif result.get("extractive"):
        bits.append("extractive (no model)")
    elif result.get("refused"):
        bits.append("not answered")
    bits.append(timings_label(result.get("timings")))
    user_filters = (request.get("filters") or {})
    chosen = [*user_filters.get("tickers", []), *[f"FY{y}" for y in user_filters.get("fiscal_years", [])],
              *user_filters.get("fiscal_periods", []), *user_filters.get("forms", [])]
    if chosen:
        bits.append(md("your filters: {}", " · ".join(map(str, chosen))))
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key=f"meta_{msg_id}"):
        if detected and request.get("use_analysis", True):
            st.caption(f":material/filter_alt: Detected **{safe_inline(detected)}**")
            if (result.get("detected") or {}).get("carried") and st.button(
                    "Ask on its own", key=f"alone_{msg_id}", icon=":material/chat_bubble:", type="tertiary",
                    help="Ask the same question again as if it opened the conversation: nothing carried over from "
                         "the questions before it."):
                st.session_state[core.K_PENDING] = {"question": question, "use_analysis": True, "alone": True}
            if st.button("Ask again without these", key=f"clear_{msg_id}", icon=":material/filter_alt_off:",
                         type="tertiary",
                         help="Ask the same question again without the companies, years, forms or Items detected "
                              "in it (your sidebar filters still apply)."):
                st.session_state[core.K_PENDING] = {"question": question, "use_analysis": False, "alone": True}
        elif request.get("use_analysis") is False:
            st.caption(":material/filter_alt_off: Asked without detected filters")
        st.caption(join(" · ", bits))
    queries = result.get("generated_queries") or []
    if queries:  # model output: shown escaped, like filing text
        st.caption(":material/manage_search: Also searched: " + join(" · ", (md("“{}”", q) for q in queries)))


def _warnings(result: dict) -> None:
    figures = result.get("unverified_figures") or []
    for w in result.get("warnings") or []:
        if result.get("extractive") and w.startswith("Ollama is not reachable"):
            st.caption(":material/cloud_off: Ollama was not reachable: this answer is extractive.")
            continue
        st.warning(safe_markdown(w, citation_color=None), icon=":material/warning:")
    if figures and not any("figure" in (w or "").lower() for w in result.get("warnings") or []):
        st.warning("Check these figures, found in none of the cited passages: " + join(", ", figures),
                   icon=":material/warning:")
    if result.get("cut"):
        waiting.show_cut_caption(result)


def _source_meta(c: dict, mode: str | None) -> None:
    bits = []
    if c.get("company") or c.get("ticker"):
        who = reader_name(c.get("company"))
        if c.get("ticker"):
            who = f"{who} ({c['ticker']})" if who else c["ticker"]
        bits.append(safe_inline(who))
    if c.get("form"):
        bits.append(safe_inline(c["form"]))
    if c.get("fiscal_year"):
        bits.append(period_label(c["fiscal_year"], c.get("fiscal_period")))
    if c.get("section"):
        bits.append(safe_inline(section_label(c["section"], c.get("section_title"))))
    pages = pages_label(c.get("page_start"), c.get("page_end"), PAGE_DASH)
    if pages:
        bits.append(pages)
    if source_kind(c):
        bits.append(source_kind(c))
    else:
        bits.append(md("score {:.4f}", float(c.get("score") or 0)) + (md(" ({})", mode) if mode else md("")))
    st.caption(join(" · ", bits))


# --------------------------------------------------------------------------------------------------------------
# A citation, opened


@st.dialog("Source passage", width=760, position="right", icon=":material/article:")
def _citation_dialog(c: dict, mode: str | None = None) -> None:
    render_citation(c, mode)


# A passage from a PDF opens wider: its page beside its text (stacked, page first, where the screen is narrow).
@st.dialog("Source passage", width=1280, position="right", icon=":material/article:")
def _pdf_citation_dialog(c: dict, mode: str | None = None) -> None:
    render_citation(c, mode)


def show_citation(c: dict, mode: str | None = None, answer: str | None = None) -> None:
    """The citation's panel; `answer` is the answer citing it, whose claims say what in the passage to mark."""
    c = {**c, "quotes": cited_quotes(c, answer)}
    (_pdf_citation_dialog if page_view.pdf_path(c) else _citation_dialog)(c, mode)


def cited_quotes(c: dict, answer: str | None) -> list[str]:
    """What in the citation's passage supports the answer: the figure's row the engine recorded, else the sentences
    the answer's claims citing it quote or restate (ui.text.supporting_quotes)."""
    if c.get("quote"):
        return [c["quote"]]
    return supporting_quotes(answer or "", c.get("number"), chunk_body(c.get("text") or ""))


def render_citation(c: dict, mode: str | None = None) -> None:
    pdf = page_view.pdf_path(c)
    if pdf is None:
        _render_citation_text(c, mode)
        return
    page_col, text_col = st.columns([11, 9], gap="medium")
    with text_col:
        passage = _render_citation_text(c, mode)
    with page_col:
        page_view.show(c, pdf, passage)


def _render_citation_text(c: dict, mode: str | None = None) -> str:
    """The citation's heading, source line and passage (in its filing's text where it is still there); returns the
    passage as the filing's text holds it, else the chunk's body."""
    st.markdown(md("#### \\[{}\\] {}", c.get("number"), reader_name(c.get("company")) or c.get("ticker") or "Unknown company"))
    _source_meta(c, mode)
    # The filing on sec.gov: its document, else its index page from the CIK and accession; without either, the
    # file's name only (the server's folders are no business of the reader's).
    link = safe_url(c.get("url")) or safe_url(filing_index_url(c.get("cik"), c.get("accession")))
    if link:
        st.link_button("Open the filing on sec.gov", link, icon=":material/open_in_new:")
    elif c.get("source"):
        st.caption(f"File: {safe_inline(PurePath(str(c['source']).replace(chr(92), '/')).name)}")

    text = ""
    if c.get("doc_id"):
        try:
            idx = core.index()
            if c["doc_id"] in idx.filings:
                text = idx.filing_text(c["doc_id"])
        except Exception:  # noqa: BLE001 - the passage below still shows the chunk itself
            log.exception("reading filing text failed")
    span = locate_passage(text, c.get("text") or "", c.get("char_start"), c.get("char_end")) if text else None
    passage = chunk_body(c.get("text") or "")
    if span:
        before, passage, after, cut_before, cut_after = context_window(text, *span)
        st.caption("The cited passage in its filing's text: what supports the answer marked, the rest of the "
                   "passage shaded." if c.get("quotes") else "The cited passage, highlighted in its filing's text:")
        st.html(PASSAGE_CSS + highlight_html(before, passage, after, cut_before, cut_after,
                                               quote=c.get("quotes") or c.get("quote")))
    else:
        if c.get("kind") == "fact":
            st.caption(md("A figure read from {}:", c["origin"]) if c.get("origin")
                       else "An exact figure read from the filing's inline XBRL:")
        elif c.get("doc_id"):
            st.info("This filing is no longer in the index (removed or re-indexed): the passage is shown as it was "
                    "cited.", icon=":material/info:")
        st.html(PASSAGE_CSS + highlight_html("", chunk_body(c.get("text") or ""), "",
                                             quote=c.get("quotes") or c.get("quote")))
    with st.expander("Chunk as indexed (with its header)"):
        st.code(c.get("text") or "", language=None, wrap_lines=True)
    if c.get("doc_id") and span and st.button("Read this Item in the Library", icon=":material/menu_book:",
                                              key="cite_to_library"):
        st.session_state[core.K_LIBRARY_DOC] = c["doc_id"]
        st.session_state[core.K_LIBRARY_ITEM] = c.get("section")
        page = core.PAGES.get("library")
        if page is not None:
            st.switch_page(page)
    return passage


# --------------------------------------------------------------------------------------------------------------
# Asking


def earlier_questions(messages: list[dict]) -> list[str]:
    """The conversation's earlier questions, oldest first: the last HISTORY_TURNS a new question may follow up."""
    asked = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    return [q for q in asked if q.strip()][-HISTORY_TURNS:]


def ask(question: str, *, conv_id: str | None, use_analysis: bool = True, alone: bool = False) -> None:
    """alone: asked as if it opened the conversation (the earlier questions are not passed as its history)."""
    s = core.settings()
    if not conv_id or history.get(conv_id, s) is None:
        conv_id = history.create(question, s)["id"]
        core.open_conversation(conv_id)
    earlier = [] if alone else earlier_questions(history.messages(conv_id, s))
    history.add(conv_id, "user", question, s=s)  # kept in the session when it cannot be stored: never lost
    request = core.current_request(s)
    with st.chat_message("user", avatar=USER_AVATAR):
        st.markdown(safe_markdown(question, citation_color=None))
    with st.chat_message("assistant", avatar=ASSISTANT_AVATAR):
        started = time.perf_counter()
        try:
            cold = not core.embedding_loaded(s)  # asked before the background warm-up finished
            with st.spinner("Loading the embedding model and searching the filings…" if cold
                            else "Searching the filings…"):
                core.start_warm_up(s).wait()  # one model load, shared with the warm-up, never two
                stream = core.engine(s).ask_stream(
                    question, mode=request.mode, top_k=request.top_k, filters=request.filters,
                    use_llm=request.use_llm, use_analysis=use_analysis, generated_queries=request.generated_queries,
                    history=earlier or None,
                )
            flight = waiting.begin(stream, conv_id=conv_id, question=question,
                                   request={**request.to_dict(), "use_analysis": use_analysis})
            _answer_slot().write_stream(escaped_stream(waiting.watched(flight)))
            if flight.taken_over:  # the user stopped the wait: the next run, already started, finishes the answer
                st.stop()
            result, content = _finished(stream)
        except Exception as exc:  # noqa: BLE001 - say what went wrong, keep the conversation usable
            result, content = _failed(exc, question, started)
    result["request"] = {**request.to_dict(), "use_analysis": use_analysis, "alone": alone}
    waiting.end()
    history.add(conv_id, "assistant", content, result, s=s)
    st.rerun()


def _answer_slot():
    """Where a streamed answer goes: the message's first element, where the rerun that files it draws the stored
    answer (anywhere else the two would show at once until that run ended)."""
    return st.empty()


def _finished(stream) -> tuple[dict, str]:
    """(the result as stored, the answer's text) of a stream that ran to its end."""
    result = stream.result.to_dict() if stream.result is not None else None
    if result is None:
        raise RuntimeError("the answer stream ended without a result")
    return result, result.get("answer") or ""


def _failed(exc: Exception, question: str, started: float) -> tuple[dict, str]:
    log.exception("answering failed")
    message = f"The question could not be answered: {type(exc).__name__}: {exc}"
    st.error(safe_inline(message))
    result = {"error": message, "question": question,
              "timings": {"total_ms": round((time.perf_counter() - started) * 1000, 1)}}
    return result, message


def _finish_stopped(flight: waiting.Flight) -> None:
    """The answer whose wait the user stopped (waiting.take_stopped): its stream, stopped, goes on to the extractive
    answer here, and is stored like any other."""
    started = time.perf_counter()
    with st.chat_message("assistant", avatar=ASSISTANT_AVATAR):
        try:
            _answer_slot().write_stream(escaped_stream(flight.pieces))
            result, content = _finished(flight.stream)
        except Exception as exc:  # noqa: BLE001 - say what went wrong, keep the conversation usable
            result, content = _failed(exc, flight.question, started)
    result["request"] = flight.request
    waiting.end()
    history.add(flight.conv_id, "assistant", content, result)
    st.rerun()
