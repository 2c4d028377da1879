"""The Streamlit app, run headless with streamlit.testing's AppTest over a small real index (two inline XBRL 10-Ks:
ACME FY2024 and BOLT FY2023), with Ollama down (a closed port) or replaced by tests/fake_ollama.py.

AppTest limits (stack-facts): buttons inside st.dialog do not run here (the browser test clicks those); with a
pages/ folder AppTest reruns the page script without app.py, and the first run's widget ids differ from later
runs', so every app is started with two runs before a test touches a widget.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.app_server import build_small_index, copy_index
from tests.fake_ollama import FakeOllama, free_port
from tests.filings import filing_html
from ui import core
from ui.library import K_TAB, TAB_MANAGE

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
ACME_Q = "What were ACME's total net sales in fiscal 2024?"


# --------------------------------------------------------------------------------------------------------------
# Fixtures and helpers


@pytest.fixture(scope="module")
def built_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("app-index")
    build_small_index(root)
    return root


def _base_env(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")  # nothing listens: Ollama is down
    monkeypatch.setenv("RAG_LLM_MODEL", "test-model:latest")
    monkeypatch.delenv("SEC_USER_AGENT", raising=False)
    monkeypatch.delenv("RAG_TOP_K", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def indexed(built_index, tmp_path, monkeypatch) -> Path:
    """A private copy of the small index (conversations, uploads and removals stay this test's own)."""
    for key, value in copy_index(built_index, tmp_path / "app").items():
        monkeypatch.setenv(key, value)
    _base_env(monkeypatch, tmp_path)
    return tmp_path / "app"


@pytest.fixture
def empty(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("RAG_STORAGE_DIR", str(tmp_path / "storage"))
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    _base_env(monkeypatch, tmp_path)
    return tmp_path


def start(query_params: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if query_params:
        at.query_params.update(query_params)
    at.run()
    at.run()
    no_exception(at)
    return at


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def ask(at: AppTest, question: str) -> AppTest:
    at.chat_input[0].set_value(question).run()
    no_exception(at)
    return at


def texts(elements) -> list[str]:
    return [str(e.value) for e in elements]


def stored(root: Path) -> list[dict]:
    """The messages of the newest conversation, as the app stored them."""
    from rag.conversations import ConversationStore

    store = ConversationStore(root / "storage" / "app.sqlite3")
    convs = store.list()
    assert convs, "no conversation was stored"
    return store.messages(convs[0]["id"])


def last_result(root: Path) -> dict:
    answers = [m for m in stored(root) if m["role"] == "assistant"]
    assert answers, "no answer was stored"
    return answers[-1]["result"]


def buttons(at: AppTest, prefix: str):
    return [b for b in at.button if (b.key or "").startswith(prefix)]


# --------------------------------------------------------------------------------------------------------------
# Starting up


def test_empty_storage_says_what_to_do_first(empty):
    at = start()
    body = "\n".join(texts(at.markdown))
    assert "No filings are indexed yet" in body
    # The card names the buttons that exist: the two in the sidebar now, and the review's Index after Read files.
    card = next(t for t in texts(at.markdown) if "Add some first" in t)
    named = re.findall(r"\*\*(.+?)\*\*", card)
    assert named[:4] == ["Add filings", "From EDGAR", "Download & index", "Upload"], named
    assert {"Download & index", "Read files"} <= set(named) <= {"Add filings", "From EDGAR", "Download & index",
                                                                 "Upload", "Read files", "Index"}
    labels = {b.label for b in at.button}
    assert {"Download & index", "Read files"} <= labels, labels
    assert at.chat_input[0].disabled, "asking must wait until something is indexed"
    # The sidebar offers the way in: tickers, form, how many, the SEC user agent, the uploader.
    assert at.text_input(key="dl_tickers") is not None
    assert at.text_input(key="sec_user_agent") is not None
    assert at.file_uploader, "no uploader"
    assert not at.multiselect(key="company").options


def test_ollama_down_banner_says_how_to_start_it(indexed):
    at = start()
    banner = " ".join(texts(at.warning))
    assert "Ollama is not running" in banner
    assert "ollama serve" in banner and "ollama pull test-model" in banner
    assert any("not reachable" in c for c in texts(at.sidebar.caption))


# --------------------------------------------------------------------------------------------------------------
# Asking


def test_a_figure_question_naming_no_company_offers_each_company_to_choose(indexed, monkeypatch):
    import rag.retrieve

    monkeypatch.setattr(rag.retrieve, "EACH_COMPANY_MAX", 1)  # the two indexed companies count as many here
    at = ask(start(), "What were total net sales?")
    assert last_result(indexed)["refusal_reason"] == "which_company"
    choices = buttons(at, "which_")
    assert [b.label for b in choices] == ["Acme Widgets Inc.", "Bolt Motors Corp."]
    # A choice asks the same words of that company: its figure alone, the ticker shown after the question.
    next(b for b in choices if b.label == "Bolt Motors Corp.").click().run()
    at.run()
    no_exception(at)
    result = last_result(indexed)
    assert result["question"] == "What were total net sales? (BOLT)" and not result["refused"]
    assert "96,773" in result["answer"] and "391,035" not in result["answer"]


def test_question_gets_an_extractive_answer_with_citations_when_ollama_is_down(indexed):
    at = ask(start(), ACME_Q)
    result = last_result(indexed)
    assert result["extractive"] is True
    assert result["citations"], "an extractive answer still cites"
    assert {c["ticker"] for c in result["citations"]} == {"ACME"}
    # The company and year the question names, and the statement that prints the figure it asks for.
    assert result["detected"]["label"] == "ACME · FY2024 · income statement"
    # On the page: the question, the answer with the exact figure, a button per citation, the detected filters.
    messages = at.chat_message
    assert len(messages) == 2
    assert ACME_Q in messages[0].markdown[0].value
    answer_md = messages[1].markdown[0].value
    assert "391,035" in answer_md and "\\$391,035" in answer_md, "dollar signs must be escaped (no LaTeX)"
    cite_labels = [b.label for b in buttons(at, "cite_")]
    # The exact figure answers it, cited to the statement that reports it (numbered after the passages).
    assert cite_labels and re.match(r"\\\[\d+\\\] ACME · 10-K · FY2024 · Item 8 .*XBRL fact", cite_labels[0])
    captions = " ".join(texts(at.caption))
    assert "Detected **ACME · FY2024 · income statement**" in captions
    assert "**hybrid** retrieval" in captions and "extractive" in captions
    # The timing caption adds up: search + answer = total, in one unit.
    timing = re.search(r"search ([\d,.]+) (ms|s) \+ answer ([\d,.]+) \2 = ([\d,.]+) \2", captions)
    assert timing, captions
    search, answer, total = (float(timing.group(i).replace(",", "")) for i in (1, 3, 4))
    assert abs(search + answer - total) < 1e-9
    # Sources: one expander per cited source, with its metadata and text; the rest folded under one line.
    cited = {c["number"] for c in result["citations"]}
    rest = [c for c in result["sources"] if c["number"] not in cited]
    labels = [e.label for e in at.expander]
    assert sum(bool(re.match(rf"\\\[{n}\\\] ", label)) for n in cited for label in labels) == len(cited)
    assert rest and f"{len(rest)} more passage{'s' if len(rest) != 1 else ''}" in labels
    # A source's passage reads as text in proportional type, its table as a table, nothing marked yet.
    shown = [h.proto.body for h in at.html if "wb-passage" in h.proto.body]
    row = '<td>Total net sales</td><td class="wb-num">$391,035</td><td class="wb-num">$383,285</td>'
    assert any(row in h and 'class="wb-mark"' not in h for h in shown), shown
    # The conversation is in the URL for a reload.
    assert len(at.query_params["c"][0] if isinstance(at.query_params["c"], list) else at.query_params["c"]) == 32


def test_answer_streams_from_ollama_with_the_chosen_model(indexed, monkeypatch):
    with FakeOllama(models=["test-model:latest", "other-model:7b"]) as fake:
        fake.reply = "ACME's total net sales were $391,035 million in fiscal 2024 [1]."
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        at = start()
        assert not any("Ollama is not running" in w for w in texts(at.warning))
        picker = at.selectbox(key="llm_model")
        assert set(picker.options) == {"test-model:latest", "other-model:7b"}
        assert picker.value == "test-model:latest"
        ask(at, ACME_Q)
        result = last_result(indexed)
        assert result["extractive"] is False
        assert result["model"] == "test-model:latest"
        assert "$391,035 million" in result["answer"]
        assert [c["number"] for c in result["citations"]] == [1]
        assert fake.chat_requests(), "the app never asked Ollama"
        assert fake.chat_requests()[-1]["model"] == "test-model:latest"
        assert r"model test-model\:latest" in " ".join(texts(at.caption))
        # Pick the other model: the next answer comes from it.
        at.selectbox(key="llm_model").set_value("other-model:7b").run()
        ask(at, "What were BOLT's total net sales in fiscal 2023?")
        assert fake.chat_requests()[-1]["model"] == "other-model:7b"
        assert last_result(indexed)["model"] == "other-model:7b"


def test_query_generation_toggle_searches_the_models_queries_too(indexed, monkeypatch):
    at = start()
    assert at.toggle(key="generate_queries").disabled  # no Ollama: nothing to write queries with

    def query_requests(fake):
        return [r for r in fake.chat_requests() if "search queries" in r["messages"][-1]["content"]]

    with FakeOllama() as fake:
        fake.reply = "zorblax coupler sales <b>bold</b>"
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        at = start()
        toggle = at.toggle(key="generate_queries")
        assert not toggle.disabled and toggle.value is False
        ask(at, ACME_Q)
        assert fake.chat_requests() and not query_requests(fake)  # off by default: the answer only

    with FakeOllama() as fake:
        fake.reply = "zorblax coupler sales <b>bold</b>"
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        at = start()
        at.toggle(key="generate_queries").set_value(True).run()
        ask(at, ACME_Q)
        result = last_result(indexed)
        assert result["request"]["generated_queries"] == 3
        assert result["generated_queries"] == ["zorblax coupler sales <b>bold</b>"]
        assert len(query_requests(fake)) == 1 and ACME_Q in query_requests(fake)[0]["messages"][-1]["content"]
        shown = " ".join(texts(at.caption))
        assert "Also searched" in shown and "<b>" not in shown  # model output is escaped


def test_mode_toggle_changes_the_mode_used(indexed):
    at = start()
    at.segmented_control(key="mode").set_value("keyword").run()
    ask(at, ACME_Q)
    assert last_result(indexed)["mode"] == "keyword"
    assert "**keyword** retrieval" in " ".join(texts(at.caption))
    at.segmented_control(key="mode").set_value("dense").run()
    ask(at, ACME_Q)
    assert last_result(indexed)["mode"] == "dense"
    assert last_result(indexed)["request"]["mode"] == "dense"


def test_top_k_limits_the_passages(indexed):
    at = start()
    at.slider(key="top_k").set_value(2).run()
    ask(at, "What does the company sell?")
    result = last_result(indexed)
    assert result["request"]["top_k"] == 2
    assert 1 <= len(result["sources"]) <= 2


def test_company_filter_narrows_results(indexed):
    at = start()
    question = "What were total net sales?"
    ask(at, question)
    unfiltered = {s["ticker"] for s in last_result(indexed)["sources"]}
    assert unfiltered == {"ACME", "BOLT"}, "without a filter both companies should come back"
    at.multiselect(key="company").set_value(["BOLT"]).run()
    ask(at, question)
    result = last_result(indexed)
    assert result["sources"] and {s["ticker"] for s in result["sources"]} == {"BOLT"}
    assert {c["ticker"] for c in result["citations"]} <= {"BOLT"}
    assert result["request"]["filters"]["tickers"] == ["BOLT"]
    assert "your filters: BOLT" in " ".join(texts(at.caption))


def test_year_and_form_filters_are_offered_from_the_index(indexed):
    at = start()
    assert at.multiselect(key="company").options == ["ACME · Acme Widgets Inc.", "BOLT · Bolt Motors Corp."]
    assert at.multiselect(key="fy").options == ["FY2024", "FY2023"]
    assert at.multiselect(key="form").options == ["10-K"]
    at.multiselect(key="fy").set_value([2023]).run()
    ask(at, "What were total net sales?")
    assert {s["fiscal_year"] for s in last_result(indexed)["sources"]} == {2023}


def test_clear_detected_filters_and_ask_again(indexed):
    at = ask(start(), ACME_Q)
    clear = buttons(at, "clear_")
    assert len(clear) == 1
    clear[0].click().run()
    no_exception(at)
    messages = stored(indexed)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[2]["content"] == ACME_Q
    again = messages[3]["result"]
    assert again["request"]["use_analysis"] is False
    assert again["detected"]["label"] == ""
    assert {s["ticker"] for s in again["sources"]} == {"ACME", "BOLT"}, "no company filter this time"
    assert "Asked without detected filters" in " ".join(texts(at.caption))


def test_citation_opens_its_passage_highlighted_in_the_filing(indexed):
    at = ask(start(), ACME_Q)
    buttons(at, "cite_")[0].click().run()
    no_exception(at)
    passage = [h for h in at.html if 'class="wb-mark"' in h.proto.body]
    assert passage, "the citation did not open its passage"
    body = passage[0].proto.body
    # The statement is drawn as a table; the row that prints the figure is marked, and nothing else.
    assert '<table class="wb-table">' in body
    row = body.split('<tr class="wb-mark">', 1)[1].split("</tr>", 1)[0]
    assert re.findall(r"<td[^>]*>(.*?)</td>", row) == ["Total net sales", "$391,035", "$383,285"]
    assert body.count('class="wb-mark"') == 1 and "<mark" not in body
    before = body.split('<tr class="wb-mark">', 1)[0]
    assert "Total net sales grew because widget demand rose." in before, "no surrounding text before the passage"
    assert "Acme Widgets Inc. (ACME) · 10-K · FY2024 · " in " ".join(texts(at.caption))


# --------------------------------------------------------------------------------------------------------------
# Conversations


def test_conversation_reopens_from_the_url_and_can_be_deleted(indexed):
    at = ask(start(), ACME_Q)
    conv_id = at.query_params["c"]
    conv_id = conv_id[0] if isinstance(conv_id, list) else conv_id
    # A new session (a reload, or a restart: the conversation is in SQLite) with ?c=<id> reopens it.
    again = start({"c": conv_id})
    assert len(again.chat_message) == 2
    assert ACME_Q in again.chat_message[0].markdown[0].value
    assert buttons(again, "cite_"), "citations must work in a reopened conversation"
    assert any(b.label.startswith("What were ACME") for b in buttons(again, "conv_open_"))
    # Export: Markdown with the citations.
    from rag.conversations import ConversationStore, to_markdown
    from ui.text import EXPORT_ESCAPER

    store = ConversationStore(indexed / "storage" / "app.sqlite3")
    exported = to_markdown(store.get(conv_id), store.messages(conv_id), escape=EXPORT_ESCAPER)
    assert f"## Q: {ACME_Q}" in exported and "**\\[1\\]** Acme Widgets Inc. (ACME) · 10-K · FY2024" in exported
    assert again.get("download_button"), "no export button"
    # Delete (with a confirmation).
    again.button(key=f"conv_del_{conv_id}").click().run()
    again.button(key=f"conv_del_yes_{conv_id}").click().run()
    no_exception(again)
    assert store.get(conv_id) is None
    assert not again.chat_message
    assert "c" not in again.query_params


def test_new_chat_starts_empty_and_lists_both(indexed):
    at = ask(start(), ACME_Q)
    at.button(key="new_chat").click().run()
    no_exception(at)
    assert not at.chat_message
    ask(at, "What does BOLT build?")
    assert len(buttons(at, "conv_open_")) == 2


# --------------------------------------------------------------------------------------------------------------
# Getting filings in


def test_upload_of_a_bad_file_says_why(indexed):
    at = start()
    at.file_uploader[0].set_value(("annual-report.pdf", b"<html>not really a pdf</html>", "application/pdf")).run()
    at.button(key="up_go").click().run()
    no_exception(at)
    errors = " ".join(texts(at.error))
    assert "annual-report.pdf is not a PDF" in errors


def test_upload_rules_for_type_and_size():
    from ui.filings import check_upload

    assert "only EDGAR .htm/.html documents" in check_upload("virus.exe", 10, 200)
    assert "without an extension" in check_upload("README", 10, 200)
    assert "over the 1 MB limit" in check_upload("big.htm", 2 * 1024 * 1024, 1)
    assert "is empty" in check_upload("empty.htm", 0, 1)
    assert check_upload("aapl-20240928.htm", 1000, 1) is None


def test_upload_indexes_a_filing(indexed):
    html = filing_html(company="Crux Instruments Inc.", ticker="CRUX", fiscal_year=2024, period_end="2024-06-30",
                       revenue=(5120, 4870), unique_phrase="Crux alone makes the hexaflux sensor.")
    at = start()
    at.file_uploader[0].set_value(("crux-20240630.htm", html.encode(), "text/html")).run()
    at.button(key="up_go").click().run()  # read: what the file says is shown for checking
    no_exception(at)
    at.button(key="up_index").click().run()  # queued for the background worker
    no_exception(at)
    assert not at.error, texts(at.error)
    assert core.wait_for_jobs(120)
    at.run()
    no_exception(at)
    assert "CRUX · Crux Instruments Inc." in at.multiselect(key="company").options
    ask(at, "Which company makes the hexaflux sensor?")
    assert any(c["ticker"] == "CRUX" for c in last_result(indexed)["citations"])


def test_download_without_sec_user_agent_says_what_to_set(indexed):
    at = start()
    at.text_input(key="dl_tickers").set_value("AAPL").run()
    at.button(key="dl_go").click().run()
    no_exception(at)
    errors = " ".join(texts(at.error))
    assert "SEC user agent" in errors and "jane@example.com" in errors
    assert at.text_input(key="sec_user_agent") is not None
    # A malformed one is refused with the expected shape, before any request.
    at.text_input(key="sec_user_agent").set_value("just-a-name").run()
    at.button(key="dl_go").click().run()
    assert "The SEC user agent must be" in " ".join(texts(at.error)) and "just-a-name" in " ".join(texts(at.error))


def test_download_reports_each_ticker(indexed, monkeypatch):
    """A failure names the ticker and why; the others go on (download_filings itself is the edgar module's and
    is tested there: here it is replaced to exercise the UI's handling of its outcomes)."""
    import rag.edgar as edgar
    from tests.filings import ACME, write_filing

    good = write_filing(indexed / "dl" / "ZETA", "primary-document.html",
                        **{**ACME, "company": "Zeta Labs Inc.", "ticker": "ZETA",
                           "unique_phrase": "Zeta alone sells the omnigraph."})

    def fake_download(tickers, *, form, limit, settings, progress=None, fiscal_years=None):
        assert form == "10-K" and limit == 2
        for i, t in enumerate(tickers):
            if progress:
                progress(t, "Downloading", (i + 0.5) / len(tickers))
        record = edgar.FilingRecord(doc_id="0000999999-24-000001", path=good, ticker="ZETA", form="10-K",
                                    fiscal_year=2024, company="Zeta Labs Inc.")
        return [edgar.DownloadOutcome("ZETA", record, None),
                edgar.DownloadOutcome("NOPE", None, "NOPE is not a ticker EDGAR knows.")]

    monkeypatch.setattr(edgar, "download_filings", fake_download)
    monkeypatch.setenv("SEC_USER_AGENT", "Jane Analyst jane@example.com")
    at = start()
    assert not at.get("text_input") or "sec_user_agent" not in [t.key for t in at.text_input]
    at.text_input(key="dl_tickers").set_value("zeta, nope").run()
    at.button(key="dl_go").click().run()
    no_exception(at)
    assert core.wait_for_jobs(120)
    at.run()
    assert "NOPE is not a ticker EDGAR knows." in " ".join(texts(at.error))
    assert "ZETA · Zeta Labs Inc." in at.multiselect(key="company").options


def test_progress_shows_this_sessions_batches_each_with_its_own_summary(indexed, monkeypatch):
    from rag import edgar

    def no_such_ticker(tickers, *, form, limit, settings, progress=None, fiscal_years=None):
        return [edgar.DownloadOutcome(t, None, f"{t} is not a ticker EDGAR knows.") for t in tickers]

    monkeypatch.setattr(edgar, "download_filings", no_such_ticker)
    monkeypatch.setenv("SEC_USER_AGENT", "Jane Analyst jane@example.com")
    at = start()
    at.text_input(key="dl_tickers").set_value("nope").run()
    at.button(key="dl_go").click().run()
    assert core.wait_for_jobs(120)
    at.run()
    no_exception(at)
    assert [s.label for s in at.status] == ["1 failed"]
    # The next batch, an upload that indexes, is summed up on its own: the earlier failure is not counted in it.
    html = filing_html(company="Crux Instruments Inc.", ticker="CRUX", fiscal_year=2024, period_end="2024-06-30",
                       revenue=(5120, 4870))
    at.file_uploader[0].set_value(("crux-20240630.htm", html.encode(), "text/html")).run()
    at.button(key="up_go").click().run()
    at.button(key="up_index").click().run()
    assert core.wait_for_jobs(120)
    at.run()
    no_exception(at)
    assert [s.label for s in at.status] == ["1 failed", "1 filing indexed"]
    # Another browser session sees none of this one's batches.
    assert not start().status
    # The failure is dismissed; the indexed batch stays until it is dismissed too.
    failed_batch = next(b for b in buttons(at, "dismiss_job_"))
    failed_batch.click().run()
    no_exception(at)
    assert [s.label for s in at.status] == ["1 filing indexed"]
    buttons(at, "dismiss_job_")[0].click().run()
    assert not at.status


def test_index_changes_by_another_process_are_picked_up(indexed):
    at = start()
    assert len(at.multiselect(key="company").options) == 2
    # Another writer (the CLI, another session) adds a filing to the same storage.
    from rag.config import get_settings
    from rag.index import IndexStore

    other = IndexStore(get_settings())
    path = indexed / "cli" / "dyna.htm"
    path.parent.mkdir(parents=True)
    path.write_text(filing_html(company="Dyna Corp.", ticker="DYNA", fiscal_year=2022, period_end="2022-12-31",
                                revenue=(10, 9)), encoding="utf-8")
    assert other.add([path]).changed
    at.run()
    no_exception(at)
    assert "DYNA · Dyna Corp." in at.multiselect(key="company").options


# --------------------------------------------------------------------------------------------------------------
# Library


def test_library_lists_reads_and_removes(indexed):
    at = start()
    at.switch_page("pages/library.py").run()
    no_exception(at)
    table = at.dataframe[0].value
    assert list(table["Ticker"]) == ["ACME", "BOLT"]
    assert list(table["Fiscal year"]) == [2024, 2023]
    assert list(table["Chunks"]) == [6, 6] or all(n > 0 for n in table["Chunks"])
    # Read ACME's Item 1A, then Item 1: as text, not HTML.
    item = at.selectbox(key=next(s.key for s in at.selectbox if (s.key or "").startswith("library_item_")))
    item.set_value(next(i for i, label in enumerate(item.options) if label.startswith("Item 1A"))).run()
    assert any("Supply of widget parts may be disrupted" in c for c in texts(at.code))
    item = at.selectbox(key=item.key)
    item.set_value(next(i for i, label in enumerate(item.options) if label.startswith("Item 1 "))).run()
    assert any("Acme alone sells the zorblax coupler." in c for c in texts(at.code))
    assert not any("zorblax" in h.proto.body for h in at.html)
    # Remove BOLT, with a confirmation.
    from rag.config import get_settings
    from rag.index import IndexStore

    doc = next(f["doc_id"] for f in IndexStore(get_settings()).list_filings() if f["ticker"] == "BOLT")
    at.selectbox(key="library_selected").set_value(doc).run()
    assert at.selectbox(key="library_selected").value == doc
    assert not any(b.key == f"remove_{doc}" for b in at.button)  # only the open tab's body runs
    at.session_state[K_TAB] = TAB_MANAGE
    at.run()
    at.button(key=f"remove_{doc}").click().run()
    at.button(key=f"remove_yes_{doc}").click().run()
    no_exception(at)
    assert any("Removed BOLT" in s for s in texts(at.success))
    assert list(at.dataframe[0].value["Ticker"]) == ["ACME"]
    assert at.multiselect(key="company").options == ["ACME · Acme Widgets Inc."]
    # Re-index what is left: parsed, chunked and embedded again, still there afterwards.
    acme = at.selectbox(key="library_selected").value
    before = IndexStore(get_settings()).current_generation()
    at.button(key=f"reindex_{acme}").click().run()
    no_exception(at)
    assert any("Re-indexed ACME" in s for s in texts(at.success))
    assert IndexStore(get_settings()).current_generation() != before
    assert list(at.dataframe[0].value["Ticker"]) == ["ACME"]


def test_library_edit_details_corrects_table_filters_and_labels(indexed):
    from rag.config import get_settings
    from rag.index import IndexStore

    at = start()
    at.switch_page("pages/library.py").run()
    no_exception(at)
    assert list(at.dataframe[0].value["Period"]) == ["FY", "FY"]
    doc = next(f["doc_id"] for f in IndexStore(get_settings()).list_filings() if f["ticker"] == "ACME")
    at.selectbox(key="library_selected").set_value(doc).run()
    at.session_state[K_TAB] = TAB_MANAGE
    at.run()
    generation = IndexStore(get_settings()).current_generation()
    # A bad value is refused with a message, and nothing changes.
    at.text_input(key=f"edit_ticker_{doc}").set_value("not a ticker")
    at.button(key=f"edit_save_{doc}").click().run()
    no_exception(at)
    assert any("Not saved" in e and "is not a ticker" in e for e in texts(at.error))
    assert IndexStore(get_settings()).current_generation() == generation
    # A quarterly report read as an annual one: corrected in place.
    at.text_input(key=f"edit_ticker_{doc}").set_value("ACMX")
    at.text_input(key=f"edit_form_{doc}").set_value("10-Q")
    at.number_input(key=f"edit_fiscal_year_{doc}").set_value(2025)
    at.selectbox(key=f"edit_fiscal_period_{doc}").set_value("Q3")
    at.button(key=f"edit_save_{doc}").click().run()
    no_exception(at)
    assert any("Saved ACMX · 10-Q · Q3 FY2025" in s and "nothing was re-embedded" in s for s in texts(at.success))
    table = at.dataframe[0].value
    assert list(zip(table["Ticker"], table["Form"], table["Fiscal year"], table["Period"])) == [
        ("ACMX", "10-Q", 2025, "Q3"), ("BOLT", "10-K", 2023, "FY")]
    assert "ACMX · Acme Widgets Inc." in at.multiselect(key="company").options
    assert "ACME · Acme Widgets Inc." not in at.multiselect(key="company").options
    assert at.multiselect(key="fy").options == ["FY2025", "FY2023"] and "10-Q" in at.multiselect(key="form").options
    assert at.selectbox(key="library_selected").value == doc
    # Re-indexing reads the file again (whose cover says ACME, 10-K): the user's corrections are kept.
    at.button(key=f"reindex_{doc}").click().run()
    no_exception(at)
    assert any("Re-indexed" in s for s in texts(at.success))
    record = next(f for f in IndexStore(get_settings()).list_filings() if f["doc_id"] == doc)
    assert (record["ticker"], record["form"], record["fiscal_year"], record["fiscal_period"]) == (
        "ACMX", "10-Q", 2025, "Q3")


# --------------------------------------------------------------------------------------------------------------
# Financials


def test_financials_tabulate_xbrl_figures_and_open_their_passage(indexed):
    at = start()
    at.switch_page("pages/financials.py").run()
    no_exception(at)
    assert at.multiselect(key="fin_companies").value == ["ACME", "BOLT"]
    table = at.dataframe[0].value
    assert table.loc[("Acme Widgets Inc. (ACME)", "Total revenue"), "FY2024"] == "$391,035 million"
    # ACME's FY2023 comes only from its FY2024 10-K (a prior-year comparative): marked, and hidden on request.
    assert table.loc[("Acme Widgets Inc. (ACME)", "Total revenue"), "FY2023"] == "$383,285 million *"
    assert any("Not in these companies' XBRL data: Net income, Operating income." in c for c in texts(at.caption))
    at.toggle(key="fin_comparatives").set_value(False).run()
    table = at.dataframe[0].value
    assert table.loc[("Acme Widgets Inc. (ACME)", "Total revenue"), "FY2023"] == "—"
    assert table.loc[("Bolt Motors Corp. (BOLT)", "Total revenue"), "FY2023"] == "$96,773 million"
    # A selected source row shows the passage that reports it, the figure marked.
    sources = at.dataframe[1].value
    row = next(i for i, r in sources.iterrows() if r["Company"] == "ACME" and r["Period"] == "FY2024")
    at.session_state["fin_sources"] = {"selection": {"rows": [row], "columns": []}}
    at.run()
    no_exception(at)
    assert any("ACME FY2024: **\\$391,035 million**" in m for m in texts(at.markdown))
    assert any('<mark class="wb-mark">391,035</mark>' in h.proto.body for h in at.html)


def test_financials_open_on_the_companies_asked_about_lately(indexed):
    at = ask(start(), "What were BOLT's total net sales in fiscal 2023?")
    at.switch_page("pages/financials.py").run()
    no_exception(at)
    assert at.multiselect(key="fin_companies").value == ["BOLT"]
    assert list(at.dataframe[0].value.index.get_level_values(0).unique()) == ["Bolt Motors Corp. (BOLT)"]


def test_financials_say_a_company_whose_filings_carry_no_xbrl_figures(indexed):
    from rag.config import get_settings
    from rag.index import IndexStore
    from tests.pdf_files import write_pdf

    lines = ["UNITED STATES", "SECURITIES AND EXCHANGE COMMISSION", "FORM 10-K", "Commission File Number 001-88888",
             "CRUX INSTRUMENTS INC.", "Item 1. Business",
             "Crux Instruments makes sensors for laboratories and sells them in three regions.",
             "Demand for the sensors rose during the year as laboratories expanded."]
    pdf = write_pdf(indexed / "in" / "crux-annual.pdf", [[(740 - 18 * i, text) for i, text in enumerate(lines)]])
    report = IndexStore(get_settings()).add([pdf], overrides={"ticker": "CRUX", "company": "Crux Instruments Inc.",
                                                              "form": "10-K", "fiscal_year": 2024})
    assert not report.errors, report.errors
    at = start()
    at.switch_page("pages/financials.py").run()
    no_exception(at)
    assert at.multiselect(key="fin_companies").value == ["ACME", "BOLT", "CRUX"]  # every company, up to a handful
    notes = " ".join(texts(at.info))
    assert "No XBRL figures in the indexed filings of CRUX" in notes and "index" not in notes.split("CRUX", 1)[1]
    companies = set(at.dataframe[0].value.index.get_level_values(0))
    assert companies == {"Acme Widgets Inc. (ACME)", "Bolt Motors Corp. (BOLT)"}, "no empty row for CRUX"
    at.multiselect(key="fin_companies").set_value(["CRUX"]).run()
    no_exception(at)
    assert "No XBRL figures in the indexed filings of CRUX" in " ".join(texts(at.info))
    assert not at.dataframe and not at.warning


# --------------------------------------------------------------------------------------------------------------
# Safe text: filing text and model output never become links, images, HTML or formulas


def test_markdown_escaper_neutralises_markup():
    from ui.text import WORD_JOINER, safe_markdown

    out = safe_markdown("See [click](https://evil.example) ![x](http://t.example/p.png) <img src=x onerror=alert(1)> "
                        "$391,035 and $383,285 :material/home: www.evil.example a@b.example")
    assert "[click]" not in out and "\\[click\\]" in out
    assert "![" not in out
    assert "\\<img" in out and not re.search(r"(?<!\\)<img", out)
    assert "\\$391,035" in out and "\\$383,285" in out
    assert "https\\:" + WORD_JOINER + "//" in out
    assert "www" + WORD_JOINER + "." in out and "@" + WORD_JOINER in out
    assert "\\:material" + WORD_JOINER + "/home" in out


def test_markdown_escaper_keeps_what_reads_well():
    from ui.text import safe_markdown

    text = ("**[1] ACME · 10-K**\n- `Total net sales | $391,035 | $383,285` [1]\n\n| a | b |\n|---|---|\n"
            "```\nraw [x](y) $5\n```\nNet sales rose [2, 3].")
    out = safe_markdown(text)
    assert out.startswith("**:blue[\\[1\\]] ACME · 10-K**\n- `Total net sales | $391,035 | $383,285` :blue[\\[1\\]]")
    assert "| a | b |\n|---|---|" in out
    assert "```\nraw [x](y) $5\n```" in out, "fenced code stays literal"
    assert out.endswith("Net sales rose :blue[\\[2, 3\\]].")


def test_markdown_escaper_is_stable_across_stream_pieces():
    import random

    from ui.text import escaped_stream, safe_markdown

    samples = [
        "Revenue was $391,035 million [1], up from $383,285 million [2].",
        "`code [x](y)` then `unclosed [a](b)\n**bold** _under_ ~tilde~ <b>\n```py\nx = '[1]'\n```\nend [3]",
        "    indented\n\tTabbed https://x.example www.y.example\n[12] [not a cite] [4, 5]",
    ]
    rng = random.Random(7)
    for text in samples:
        whole = safe_markdown(text)
        for _ in range(200):
            cuts = sorted(rng.sample(range(1, len(text)), 6))
            pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
            assert "".join(escaped_stream(pieces)) == whole


def test_highlight_escapes_filing_text():
    from ui.text import context_window, highlight_html, locate_passage

    text = "Intro <script>alert(1)</script>\nThe passage: revenue $5 & [link](http://x).\nAfter </div> text."
    start = text.index("The passage")
    end = text.index("\nAfter")
    chunk = "ACME · 10-K · FY2024 · Item 7\n" + text[start:end]
    span = locate_passage(text, chunk, start, end)
    assert span == (start, end)
    html = highlight_html(*context_window(text, *span))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "</div> text" not in html and "&lt;/div&gt; text" in html
    assert '<mark class="wb-mark">The passage: revenue $5 &amp; [link](http://x).</mark>' in html
    # Offsets that no longer fit (the filing was re-indexed): found again by the chunk's text.
    assert locate_passage("xx\n" + text, chunk, start, end) == (start + 3, end + 3)


def test_cut_stream_keeps_the_text_and_says_so(indexed, monkeypatch):
    with FakeOllama(models=["test-model:latest"]) as fake:
        fake.reply = "ACME's total net sales were $391,035 million in fiscal 2024 [1]. " * 4
        fake.fail, fake.cut_after = "cut", 12
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        at = ask(start(), ACME_Q)
        result = last_result(indexed)
        assert result["cut"] is True and result["extractive"] is False
        # The exact XBRL figure leads; the model's cut text follows it.
        lead, _, model_text = result["answer"].partition("\n\n")
        assert "$391,035 million" in lead and model_text.startswith("ACME's total net")
        page_text = " ".join(texts(at.caption) + texts(at.warning))
        assert "cut off" in page_text


def test_a_missing_model_falls_back_to_an_installed_one_and_says_how_to_pull_it(indexed, monkeypatch):
    with FakeOllama(models=["some-other:7b"]) as fake:
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        monkeypatch.setenv("RAG_LLM_MODEL", "missing-model:1b")
        at = start()
        assert at.selectbox(key="llm_model").options == ["some-other:7b"]
        assert at.selectbox(key="llm_model").value == "some-other:7b"
        note = " ".join(texts(at.sidebar.caption))
        assert "is not installed" in note and "`ollama pull missing-model:1b`" in note
        ask(at, ACME_Q)
        assert fake.chat_requests()[-1]["model"] == "some-other:7b"
        assert last_result(indexed)["model"] == "some-other:7b"


def test_an_interrupted_question_can_be_asked_again(indexed):
    from rag.conversations import ConversationStore

    store = ConversationStore(indexed / "storage" / "app.sqlite3")
    conv = store.create(ACME_Q)
    store.add_message(conv["id"], "user", ACME_Q)  # the answer never arrived
    at = start({"c": conv["id"]})
    assert "No answer was recorded" in " ".join(texts(at.caption))
    buttons(at, "retry_")[0].click().run()
    no_exception(at)
    roles = [m["role"] for m in store.messages(conv["id"])]
    assert roles == ["user", "user", "assistant"]


def test_links_only_for_plain_https_urls():
    from ui.text import safe_url

    url = "https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/aapl-20240928.htm"
    assert safe_url(url) == url
    for bad in ("javascript:alert(1)", "http://www.sec.gov/x", "https://x.example/a)(b", "https://x.example/a b", ""):
        assert safe_url(bad) is None


def test_a_sources_caption_says_what_kind_of_source_it_is():
    from ui.text import source_kind

    assert source_kind({"kind": "fact"}) == "exact XBRL fact"
    # A passage the facts layer read a count from is no XBRL fact.
    assert "read from this passage's text" in source_kind({"kind": "passage"})
    assert source_kind({"kind": "chunk"}) == "" and source_kind({}) == ""


def test_a_follow_up_carries_the_conversation_and_can_be_asked_on_its_own(indexed):
    at = ask(start(), "What were ACME's total net sales?")
    at = ask(at, "And BOLT?")
    follow = last_result(indexed)
    assert "96,773" in follow["answer"]
    assert follow["detected"]["carried"] == ["total revenue"]
    assert any("from the conversation" in t for t in texts(at.caption))
    alone = buttons(at, "alone_")
    assert len(alone) == 1, "only the follow-up offers to be asked on its own"
    alone[0].click().run()
    no_exception(at)
    messages = stored(indexed)
    assert [m["content"] for m in messages if m["role"] == "user"][-1] == "And BOLT?"
    again = messages[-1]["result"]
    assert again["request"]["alone"] is True and again["detected"]["carried"] == []


def test_in_team_mode_the_sidebar_lists_the_teams_indexing_jobs(tmp_path, monkeypatch, pg_url):
    """Jobs other processes wrote to the shared database show in the sidebar, their file names as typed."""
    from rag.job_records import JobRecords
    from rag.jobs import UNFINISHED, FilingJob

    monkeypatch.setenv("RAG_STORAGE_DIR", str(tmp_path / "storage"))
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAG_DATABASE_URL", pg_url)
    _base_env(monkeypatch, tmp_path)
    JobRecords(pg_url, UNFINISHED).write([
        FilingJob(id=1, label="**crux**-20240630.htm", batch=1, state="embedding", chunks_done=3, chunks_total=9),
        FilingJob(id=2, label="notes.txt", batch=1, state="failed", detail="not a filing", finished=1.0),
    ])
    at = start()
    team = [e for e in at.expander if e.label.startswith("Team indexing")]
    assert len(team) == 1 and team[0].label == "Team indexing · 1 under way"
    lines = texts(team[0].markdown)
    crux = next(line for line in lines if "crux" in line)
    # Shown as typed: the markdown escapes what would make it bold.
    assert "embedding 3 of 9 chunks" in crux and "\\*\\*crux\\*\\*" in crux
    assert any("notes.txt · failed\\: not a filing" in line for line in lines), lines


def test_without_team_mode_the_sidebar_has_no_team_jobs(empty):
    at = start()
    assert not [e for e in at.expander if e.label.startswith("Team indexing")]
