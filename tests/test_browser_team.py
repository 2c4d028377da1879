"""Team mode in a real browser (issue 47): the app on a real PostgreSQL (RAG_DATABASE_URL), two browser sessions
at once. One uploads a filing through the app while the other asks a question; both succeed, the second session
then finds the new filing (an answer citing it) without the app restarting, and the conversation it had is saved
in the database and listed in the shared workspace (no login), for the other session too. No model runs: the
answers are the filings' own figures."""

from __future__ import annotations

import re

import pytest

from rag.config import get_settings
from rag.conversations import SHARED, ConversationStore
from rag.index import open_store
from rag.load_bench import WARM_LINE
from tests.app_server import (
    AppServer,
    ask,
    browser,
    chromium_missing_reason,
    filed_answer,
    open_chat,
    open_review,
)
from tests.fake_ollama import free_port
from tests.filings import ACME, BOLT, filing_html, write_filing

REASON = chromium_missing_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

ACME_QUESTION = "What were ACME's total net sales in fiscal 2024?"
CRUX_QUESTION = "What were CRUX's total net sales in fiscal 2024?"


def test_two_sessions_on_postgres_one_uploads_while_the_other_asks(tmp_path, pg_url):
    storage, data = tmp_path / "storage", tmp_path / "data"
    settings = get_settings(storage_dir=storage, data_dir=data, database_url=pg_url)
    report = open_store(settings).add([write_filing(tmp_path / "in", "acme-20240928.htm", **ACME),
                                       write_filing(tmp_path / "in", "bolt-20231231.htm", **BOLT)])
    assert not report.errors, report.errors
    env = {"RAG_STORAGE_DIR": str(storage), "RAG_DATA_DIR": str(data), "RAG_DATABASE_URL": pg_url,
           "SEC_USER_AGENT": "", "OLLAMA_HOST": f"127.0.0.1:{free_port()}"}  # nothing listens there
    upload = tmp_path / "crux-20240630.htm"
    upload.write_text(filing_html(company="Crux Instruments Inc.", ticker="CRUX", fiscal_year=2024,
                                  period_end="2024-06-30", revenue=(5120, 4870),
                                  unique_phrase="Crux alone makes the hexaflux sensor."), encoding="utf-8")

    with AppServer(env, log_path=tmp_path / "streamlit.log") as app, browser() as b:
        app.wait_for_log(WARM_LINE, timeout=300)
        uploader = b.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        asker = b.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        open_chat(uploader, app.url, timeout_ms=120_000)
        open_chat(asker, app.url, timeout_ms=120_000)

        # Session one uploads a filing; session two asks while it is read, embedded and written.
        sidebar = uploader.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Add filings").click()
        sidebar.get_by_role("tab", name="Upload").click()
        open_review(uploader, upload).get_by_role("button", name=re.compile("^.*Index$")).click()
        ask(asker, ACME_QUESTION)
        assert not sidebar.get_by_text(re.compile(r"1 filing indexed")).count()  # asked while it is indexed

        assert "$391,035 million" in filed_answer(asker, 1, tmp_path, "asker").inner_text()
        sidebar.get_by_text(re.compile(r"1 filing indexed")).first.wait_for(timeout=180_000)
        assert not uploader.get_by_text(re.compile("failed|could not", re.I)).count()

        # The other session finds the new filing, with the app still the same process.
        ask(asker, CRUX_QUESTION)
        answer = filed_answer(asker, 2, tmp_path, "asker")
        assert "$5,120 million" in answer.inner_text(), answer.inner_text()
        asker.locator("button").filter(has_text=re.compile(r"^\S*\[1\] CRUX")).first.wait_for()
        assert app.proc is not None and app.proc.poll() is None

        # The conversation is in the database, in the shared workspace, and both sessions list it.
        saved = ConversationStore(database_url=pg_url).list()
        assert [(c["title"], c["author"], c["messages"]) for c in saved] == [(ACME_QUESTION, SHARED, 4)]
        listed = re.compile("^" + re.escape(ACME_QUESTION[:40]))  # the sidebar shortens a long title
        asker.locator('[data-testid="stSidebar"]').get_by_role("button", name=listed).wait_for()
        uploader.reload()
        uploader.locator('[data-testid="stSidebar"]').get_by_role("button", name=listed).wait_for(timeout=60_000)
