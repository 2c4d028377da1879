"""What every page shares: page config, navigation, the sidebar.

app.py calls `run()`: the navigation, the sidebar, then the page. Streamlit also knows an older multipage mode:
until some session has called `st.navigation`, a `pages/` folder beside app.py makes it run the folder's files
directly, under a navigation of raw file names ("app", "chat", ...). The first run of a fresh server process does
that when the URL names a page (a bookmarked /library, a reload after a restart), and AppTest does it on every run
(it resets that mode per run). So each page script hands its drawing to `page()`, which runs it inside the frame
when the frame is not running yet: the same navigation, sidebar and widget ids either way, and no extra rerun (a
rerun would drop a button click that arrived with the run).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

import streamlit as st

from . import core, sidebar
from . import filings as filing_ui

ROOT = Path(__file__).resolve().parents[1]
PAGE_TITLE = "SEC Filings Analyst"
PAGE_ICON = ":material/finance:"

# True while run() draws the frame and the page (script runs are per thread, so a ContextVar keeps sessions apart).
_IN_FRAME: ContextVar[bool] = ContextVar("in_frame", default=False)


def _config() -> None:
    st.set_page_config(page_title=PAGE_TITLE, page_icon=PAGE_ICON, layout="wide", initial_sidebar_state="auto")


def _pages() -> dict:
    """name -> st.Page: Chat (the default page, at the root URL), Library, and Financials when
    pages/financials.py exists."""
    pages = {
        "chat": st.Page(str(ROOT / "pages" / "chat.py"), title="Chat", icon=":material/forum:", default=True,
                        url_path=""),
        "library": st.Page(str(ROOT / "pages" / "library.py"), title="Library", icon=":material/folder_open:",
                           url_path="library"),
    }
    if (ROOT / "pages" / "financials.py").exists():
        pages["financials"] = st.Page(str(ROOT / "pages" / "financials.py"), title="Financials",
                                      icon=":material/table_chart:", url_path="financials")
    return pages


def _chat_address() -> st.Page:
    """/chat, not shown in the navigation: Streamlit serves the default page at the root URL only, so without it a
    typed or bookmarked /chat would say 'Page not found'."""
    return st.Page(str(ROOT / "pages" / "chat.py"), title="Chat", url_path="chat", visibility="hidden")


def _navigation():
    """The pages, the sidebar; returns the page to run. st.navigation also makes Streamlit ignore the pages/
    folder from then on, in every session (its documented behaviour)."""
    _config()
    pages = _pages()
    core.PAGES = pages
    chat_address = _chat_address()
    current = st.navigation([*pages.values(), chat_address])
    if current is chat_address:  # on to Chat itself (at /), which the navigation then shows as the current page
        st.switch_page(pages["chat"], query_params={key: st.query_params.get_all(key) for key in st.query_params})
    st.session_state[core.K_PAGE] = next((name for name, page in pages.items() if page is current), None)
    sidebar.render(pages)
    filing_ui.show_review(core.settings())  # outside the sidebar: a dialog with the room the review needs
    return current


def run() -> None:
    """Called by app.py: the frame, then the current page inside it."""
    token = _IN_FRAME.set(True)
    try:
        _navigation().run()
    finally:
        _IN_FRAME.reset(token)


def page(draw: Callable[[], None]) -> None:
    """Each page script's one call: `draw` draws the page. Run by Streamlit directly (not from run()), the page
    goes through the frame instead, which runs this script again, inside it."""
    if _IN_FRAME.get():
        draw()
    else:
        run()
