"""What every page shares: page config, navigation, the sidebar.

app.py builds the navigation and the sidebar, then runs the page. A page can also be run without app.py:
Streamlit runs a `pages/` folder's files directly (its older multipage mode) on the first run of a fresh server
process when the URL names a page (e.g. a bookmarked /library), and AppTest does so on reruns. `page()` notices
that (app.py is not on the call stack), draws the sidebar itself, and turns the older mode off so the next run
goes through app.py again.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import streamlit as st

from . import core, sidebar

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE_TITLE = "SEC Filings Analyst"
PAGE_ICON = ":material/finance:"


def _config() -> None:
    st.set_page_config(page_title=PAGE_TITLE, page_icon=PAGE_ICON, layout="wide", initial_sidebar_state="expanded")


def navigation():
    """Called by app.py: the pages (Financials when pages/financials.py exists), the sidebar; returns the page."""
    _config()
    pages = {
        "chat": st.Page(str(ROOT / "pages" / "chat.py"), title="Chat", icon=":material/forum:", default=True,
                        url_path="chat"),
        "library": st.Page(str(ROOT / "pages" / "library.py"), title="Library", icon=":material/folder_open:",
                           url_path="library"),
    }
    if (ROOT / "pages" / "financials.py").exists():
        pages["financials"] = st.Page(str(ROOT / "pages" / "financials.py"), title="Financials",
                                      icon=":material/table_chart:", url_path="financials")
    core.PAGES = pages
    current = st.navigation(list(pages.values()))
    st.session_state[core.K_PAGE] = next((name for name, page in pages.items() if page is current), None)
    sidebar.render(pages)
    return current


def _inside_app() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.endswith("app.py") and Path(name).resolve() == APP:
            return True
        frame = frame.f_back
    return False


def page(name: str) -> None:
    """Called first by each page script."""
    if _inside_app():
        return
    try:  # the next run goes through app.py's st.navigation, as st.navigation itself arranges
        from streamlit.runtime.pages_manager import PagesManager

        PagesManager.uses_pages_directory = False
    except Exception:  # noqa: BLE001 - an internal that may move; the page still works without it
        pass
    _config()
    st.session_state[core.K_PAGE] = name
    # Draw the sidebar as app.py would (under the main script's hash), so its widgets keep their ids and values
    # whichever way the page was run.
    scope = contextlib.nullcontext()
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        ctx = get_script_run_ctx()
        if ctx is not None:
            scope = ctx.run_with_active_hash(ctx.pages_manager.main_script_hash)
    except Exception:  # noqa: BLE001
        pass
    with scope:
        sidebar.render(core.PAGES)
