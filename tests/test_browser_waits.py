"""The chat's wait for a silent model, in a real browser: the app over a small index, Ollama a fake that takes the
request and says nothing. The answer shows "Waiting for <model>, N s" from the first second, counting up, and
the stop button turns it into the answer quoted from the filings, stored like any other."""

from __future__ import annotations

import re
import time

import pytest

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
MODEL = "test-model:latest"


def _seconds_shown(line) -> int:
    return int(re.search(r"Waiting for \S+, (\d+) s", line.inner_text()).group(1))


def test_waiting_line_counts_up_and_stop_answers_from_the_filings(tmp_path):
    build_small_index(tmp_path / "index")
    env = copy_index(tmp_path / "index", tmp_path / "app")
    with FakeOllama(models=[MODEL]) as fake:
        fake.fail = "silent"
        env.update({"OLLAMA_HOST": fake.url, "RAG_LLM_MODEL": MODEL, "SEC_USER_AGENT": ""})
        with AppServer(env, log_path=tmp_path / "streamlit.log") as app, browser() as b:
            page = b.new_page(viewport={"width": 1440, "height": 1000})
            open_chat(page, app.url)
            ask(page, QUESTION)

            line = page.locator('[data-testid="stCaptionContainer"]').filter(has_text=f"Waiting for {MODEL}")
            line.first.wait_for()
            appeared = time.monotonic()
            first = _seconds_shown(line.first)
            assert first <= 1, "the wait is shown from its first second"
            # It counts up while the model stays silent: redrawn at least once a second.
            line.filter(has_text=f", {first + 2} s").first.wait_for(timeout=4_000)
            assert time.monotonic() - appeared < 3.5
            page.screenshot(path=str(tmp_path / "waiting.png"))

            stop = page.get_by_role("button", name=re.compile("Stop and answer from the filings"))
            stop.click()
            clicked = time.monotonic()
            warning = page.get_by_text(re.compile(f"You stopped waiting for {MODEL} after \\d+ s"))
            warning.first.wait_for(timeout=20_000)
            assert time.monotonic() - clicked < 10
            wait_idle(page)

            answer = page.locator('[data-testid="stChatMessage"]').filter(has_text="391,035").last
            assert "the model was stopped" in answer.inner_text()
            assert line.count() == 0 and stop.count() == 0
            assert page.get_by_text("No answer was recorded for this question").count() == 0
            assert len(fake.chat_requests()) == 1
            page.screenshot(path=str(tmp_path / "stopped.png"), full_page=True)

            # Stored: a reload shows the same answer and its warning.
            page.reload()
            page.get_by_text(re.compile(f"You stopped waiting for {MODEL}")).first.wait_for()
