"""What a newcomer sees in a real browser (issue 46): the citation panel's tables and marks, an answer that does not
show twice as it finishes, the upload review with every column in view at 1280 px, and a phone-width screen that
opens on the chat with the sidebar closed. The real app (`python -m ui.serve`) over the small two-filing index,
Chromium through Playwright, no Ollama (the answers are extractive)."""

from __future__ import annotations

import re

import pytest

from rag.load_bench import WARM_LINE
from tests.app_server import (
    AppServer,
    ask,
    browser,
    build_small_index,
    chromium_missing_reason,
    copy_index,
    free_port,
    open_chat,
    open_review,
    wait_idle,
)
from tests.filings import filing_html

REASON = chromium_missing_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

FIGURE_Q = "What were ACME's total net sales in fiscal 2024?"
PROSE_Q = "What are ACME's main risk factors?"
ANSWER_MARK = "fiscal year ended September 28, 2024"  # a phrase of the figure answer's text alone


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """One server for the module (each test opens its own browser session); Ollama is down."""
    root = tmp_path_factory.mktemp("browser-layout")
    build_small_index(root / "built")
    env = copy_index(root / "built", root / "app")
    env.update({"OLLAMA_HOST": f"127.0.0.1:{free_port()}", "SEC_USER_AGENT": ""})
    with AppServer(env, log_path=root / "streamlit.log") as server:
        server.wait_for_log(WARM_LINE, timeout=300)
        yield server


def _answer(page, question: str, text: str):
    ask(page, question)
    message = page.locator('[data-testid="stChatMessage"]').filter(has_text=text).last
    message.wait_for(timeout=180_000)
    wait_idle(page, 120)
    return message


def _open_citation(page, message, number: int = 1):
    message.locator("button").filter(has_text=re.compile(rf"^\S*\[{number}\] ")).first.click()
    dialog = page.locator('[role="dialog"]')
    dialog.wait_for()
    dialog.locator(".wb-passage").wait_for()
    return dialog


def test_the_citation_panel_draws_tables_and_marks_what_supports_the_answer(app, tmp_path):
    with browser() as b:
        page = b.new_page(viewport={"width": 1280, "height": 1000})
        open_chat(page, app.url, timeout_ms=120_000)

        # A figure answer: the statement is a table, in the app's proportional type, its figure's row marked.
        message = _answer(page, FIGURE_Q, "$391,035 million")
        dialog = _open_citation(page, message)
        table = dialog.locator("table.wb-table")
        table.first.wait_for()
        font = dialog.locator(".wb-passage").first.evaluate("e => getComputedStyle(e).fontFamily")
        assert "mono" not in font.lower() and "courier" not in font.lower(), font
        row = dialog.locator("tr.wb-mark")
        assert row.count() == 1
        assert [t.strip() for t in row.locator("td").all_inner_texts()] == ["Total net sales", "$391,035", "$383,285"]
        assert " | " not in table.first.inner_text(), "cells, not the chunk's pipes"
        page.screenshot(path=str(tmp_path / "figure-citation.png"))
        page.keyboard.press("Escape")
        dialog.wait_for(state="hidden")

        # A prose answer: the sentences it quotes are marked in the passage, not the whole passage.
        message = _answer(page, PROSE_Q, "risk paragraph")
        answer_text = message.locator('[data-testid="stMarkdownContainer"]').first.inner_text()
        dialog = _open_citation(page, message)
        marks = [m.strip() for m in dialog.locator("mark.wb-mark").all_inner_texts()]
        assert marks, "nothing marked"
        squashed = re.sub(r"\s+", " ", answer_text)
        for mark in marks:
            assert re.sub(r"\s+", " ", mark) in squashed, (mark, answer_text)
        shaded = " ".join(dialog.locator(".wb-chunk").all_inner_texts())
        unmarked = shaded
        for mark in marks:
            unmarked = unmarked.replace(mark, " ")
        assert len(re.findall(r"[A-Za-z]{3,}", unmarked)) >= 5, "the rest of the cited passage is shaded"
        page.screenshot(path=str(tmp_path / "prose-citation.png"))


def test_a_finished_answer_never_shows_twice(app, tmp_path):
    with browser() as b:
        page = b.new_page(viewport={"width": 1280, "height": 1000})
        open_chat(page, app.url, timeout_ms=120_000)
        # Count, on every change of the page, the answer texts holding the phrase: the streamed one and the stored
        # one must be the same element, never two at once.
        page.evaluate("""phrase => {
            window.__copies = 0;
            const count = () => {
                const n = [...document.querySelectorAll(
                    '[data-testid="stChatMessage"] [data-testid="stMarkdownContainer"]')]
                    .filter(e => e.innerText.includes(phrase)).length;
                window.__copies = Math.max(window.__copies, n);
            };
            new MutationObserver(count).observe(document.body,
                {subtree: true, childList: true, characterData: true, attributes: true});
        }""", ANSWER_MARK)
        _answer(page, FIGURE_Q, ANSWER_MARK)
        page.wait_for_timeout(1000)
        assert page.evaluate("window.__copies") == 1
        page.screenshot(path=str(tmp_path / "answer.png"), full_page=True)


def test_the_upload_review_shows_every_column_at_1280_px(app, tmp_path):
    upload = tmp_path / "crux-20240630.htm"
    upload.write_text(filing_html(company="Crux Instruments Inc.", ticker="CRUX", fiscal_year=2024,
                                  period_end="2024-06-30", revenue=(5120, 4870)), encoding="utf-8")
    with browser() as b:
        page = b.new_page(viewport={"width": 1280, "height": 900})
        open_chat(page, app.url, timeout_ms=120_000)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Add filings").click()
        sidebar.get_by_role("tab", name="Upload").click()
        dialog = open_review(page, upload)
        grid = dialog.locator('[data-testid="stDataFrame"]')
        wait_idle(page)
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "review.png"))
        # Every column in view: the grid does not scroll sideways, and it lies inside the dialog and the window.
        scroller = grid.locator(".dvn-scroller").first
        widths = scroller.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert widths[0] <= widths[1] + 1, widths
        box, frame = grid.bounding_box(), dialog.bounding_box()
        assert frame["x"] >= 0 and frame["x"] + frame["width"] <= 1280
        assert box["x"] >= frame["x"] and box["x"] + box["width"] <= frame["x"] + frame["width"] + 1
        # The headers the grid draws (on a canvas) are also in its accessible table.
        headers = [h.strip() for h in grid.locator('[role="columnheader"]').all_inner_texts()]
        for name in ("File", "Company", "Ticker", "Form", "Fiscal year", "Period"):
            assert any(h == name for h in headers), headers
        # Closed with its X, the review waits behind a sidebar button: nothing read is lost.
        dialog.get_by_role("button", name="Close").click()
        dialog.wait_for(state="hidden")
        again = sidebar.get_by_role("button", name=re.compile(r"Check what was read \(1 file\)"))
        again.wait_for()
        again.click()
        page.locator('[role="dialog"] [data-testid="stDataFrame"]').wait_for()


def test_at_phone_width_the_sidebar_starts_closed(app, tmp_path):
    with browser() as b:
        phone = b.new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        open_chat(phone, app.url, timeout_ms=120_000)
        phone.wait_for_timeout(500)  # past the sidebar's slide
        phone.screenshot(path=str(tmp_path / "phone.png"))
        # Closed: off the screen, its toggle says so, and the question box is there to use.
        box = phone.locator('[data-testid="stSidebar"]').bounding_box()
        assert box is None or box["x"] + box["width"] <= 1, box
        assert phone.locator('button[aria-controls="stSidebar"]').first.get_attribute("aria-expanded") == "false"
        question = phone.locator('[data-testid="stChatInput"] textarea').bounding_box()
        assert question and question["x"] >= 0 and question["x"] + question["width"] <= 390, question
        # A wide screen opens with it.
        wide = b.new_page(viewport={"width": 1280, "height": 900})
        open_chat(wide, app.url, timeout_ms=120_000)
        box = wide.locator('[data-testid="stSidebar"]').bounding_box()
        assert box and box["x"] >= 0 and box["width"] > 200, box
