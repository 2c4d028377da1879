"""Team mode's database: one PostgreSQL (with pgvector) reached at RAG_DATABASE_URL, shared by every store.

The index, the facts and the conversations each own their tables and create them on first use
(`ensure_schema`); this module holds what they share: connecting with a clear message when the server is not
there, the address without its password for messages, a schema record so a newer version can tell what it
finds, and advisory locks that serialise writers of the same filing (or the same schema) across processes
while letting writers of different filings proceed together.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from contextlib import contextmanager
from typing import Iterable, Iterator
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "DatabaseUnavailable", "QmarkConnection", "advisory_key", "connect", "ensure_schema", "first_line", "pooled",
    "redacted", "transaction", "xact_lock",
]

IDLE_CONNECTIONS = 4  # per process and address: what a store keeps open between operations
CHECK_IDLE_AFTER_S = 30.0  # a connection idle longer is asked whether it still works before it is used


class DatabaseUnavailable(RuntimeError):
    """The database at RAG_DATABASE_URL cannot be reached or used; the message says which and why."""

    def __init__(self, url: str, detail: str):
        self.url = url
        self.detail = first_line(detail) or "no reason given"
        super().__init__(
            f"The database at {redacted(url)} cannot be used: {self.detail}. "
            "Check that PostgreSQL runs there with the pgvector extension available, or unset RAG_DATABASE_URL "
            "to use the embedded store."
        )


def first_line(error) -> str:
    """The first line of an error's text (a driver's message goes on with hints and context), or ""."""
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


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


_idle: dict[tuple[int, str], list] = {}  # (process id, address) -> [(connection, idle since)]; a fork opens its own
_idle_lock = threading.Lock()


def _working(conn, idle_since: float) -> bool:
    """Whether an idle connection still reaches the server: asked (one round trip) only after a long idle spell,
    in which a restarted server or a proxy's timeout may have closed it."""
    if time.monotonic() - idle_since < CHECK_IDLE_AFTER_S:
        return True
    try:
        conn.execute("SELECT 1")
        return True
    except Exception:  # noqa: BLE001 - any failure: the connection is dropped and a new one opened
        conn.close()
        return False


@contextmanager
def pooled(url: str) -> Iterator:
    """A connection for one operation, run as one transaction (committed when the block ends, rolled back when it
    raises): one of the process's idle connections to `url`, or a new one (DatabaseUnavailable when it cannot be
    opened). It goes back to the idle ones afterwards unless it broke, so an operation costs no new connection."""
    key = (os.getpid(), url)
    conn = None
    while conn is None:
        with _idle_lock:
            idle = _idle.setdefault(key, [])
            taken = idle.pop() if idle else None
        if taken is None:
            conn = connect(url, autocommit=True)  # transactions are explicit: none stays open between operations
        elif _working(*taken):
            conn = taken[0]
    try:
        with conn.transaction():
            yield conn
    finally:
        reusable = not conn.closed and not conn.broken and conn.info.transaction_status == 0  # IDLE
        with _idle_lock:
            if reusable and len(idle) < IDLE_CONNECTIONS:
                idle.append((conn, time.monotonic()))
                conn = None
        if conn is not None:
            conn.close()


class QmarkConnection:
    """A psycopg connection that runs the SQL the stores write for SQLite too: `?` placeholders, rows read by
    column name (`row["doc_id"]`), so each store's queries are written once for both backends. Text loses NUL
    characters, which PostgreSQL's text cannot hold (filing text is untrusted and may carry them)."""

    def __init__(self, conn):
        self.conn = conn

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s")

    @staticmethod
    def _args(args) -> list:
        return [a.replace("\x00", "") if isinstance(a, str) else a for a in args]

    def execute(self, sql: str, args=()):
        from psycopg.rows import dict_row

        cur = self.conn.cursor(row_factory=dict_row)
        cur.execute(self._sql(sql), self._args(args))
        return cur

    def executemany(self, sql: str, rows):
        from psycopg.rows import dict_row

        cur = self.conn.cursor(row_factory=dict_row)
        cur.executemany(self._sql(sql), [self._args(row) for row in rows])
        return cur
