"""The sidebar every page shares: conversations, search settings, the model, and getting filings in."""

from __future__ import annotations

import streamlit as st

from rag.config import get_settings
from rag.embedding import backend_label
from rag.index import fiscal_period_of
from rag.schema import MODES

from . import core, history
from . import filings as filing_ui
from . import jobs as jobs_ui
from .safe import join, md, plain
from .text import code_inline, safe_inline

K_CONFIRM_DELETE = "confirm_delete_conversation"
K_SHOW_ALL = "show_all_conversations"
RECENT = 8


def render(pages: dict) -> None:
    """pages: name -> st.Page (for switching to the chat when a conversation is opened elsewhere)."""
    s = core.settings()
    with st.sidebar:
        conv_box = st.container()
        st.divider()
        search_box = st.container()
        st.divider()
        model_box = st.container()
        st.divider()
        add_box = st.container()
    # Filled in this order, shown in the order above: a download or upload is queued before the filters are
    # drawn; the filters offer each filing once the background worker has published it.
    known = core.filings(s)
    with add_box:
        _filings_manager(s, empty=not known)
    known = core.filings(s)
    with conv_box:
        _conversations(s, pages)
    with search_box:
        _search_settings(s, known)
    with model_box:
        _model(s)


# --------------------------------------------------------------------------------------------------------------


def _go_to_chat(pages: dict, conversation_id: str | None) -> None:
    core.open_conversation(conversation_id)
    chat = pages.get("chat")
    current = st.session_state.get(core.K_PAGE)
    if chat is not None and current != "chat":
        st.switch_page(chat, query_params={"c": conversation_id} if conversation_id else None)
    st.rerun()


def _conversations(s, pages: dict) -> None:
    current = core.current_conversation_id()
    if st.button("New chat", key="new_chat", icon=":material/add_comment:", type="primary", width="stretch"):
        _go_to_chat(pages, None)
    items = history.list_conversations(s)
    if history.problem():  # the chat page says which file and what to do
        st.caption(":material/history_toggle_off: History is not being saved (see the chat).")
    if not items:
        st.caption("Your conversations will be listed here.")
        return
    st.caption("Conversations")
    show_all = st.session_state.get(K_SHOW_ALL, False)
    shown = items if show_all else items[:RECENT]
    confirm = st.session_state.get(K_CONFIRM_DELETE)
    for conv in shown:
        cid = conv["id"]
        title = conv["title"] if len(conv["title"]) <= 44 else conv["title"][:43].rstrip() + "…"
        if confirm == cid:
            st.caption(f"Delete “{safe_inline(title)}”?")
            left, right = st.columns(2)
            if left.button("Delete", key=f"conv_del_yes_{cid}", type="primary", width="stretch"):
                history.delete(cid, s)
                st.session_state.pop(K_CONFIRM_DELETE, None)
                if cid == current:
                    core.open_conversation(None)
                st.toast("Conversation deleted", icon=":material/delete:")
                st.rerun()
            if right.button("Cancel", key=f"conv_del_no_{cid}", width="stretch"):
                st.session_state.pop(K_CONFIRM_DELETE, None)
                st.rerun()
            continue
        left, right = st.columns([0.84, 0.16], vertical_alignment="center", gap="xxsmall")
        if left.button(safe_inline(title), key=f"conv_open_{cid}", width="stretch",
                       type="secondary" if cid == current else "tertiary",
                       help=md("{} messages · last active {} UTC", conv["messages"],
                               conv["updated_at"][:16].replace("T", " "))):
            _go_to_chat(pages, cid)
        if right.button("", key=f"conv_del_{cid}", icon=":material/delete:", type="tertiary",
                        help="Delete this conversation"):
            st.session_state[K_CONFIRM_DELETE] = cid
            st.rerun()
    if len(items) > RECENT:
        st.toggle(f"Show all {len(items)}", key=K_SHOW_ALL)


def _clear_filters() -> None:
    for key in (core.K_TICKERS, core.K_YEARS, core.K_FORMS, core.K_PERIODS):
        st.session_state[key] = []


def _search_settings(s, known: dict) -> None:
    st.markdown("**Search**")
    st.segmented_control(
        "Retrieval mode", list(MODES), key=core.K_MODE, default="hybrid", required=True, width="stretch",
        bind="query-params",
        format_func=lambda m: plain(m.capitalize()),
        help=join("  \n", (md("**{}**: {}", m.capitalize(), core.MODE_HELP[m]) for m in MODES)),
    )
    st.slider("Passages per answer (top-k)", 1, 30, value=max(1, min(30, int(s.top_k))), key=core.K_TOP_K,
              bind="query-params",
              help="How many passages are retrieved and given to the model.")
    reachable = core.ollama(s).reachable
    st.toggle("Let the model write extra search queries", key=core.K_GENERATE, value=s.generated_queries > 0,
              disabled=not reachable,
              help="Ollama rewrites the question into a few queries in the filings' own words; all of them are "
                   "searched and fused with the question. Slower (one more model call per question); finds "
                   "passages worded unlike the question." + ("" if reachable else " Needs Ollama."))

    tickers: dict[str, str] = {}
    years: set[int] = set()
    forms: set[str] = set()
    periods: set[str] = set()
    for f in known.values():
        if fiscal_period_of(f):
            periods.add(fiscal_period_of(f))
        if f.get("ticker"):
            tickers.setdefault(str(f["ticker"]), f.get("company") or "")
        if f.get("fiscal_year"):
            years.add(int(f["fiscal_year"]))
        if f.get("form"):
            forms.add(str(f["form"]))
    ticker_options = sorted(tickers)
    year_options = sorted(years, reverse=True)
    form_options = sorted(forms)
    period_options = sorted(periods, key=lambda p: (p == "FY", p))  # Q1, Q2, Q3, then the full year
    # Keep only choices that still exist (a filing may have been removed since).
    for key, options in ((core.K_TICKERS, ticker_options), (core.K_YEARS, year_options),
                         (core.K_FORMS, form_options), (core.K_PERIODS, period_options)):
        chosen = st.session_state.get(key)
        if chosen:
            st.session_state[key] = [v for v in chosen if v in options]
    disabled = not known
    st.multiselect("Company", ticker_options, key=core.K_TICKERS, disabled=disabled, placeholder="All companies",
                   bind="query-params",
                   format_func=lambda t: f"{t} · {tickers.get(t)}" if tickers.get(t) else t)
    left, middle, right = st.columns(3)
    left.multiselect("Fiscal year", year_options, key=core.K_YEARS, disabled=disabled, placeholder="All",
                     bind="query-params",
                     format_func=lambda y: f"FY{y}")
    middle.multiselect("Period", period_options, key=core.K_PERIODS, disabled=disabled, placeholder="All",
                       bind="query-params",
                       help="Q1-Q3: the quarterly reports (10-Q) of those fiscal quarters; FY: the annual reports.")
    right.multiselect("Form", form_options, key=core.K_FORMS, disabled=disabled, placeholder="All",
                      bind="query-params")
    active = any(st.session_state.get(k) for k in (core.K_TICKERS, core.K_YEARS, core.K_FORMS, core.K_PERIODS))
    if active:
        st.button("Clear filters", key="clear_filters", icon=":material/filter_alt_off:", type="tertiary",
                  on_click=_clear_filters)
    else:
        st.caption("No filter: the question itself picks companies and years.")


def _installed(name: str, models: list[str]) -> str | None:
    """The installed model a configured name means ('llama3.1' is 'llama3.1:latest')."""
    def norm(n: str) -> str:
        n = n.strip().lower()
        return n if ":" in n else n + ":latest"

    return next((m for m in models if norm(m) == norm(name or "")), None)


def _model(s) -> None:
    st.markdown("**Answer model**")
    info = core.ollama(s)
    configured = get_settings().llm_model  # RAG_LLM_MODEL, before the user's choice
    if info.reachable:
        models = list(info.models)
        if not models:
            st.caption(f":orange[●] Ollama is running at {safe_inline(s.ollama_url)} but has no models.")
            st.caption("Pull one: " + code_inline(f"ollama pull {configured}"))
        else:
            chosen = st.session_state.get(core.K_MODEL)
            current = (_installed(chosen, models) if chosen else None) or _installed(configured, models) or models[0]
            st.session_state[core.K_MODEL] = current
            st.selectbox("Ollama model", models, key=core.K_MODEL,
                         help=md("Models installed in Ollama at {}.", s.ollama_url))
            st.caption(f":green[●] Ollama running · {len(models)} model{'s' if len(models) != 1 else ''} · "
                       f"{safe_inline(s.ollama_url)}")
            if not _installed(configured, models):
                st.caption(f":orange[:material/info:] {safe_inline(configured)} (RAG\\_LLM\\_MODEL) is not installed, so "
                           f"answers use {safe_inline(current)}. To use it: {code_inline('ollama pull ' + configured)}")
    else:
        st.selectbox("Ollama model", [configured], key="llm_model_offline", disabled=True)
        st.caption(f":red[●] Ollama not reachable at {safe_inline(s.ollama_url)}: extractive answers.")
    if st.button("Check again", key="ollama_recheck", icon=":material/refresh:", type="tertiary"):
        core.recheck_ollama()
        st.rerun()
    # Which embedding runtime reads the filings (RAG_EMBED_BACKEND), and where it runs.
    st.caption(f"Embeddings: {safe_inline(s.embed_model)} · {safe_inline(backend_label(s.embed_backend))}")


def _filings_manager(s, empty: bool) -> None:
    with st.expander("Add filings", icon=":material/library_add:", expanded=empty):
        edgar_tab, upload_tab = st.tabs(["From EDGAR", "Upload"])
        with edgar_tab:
            filing_ui.edgar_form(s)
        with upload_tab:
            filing_ui.upload_form(s)
    jobs_ui.panel(s)
    jobs_ui.team_panel(s)
