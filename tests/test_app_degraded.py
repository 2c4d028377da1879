"""Degrade, don't die (issue 45, items 2 and 11): with the conversation store or the fact store unusable, the app
(streamlit.testing's AppTest over the small real index, Ollama down) still answers from the index, says that
history is not being saved or exact figures are not available, names the file and what to do, and loses nothing:
the unsaved messages are stored, once, when the file works again."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from rag.conversations import ConversationStore, StoreUnavailable
from tests.app_server import build_small_index, copy_index
from tests.fake_ollama import free_port

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
QUESTION = "What were ACME's total net sales in fiscal 2024?"
GARBAGE = b"this is not an SQLite database, just bytes a crash or a bad copy left behind\n" * 64


@pytest.fixture(scope="module")
def built_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("degraded-index")
    build_small_index(root)
    return root


@pytest.fixture
def app_root(built_index, tmp_path, monkeypatch) -> Path:
    for key, value in copy_index(built_index, tmp_path / "app").items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{free_port()}")  # nothing listens: extractive answers
    monkeypatch.setenv("RAG_LLM_MODEL", "test-model:latest")
    monkeypatch.delenv("RAG_TOP_K", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "app"


def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def ask(at: AppTest, question: str) -> AppTest:
    at.chat_input[0].set_value(question).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def warnings(at: AppTest) -> str:
    """The page's warnings as read (Markdown escapes and the word joiners that break links taken out)."""
    return "\n".join(str(w.value) for w in at.warning).replace("\\", "").replace("\u2060", "")


def answered(at: AppTest) -> str:
    """The answer on the page (the second chat message), checked to carry the exact figure."""
    assert len(at.chat_message) == 2, [m.markdown[0].value for m in at.chat_message]
    assert QUESTION in at.chat_message[0].markdown[0].value
    answer = at.chat_message[1].markdown[0].value
    assert "391,035" in answer
    return answer


def test_a_corrupt_history_file_still_answers_and_saves_once_it_is_moved_aside(app_root):
    db = app_root / "storage" / "app.sqlite3"
    db.write_bytes(GARBAGE)
    at = start()
    said = warnings(at)
    assert "History is not being saved" in said and "app.sqlite3" in said and "Move it aside" in said, said
    assert any("History is not being saved" in str(c.value) for c in at.sidebar.caption)
    answered(ask(at, QUESTION))
    assert "2 messages of this session wait here" in warnings(at)
    assert db.read_bytes() == GARBAGE, "the damaged file is left as it was, for the user to keep or remove"

    db.rename(db.with_name("app.sqlite3.bad"))  # what the message says to do
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "History is not being saved" not in warnings(at)
    answered(at)  # the same conversation, now read from the store
    store = ConversationStore(db)
    [conv] = store.list()
    assert [(m["role"], m["content"]) for m in store.messages(conv["id"])][0] == ("user", QUESTION)
    assert [m["role"] for m in store.messages(conv["id"])] == ["user", "assistant"]
    assert "391,035" in store.messages(conv["id"])[1]["content"]
    at.run()  # another run stores nothing twice
    assert len(store.messages(conv["id"])) == 2 and len(store.list()) == 1


def test_an_unopenable_history_path_still_answers(app_root):
    db = app_root / "storage" / "app.sqlite3"
    db.mkdir()  # as "unable to open database file" from a read-only or missing folder
    at = start()
    said = warnings(at)
    assert "History is not being saved" in said and str(db) in said and "unable to open" in said, said
    answered(ask(at, QUESTION))
    # A second question in the same conversation is kept too, in order.
    at.chat_input[0].set_value("What does BOLT build?").run()
    assert not at.exception
    assert [m.markdown[0].value for m in at.chat_message][::2] == [QUESTION, "What does BOLT build?"]
    assert "4 messages of this session wait here" in warnings(at)


def test_a_corrupt_fact_store_still_answers_from_the_passages_and_says_so(app_root):
    facts = app_root / "storage" / "facts.sqlite3"
    for extra in facts.parent.glob("facts.sqlite3-*"):
        extra.unlink()
    facts.write_bytes(GARBAGE)
    at = ask(start(), QUESTION)
    answer = answered(at)
    assert "not tagged XBRL" not in answer  # unknown: the facts could not be read
    said = warnings(at)
    assert "facts.sqlite3" in said and "could not be read" in said, said
    assert not at.exception


@contextlib.contextmanager
def read_only(folder: Path):
    """`folder` made read-only for this process: immutable for root (whom permissions do not stop), else mode 555."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)]).returncode != 0:
            pytest.skip("running as root, and chattr +i cannot make the folder read-only here")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)


def test_a_read_only_storage_folder_still_answers_and_says_what_to_do(app_root):
    storage = app_root / "storage"
    made = ConversationStore(storage / "app.sqlite3")  # an existing history, closed, then its folder read-only
    getattr(made, "close", lambda: None)()  # (ae43e14's store closes after every operation and has no close())
    with read_only(storage):
        at = start()
        said = warnings(at)
        assert "History is not being saved" in said and str(storage) in said, said
        assert "writable" in said or "can write to" in said
        answered(ask(at, QUESTION))
        with pytest.raises(StoreUnavailable) as caught:
            ConversationStore(storage / "app.sqlite3")
        assert caught.value.kind in ("read-only", "unopenable")


def test_store_errors_name_the_file_and_what_to_do(tmp_path):
    db = tmp_path / "app.sqlite3"
    db.write_bytes(GARBAGE)
    with pytest.raises(StoreUnavailable) as caught:
        ConversationStore(db)
    assert caught.value.kind == "corrupt" and str(db) in str(caught.value) and "Move it aside" in str(caught.value)
    # Another process holding the write lock past the store's patience: reported as locked, not a traceback.
    db.unlink()
    store = ConversationStore(db, write_patience=0.5)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreUnavailable) as caught:
            store.create("held")
        assert caught.value.kind == "locked"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.create("free again")["title"] == "free again"  # and usable once the lock is gone


def test_rag_ask_with_a_corrupt_fact_store_answers_without_a_traceback(built_index, tmp_path, capfd):
    from rag.__main__ import main

    copy_index(built_index, tmp_path)
    facts = tmp_path / "storage" / "facts.sqlite3"
    for extra in facts.parent.glob("facts.sqlite3-*"):
        extra.unlink()
    facts.write_bytes(GARBAGE)
    code = main(["ask", "What was ACME's net loss on hedges in fiscal 2024?", "--storage", str(tmp_path / "storage"),
                 "--no-llm"])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert "Traceback" not in out + err
    answer = out.split("\nSources:\n")[0]
    assert "(12) million" in answer  # still answered, from the statement's table
    assert "not tagged XBRL" not in answer  # nobody could tell: the facts were not read
    assert f"The XBRL facts at {facts} could not be read (file is not a database)" in out + err
    assert "move facts.sqlite3 aside and index the filings again" in out + err
