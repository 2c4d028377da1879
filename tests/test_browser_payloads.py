"""A filing that tries to make the reader's browser call another server, in the real app and a real browser.

Its registrant name, ticker, an Item title and its text carry Markdown images, raw HTML, `:red[...]` directives,
`javascript:` links and LaTeX; so do the model's answer, the question, an upload's file name and an SEC user agent
typed by the user. The walk visits every page and notice (Chat with its sources and citation panel, the export,
Financials, the Library reader, re-index, remove, an upload and its error, a download error) while Chromium
records every request: none may go to the payload's host, and each payload must show as the literal text it is.
"""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

import pytest

from tests.app_server import AppServer, ask, browser, chromium_missing_reason, open_chat, wait_idle
from tests.fake_ollama import FakeOllama
from tests.filings import filing_html

REASON = chromium_missing_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

HOST = "payload.invalid"
NAME = f"Payload ![c](http://{HOST}/name.png) :red[RED] <img src=http://{HOST}/name.gif> $x^2$ Inc."
TICKER = f"![T](http://{HOST}/t.png)"  # no ticker by the rule rag edit applies: the index drops it, with a note
ITEM_1A = f"Risk Factors :red[RISK] ![i](http://{HOST}/item.png) [link](javascript:alert(1))"
BODY = (f"Payload text <script>alert(1)</script> <img src=http://{HOST}/body.png onerror=alert(1)> "
        f"[click](javascript:alert(1)) ![b](http://{HOST}/b.png) :red[BODY] $x^2$ and $y$.")
QUESTION = f":red[ASKED] ![q](http://{HOST}/q.png) What are the risk factors of Payload?"  # its start titles it
REPLY = f"Payload ![m](http://{HOST}/m.png) :red[MODEL] <img src=http://{HOST}/m.gif> lists supply risks [1]."
# File names cannot hold '/': a relative image address would still be fetched from the app's own host.
UPLOAD_NAME = f":red[UP] ![u]({HOST}.png) $x^2$ upload.htm"
NOT_A_FILING = f"<img src={HOST}.gif> :red[NOTES] notes.txt"
USER_AGENT = f"![a](http://{HOST}/ua.png) :red[AGENT]"
# What the payloads' own words are coloured or typeset with when they render.
PAYLOAD_WORDS = re.compile(r"RED|RISK|BODY|MODEL|ASKED|UP|NOTES|AGENT|x\^2")


def payload_filing(folder: Path, name: str, unique: str = "") -> Path:
    doc = filing_html(company=NAME, ticker=TICKER, fiscal_year=2024, period_end="2024-09-28",
                      revenue=(391035, 383285), unique_phrase=BODY + unique)
    doc = doc.replace("Item 1A. Risk Factors</p>", f"Item 1A. {html.escape(ITEM_1A)}</p>")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(doc, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def payload_index(tmp_path_factory) -> dict[str, str]:
    from rag.config import get_settings
    from rag.index import IndexStore

    root = tmp_path_factory.mktemp("payload-index")
    store = IndexStore(get_settings(storage_dir=root / "storage", data_dir=root / "data"))
    report = store.add([payload_filing(root / "in", "payload-20240928.htm")])
    assert not report.errors, report.errors
    return {"RAG_STORAGE_DIR": str(root / "storage"), "RAG_DATA_DIR": str(root / "data")}


class Inertness:
    """Every request the browser makes, and what the page would show if a payload rendered."""

    def __init__(self, context):
        self.requests: list[str] = []
        context.on("request", lambda request: self.requests.append(request.url))

    def check(self, page, where: str) -> None:
        wait_idle(page)
        sent = [u for u in self.requests if HOST in u.lower()]
        assert not sent, f"{where}: the browser called the payload's host: {sent}"
        assert page.locator(f'img[src*="{HOST}" i], source[src*="{HOST}" i]').count() == 0, where
        assert page.locator('a[href^="javascript" i], a[href*="payload" i]').count() == 0, where
        assert page.locator(".katex, math").count() == 0, f"{where}: a payload was typeset as a formula"
        coloured = page.locator(".stMarkdownColoredText, .stMarkdownColoredBackground, .stMarkdownBadge")
        painted = [t for t in coloured.all_inner_texts() if PAYLOAD_WORDS.search(t)]
        assert not painted, f"{where}: a payload's directive coloured {painted}"
        assert page.locator("script:not([src])").filter(has_text="alert(1)").count() == 0, where


def _text(locator) -> str:
    return locator.inner_text().replace("\u2060", "")  # the escaper's word joiners break URLs, invisibly


def _go(page, sidebar, name: str) -> None:
    sidebar.locator('[data-testid="stSidebarNav"] a').filter(has_text=name).first.click()
    wait_idle(page)


def _button(scope, label: str):
    """A button by its label's end (Streamlit puts the icon's ligature name before it)."""
    return scope.locator("button").filter(has_text=re.compile(re.escape(label) + r"$")).first


def _open_tab(page, name: str, timeout: float = 30.0) -> None:
    """Click the tab whose label holds `name`, once the rerun that drew it has replaced the previous run's tabs (for a
    moment after a rerun both are in the page, and a click could land on the stale one)."""
    tabs = page.get_by_role("tab", name=re.compile(re.escape(name)))
    deadline = time.monotonic() + timeout
    while tabs.count() != 1 and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    tabs.click()


def test_filing_payloads_stay_text_and_call_no_server(payload_index, tmp_path):
    started = time.monotonic()
    env = {**payload_index, "RAG_LLM_MODEL": "test-model:latest", "SEC_USER_AGENT": ""}
    with FakeOllama(models=["test-model:latest"]) as fake:
        fake.reply = REPLY
        env["OLLAMA_HOST"] = fake.url
        with AppServer(env, log_path=tmp_path / "streamlit.log") as app, browser() as b:
            context = b.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
            seen = Inertness(context)
            page = context.new_page()
            open_chat(page, app.url)
            sidebar = page.locator('[data-testid="stSidebar"]')
            main = page.locator('[data-testid="stMainBlockContainer"]')
            seen.check(page, "chat, before a question")
            assert "![T](HTTP:" not in _text(main), "a trading symbol that is no ticker is never listed as one"

            # Chat: the question, the model's answer, citation buttons and the sources' titles.
            ask(page, QUESTION)
            page.locator('[data-testid="stChatMessage"]').filter(has_text="lists supply risks").last.wait_for()
            cite = main.locator("button").filter(has_text=re.compile(r"\[1\] Payload")).first
            cite.wait_for()
            seen.check(page, "chat answer")
            shown = _text(main)
            for literal in (":red[MODEL]", "![m](http:", "<img src=http:", ":red[ASKED]", "![q](http:",
                            ":red[RED]", "$x^2$"):
                assert literal in shown, f"{literal!r} is not shown as text in the chat"
            assert ":red[ASKED]" in _text(sidebar), "the conversation's title is listed as typed"

            # A source opened, then the citation panel.
            main.locator('[data-testid="stExpander"] summary').filter(has_text=":red[RED]").first.click()
            seen.check(page, "a source opened")
            cite.click()
            dialog = page.locator('[role="dialog"]')
            dialog.wait_for()
            dialog.locator("mark").first.wait_for()
            seen.check(page, "citation panel")
            assert ":red[RED]" in _text(dialog) and "<img src=http:" in _text(dialog)
            page.keyboard.press("Escape")
            dialog.wait_for(state="hidden")

            # The export's file name holds no path.
            with page.expect_download() as download:
                _button(main, "Export Markdown").click()
            name = download.value.suggested_filename
            assert name.endswith(".md") and "/" not in name and "\\" not in name and ":red" not in name, name

            _go(page, sidebar, "Financials")
            # A filer without a ticker has no row there yet (its figures are keyed by ticker): the page itself is
            # what is checked.
            page.get_by_role("heading", name="Financials").first.wait_for()
            seen.check(page, "financials")

            # Library: the reader, then the re-index and remove notices.
            _go(page, sidebar, "Library")
            main.locator('[data-testid="stCode"]').first.wait_for()
            seen.check(page, "library reader")
            reader = _text(main)
            assert "<script>alert(1)</script>" in reader and ":red[BODY]" in reader and "![b](http" in reader
            _open_tab(page, "Manage")
            _button(main, "Re-index").click()
            notice = main.locator('[data-testid="stAlert"]').filter(has_text="Re-indexed")
            notice.first.wait_for(timeout=90_000)
            seen.check(page, "re-index notice")
            assert ":red[RED]" in _text(notice.first)

            _open_tab(page, "Manage")
            _button(main, "Remove…").click()
            wait_idle(page)
            # The rerun keeps the Manage tab open: the question shows without choosing the tab again.
            warning = main.locator('[data-testid="stAlert"]').filter(has_text="from the index?")
            warning.first.wait_for()
            seen.check(page, "remove question")
            assert ":red[RED]" in _text(warning.first)
            _button(main, "Remove").click()
            removed = main.locator('[data-testid="stAlert"]').filter(has_text="Removed")
            removed.first.wait_for()
            seen.check(page, "remove notice")
            assert ":red[RED]" in _text(removed.first) and "<img src=http:" in _text(removed.first)

            # A download the user's own user agent makes fail, said back as text.
            if not sidebar.get_by_role("tab", name="From EDGAR").is_visible():
                sidebar.get_by_text("Add filings").click()
            for label, value in (("Tickers", ":red[TICK]"), ("SEC user agent", USER_AGENT)):
                field = sidebar.locator('[data-testid="stTextInput"]').filter(has_text=label).locator("input")
                field.fill(value)
                field.press("Tab")
            wait_idle(page)
            _button(sidebar, "Download & index").click()
            failed = sidebar.locator('[data-testid="stAlert"]').filter(has_text="SEC user agent")
            failed.first.wait_for()
            seen.check(page, "download error")
            assert ":red[AGENT]" in _text(failed.first)

            # Upload a filing with a payload for a name, and a file that is not a filing.
            sidebar.get_by_role("tab", name="Upload").click()
            upload = payload_filing(tmp_path / "up", UPLOAD_NAME, unique=" Uploaded copy.")
            notes = tmp_path / "up" / NOT_A_FILING
            notes.write_text("just some notes\n" * 20, encoding="utf-8")
            sidebar.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files([str(upload), str(notes)])
            sidebar.get_by_text("notes.txt").first.wait_for()
            _button(sidebar, "Read files").click()
            error = sidebar.locator('[data-testid="stAlert"]').filter(has_text="notes.txt")
            error.first.wait_for()
            seen.check(page, "upload error")
            assert ":red[NOTES]" in _text(error.first) and f"<img src={HOST}.gif>" in _text(error.first)
            review = page.locator('[role="dialog"]')  # what was read, for the user to check, over the page
            review.locator('[data-testid="stDataFrame"]').wait_for()
            seen.check(page, "upload review")
            review.get_by_role("button", name=re.compile("^.*Index$")).click()
            sidebar.get_by_text(re.compile(r"1 filing indexed")).first.wait_for(timeout=90_000)
            seen.check(page, "upload indexed")
            status = sidebar.locator('[data-testid="stExpander"]').filter(has_text="1 filing indexed").first
            if ":red[UP]" not in _text(status):
                status.locator("summary").click()
            assert ":red[UP]" in _text(status), "the upload's line names the file as it was called"

            _go(page, sidebar, "Chat")
            seen.check(page, "chat, at the end")
            assert seen.requests, "the browser's requests were not recorded"
    print(f"payload walk: {time.monotonic() - started:.1f} s")
