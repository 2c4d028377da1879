"""The library page: the indexed filings, correct one's details, remove or re-index one, read it Item by Item."""

from __future__ import annotations

import logging
from pathlib import Path

import streamlit as st

from rag.index import FISCAL_PERIODS, IndexBusy, IndexError_, InvalidCorrection, fiscal_period_of
from rag.schema import pages_label, period_label

from . import core
from .filings import index_files
from .safe import code, join, link, md, plain
from .text import PAGE_DASH, code_inline, safe_inline, safe_url, section_label

log = logging.getLogger(__name__)

K_SELECTED = "library_selected"
K_CONFIRM_REMOVE = "library_confirm_remove"
K_TAB = "library_tab"
TAB_READ, TAB_MANAGE = ":material/menu_book: Read", ":material/build: Manage"


def filing_label(f: dict) -> str:
    """'ACME · 10-Q · Q3 FY2025 — Acme Widgets Inc.'"""
    parts = [f.get("ticker") or "?", f.get("form") or "filing"]
    period = period_label(f.get("fiscal_year"), f.get("fiscal_period"))
    if period:
        parts.append(period)
    label = " · ".join(str(p) for p in parts)
    if f.get("company"):
        label += f" — {f['company']}"
    return label


def _sort_key(f: dict):
    return (str(f.get("ticker") or ""), str(f.get("form") or ""), -(int(f.get("fiscal_year") or 0)),
            str(f.get("period_end") or ""))


def render() -> None:
    s = core.settings()
    st.title("Library", anchor=False)
    core.show_notice()
    known = core.filings(s)
    if not known:
        st.info("No filings are indexed yet. Add some in the sidebar under **Add filings**: download from EDGAR by "
                "ticker, or upload EDGAR `.htm`/`.html`, full-submission `.txt` or PDF files.",
                icon=":material/folder_off:")
        return
    ordered = sorted(known.values(), key=_sort_key)
    _summary(ordered)
    _table(ordered)
    st.divider()
    _one_filing(s, known, ordered)


def _summary(ordered: list[dict]) -> None:
    companies = {f.get("ticker") or f.get("company") for f in ordered}
    chunks = sum(int(f.get("chunks") or 0) for f in ordered)
    years = sorted({int(f["fiscal_year"]) for f in ordered if f.get("fiscal_year")})
    cols = st.columns(4)
    cols[0].metric("Filings", len(ordered))
    cols[1].metric("Companies", len(companies))
    cols[2].metric("Chunks", f"{chunks:,}")
    cols[3].metric("Fiscal years", plain(f"{years[0]}–{years[-1]}" if len(years) > 1 else (years[0] if years else "–")))


def _table(ordered: list[dict]) -> None:
    import pandas as pd

    rows = []
    for f in ordered:
        rows.append({
            "Ticker": f.get("ticker") or "",
            "Company": f.get("company") or "",
            "Form": f.get("form") or "",
            "Fiscal year": int(f["fiscal_year"]) if f.get("fiscal_year") else None,
            "Period": fiscal_period_of(f),
            "Period end": f.get("period_end") or "",
            "Filing date": f.get("filing_date") or "",
            "Chunks": int(f.get("chunks") or 0),
            "Indexed": pd.to_datetime(f.get("indexed_at"), errors="coerce"),
            "On sec.gov": safe_url(f.get("url")),
            "Accession / id": f.get("accession") or f.get("doc_id") or "",
        })
    frame = pd.DataFrame(rows)
    if not frame["On sec.gov"].notna().any():
        frame = frame.drop(columns=["On sec.gov"])
    st.dataframe(
        frame, hide_index=True, width="stretch", key="library_table",
        column_config={
            "Fiscal year": st.column_config.NumberColumn(format="%d"),
            "Chunks": st.column_config.NumberColumn(format="%d"),
            "Indexed": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm"),
            "On sec.gov": st.column_config.LinkColumn(display_text="open"),
        },
    )


# The details a user may correct: record key -> the form's label (rag.index.EDITABLE_FIELDS).
DETAILS = {"company": "Company", "ticker": "Ticker", "form": "Form", "fiscal_year": "Fiscal year",
           "fiscal_period": "Fiscal period"}


def _one_filing(s, known: dict, ordered: list[dict]) -> None:
    ids = [f["doc_id"] for f in ordered if f.get("doc_id") in known]
    wanted = st.session_state.pop(core.K_LIBRARY_DOC, None)
    if wanted in ids:
        st.session_state[K_SELECTED] = wanted
    if st.session_state.get(K_SELECTED) not in ids:
        st.session_state[K_SELECTED] = ids[0]
    doc_id = st.selectbox("Filing", ids, key=K_SELECTED, format_func=lambda d: filing_label(known[d]))
    f = known[doc_id]
    # A keyed tab bar that reruns on change keeps the tab a user chose across reruns (asking to remove a filing
    # reruns the page; without it the Manage tab jumped back to Read), and only the open tab's body runs.
    read_tab, manage_tab = st.tabs([TAB_READ, TAB_MANAGE], key=K_TAB, on_change="rerun")
    if read_tab.open:
        with read_tab:
            _reader(doc_id, f)
    if manage_tab.open:
        with manage_tab:
            _manage(s, doc_id, f)


def _reader(doc_id: str, f: dict) -> None:
    try:
        idx = core.index()
        sections = idx.filing_sections(doc_id)
        text = idx.filing_text(doc_id)
    except Exception as exc:  # noqa: BLE001
        st.error(safe_inline(f"The filing's text could not be read: {exc}"))
        return
    if not text:
        st.info("This filing's text is not in the index any more; re-index it.")
        return
    if not sections:
        sections = [{"item": "Document", "title": "", "char_start": 0, "char_end": len(text)}]
    keys = list(range(len(sections)))

    def label(i: int) -> str:
        sec = sections[i]
        head = section_label(sec.get("item"), sec.get("title")).replace(f"{sec.get('item')} ", f"{sec.get('item')} · ", 1)
        pages = pages_label(sec.get("page_start"), sec.get("page_end"), PAGE_DASH)
        return f"{head} ({pages})" if pages else head

    wanted = st.session_state.pop(core.K_LIBRARY_ITEM, None)
    key = f"library_item_{doc_id}"
    if wanted:
        match = next((i for i, sec in enumerate(sections) if sec.get("item") == wanted), None)
        if match is not None:
            st.session_state[key] = match
    if st.session_state.get(key) not in keys:
        st.session_state[key] = next((i for i, sec in enumerate(sections) if str(sec.get("item", "")).startswith(
            "Item")), 0)
    i = st.selectbox("Item", keys, key=key, format_func=label)
    sec = sections[i]
    start, end = int(sec.get("char_start") or 0), int(sec.get("char_end") or len(text))
    body = text[start:end]
    st.caption(md("{:,} characters · characters {:,}–{:,} of the filing's text", len(body), start, end)
               + (md(" · {}", link("open on sec.gov", f.get("url"))) if safe_url(f.get("url")) else md("")))
    st.code(body or "(empty)", language=None, wrap_lines=True, height=560 if len(body) > 2500 else "content")


def _manage(s, doc_id: str, f: dict) -> None:
    path = Path(f.get("path") or "")
    bits = [md("Id: {}", code(doc_id))]
    if f.get("accession"):
        bits.append(md("accession {}", f["accession"]))
    if f.get("indexed_at"):
        bits.append(md("indexed {}", str(f["indexed_at"]).replace("T", " ")))
    st.caption(join(" · ", bits))
    st.caption(f"File: {code_inline(str(path))}" if path.name else "File: unknown")
    _edit_details(s, doc_id, f)
    left, right = st.columns(2)
    with left:
        st.markdown("**Re-index**")
        st.caption("Parse, chunk and embed this filing again (after an upgrade of the parser, for instance).")
        if st.button("Re-index", key=f"reindex_{doc_id}", icon=":material/sync:", disabled=not path.name):
            _reindex(s, doc_id, f, path)
    with right:
        st.markdown("**Remove**")
        st.caption("Drop it from the index (the downloaded file stays on disk).")
        if st.session_state.get(K_CONFIRM_REMOVE) == doc_id:
            st.warning(f"Remove **{safe_inline(filing_label(f))}** from the index?")
            yes, no = st.columns(2)
            if yes.button("Remove", key=f"remove_yes_{doc_id}", type="primary", icon=":material/delete:"):
                _remove(s, doc_id, f)
            if no.button("Cancel", key=f"remove_no_{doc_id}"):
                st.session_state.pop(K_CONFIRM_REMOVE, None)
                st.rerun()
        elif st.button("Remove…", key=f"remove_{doc_id}", icon=":material/delete:"):
            st.session_state[K_CONFIRM_REMOVE] = doc_id
            st.rerun()


def _edit_details(s, doc_id: str, f: dict) -> None:
    with st.expander("Edit details", icon=":material/edit:"):
        st.caption("Correct what was read from the filing. Filters, citations and the XBRL figures use the new "
                   "details at once; nothing is re-embedded (each passage keeps the header line it was indexed with).")
        with st.form(key=f"edit_{doc_id}", border=False):
            top = st.columns([3, 1])
            values = {"company": top[0].text_input(DETAILS["company"], value=f.get("company") or "",
                                                   key=f"edit_company_{doc_id}"),
                      "ticker": top[1].text_input(DETAILS["ticker"], value=f.get("ticker") or "",
                                                  key=f"edit_ticker_{doc_id}")}
            row = st.columns(3)
            values["form"] = row[0].text_input(DETAILS["form"], value=f.get("form") or "", key=f"edit_form_{doc_id}",
                                               help="10-K (annual report) or 10-Q (quarterly report), or an "
                                                    "amendment such as 10-K/A.")
            year = int(f["fiscal_year"]) if f.get("fiscal_year") else None
            values["fiscal_year"] = row[1].number_input(DETAILS["fiscal_year"], value=year, step=1, format="%d",
                                                        key=f"edit_fiscal_year_{doc_id}",
                                                        help="The company's own label: the year its fiscal year "
                                                             "ends in, as its cover says.")
            period = fiscal_period_of(f)
            values["fiscal_period"] = row[2].selectbox(
                DETAILS["fiscal_period"], FISCAL_PERIODS, key=f"edit_fiscal_period_{doc_id}",
                index=FISCAL_PERIODS.index(period) if period in FISCAL_PERIODS else None,
                help="Q1, Q2 or Q3 for a 10-Q; FY for an annual report.")
            saved = st.form_submit_button("Save", key=f"edit_save_{doc_id}", icon=":material/save:", type="primary")
        if saved:
            _save_details(s, doc_id, f, values)


def _save_details(s, doc_id: str, f: dict, values: dict) -> None:
    current = {**f, "fiscal_period": fiscal_period_of(f)}
    changes = {k: v for k, v in values.items() if v is not None and str(v).strip() != str(current.get(k) or "")}
    try:
        after = core.engine(s).store.update_filing(doc_id, changes, lock_timeout=5.0)
    except InvalidCorrection as exc:
        st.error(safe_inline("Not saved: " + "; ".join(exc.problems) + "."))
        return
    except IndexBusy:
        st.error("Another indexing run is busy with the index; try again when it ends.")
        return
    except IndexError_ as exc:
        st.error(safe_inline(f"Not saved: {exc}."))
        return
    changed = [f"{DETAILS[k].lower()} {after.get(k)}" for k in DETAILS if after.get(k) != f.get(k)]
    if not changed:
        st.info("Nothing to save: the details are as recorded.")
        return
    core.notice(md("Saved {}: {}. Filters, citations and figures use the new details; nothing was re-embedded.",
                   filing_label(after), ", ".join(changed)))
    st.session_state[core.K_LIBRARY_DOC] = doc_id
    st.rerun()


def _keep_corrections(s, doc_id: str, f: dict) -> None:
    """A re-indexed filing is read from its file again: the details the user corrected are put back."""
    corrected = {k: f.get(k) for k in f.get("corrected") or () if k in DETAILS and f.get(k) not in (None, "")}
    if not corrected:
        return
    try:
        core.engine(s).store.update_filing(doc_id, corrected, lock_timeout=5.0)
    except (InvalidCorrection, IndexBusy, IndexError_) as exc:
        st.warning(safe_inline(f"Your corrected details could not be put back ({exc}); edit them again."))


def _remove(s, doc_id: str, f: dict) -> None:
    try:
        removed = core.engine(s).store.remove([doc_id], lock_timeout=5.0)
    except IndexBusy:
        st.error("Another indexing run is busy with the index; try again when it ends.")
        return
    st.session_state.pop(K_CONFIRM_REMOVE, None)
    st.session_state.pop(K_SELECTED, None)
    if removed:
        core.notice(md("Removed {} from the index.", filing_label(f)))
    else:
        core.notice(md("{} was not in the index any more.", filing_label(f)), "warning")
    st.rerun()


def _reindex(s, doc_id: str, f: dict, path: Path) -> None:
    if not path.is_file():
        st.error(safe_inline(f"The filing's file is gone ({path}); download or upload it again."))
        return
    label = filing_label(f)
    with st.status(md("Re-indexing {}…", label), expanded=True) as status:
        try:
            core.engine(s).store.remove([doc_id], lock_timeout=5.0)
        except IndexBusy:
            status.update(label="Index busy", state="error")
            st.error("Another indexing run is busy with the index; try again when it ends.")
            return
        overrides = {k: f.get(k) for k in DETAILS if f.get(k)}
        lines = index_files(s, [(path, label)], overrides)
        line = lines[0] if lines else None
        if line and line.state != "failed":
            _keep_corrections(s, doc_id, f)
            status.update(label=md("Re-indexed {}: {}", label, line.detail), state="complete", expanded=False)
            core.notice(md("Re-indexed {}: {}.", label, line.detail))
            st.session_state[core.K_LIBRARY_DOC] = doc_id
            st.rerun()
        else:
            status.update(label=md("Re-indexing {} failed", label), state="error")
            st.error(safe_inline(f"{label}: {line.detail if line else 'not indexed'}"))
