"""Every page opens from its own address: a bookmark, a link a colleague sent, a reload.

Streamlit runs a `pages/` folder's files directly, under a navigation of raw file names, until some session has
called st.navigation, so what matters is a fresh server process: each address gets its own server, is opened
directly, then reloaded. Each time the sidebar must show the app's navigation (Chat, Library, Financials, the page
opened marked current), the page's own heading and the sidebar's widgets. Two addresses carry a query (the sidebar's
retrieval mode), which the page must keep.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.app_server import (
    AppServer,
    browser,
    build_small_index,
    chromium_missing_reason,
    copy_index,
    free_port,
    wait_idle,
)

REASON = chromium_missing_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

NAV_LABELS = ["Chat", "Library", "Financials"]

# address opened, the page's own path, its label in the navigation, its heading, the retrieval mode in the sidebar
ADDRESSES = [
    ("/", "/", "Chat", "Chat with your filings", "Hybrid"),
    ("/chat?mode=Keyword", "/", "Chat", "Chat with your filings", "Keyword"),  # Chat's own address is /
    ("/library", "/library", "Library", "Library", "Hybrid"),
    ("/financials?mode=Keyword", "/financials", "Financials", "Financials", "Keyword"),
]


@pytest.fixture(scope="module")
def built_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("pages-index")
    build_small_index(root)
    return root


def _check_page(page, path: str, label: str, heading: str, mode: str, when: str) -> None:
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.wait_for()
    page.locator('[data-testid="stMainBlockContainer"]').get_by_role("heading", name=heading, exact=True).first.wait_for()
    wait_idle(page)
    labels = nav.locator('[data-testid="stSidebarNavLink"] [data-testid="stMarkdownContainer"]').all_inner_texts()
    assert [text.strip() for text in labels] == NAV_LABELS, f"{when}: the navigation shows {labels}"
    current = nav.locator('[data-testid="stSidebarNavLink"][aria-current="page"]').inner_text()
    assert current.strip().endswith(label), f"{when}: the navigation marks {current!r} as the current page"
    assert urlsplit(page.url).path == path, f"{when}: the browser shows {page.url}"
    assert page.get_by_text("Page not found").count() == 0, f"{when}: Streamlit said 'Page not found'"
    sidebar = page.locator('[data-testid="stSidebar"]')
    # The sidebar's widgets arrive with the run's last messages, which may trail the script's end on a slow machine.
    for element, missing in ((sidebar.get_by_role("button", name="New chat"), "no conversations in the sidebar"),
                             (sidebar.get_by_text("Company").first, "no company filter in the sidebar")):
        try:
            element.wait_for(state="visible", timeout=15_000)
        except PlaywrightTimeout:
            raise AssertionError(f"{when}: {missing}") from None
    assert sidebar.get_by_role("radio", name=mode).get_attribute("aria-checked") == "true", (
        f"{when}: the sidebar's retrieval mode is not {mode}")
    if mode != "Hybrid":
        assert f"mode={mode}" in page.url, f"{when}: the address lost its query: {page.url}"


@pytest.mark.parametrize(("address", "path", "label", "heading", "mode"), ADDRESSES,
                         ids=[a[0] for a in ADDRESSES])
def test_page_opens_from_its_address_and_after_a_reload(built_index, tmp_path, address, path, label, heading,
                                                        mode):
    env = copy_index(built_index, tmp_path / "app")
    env.update({"OLLAMA_HOST": f"127.0.0.1:{free_port()}", "SEC_USER_AGENT": ""})  # Ollama down: not needed here
    with AppServer(env, log_path=tmp_path / "streamlit.log") as app, browser() as b:
        page = b.new_page(viewport={"width": 1440, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(app.url + address)
        _check_page(page, path, label, heading, mode, f"{address} opened in a fresh server")
        page.reload()
        _check_page(page, path, label, heading, mode, f"{address} reloaded")
