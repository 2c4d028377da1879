"""Where the fact store's rows live: one SQLite file (embedded, the default) or tables in team mode's PostgreSQL
(RAG_DATABASE_URL). Both give FactStore a connection that takes the same SQL (`?` placeholders, rows read by
column name), so its queries are written once; what differs is only how the tables are made and opened."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Iterator

from ..database import (
    DatabaseUnavailable,
    QmarkConnection,
    ensure_schema,
    first_line,
    pooled,
    redacted,
    xact_lock,
)

SCHEMA_VERSION = "3"  # 2: filings carry their fiscal period; 3: an indexing run's facts wait in pending_* tables
SERVED_SCHEMA_VERSION = 1
DB_NAME = "facts.sqlite3"

FILING_COLUMNS = (
    "doc_id", "ticker", "company", "cik", "form", "fiscal_year", "fiscal_year_source", "fiscal_period", "period_start",
    "period_end", "filing_date", "accession", "url", "source", "path", "sha256", "fact_count", "indexed_at",
)
FACT_COLUMNS = (
    "doc_id", "concept", "label", "value", "text", "unit", "context_id", "period_start", "period_end", "instant",
    "dimensions", "dim_count", "decimals", "scale", "char_start", "char_end", "chunk_id", "section", "page",
    "row_label", "source",
)

# The columns' types, one list for both schemas: SQLite reads them by affinity; the server as written, its text
# compared byte by byte (COLLATE "C") as SQLite compares it, so listings sort the same way on either backend.
_FILING_TYPES = dict.fromkeys(FILING_COLUMNS, "TEXT") | {"fiscal_year": "INTEGER",
                                                        "fact_count": "INTEGER NOT NULL DEFAULT 0"}
_FACT_TYPES = dict.fromkeys(FACT_COLUMNS, "TEXT") | {
    "doc_id": "TEXT NOT NULL", "concept": "TEXT NOT NULL", "value": "REAL", "instant": "INTEGER NOT NULL DEFAULT 0",
    "dimensions": "TEXT NOT NULL DEFAULT '{}'", "dim_count": "INTEGER NOT NULL DEFAULT 0",
    "scale": "INTEGER NOT NULL DEFAULT 0", "char_start": "INTEGER NOT NULL DEFAULT -1",
    "char_end": "INTEGER NOT NULL DEFAULT -1", "page": "INTEGER", "source": "TEXT NOT NULL DEFAULT 'xbrl'",
}
_SERVED_TYPES = {"TEXT": 'TEXT COLLATE "C"', "REAL": "DOUBLE PRECISION"}  # SQLite's REAL is a double too


def _columns(types: dict, served: bool) -> str:
    return ", ".join(f"{name} {' '.join(_SERVED_TYPES.get(w, w) if served else w for w in kind.split(' '))}".rstrip()
                     for name, kind in types.items())


def _tables(served: bool) -> list[str]:
    """The statements that make the filings and facts tables (each idempotent)."""
    row_id = "BIGINT GENERATED ALWAYS AS IDENTITY" if served else "INTEGER"
    facts = _FACT_TYPES | {"doc_id": "TEXT NOT NULL REFERENCES filings (doc_id) ON DELETE CASCADE"}
    return [
        f"CREATE TABLE IF NOT EXISTS filings ({_columns(_FILING_TYPES | {'doc_id': 'TEXT PRIMARY KEY'}, served)})",
        "CREATE INDEX IF NOT EXISTS filings_ticker_fy ON filings (ticker, fiscal_year)",
        f"CREATE TABLE IF NOT EXISTS facts (id {row_id} PRIMARY KEY, {_columns(facts, served)})",
        "CREATE INDEX IF NOT EXISTS facts_doc_concept ON facts (doc_id, concept)",
        "CREATE INDEX IF NOT EXISTS facts_concept ON facts (concept)",
    ]


def _staging_tables(served: bool) -> list[str]:
    """The statements that make the staging tables. An indexing run stages its filings' facts in pending_*,
    tagged with the run (the index generation it will publish), and moves them into filings/facts in one
    transaction once that generation is live: a run killed before leaves only staged rows, which the next writer
    drops, so the facts answers read never run ahead of the index. A served filing is written in one transaction
    instead (no generations there); its pending_* tables serve a caller that stages a run."""
    staged_filings, staged_facts = _FILING_TYPES, _FACT_TYPES
    if not served:  # the embedded staging tables were made untyped; a new file gets them as before
        staged_filings, staged_facts = dict.fromkeys(FILING_COLUMNS, ""), dict.fromkeys(FACT_COLUMNS, "")
    return [
        f"CREATE TABLE IF NOT EXISTS pending_filings (run TEXT NOT NULL, {_columns(staged_filings, served)})",
        # SQLite numbers every row (rowid); the server's staged facts get a column of that name for their order.
        "CREATE TABLE IF NOT EXISTS pending_facts ("
        + ("rowid BIGINT GENERATED ALWAYS AS IDENTITY, " if served else "")
        + f"run TEXT NOT NULL, {_columns(staged_facts, served)})",
        "CREATE INDEX IF NOT EXISTS pending_facts_run ON pending_facts (run, doc_id)",
    ]


SCHEMA = ";\n".join(  # a version 2 file's tables
    ["CREATE TABLE IF NOT EXISTS schema_info (key TEXT PRIMARY KEY, value TEXT)", *_tables(served=False)]) + ";\n"
PENDING_SCHEMA = ";\n".join(_staging_tables(served=False)) + ";\n"
SERVED_SCHEMA = _tables(served=True) + _staging_tables(served=True)


class FactStoreUnavailable(RuntimeError):
    """The fact store cannot be read (a corrupt or unopenable file, a database that is not there). `str()` names
    where, says what answers lose and what to do."""

    def __init__(self, path, detail: str, remedy: str | None = None):
        self.path, self.detail = path, detail
        remedy = remedy or (
            f"To rebuild them, move {Path(path).name} aside and index the filings again "
            "(python -m rag index <folder>); unchanged filings are only read again for their facts.")
        super().__init__(f"The XBRL facts at {path} could not be read ({detail}): answers come from the passages "
                         f"alone, without exact figures. {remedy}")


class EmbeddedTables:
    """storage/facts.sqlite3: one connection per operation, so it is safe across Streamlit threads and beside a
    CLI writer (WAL, busy timeout)."""

    served = False

    def __init__(self, path: Path):
        self.path = Path(path)
        self._ready = False
        self._lock = threading.Lock()

    def __str__(self) -> str:
        return str(self.path)

    def exists(self) -> bool:
        return self.path.exists()

    def problem(self) -> str | None:
        """Why the store cannot be read now (FactStoreUnavailable's message), or None: one cheap read."""
        if not self.exists():
            return None
        try:
            with closing(self._connect()) as con:
                con.execute("SELECT COUNT(*) FROM filings").fetchone()
        except FactStoreUnavailable as exc:
            return str(exc)
        except sqlite3.DatabaseError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return None  # a writer at work, not a broken file
            return str(FactStoreUnavailable(self.path, str(exc)))
        return None

    @contextmanager
    def session(self, within=None) -> Iterator:
        """A connection for one operation, committed when the block ends (`within` is for the served store)."""
        if within is not None:
            raise ValueError("the embedded fact store writes in its own transactions")
        with closing(self._connect()) as con, con:
            yield con

    def lock_filing(self, con, doc_id: str) -> None:
        """One writer at a time already holds the index's writer lock."""

    def _connect(self) -> sqlite3.Connection:
        try:
            return self._open()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            raise FactStoreUnavailable(self.path, str(exc)) from exc
        except (sqlite3.DatabaseError, OSError) as exc:  # "file is not a database", a folder in its place
            raise FactStoreUnavailable(self.path, str(exc)) from exc

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(str(self.path), timeout=30.0)
        try:
            con.row_factory = sqlite3.Row
            con.execute("PRAGMA foreign_keys = ON")
            if not self._ready:
                with self._lock:
                    try:
                        con.execute("PRAGMA journal_mode = WAL")
                    except sqlite3.OperationalError:
                        pass
                    con.executescript(SCHEMA + PENDING_SCHEMA)
                    cols = {r[1] for r in con.execute("PRAGMA table_info(facts)")}
                    if "row_label" not in cols:  # a store made before row labels were kept
                        con.execute("ALTER TABLE facts ADD COLUMN row_label TEXT")
                    for table in ("facts", "pending_facts"):  # a store made before figures were read from PDFs
                        if "source" not in {r[1] for r in con.execute(f"PRAGMA table_info({table})")}:
                            con.execute(f"ALTER TABLE {table} ADD COLUMN source TEXT NOT NULL DEFAULT 'xbrl'")
                    if "fiscal_period" not in {r[1] for r in con.execute("PRAGMA table_info(filings)")}:
                        con.execute("ALTER TABLE filings ADD COLUMN fiscal_period TEXT")  # a version 1 store
                    stored = con.execute("SELECT value FROM schema_info WHERE key = 'version'").fetchone()
                    if stored is None or stored[0] != str(SCHEMA_VERSION):  # a reader of a current store writes nothing
                        con.execute("INSERT OR REPLACE INTO schema_info (key, value) VALUES ('version', ?)",
                                    (SCHEMA_VERSION,))
                    con.commit()
                    self._ready = True
        except BaseException:
            con.close()
            raise
        return con


_served_ready: set[str] = set()  # addresses whose fact tables this process has made sure of
_served_lock = threading.Lock()


class ServedTables:
    """The fact tables in team mode's PostgreSQL: each operation on a pooled connection in one transaction, or
    inside the caller's (`within`: the index writing a filing's chunks), each filing's writers serialised by the
    filing's advisory lock, which the index takes too."""

    served = True

    def __init__(self, url: str):
        self.url = url
        self.path = redacted(url)

    def __str__(self) -> str:
        return self.path

    def exists(self) -> bool:
        return True  # the tables are made on first use; an empty database reads as an empty store

    def problem(self) -> str | None:
        try:
            with self.session() as con:
                con.execute("SELECT COUNT(*) AS n FROM filings").fetchone()
        except FactStoreUnavailable as exc:
            return str(exc)
        return None

    @contextmanager
    def session(self, within=None) -> Iterator:
        """A connection for one operation: `within` (a psycopg connection in the caller's transaction, which the
        caller commits), or a pooled one whose transaction ends with the block."""
        import psycopg

        try:
            self._ensure_tables()
            if within is not None:
                yield QmarkConnection(within)
                return
            with pooled(self.url) as conn:
                yield QmarkConnection(conn)
        except DatabaseUnavailable as exc:
            raise self._unavailable(exc.detail) from exc
        except psycopg.OperationalError as exc:
            raise self._unavailable(first_line(exc) or type(exc).__name__) from exc

    def lock_filing(self, con, doc_id: str) -> None:
        xact_lock(con.conn, "filing", doc_id)

    def _ensure_tables(self) -> None:
        with _served_lock:
            if self.url in _served_ready:
                return
            with pooled(self.url) as conn:
                ensure_schema(conn, "facts", SERVED_SCHEMA_VERSION, SERVED_SCHEMA)
            _served_ready.add(self.url)

    def _unavailable(self, detail: str) -> FactStoreUnavailable:
        return FactStoreUnavailable(self.path, detail, "Check that the database server runs and that "
                                    "RAG_DATABASE_URL points at it; the facts come back without re-indexing.")
