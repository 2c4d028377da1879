"""The PDF page of a cited passage, its lines highlighted, in the citation panel (rendering: rag.page_render).

The file comes from the index's own record of the filing (its `path`), never from anything the filing says. Pages
are cached by file, modification time, size, page and passage, so reopening a citation costs nothing and a
re-saved file is rendered again.
"""

from __future__ import annotations

import logging
from pathlib import Path

import streamlit as st

from rag.page_render import PageUnavailable, PageView, render_page

from . import core
from .safe import md

log = logging.getLogger(__name__)

MAX_PAGES = 6  # pages offered for one passage (a chunk spans one or two)


def pdf_path(c: dict) -> Path | None:
    """The indexed PDF a citation comes from, from the index's record of its filing; None when it is no PDF (or
    the filing is no longer indexed)."""
    doc_id = c.get("doc_id")
    if not doc_id or c.get("page_start") is None:
        return None
    try:
        record = core.index().filings.get(doc_id) or {}
    except Exception:  # noqa: BLE001 - the panel still shows the passage's text
        log.exception("reading the index's filing record failed")
        return None
    path = str(record.get("path") or "")
    return Path(path) if path.lower().endswith(".pdf") else None


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st_ = path.stat()
    except OSError:
        return -1, -1
    return st_.st_mtime_ns, st_.st_size


@st.cache_data(max_entries=64, show_spinner=False)
def _rendered(path: str, mtime_ns: int, size: int, page: int, passage: str) -> PageView | str:
    """A PageView, or the reason the page cannot be shown (cached too: the stamp changes when the file does)."""
    try:
        return render_page(path, page, passage)
    except PageUnavailable as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - a page that fails to render must not take the panel with it
        log.exception("rendering %s page %s failed", path, page)
        return f"The page could not be rendered ({type(exc).__name__})."


def rendered_png(view: PageView) -> bytes:
    """The page's PNG bytes: rendered here, so bytes and never an address the browser would fetch."""
    if not isinstance(view.png, bytes):
        raise TypeError("a rendered page is PNG bytes")
    return view.png


def page_numbers(c: dict) -> list[int]:
    start = int(c["page_start"])
    end = c.get("page_end")
    end = start if end is None else max(start, int(end))
    return list(range(start, min(end, start + MAX_PAGES - 1) + 1))


def show(c: dict, path: Path, passage: str) -> None:
    """The page (a choice of pages when the passage spans several), the passage's lines highlighted; a clear
    message instead when the file is gone or unreadable (the caller shows the text either way)."""
    pages = page_numbers(c)
    page = pages[0]
    if len(pages) > 1:
        page = st.segmented_control("Page", pages, default=pages[0], format_func=lambda p: md("p. {}", p),
                                    key=f"pdf_page_{c.get('doc_id')}_{c.get('number')}") or pages[0]
    mtime_ns, size = _stamp(path)
    with st.spinner("Rendering the page…"):
        view = _rendered(str(path), mtime_ns, size, int(page), passage)
    if isinstance(view, str):
        st.warning(md("{} The passage's text is shown instead.", view), icon=":material/picture_as_pdf:")
        return
    if view.boxes:
        caption = md("Page {} of {} of the PDF, the cited lines highlighted", view.page, view.page_count)
    else:
        caption = md("Page {} of {} of the PDF (the passage's lines could not be found on it to highlight)",
                     view.page, view.page_count)
    st.image(rendered_png(view), caption=caption, width="stretch")
