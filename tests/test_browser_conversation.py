"""A conversation in a real browser (issue 48): three turns that follow each other (a figure, a change of year, a
change of company), each answer's figure and the label that says what was carried over; and a figure question that
names no company with three companies indexed, answered for each of them by name. The real app (`python -m
ui.serve`) over three small inline XBRL 10-Ks, Chromium through Playwright, no model running (the answers are the
filings' own figures)."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

import pytest

from rag.load_bench import WARM_LINE
from tests.app_server import AppServer, ask, browser, chromium_missing_reason, filed_answer, open_chat
from tests.fake_ollama import free_port
from tests.filings import ACME, BOLT, write_filing

REASON = chromium_missing_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

# A third invented filer beside the two of tests/filings.py.
CORA = dict(company="Cora Foods Inc.", ticker="CORA", fiscal_year=2024, period_end="2024-06-30",
            revenue=(12345, 11020), unique_phrase="Cora alone mills the frumenty grain.")


@pytest.fixture(scope="module")
def app_env(tmp_path_factory) -> dict:
    from rag.config import get_settings
    from rag.index import IndexStore

    root = tmp_path_factory.mktemp("browser-conversation")
    files = [write_filing(root / "in", "acme-20240928.htm", **ACME),
             write_filing(root / "in", "bolt-20231231.htm", **BOLT),
             write_filing(root / "in", "cora-20240630.htm", **CORA)]
    storage, data = root / "storage", root / "data"
    report = IndexStore(get_settings(storage_dir=storage, data_dir=data)).add(files)
    assert not report.errors, report.errors
    return {"RAG_STORAGE_DIR": str(storage), "RAG_DATA_DIR": str(data), "SEC_USER_AGENT": "",
            "OLLAMA_HOST": f"127.0.0.1:{free_port()}"}  # nothing listens there: answers from the filings


@contextmanager
def _chat(app_env: dict, tmp_path: Path):
    """The app's Chat page in Chromium, once the engine has loaded."""
    with AppServer(app_env, log_path=tmp_path / "streamlit.log") as app, browser() as b:
        app.wait_for_log(WARM_LINE, timeout=300)
        page = b.new_page(viewport={"width": 1280, "height": 1000})
        open_chat(page, app.url, timeout_ms=120_000)
        yield page


def test_three_turns_carry_the_company_year_and_figure_over(app_env, tmp_path):
    with _chat(app_env, tmp_path) as page:

        ask(page, "What were ACME's total net sales in fiscal 2024?")
        first = filed_answer(page, 1, tmp_path)
        assert "$391,035 million" in first.inner_text()
        assert "from the conversation" not in first.inner_text()

        ask(page, "And in fiscal 2023?")
        second = filed_answer(page, 2, tmp_path)
        text = second.inner_text()
        assert "$383,285 million" in text and "$391,035 million" not in text, text
        # The label says what came from the turn before: the company and the figure, not the year just asked.
        label = re.search(r"Detected (.+)", text).group(1)
        assert "from the conversation" in label and "ACME" in label and "FY2023" in label, label
        assert second.get_by_role("button", name="Ask on its own").is_visible()

        ask(page, "How about BOLT?")
        third = filed_answer(page, 3, tmp_path)
        text = third.inner_text()
        assert "$96,773 million" in text and "Bolt Motors Corp. (BOLT)" in text, text
        assert "383,285" not in text and "391,035" not in text, text
        assert "from the conversation" in re.search(r"Detected (.+)", text).group(1)
        page.screenshot(path=str(tmp_path / "conversation.png"), full_page=True)


def test_a_figure_question_naming_no_company_names_each_indexed_company(app_env, tmp_path):
    with _chat(app_env, tmp_path) as page:
        ask(page, "What were total net sales?")
        text = filed_answer(page, 1, tmp_path).inner_text()
        for company, figure in (("Acme Widgets Inc. (ACME)", "$391,035 million"),
                                ("Bolt Motors Corp. (BOLT)", "$96,773 million"),
                                ("Cora Foods Inc. (CORA)", "$12,345 million")):
            line = next((x for x in text.splitlines() if company in x and figure in x), None)
            assert line is not None, (company, figure, text)
        assert "each indexed one" in text and "No company is named" in text, text
