"""Team mode's database: one PostgreSQL (with pgvector) reached at RAG_DATABASE_URL, shared by every store.

The index, the facts and the conversations each own their tables and create them on first use
(`ensure_schema`); this module holds what they share: connecting with a clear message when the server is not
there, the address without its password for messages, a schema record so a newer version can tell what it
finds, and advisory locks that serialise writers of the same filing (or the same schema) across processes
while letting writers of different filings proceed together.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from typing import Iterable, Iterator
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "DatabaseUnavailable", "advisory_key", "connect", "ensure_schema", "redacted", "transaction", "xact_lock",
]


class DatabaseUnavailable(RuntimeError):
    """The database at RAG_DATABASE_URL cannot be reached or used; the message says which and why."""

    def __init__(self, url: str, detail: str):
        self.url = url
        super().__init__(
            f"The database at {redacted(url)} cannot be used: {detail.strip().splitlines()[0] if detail.strip() else 'no reason given'}. "
            "Check that PostgreSQL runs there with the pgvector extension available, or unset RAG_DATABASE_URL "
            "to use the embedded store."
        )


def redacted(url: str) -> str:
    """The address with any password replaced, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user.split(':', 1)[0]}:***@{host}"))


def connect(url: str, *, autocommit: bool = False, timeout_s: float = 10.0):
    """A psycopg connection to `url` (rows as tuples), or DatabaseUnavailable saying why not."""
    try:
        import psycopg
    except ImportError as exc:  # the embedded store never needs it
        raise DatabaseUnavailable(url, "the psycopg package is not installed (pip install 'psycopg[binary]')") from exc
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=max(1, int(timeout_s)))
    except psycopg.Error as exc:
        raise DatabaseUnavailable(url, str(exc)) from exc


@contextmanager
def transaction(conn) -> Iterator:
    """One transaction on `conn`: committed when the block ends, rolled back when it raises (also on a kill, by
    the server, since nothing is committed until the end)."""
    with conn.transaction():
        yield conn


def advisory_key(*parts: str) -> int:
    """A signed 64-bit key for pg_advisory_*lock, stable across processes and Python versions (no hash())."""
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def xact_lock(conn, *parts: str) -> None:
    """Hold an advisory lock on `parts` until the current transaction ends: two writers of the same filing take
    turns, writers of different filings do not wait for each other."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(*parts),))


def ensure_schema(conn, component: str, version: int, statements: Iterable[str]) -> None:
    """Create `component`'s tables once per database (idempotent statements, run under a lock so two processes
    starting together do not race), and record the version they are at."""
    with conn.transaction():
        xact_lock(conn, "schema")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS rag_schema (component text PRIMARY KEY, version integer NOT NULL)"
        )
        row = conn.execute("SELECT version FROM rag_schema WHERE component = %s", (component,)).fetchone()
        if row is not None and row[0] > version:
            raise DatabaseUnavailable(
                conn.info.dsn, f"its {component} tables are at version {row[0]}, newer than this program's {version}"
            )
        if row is not None and row[0] == version:
            return
        for statement in statements:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO rag_schema (component, version) VALUES (%s, %s) "
            "ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version",
            (component, version),
        )
