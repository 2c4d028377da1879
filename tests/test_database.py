"""rag.database against a real PostgreSQL: connecting, schema records, advisory locks."""

import threading
import time

import pytest

from rag.config import Settings
from rag.database import DatabaseUnavailable, advisory_key, connect, ensure_schema, redacted, xact_lock


def test_redacted_hides_the_password_only():
    assert redacted("postgresql://ana:s3cret@db.example:5432/rag") == "postgresql://ana:***@db.example:5432/rag"
    assert redacted("postgresql://ana@db.example/rag") == "postgresql://ana@db.example/rag"


def test_a_server_that_is_not_there_gets_a_message_naming_it_without_the_password(tmp_path):
    url = f"postgresql://ana:s3cret@/rag?host={tmp_path}&port=1"
    with pytest.raises(DatabaseUnavailable) as caught:
        connect(url, timeout_s=1)
    text = str(caught.value)
    assert "s3cret" not in text and "RAG_DATABASE_URL" in text


def test_settings_refuse_an_address_that_is_not_postgresql(monkeypatch):
    monkeypatch.setenv("RAG_DATABASE_URL", "mysql://x/y")
    with pytest.raises(ValueError, match="RAG_DATABASE_URL"):
        Settings()
    monkeypatch.setenv("RAG_DATABASE_URL", "postgresql://x/y")
    assert Settings().served


def test_advisory_keys_are_stable_and_distinct():
    assert advisory_key("filing", "a") == advisory_key("filing", "a")
    assert advisory_key("filing", "a") != advisory_key("filing", "b")
    assert advisory_key("filing", "a") != advisory_key("filinga")
    assert -(2**63) <= advisory_key("x") < 2**63


def test_schema_is_made_once_and_a_newer_one_is_refused(pg_url):
    statements = ["CREATE TABLE IF NOT EXISTS things (id integer PRIMARY KEY)"]
    with connect(pg_url) as conn:
        ensure_schema(conn, "things", 1, statements)
        ensure_schema(conn, "things", 1, ["SELECT 1/0"])  # already at version 1: nothing runs
        assert conn.execute("SELECT version FROM rag_schema WHERE component = 'things'").fetchone() == (1,)
        conn.execute("UPDATE rag_schema SET version = 9 WHERE component = 'things'")
        conn.commit()
        with pytest.raises(DatabaseUnavailable, match="version 9"):
            ensure_schema(conn, "things", 1, statements)


def test_writers_of_one_filing_take_turns_and_of_two_filings_do_not(pg_url):
    held = threading.Event()
    release = threading.Event()

    def holder():
        with connect(pg_url) as conn, conn.transaction():
            xact_lock(conn, "filing", "doc-1")
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(10)
    with connect(pg_url) as conn:
        with conn.transaction():  # another filing: no wait
            started = time.monotonic()
            xact_lock(conn, "filing", "doc-2")
            assert time.monotonic() - started < 1
        with conn.transaction():  # the same filing: blocked while the other transaction lives
            conn.execute("SET LOCAL lock_timeout = '300ms'")
            import psycopg

            with pytest.raises(psycopg.errors.LockNotAvailable):
                xact_lock(conn, "filing", "doc-1")
    release.set()
    thread.join(10)
    with connect(pg_url) as conn, conn.transaction():
        xact_lock(conn, "filing", "doc-1")  # free once the holder's transaction ended
