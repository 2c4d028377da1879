"""What sits under an answer, in a real browser (issue 46): the cited sources first, one line each, and the
passages retrieved but not cited folded under "N more passages"; no scores of different scales side by side.
The real app (`python -m ui.serve`) over the small two-filing index, Chromium through Playwright, and
tests/fake_ollama.py as the model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag.load_bench import WARM_LINE
from tests.app_server import (
    AppServer,
    ask,
    browser,
    build_small_index,
    chromium_missing_reason,
    copy_index,
    open_chat,
    wait_idle,
)
from tests.fake_ollama import FakeOllama

REASON = chromium_missing_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

QUESTION = "What were ACME's total net sales in fiscal 2024?"
REPLY = "ACME's total net sales were $391,035 million in fiscal 2024 [1]."


@pytest.fixture(scope="module")
def built_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser-answers-index")
    build_small_index(root)
    return root


def test_cited_sources_come_first_and_the_rest_are_folded(built_index, tmp_path):
    env = copy_index(built_index, tmp_path / "app")
    with FakeOllama(models=["test-model:latest"]) as fake:
        fake.reply = REPLY
        env.update({"OLLAMA_HOST": fake.url, "RAG_LLM_MODEL": "test-model:latest", "SEC_USER_AGENT": ""})
        with AppServer(env, log_path=tmp_path / "streamlit.log") as app, browser() as b:
            app.wait_for_log(WARM_LINE, timeout=300)  # the engine loaded: this test is about what an answer shows
            page = b.new_page(viewport={"width": 1280, "height": 1000})
            open_chat(page, app.url, timeout_ms=120_000)
            ask(page, QUESTION)
            message = page.locator('[data-testid="stChatMessage"]').filter(has_text="$391,035 million").last
            try:
                message.wait_for()
            except Exception:
                page.screenshot(path=str(tmp_path / "no-answer.png"), full_page=True)
                raise
            wait_idle(page)
            message.get_by_text("Sources · 1 cited").wait_for()
            summaries = message.locator('[data-testid="stExpander"] summary')
            texts = [t.strip() for t in summaries.all_inner_texts()]
            # The one cited source, on its own line first; then the fold, which names how many it holds.
            assert len(texts) == 2, texts
            assert re.search(r"\[1\] Acme Widgets Inc\. \(ACME\) · 10-K · FY2024", texts[0]), texts
            folded = re.search(r"(\d+) more passages?", texts[1])
            assert folded, texts
            assert not any("score" in t for t in texts), texts
            # Folded: the uncited passages are out of the way until the fold is opened, then one line each.
            rest = message.locator("button").filter(has_text=re.compile(r"^\S*\[2\] "))
            assert not rest.first.is_visible()
            summaries.nth(1).click()
            rest.first.wait_for()
            lines = message.locator('[data-testid="stExpander"]').nth(1).locator("button")
            assert lines.count() == int(folded.group(1))
            page.screenshot(path=str(tmp_path / "sources.png"), full_page=True)

            # The citation panel names the filing; a file indexed from disk is named, never its server path.
            message.locator("button").filter(has_text=re.compile(r"^\S*\[1\] ACME")).first.click()
            dialog = page.locator('[role="dialog"]')
            dialog.wait_for()
            dialog.get_by_text("File: acme-20240928.htm").wait_for()
            # The statement is a table; the row that prints the figure is marked, not the whole passage around it.
            row = dialog.locator("tr.wb-mark")
            row.first.wait_for()
            assert row.count() == 1
            assert [t.strip() for t in row.locator("td").all_inner_texts()] == ["Total net sales", "$391,035",
                                                                                  "$383,285"]
            assert str(built_index) not in dialog.inner_text()
            page.screenshot(path=str(tmp_path / "citation.png"))
