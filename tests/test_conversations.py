"""Conversations in SQLite (rag/conversations.py): the store's life cycle and the Markdown export."""

from __future__ import annotations

import re
import sqlite3
import time

import pytest

from rag.conversations import ConversationError, ConversationStore, make_title, to_markdown, valid_id
from rag.schema import AnswerResult, Citation
from ui.text import EXPORT_ESCAPER

QUESTION = "What were ACME's total net sales in fiscal 2024?"


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "storage" / "app.sqlite3"


@pytest.fixture
def store(db_path):
    return ConversationStore(db_path)


def answer_result(**overrides) -> dict:
    """A stored answer as the chat page saves it (AnswerResult.to_dict())."""
    cited = Citation(number=1, chunk_id="acme-c3", doc_id="acme", ticker="ACME", company="Acme Widgets Inc.",
                     form="10-K", fiscal_year=2024, section="Item 8",
                     section_title="Financial Statements and Supplementary Data", page_start=6, page_end=7,
                     text="Total net sales $ 391,035 $ 383,285\nNet loss on hedges (12) (9)",
                     url="https://www.sec.gov/Archives/edgar/data/999999/acme-20240928.htm")
    fields = dict(question=QUESTION, answer="Total net sales were $391,035 million [1].", citations=[cited],
                  sources=[cited], detected={"tickers": ["ACME"], "fiscal_years": [2024], "label": "ACME · FY2024"},
                  mode="hybrid", timings={"retrieval_ms": 12.0}, extractive=True)
    fields.update(overrides)
    return AnswerResult(**fields).to_dict()


def test_create_titles_the_conversation_from_its_first_question(store):
    conv = store.create("  What were\nACME's   net sales?  ")
    assert valid_id(conv["id"])
    assert conv["title"] == "What were ACME's net sales?"
    assert store.get(conv["id"]) == conv
    assert store.create("")["title"] == "New conversation"


def test_long_titles_are_cut_at_a_word_boundary():
    title = make_title("word " * 40)
    assert len(title) <= 80
    assert title.endswith("word…")
    assert make_title("short question") == "short question"


def test_list_is_newest_activity_first_with_message_counts(store):
    first = store.create("first")
    time.sleep(0.01)
    second = store.create("second")
    assert [c["id"] for c in store.list()] == [second["id"], first["id"]]
    time.sleep(0.01)
    store.add_message(first["id"], "user", "a follow-up")  # activity moves it to the top
    listed = store.list()
    assert [c["id"] for c in listed] == [first["id"], second["id"]]
    assert [c["messages"] for c in listed] == [1, 0]
    assert [c["id"] for c in store.list(limit=1)] == [first["id"]]


def test_messages_keep_their_order_and_their_answer_result(store):
    conv = store.create(QUESTION)
    result = answer_result()
    user_id = store.add_message(conv["id"], "user", QUESTION)
    answer_id = store.add_message(conv["id"], "assistant", result["answer"], result=result)
    assert answer_id > user_id
    messages = store.messages(conv["id"])
    assert [(m["id"], m["role"], m["content"]) for m in messages] == [
        (user_id, "user", QUESTION), (answer_id, "assistant", result["answer"])]
    assert messages[0]["result"] is None
    assert messages[1]["result"] == result
    assert messages[1]["result"]["citations"][0]["chunk_id"] == "acme-c3"


def test_conversations_persist_across_store_objects(store, db_path):
    conv = store.create(QUESTION)
    store.add_message(conv["id"], "user", QUESTION)
    store.add_message(conv["id"], "assistant", "Answer [1].", result=answer_result())
    reopened = ConversationStore(db_path)
    assert reopened.get(conv["id"]) == store.get(conv["id"])
    assert reopened.messages(conv["id"]) == store.messages(conv["id"])
    # Either object sees what the other writes.
    reopened.add_message(conv["id"], "user", "And in 2023?")
    assert [m["content"] for m in store.messages(conv["id"])][-1] == "And in 2023?"


def test_delete_removes_the_conversation_and_its_messages(store, db_path):
    conv = store.create(QUESTION)
    kept = store.create("another")
    store.add_message(conv["id"], "user", QUESTION)
    store.add_message(kept["id"], "user", "another")
    assert store.delete(conv["id"]) is True
    assert store.get(conv["id"]) is None
    assert store.messages(conv["id"]) == []
    assert store.delete(conv["id"]) is False
    assert [c["id"] for c in store.list()] == [kept["id"]]
    with sqlite3.connect(db_path) as db:  # no orphaned messages left behind
        assert db.execute("SELECT conversation_id FROM messages").fetchall() == [(kept["id"],)]


@pytest.mark.parametrize("bad", ["", "../etc/passwd", "ABCDEF" * 6, "0" * 31, None, 42, "1' OR '1'='1"])
def test_invalid_ids_are_refused(store, bad):
    assert not valid_id(bad)
    assert store.get(bad) is None
    assert store.messages(bad) == []


def test_messages_need_a_known_conversation_and_a_known_role(store):
    with pytest.raises(ConversationError):
        store.add_message("0" * 32, "user", "nobody owns this")
    conv = store.create(QUESTION)
    with pytest.raises(ConversationError):
        store.add_message(conv["id"], "system", "not a chat role")
    assert store.messages(conv["id"]) == []


def test_markdown_export_holds_questions_answers_and_cited_sources(store):
    conv = store.create(QUESTION)
    result = answer_result(warnings=["A figure was not found in the sources."])
    store.add_message(conv["id"], "user", QUESTION)
    store.add_message(conv["id"], "assistant", result["answer"], result=result)
    text = to_markdown(store.get(conv["id"]), store.messages(conv["id"]), escape=EXPORT_ESCAPER)
    assert text.startswith(f"# {QUESTION}\n")
    assert f"## Q: {QUESTION}" in text
    assert "Total net sales were \\$391,035 million \\[1\\]." in text  # the answer as written, "$" kept from LaTeX
    assert "Filters detected: ACME · FY2024" in text
    assert "extractive answer (no language model)" in text
    assert "> **Warning:** A figure was not found in the sources." in text
    head = ("**\\[1\\]** Acme Widgets Inc. (ACME) · 10-K · FY2024 · Item 8 Financial Statements and Supplementary Data"
            " · p. 6-7 — <https://www.sec.gov/Archives/edgar/data/999999/acme-20240928.htm>")
    assert head in text
    # The cited passage is quoted line by line, so its text cannot start a heading or list of the export.
    assert "> Total net sales \\$ 391,035 \\$ 383,285\n> Net loss on hedges (12) (9)" in text
    assert text.index(f"## Q: {QUESTION}") < text.index("Total net sales were") < text.index("**\\[1\\]**")


def test_markdown_export_names_a_local_source_and_cuts_long_passages():
    long_text = "# Not a heading\n" + "x" * 2000
    cited = {"number": 2, "ticker": "BOLT", "form": "10-K", "fiscal_year": 2023, "source": "bolt-20231231.htm",
             "text": long_text}
    messages = [{"role": "user", "content": "Q?"},
                {"role": "assistant", "content": "A [2].", "result": {"citations": [cited], "model": "m:latest"}}]
    text = to_markdown({"title": "T", "created_at": "2024-01-02T03:04:05+00:00"}, messages, escape=EXPORT_ESCAPER)
    assert "Started 2024-01-02 03:04 UTC." in text
    assert "model: m\\:latest" in text  # escaped as on the page (a colon can open a directive)
    assert "**\\[2\\]** BOLT · 10-K · FY2023 — `bolt-20231231.htm`" in text
    assert "> \\# Not a heading" in text
    assert "\n# Not a heading" not in text
    quoted = text.split("> \\# Not a heading\n> ", 1)[1].split("\n", 1)[0]
    assert quoted.endswith(" …") and len(quoted) < 1200


def test_markdown_export_names_the_quarter_of_a_quarterly_report():
    cited = {"number": 1, "ticker": "ACME", "company": "Acme Widgets Inc.", "form": "10-Q", "fiscal_year": 2025,
             "fiscal_period": "Q3", "section": "Part I Item 2", "page_start": 21, "page_end": 21, "text": "Sales rose."}
    messages = [{"role": "user", "content": "Q?"},
                {"role": "assistant", "content": "A [1].", "result": {"citations": [cited]}}]
    text = to_markdown({"title": "T", "created_at": "2025-08-01T00:00:00+00:00"}, messages, escape=EXPORT_ESCAPER)
    assert "**\\[1\\]** Acme Widgets Inc. (ACME) · 10-Q · Q3 FY2025 · Part I Item 2 · p. 21" in text


def test_sql_in_titles_and_questions_is_stored_as_text(store, db_path):
    attack = "x'); DROP TABLE messages; --"
    conv = store.create(attack)
    store.add_message(conv["id"], "user", "1' OR '1'='1; DELETE FROM conversations; --")
    assert store.get(conv["id"])["title"] == attack
    assert [m["content"] for m in store.messages(conv["id"])] == ["1' OR '1'='1; DELETE FROM conversations; --"]
    with sqlite3.connect(db_path) as db:
        assert {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} >= {
            "conversations", "messages"}


# What a filing, the model or the user could write to make an exported file's reader fetch or run something.
HOST = "payload.invalid"
PAYLOADS = [f"![i](http://{HOST}/img.png)", f"<img src=http://{HOST}/raw.gif>", f"[click](http://{HOST}/link)",
            f"<http://{HOST}/auto>", f"http://{HOST}/bare", f"www.{HOST}/w", "<script>alert(1)</script>",
            "[x](javascript:alert(1))", f"[ref][r]\n\n[r]: http://{HOST}/ref", f'<a href="http://{HOST}/a">a</a>']


def test_markdown_export_renders_untrusted_text_as_text_and_fetches_nothing():
    """Issue 45, item 4: the export carried the question, the answer, registrant names, tickers and quoted
    passages unescaped; rendered as CommonMark it made requests to a payload host."""
    from markdown_it import MarkdownIt

    payload = " ".join(PAYLOADS)
    cited = {"number": 1, "company": f"Evil {payload} Inc.", "ticker": f"![T](http://{HOST}/t.png)", "form": "10-K",
             "fiscal_year": 2024, "section": "Item 1A", "section_title": f"Risk {payload}", "page_start": 3,
             "text": f"Passage line one {payload}\n" + "\n".join(PAYLOADS),
             "url": f"https://www.sec.gov/x.htm) ![p](http://{HOST}/url.png"}
    local = dict(cited, number=2, url=None, source=f"![s](http://{HOST}/s.png).htm")
    result = {"citations": [cited, local], "model": f"m ![m](http://{HOST}/m.png)", "mode": f"hybrid {payload}",
              "detected": {"label": f"EVIL · {payload}"}, "warnings": [f"Check {payload}"]}
    messages = [{"role": "user", "content": f"What about {payload}?"},
                {"role": "assistant", "content": f"The answer [1] {payload}\n\n" + "\n\n".join(PAYLOADS),
                 "result": result}]
    text = to_markdown({"title": f"Title {payload}", "created_at": "2025-01-01T00:00:00+00:00"}, messages,
                       escape=EXPORT_ESCAPER)
    rendered = MarkdownIt("commonmark").render(text)  # CommonMark lets raw HTML through: nothing may reach it
    addresses = re.findall(r'(?:href|src)="([^"]*)"', rendered)
    assert all(a.startswith("https://www.sec.gov/") or a == "" for a in addresses), addresses
    assert not any(HOST in a for a in addresses)
    assert "<img" not in rendered and "<script" not in rendered and "<a href=\"http" not in rendered
    assert "javascript:" not in "".join(addresses)
    # The payloads are still there, as text to read.
    assert rendered.count("payload.invalid") >= len(PAYLOADS)
