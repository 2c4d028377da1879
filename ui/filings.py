"""Getting filings in: download from EDGAR, or upload files; then index them, with progress per filing."""

from __future__ import annotations

import logging
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from rag.config import Settings, get_settings

from . import core
from .text import safe_inline

log = logging.getLogger(__name__)

UPLOAD_TYPES = ["htm", "html", "txt", "pdf"]
K_UPLOADER = "uploader_generation"
K_LAST_JOB = "last_index_job"
K_JUST_RAN = "last_index_job_just_ran"
LOCK_TIMEOUT_S = 5.0


@dataclass
class JobLine:
    label: str
    state: str  # "indexed" | "unchanged" | "failed"
    detail: str = ""


def _record_label(record, fallback: str) -> str:
    parts = [getattr(record, "ticker", None) or "", getattr(record, "form", None) or ""]
    fy = getattr(record, "fiscal_year", None)
    if fy:
        parts.append(f"FY{fy}")
    label = " ".join(p for p in parts if p)
    return label or fallback


def index_files(s: Settings, items: list[tuple[Path, str]], overrides: dict | None = None) -> list[JobLine]:
    """Index files with a progress bar each (inside the caller's st.status). items: (path, label shown)."""
    from rag.index import IndexBusy

    store = core.engine(s).store
    bars = {}
    for i, (_path, label) in enumerate(items):
        bars[i] = st.progress(0.0, text=f"{label}: waiting")
    # IndexStore.add reports (file name, stage, fraction) in file order; names repeat (every EDGAR download is
    # primary-document.html), so follow the order: a file is done at 'indexed', 'unchanged' or 'failed'.
    cursor = {"i": 0}

    def progress(name: str, stage: str, fraction: float) -> None:
        i = min(cursor["i"], len(items) - 1)
        label = items[i][1]
        shown = stage.split(":", 1)[0] if stage.startswith("failed") else stage
        try:
            bars[i].progress(max(0.0, min(1.0, float(fraction))), text=f"{label}: {shown}")
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
            bars[i].progress(1.0, text=f"{label}: not indexed")
            lines.append(JobLine(label, "failed", message))
        return lines
    except Exception as exc:  # noqa: BLE001
        log.exception("indexing failed")
        for i, (_path, label) in enumerate(items):
            bars[i].progress(1.0, text=f"{label}: not indexed")
            lines.append(JobLine(label, "failed", f"Indexing failed: {exc}"))
        return lines
    rows = {str(Path(r["file"])): r for r in report.rows}
    for i, (path, label) in enumerate(items):
        row = rows.get(str(Path(path))) or {}
        status = row.get("status")
        if status == "indexed":
            lines.append(JobLine(label, "indexed", f"{row.get('chunks', 0)} chunks"))
            bars[i].progress(1.0, text=f"{label}: indexed, {row.get('chunks', 0)} chunks")
        elif status == "skipped":
            lines.append(JobLine(label, "unchanged", "already indexed, unchanged"))
            bars[i].progress(1.0, text=f"{label}: already indexed")
        else:
            error = row.get("error") or "not indexed"
            lines.append(JobLine(label, "failed", error))
            bars[i].progress(1.0, text=f"{label}: failed")
    return lines


def _summary(lines: list[JobLine], failures_before: int = 0) -> tuple[str, str]:
    done = sum(1 for line in lines if line.state == "indexed")
    same = sum(1 for line in lines if line.state == "unchanged")
    failed = sum(1 for line in lines if line.state == "failed") + failures_before
    parts = []
    if done:
        parts.append(f"{done} filing{'s' if done != 1 else ''} indexed")
    if same:
        parts.append(f"{same} already indexed")
    if failed:
        parts.append(f"{failed} failed")
    label = ", ".join(parts) or "Nothing to index"
    state = "error" if failed and not (done or same) else "complete"
    return label, state


def _line_text(line: JobLine) -> str:
    if not line.detail:
        return line.label
    if line.detail.startswith(line.label):  # the message names the file already
        return line.detail
    return f"{line.label}: {line.detail}"


def _show_lines(lines: list[JobLine]) -> None:
    for line in lines:
        text = safe_inline(_line_text(line))
        if line.state == "failed":
            st.error(text, icon=":material/error:")
        elif line.state == "unchanged":
            st.caption(":material/check: " + text)
        else:
            st.caption(":green[:material/check_circle:] " + text)


def _remember(label: str, state: str, lines: list[JobLine]) -> None:
    st.session_state[K_LAST_JOB] = {"label": label, "state": state,
                                    "lines": [line.__dict__ for line in lines]}
    st.session_state[K_JUST_RAN] = True  # shown by the job's own st.status in this run


def last_job() -> None:
    """The outcome of the last download/upload, kept until dismissed (failures must stay readable)."""
    job = st.session_state.get(K_LAST_JOB)
    if st.session_state.pop(K_JUST_RAN, False) or not job:
        return
    with st.status(safe_inline(job["label"]), state=job["state"], expanded=job["state"] == "error"):
        _show_lines([JobLine(**line) for line in job["lines"]])
        if st.button("Dismiss", key="dismiss_job", type="tertiary", icon=":material/close:"):
            st.session_state.pop(K_LAST_JOB, None)
            st.rerun()


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
    from rag.edgar import FORMS

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
    from rag.edgar import EdgarError, download_filings, validate_user_agent

    if not tickers:
        st.error("Type at least one ticker, e.g. AAPL.")
        return
    try:
        validate_user_agent(s.sec_user_agent)
    except EdgarError as exc:
        st.error(safe_inline(str(exc)) + "  \nFill in **SEC user agent** above (e.g. `Jane Analyst jane@example.com`).",
                 icon=":material/badge:")
        return
    noun = f"{count} latest {form}" + ("s" if count > 1 else "")
    with st.status(f"Downloading {noun} for {', '.join(tickers)}…", expanded=True) as status:
        bars = {t: st.progress(0.0, text=f"{t}: waiting") for t in tickers}
        n = len(tickers)

        def progress(ticker: str, message: str, fraction: float) -> None:
            t = ticker.upper() if ticker.upper() in bars else None
            if t is None:
                return
            within = max(0.0, min(1.0, fraction * n - tickers.index(t)))
            try:
                bars[t].progress(within, text=f"{t}: {message}"[:140])
            except Exception:  # noqa: BLE001
                pass

        try:
            outcomes = download_filings(tickers, form=form, limit=count, settings=s, progress=progress)
        except EdgarError as exc:
            status.update(label="Download failed", state="error")
            st.error(safe_inline(str(exc)))
            _remember("Download failed", "error", [JobLine(", ".join(tickers), "failed", str(exc))])
            return
        except Exception as exc:  # noqa: BLE001
            log.exception("download failed")
            status.update(label="Download failed", state="error")
            st.error(safe_inline(f"The download failed: {exc}"))
            _remember("Download failed", "error", [JobLine(", ".join(tickers), "failed", str(exc))])
            return
        failed = [JobLine(o.ticker, "failed", o.error or "download failed") for o in outcomes if not o.ok]
        for t in tickers:
            ok = sum(1 for o in outcomes if o.ok and o.ticker.upper() == t)
            bars[t].progress(1.0, text=f"{t}: {ok} filing{'s' if ok != 1 else ''} downloaded")
        for line in failed:
            st.error(safe_inline(_line_text(line)), icon=":material/error:")
        records = [o.record for o in outcomes if o.ok]
        lines: list[JobLine] = []
        if records:
            status.update(label=f"Indexing {len(records)} filing{'s' if len(records) != 1 else ''}…")
            items = [(Path(r.path), _record_label(r, Path(r.path).parent.name)) for r in records]
            lines = index_files(s, items)
            for line in lines:
                if line.state == "failed":
                    st.error(safe_inline(_line_text(line)), icon=":material/error:")
        label, state = _summary(lines, failures_before=len(failed))
        if not records:
            label, state = "No filing was downloaded", "error"
        status.update(label=label, state=state, expanded=state == "error")
        _remember(label, state, failed + lines)


# --------------------------------------------------------------------------------------------------------------
# Uploads


def upload_form(s: Settings) -> None:
    generation = st.session_state.setdefault(K_UPLOADER, 0)
    files = st.file_uploader(
        "Filing files", type=UPLOAD_TYPES, accept_multiple_files=True, key=f"uploader_{generation}",
        max_upload_size=int(s.max_upload_mb),
        help=f"EDGAR .htm/.html documents, full-submission .txt files or PDFs, up to {s.max_upload_mb} MB each.",
    )
    with st.expander("Details for files that don't say", icon=":material/edit_note:"):
        st.caption("Used only where the file itself has no such data (PDFs, older HTML).")
        st.text_input("Ticker", key="up_ticker", placeholder="AAPL")
        st.text_input("Company", key="up_company", placeholder="Apple Inc.")
        left, right = st.columns(2)
        left.number_input("Fiscal year", min_value=1993, max_value=2100, value=None, step=1, key="up_year",
                          placeholder="2024")
        right.selectbox("Form", ["10-K", "10-Q"], index=None, key="up_form", placeholder="Form")
    clicked = st.button("Add & index", key="up_go", type="primary", icon=":material/upload_file:",
                        disabled=not files, width="stretch")
    if clicked and files:
        upload_and_index(s, files)


def _overrides() -> dict:
    out = {}
    if (st.session_state.get("up_ticker") or "").strip():
        out["ticker"] = st.session_state["up_ticker"].strip().upper()
    if (st.session_state.get("up_company") or "").strip():
        out["company"] = st.session_state["up_company"].strip()
    if st.session_state.get("up_year"):
        out["fiscal_year"] = int(st.session_state["up_year"])
    if st.session_state.get("up_form"):
        out["form"] = st.session_state["up_form"]
    return out


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


def upload_and_index(s: Settings, files) -> None:
    from rag.edgar import EdgarError, add_local_file

    overrides = _overrides()
    with st.status(f"Adding {len(files)} file{'s' if len(files) != 1 else ''}…", expanded=True) as status:
        failed: list[JobLine] = []
        items: list[tuple[Path, str]] = []
        for f in files:
            problem = check_upload(f.name, f.size, int(s.max_upload_mb))
            if problem:
                failed.append(JobLine(f.name, "failed", problem.removeprefix(f.name).lstrip(": ")))
                st.error(safe_inline(problem), icon=":material/error:")
                continue
            try:
                with tempfile.TemporaryDirectory(prefix="upload-") as tmp:
                    path = Path(tmp) / ("upload" + Path(f.name).suffix.lower())
                    path.write_bytes(f.getvalue())
                    record = add_local_file(path, settings=s, name=f.name, **overrides)
            except EdgarError as exc:
                failed.append(JobLine(f.name, "failed", str(exc)))
                st.error(safe_inline(str(exc)), icon=":material/error:")
                continue
            except Exception as exc:  # noqa: BLE001
                log.exception("adding %s failed", f.name)
                failed.append(JobLine(f.name, "failed", f"{type(exc).__name__}: {exc}"))
                st.error(safe_inline(f"{f.name}: {exc}"), icon=":material/error:")
                continue
            label = _record_label(record, f.name)
            items.append((Path(record.path), f"{f.name} ({label})" if label != f.name else f.name))
        lines = index_files(s, items, overrides) if items else []
        for line in lines:
            if line.state == "failed":
                st.error(safe_inline(_line_text(line)), icon=":material/error:")
        label, state = _summary(lines, failures_before=len(failed))
        status.update(label=label, state=state, expanded=state == "error")
        _remember(label, state, failed + lines)
    if any(line.state in ("indexed", "unchanged") for line in lines):
        st.session_state[K_UPLOADER] = st.session_state.get(K_UPLOADER, 0) + 1  # a fresh, empty uploader
