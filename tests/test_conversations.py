"""Conversations (rag/conversations.py) in SQLite and in team mode's PostgreSQL: the store's life cycle on both
backends, who wrote each conversation, writers in two processes, a server that is not there, and the Markdown
export."""

from __future__ import annotations

import multiprocessing
import re
import sqlite3
import time
from dataclasses import dataclass

import pytest

from rag.conversations import (
    SHARED,
    ConversationError,
    ConversationStore,
    StoreUnavailable,
    make_title,
    to_markdown,
    valid_id,
)
from rag.schema import AnswerResult, Citation
from ui.text import EXPORT_ESCAPER

QUESTION = "What were ACME's total net sales in fiscal 2024?"


@dataclass
class Backend:
    """Where a test's conversations live: `open()` a store there, `rows(sql)` read its tables directly."""

    name: str
    where: dict  # ConversationStore's keyword: db_path or database_url

    def open(self, **options) -> ConversationStore:
        return ConversationStore(**self.where, **options)

    def rows(self, sql: str) -> list[tuple]:
        if "db_path" in self.where:
            with sqlite3.connect(self.where["db_path"]) as db:
                return db.execute(sql).fetchall()
        import psycopg

        with psycopg.connect(self.where["database_url"]) as conn:
            return conn.execute(sql).fetchall()


@pytest.fixture(params=["embedded", "served"])
def backend(request, tmp_path):
    if request.param == "embedded":
        return Backend("embedded", {"db_path": tmp_path / "storage" / "app.sqlite3"})
    return Backend("served", {"database_url": request.getfixturevalue("pg_url")})


@pytest.fixture
def store(backend):
    return backend.open()


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


def test_conversations_persist_across_store_objects(store, backend):
    conv = store.create(QUESTION)
    store.add_message(conv["id"], "user", QUESTION)
    store.add_message(conv["id"], "assistant", "Answer [1].", result=answer_result())
    reopened = backend.open()
    assert reopened.get(conv["id"]) == store.get(conv["id"])
    assert reopened.messages(conv["id"]) == store.messages(conv["id"])
    # Either object sees what the other writes.
    reopened.add_message(conv["id"], "user", "And in 2023?")
    assert [m["content"] for m in store.messages(conv["id"])][-1] == "And in 2023?"


def test_delete_removes_the_conversation_and_its_messages(store, backend):
    conv = store.create(QUESTION)
    kept = store.create("another")
    store.add_message(conv["id"], "user", QUESTION)
    store.add_message(kept["id"], "user", "another")
    assert store.delete(conv["id"]) is True
    assert store.get(conv["id"]) is None
    assert store.messages(conv["id"]) == []
    assert store.delete(conv["id"]) is False
    assert [c["id"] for c in store.list()] == [kept["id"]]
    assert backend.rows("SELECT conversation_id FROM messages") == [(kept["id"],)]  # no orphans left behind


def test_a_list_holds_its_authors_conversations_and_the_shared_workspaces(store):
    shared = store.create("asked without a login")
    ana = store.create("asked by Ana", author="ana@example.com")
    bob = store.create("asked by Bob", author="bob@example.com")
    assert {c["id"] for c in store.list(author="ana@example.com")} == {ana["id"], shared["id"]}
    assert {c["id"] for c in store.list(author=SHARED)} == {shared["id"]}
    assert {c["id"] for c in store.list()} == {shared["id"], ana["id"], bob["id"]}  # no author: every one
    assert [c["author"] for c in store.list(author="bob@example.com", limit=1)] == ["bob@example.com"]
    # An id opens its conversation whoever asks: it is the link a user hands a colleague.
    assert store.get(bob["id"])["author"] == "bob@example.com" and store.get(shared["id"])["author"] == SHARED


def test_a_history_kept_before_authors_were_recorded_is_the_shared_workspaces(tmp_path):
    path = tmp_path / "app.sqlite3"
    with sqlite3.connect(path) as db:  # a version 2 file, as the app wrote it before
        db.executescript("""
            CREATE TABLE conversations (id TEXT PRIMARY KEY, title TEXT NOT NULL, created_at TEXT NOT NULL,
                                        updated_at TEXT NOT NULL);
            CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL
                REFERENCES conversations(id) ON DELETE CASCADE, role TEXT NOT NULL, content TEXT NOT NULL,
                result_json TEXT, created_at TEXT NOT NULL);
            INSERT INTO conversations VALUES ('00000000000000000000000000000001', 'old', '2025-01-01', '2025-01-01');
            INSERT INTO messages (conversation_id, role, content, created_at)
                VALUES ('00000000000000000000000000000001', 'user', 'old question', '2025-01-01');
            PRAGMA user_version = 2;""")
    store = ConversationStore(path)
    assert [(c["title"], c["author"], c["messages"]) for c in store.list(author="ana@example.com")] == [
        ("old", SHARED, 1)]
    store.create("new", author="ana@example.com")
    assert [c["title"] for c in ConversationStore(path).list(author="bob@example.com")] == ["old"]


WRITERS, CONVERSATIONS, TURNS = 2, 20, 4


def _write_conversations(where: dict, writer: int, start) -> None:
    """One process's chats: conversations of its own, each question followed by its answer, begun when every
    writer is ready (so the writes overlap)."""
    store = ConversationStore(**where)
    start.wait(60)
    for n in range(CONVERSATIONS):
        conv = store.create(f"writer {writer} conversation {n}", author=f"user{writer}@example.com")
        for turn in range(TURNS):
            role = "user" if turn % 2 == 0 else "assistant"
            store.add_message(conv["id"], role, f"{writer}/{n}/{turn}", result={"turn": turn} if turn % 2 else None)


def test_two_processes_write_conversations_at_once(backend):
    backend.open()  # the tables made once, so the writers start together on the same footing
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter each, as two app servers are
    start = spawn.Barrier(WRITERS)
    writers = [spawn.Process(target=_write_conversations, args=(backend.where, w, start)) for w in range(WRITERS)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(120)
    assert [process.exitcode for process in writers] == [0] * WRITERS
    store = backend.open()
    listed = store.list()
    assert len(listed) == WRITERS * CONVERSATIONS and {c["messages"] for c in listed} == {TURNS}
    for w in range(WRITERS):
        mine = store.list(author=f"user{w}@example.com")
        assert len(mine) == CONVERSATIONS
        for conv in mine:
            n = int(conv["title"].rsplit(" ", 1)[1])
            messages = store.messages(conv["id"])
            assert [m["content"] for m in messages] == [f"{w}/{n}/{t}" for t in range(TURNS)]
            assert [m["result"] for m in messages][1] == {"turn": 1}


def test_a_database_server_that_is_not_there_is_said_plainly(tmp_path):
    url = f"postgresql://ana:s3cret@/rag?host={tmp_path}&port=1"
    with pytest.raises(StoreUnavailable) as caught:
        ConversationStore(database_url=url)
    text = str(caught.value)
    assert caught.value.kind == "unreachable" and "s3cret" not in text and "RAG_DATABASE_URL" in text
    assert text.startswith("The conversation history at postgresql://ana:***@/rag")


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


def test_sql_in_titles_and_questions_is_stored_as_text(store, backend):
    attack = "x'); DROP TABLE messages; --"
    conv = store.create(attack)
    store.add_message(conv["id"], "user", "1' OR '1'='1; DELETE FROM conversations; --")
    assert store.get(conv["id"])["title"] == attack
    assert [m["content"] for m in store.messages(conv["id"])] == ["1' OR '1'='1; DELETE FROM conversations; --"]
    assert backend.rows("SELECT COUNT(*) FROM conversations") == [(1,)]  # both tables still there
    assert backend.rows("SELECT COUNT(*) FROM messages") == [(1,)]


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
