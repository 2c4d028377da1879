"""Getting filings in: download from EDGAR, or upload files (checked and corrected by the user first). Both are
queued for the background worker (rag/jobs.py); ui/jobs.py shows their progress. `index_files` indexes in the
foreground, with a progress bar per file, for the Library's re-index."""

from __future__ import annotations

import logging
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from rag.config import Settings, get_settings
from rag.edgar import FORMS
from rag.edgar.record import FISCAL_PERIODS, RECORD_NAME
from rag.jobs import CORRECTABLE, correct_record, record_label

from . import core
from . import jobs as jobs_ui
from .safe import md
from .text import safe_inline

log = logging.getLogger(__name__)

UPLOAD_TYPES = ["htm", "html", "txt", "pdf"]
K_UPLOADER = "uploader_generation"
K_REVIEW = "upload_review"  # the uploaded files' records, read and waiting for the user's check
K_REVIEW_OPEN = "upload_review_open"  # the review's dialog is up (closed with its X, it waits behind a button)
LOCK_TIMEOUT_S = 5.0


@dataclass
class JobLine:
    label: str
    state: str  # "indexed" | "unchanged" | "failed"
    detail: str = ""


def index_files(s: Settings, items: list[tuple[Path, str]], overrides: dict | None = None) -> list[JobLine]:
    """Index files with a progress bar each (inside the caller's st.status). items: (path, label shown)."""
    from rag.index import IndexBusy

    store = core.engine(s).store
    bars = {}
    for i, (_path, label) in enumerate(items):
        bars[i] = st.progress(0.0, text=md("{}: waiting", label))
    # IndexStore.add reports (file name, stage, fraction) in file order; names repeat (every EDGAR download is
    # primary-document.html), so follow the order: a file is done at 'indexed', 'unchanged' or 'failed'.
    cursor = {"i": 0}

    def progress(name: str, stage: str, fraction: float) -> None:
        i = min(cursor["i"], len(items) - 1)
        label = items[i][1]
        shown = stage.split(":", 1)[0] if stage.startswith("failed") else stage
        try:
            bars[i].progress(max(0.0, min(1.0, float(fraction))), text=md("{}: {}", label, shown))
        except Exception:  # noqa: BLE001 - a progress bar must never break indexing
            pass
        if stage in ("indexed", "unchanged") or stage.startswith("failed"):
            cursor["i"] += 1

    lines: list[JobLine] = []
    try:
        report = store.add([p for p, _ in items], overrides=overrides or None, progress=progress,
                           lock_timeout=LOCK_TIMEOUT_S)
    except IndexBusy:
        message = "Another indexing run (another session or the CLI) is busy with the index; try again when it ends."
        for i, (_path, label) in enumerate(items):
            bars[i].progress(1.0, text=md("{}: not indexed", label))
            lines.append(JobLine(label, "failed", message))
        return lines
    except Exception as exc:  # noqa: BLE001
        log.exception("indexing failed")
        for i, (_path, label) in enumerate(items):
            bars[i].progress(1.0, text=md("{}: not indexed", label))
            lines.append(JobLine(label, "failed", f"Indexing failed: {exc}"))
        return lines
    rows = {str(Path(r["file"])): r for r in report.rows}
    for i, (path, label) in enumerate(items):
        row = rows.get(str(Path(path))) or {}
        status = row.get("status")
        if status == "indexed":
            lines.append(JobLine(label, "indexed", f"{row.get('chunks', 0)} chunks"))
            bars[i].progress(1.0, text=md("{}: indexed, {} chunks", label, row.get("chunks", 0)))
        elif status == "skipped":
            lines.append(JobLine(label, "unchanged", "already indexed, unchanged"))
            bars[i].progress(1.0, text=md("{}: already indexed", label))
        else:
            error = row.get("error") or "not indexed"
            lines.append(JobLine(label, "failed", error))
            bars[i].progress(1.0, text=md("{}: failed", label))
    return lines


# --------------------------------------------------------------------------------------------------------------
# EDGAR


def parse_tickers(raw: str) -> list[str]:
    out: list[str] = []
    for t in re.split(r"[\s,;]+", raw or ""):
        t = t.strip().upper()
        if t and t not in out:
            out.append(t)
    return out


def edgar_form(s: Settings) -> None:
    st.text_input("Tickers", key="dl_tickers", placeholder="AAPL, MSFT",
                  help="One or more tickers (or CIK numbers), separated by commas or spaces.")
    left, right = st.columns(2)
    left.selectbox("Form", list(FORMS), key="dl_form")
    right.number_input("Latest", min_value=1, max_value=12, value=2, step=1, key="dl_count",
                       help="How many of the latest filings per ticker: for 10-K, one per fiscal year.")
    env_agent = bool(get_settings().sec_user_agent)
    if not env_agent:
        st.text_input(
            "SEC user agent", key=core.K_UA, placeholder="Jane Analyst jane@example.com",
            help="SEC asks every program that downloads from EDGAR to say who is asking: your name and e-mail. "
                 "Set SEC_USER_AGENT to skip this field.",
        )
    clicked = st.button("Download & index", key="dl_go", type="primary", icon=":material/download:",
                        width="stretch")
    if clicked:
        download_and_index(s, parse_tickers(st.session_state.get("dl_tickers", "")),
                           st.session_state.get("dl_form", "10-K"), int(st.session_state.get("dl_count") or 1))


def download_and_index(s: Settings, tickers: list[str], form: str, count: int) -> None:
    """Queue the downloads; the background worker fetches each ticker's filings and indexes them one by one."""
    from rag.edgar import EdgarError, validate_user_agent

    if not tickers:
        st.error("Type at least one ticker, e.g. AAPL.")
        return
    try:
        validate_user_agent(s.sec_user_agent)
    except EdgarError as exc:
        st.error(safe_inline(str(exc)) + "  \nFill in **SEC user agent** above (e.g. `Jane Analyst jane@example.com`).",
                 icon=":material/badge:")
        return
    jobs_ui.track(s, [core.jobs(s).add_download(tickers, form, count, s)])


# --------------------------------------------------------------------------------------------------------------
# Uploads


def upload_form(s: Settings) -> None:
    """Two steps: read the files (what each says about itself is shown and can be corrected), then queue them."""
    generation = st.session_state.setdefault(K_UPLOADER, 0)
    files = st.file_uploader(
        "Filing files", type=UPLOAD_TYPES, accept_multiple_files=True, key=f"uploader_{generation}",
        max_upload_size=int(s.max_upload_mb),
        help=md("EDGAR .htm/.html documents, full-submission .txt files or PDFs, up to {} MB each.", s.max_upload_mb),
    )
    if st.button("Read files", key="up_go", type="primary", icon=":material/upload_file:", disabled=not files,
                 width="stretch", help="Reads each file's company, ticker, form, fiscal year and period, for you to "
                                       "check before it is indexed."):
        read_uploads(s, files)
    rows = st.session_state.get(K_REVIEW)
    if rows and not st.session_state.get(K_REVIEW_OPEN):
        n = len(rows)
        if st.button(f"Check what was read ({n} file{'s' if n != 1 else ''})", key="up_reopen", icon=":material/fact_check:",
                     width="stretch", help="The files read and not yet indexed: check them, then index."):
            st.session_state[K_REVIEW_OPEN] = True
            st.rerun()


def check_upload(name: str, size: int, max_mb: int) -> str | None:
    """Why an uploaded file cannot be added, or None."""
    suffix = Path(name).suffix.lower().lstrip(".")
    if suffix not in UPLOAD_TYPES:
        kind = f"a .{suffix} file" if suffix else "a file without an extension"
        return (f"{name}: only EDGAR .htm/.html documents, full-submission .txt files and PDFs can be added, "
                f"not {kind}.")
    if size == 0:
        return f"{name} is empty."
    if size > max_mb * 1024 * 1024:
        return f"{name} is {size / 1024 / 1024:.1f} MB, over the {max_mb} MB limit (RAG_MAX_UPLOAD_MB)."
    return None


def read_uploads(s: Settings, files) -> None:
    """Save each file with what it says about itself (rag.edgar.add_local_file) and put it up for review."""
    from rag.edgar import EdgarError, add_local_file

    rows = []
    for f in files:
        problem = check_upload(f.name, f.size, int(s.max_upload_mb))
        if problem:
            st.error(safe_inline(problem), icon=":material/error:")
            continue
        try:
            with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
                path = Path(tmp) / ("upload" + Path(f.name).suffix.lower())
                path.write_bytes(f.getvalue())
                record = add_local_file(path, settings=s, name=f.name)
        except EdgarError as exc:
            st.error(safe_inline(str(exc)), icon=":material/error:")
            continue
        except Exception as exc:  # noqa: BLE001
            log.exception("adding %s failed", f.name)
            st.error(safe_inline(f"{f.name}: {exc}"), icon=":material/error:")
            continue
        rows.append({"file": f.name, "record": str(Path(record.path).parent / RECORD_NAME),
                     **{key: getattr(record, key, None) for key in CORRECTABLE}})
    if rows:
        st.session_state[K_REVIEW] = rows
        st.session_state[K_REVIEW_OPEN] = True
        st.session_state[K_UPLOADER] = st.session_state.get(K_UPLOADER, 0) + 1  # a fresh, empty uploader


def show_review(s: Settings) -> None:
    """The upload review, in a dialog over the page (it needs the room: six columns), while files wait for it.
    Called by the frame outside the sidebar, on every page."""
    if st.session_state.get(K_REVIEW) and st.session_state.get(K_REVIEW_OPEN):
        _review_dialog(s)


def _review_closed() -> None:
    st.session_state[K_REVIEW_OPEN] = False  # the files stay read: the sidebar offers the review again


@st.dialog("Check what was read", width="large", icon=":material/fact_check:", on_dismiss=_review_closed)
def _review_dialog(s: Settings) -> None:
    review_form(s)


def review_form(s: Settings) -> None:
    """What was read from each file, editable; indexing starts when the user confirms it."""
    rows = st.session_state.get(K_REVIEW)
    if not rows:
        return
    st.caption("Correct what was read where it is wrong, then index:")
    columns = ["file", *CORRECTABLE]
    edited = st.data_editor(
        [{k: row.get(k) for k in columns} for row in rows], key="up_review", hide_index=True, width="stretch",
        disabled=["file"], num_rows="fixed",
        column_config={
            "file": st.column_config.TextColumn("File"),
            "company": st.column_config.TextColumn("Company"),
            "ticker": st.column_config.TextColumn("Ticker", max_chars=10),
            "form": st.column_config.SelectboxColumn(
                "Form", options=sorted({*FORMS, *(str(r["form"]) for r in rows if r.get("form"))})),
            "fiscal_year": st.column_config.NumberColumn("Fiscal year", min_value=1993, max_value=2100, step=1,
                                                         format="%d"),
            "fiscal_period": st.column_config.SelectboxColumn("Period", options=list(FISCAL_PERIODS),
                                                              help="Q1-Q3 for a quarterly report, FY for an annual one"),
        },
    )
    left, right = st.columns(2)
    if left.button("Index", key="up_index", type="primary", icon=":material/playlist_add:", width="stretch"):
        queue_reviewed(s, rows, edited)
    if right.button("Discard", key="up_discard", icon=":material/close:", width="stretch",
                    help="Do not index these files (they stay saved and can be uploaded again)."):
        st.session_state.pop(K_REVIEW, None)
        st.session_state.pop(K_REVIEW_OPEN, None)
        st.rerun()


def queue_reviewed(s: Settings, rows: list[dict], edited) -> None:
    from rag.edgar import FilingRecord

    items: list[tuple[Path, str]] = []
    corrected: set[Path] = set()
    for row, values in zip(rows, _records_of(edited)):
        try:
            record = FilingRecord.load(Path(row["record"]))
            if correct_record(record, values):
                corrected.add(Path(record.path))
        except (OSError, ValueError) as exc:
            st.error(safe_inline(f"{row['file']}: its record could not be updated: {exc}"), icon=":material/error:")
            continue
        label = record_label(record, row["file"])
        items.append((Path(record.path), f"{row['file']} ({label})" if label != row["file"] else row["file"]))
    if items:
        jobs_ui.track(s, core.jobs(s).add_files(items, replace=corrected))
    st.session_state.pop(K_REVIEW, None)
    st.session_state.pop(K_REVIEW_OPEN, None)
    st.rerun()


def _records_of(edited) -> list[dict]:
    """st.data_editor's value as a list of row dicts (it hands back the type it was given, or a DataFrame)."""
    if hasattr(edited, "to_dict"):
        return edited.to_dict("records")
    return list(edited)
