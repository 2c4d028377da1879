"""A citation from a PDF opens its page (issue 44's page viewer), in a real browser: the real app (`python -m
ui.serve`) over an index of one small quarterly-report PDF written here (invented company and text), Chromium
through Playwright, Ollama down (the answer is extractive and cites its passages). The dialog shows the PDF page
as an image beside the passage's text; once the file is gone, it says so and still shows the text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag.load_bench import WARM_LINE
from tests.app_server import (
    AppServer,
    ask,
    browser,
    chromium_missing_reason,
    copy_index,
    free_port,
    open_chat,
    wait_idle,
)
from tests.pdf_files import quarterly_report_pdf

REASON = chromium_missing_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

QUESTION = "Why did ACME's widget shipments to coastal harbours rise in the quarter?"


@pytest.fixture(scope="module")
def pdf_index(tmp_path_factory) -> Path:
    from rag.config import get_settings
    from rag.index import IndexStore

    root = tmp_path_factory.mktemp("browser-pdf-index")
    store = IndexStore(get_settings(storage_dir=root / "storage", data_dir=root / "data"))
    pdf = quarterly_report_pdf(root / "in" / "acme-q2-2025.pdf")
    report = store.add([pdf], overrides={"ticker": "ACME", "company": "Acme Widgets Inc.", "form": "10-Q",
                                         "fiscal_year": 2025})
    assert not report.errors, report.errors
    return root


def test_a_pdf_citation_shows_its_page_with_the_passage_highlighted(pdf_index, tmp_path):
    env = copy_index(pdf_index, tmp_path / "app")
    env.update({"OLLAMA_HOST": f"127.0.0.1:{free_port()}", "SEC_USER_AGENT": ""})  # Ollama down: extractive
    pdf = pdf_index / "in" / "acme-q2-2025.pdf"
    with AppServer(env, log_path=tmp_path / "streamlit.log") as app, browser() as b:
        app.wait_for_log(WARM_LINE, timeout=300)
        page = b.new_page(viewport={"width": 1440, "height": 1000})
        open_chat(page, app.url, timeout_ms=120_000)
        ask(page, QUESTION)
        cite = page.locator('[data-testid="stChatMessage"] button').filter(has_text=re.compile(r"^\S*\[1\] "))
        try:
            cite.first.wait_for(timeout=120_000)
        except Exception:
            page.screenshot(path=str(tmp_path / "no-citation.png"), full_page=True)
            raise
        wait_idle(page)
        cite.first.click()
        dialog = page.locator('[role="dialog"]')
        dialog.wait_for()
        image = dialog.locator('[data-testid="stImage"] img').first
        try:
            image.wait_for(timeout=60_000)
            dialog.get_by_text(re.compile(r"Page \d of 3 of the PDF, the cited lines highlighted")).wait_for()
        except Exception:
            page.screenshot(path=str(tmp_path / "no-page.png"), full_page=True)
            raise
        # The image arrived and is a page (taller than wide), and the passage's text is beside it.
        size = image.evaluate("img => [img.naturalWidth, img.naturalHeight, img.complete]")
        assert size[2] and size[0] > 400 and size[1] > size[0], size
        assert "coastal harbours" in dialog.inner_text()
        assert str(pdf_index) not in dialog.inner_text()
        page.screenshot(path=str(tmp_path / "pdf-citation.png"))

        # The PDF moved away: the panel says so and still shows the passage's text.
        page.keyboard.press("Escape")
        dialog.wait_for(state="hidden")
        pdf.rename(pdf.with_suffix(".moved"))
        try:
            wait_idle(page)
            cite.first.click()
            dialog.wait_for()
            dialog.get_by_text(re.compile(r"no longer where it was indexed")).wait_for(timeout=60_000)
            assert dialog.locator('[data-testid="stImage"] img').count() == 0
            assert "coastal harbours" in dialog.inner_text()
        finally:
            pdf.with_suffix(".moved").rename(pdf)
