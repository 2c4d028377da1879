"""Chat conversations, kept in SQLite so they survive reloads and restarts.

    store = ConversationStore(settings.db_path)
    conv = store.create("What were Acme's net sales in FY2024?")
    store.add_message(conv["id"], "user", "What were Acme's net sales in FY2024?")
    store.add_message(conv["id"], "assistant", result.answer, result=result.to_dict())
    store.list()                      # newest first
    store.messages(conv["id"])        # oldest first, each with its parsed `result`
    to_markdown(conv, messages, escape=EXPORT_ESCAPER)   # an export with every citation (ui.text's escaper)

The schema is plain SQL, the same in SQLite and in team mode's PostgreSQL (`ConversationStore(database_url=...)`,
RAG_DATABASE_URL), which run the same queries:

    conversations(id TEXT PRIMARY KEY, title TEXT, author TEXT, created_at TEXT, updated_at TEXT)
    messages(id INTEGER PRIMARY KEY, conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
             role TEXT, content TEXT, result_json TEXT, created_at TEXT)

A conversation records who wrote it (`author`: the signed-in user the app passes down, or SHARED, the one
workspace everybody shares when the app runs without a login); a list for an author holds theirs and the shared
workspace's. An id opens its conversation whoever asks: it is an unguessable link a user may hand a colleague.

Ids of conversations are random hex strings (safe in a URL, unguessable, and free of any per-database sequence);
times are ISO 8601 in UTC. This module imports no streamlit.

Many sessions of one process share one store, so writes never race inside the process: one writer connection per
store, one write at a time behind a lock, each write a single SQL statement (atomic on its own; a trigger keeps
the conversation's time), so the lock is held for one step of SQLite and not across Python code that may wait for
the interpreter behind CPU-bound threads; reads take a connection of their own from a small pool (WAL readers
neither wait for the writer nor block it). Another process (the CLI,
a second app) is waited for with a short busy timeout and retried with backoff for up to `write_patience` seconds.
A database that cannot be used (corrupt, read-only, unopenable, locked past that) raises `StoreUnavailable`,
whose message names the file and what to do; the next operation opens it afresh, so a fixed file is used again
without a restart. On the server each operation is one transaction on a pooled connection (rag.database.pooled):
PostgreSQL lets many processes write at once, and a server that is not there is StoreUnavailable too.
"""

from __future__ import annotations

import json
import logging
import random
import re
import sqlite3
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from .database import DatabaseUnavailable, QmarkConnection, ensure_schema, first_line, pooled, redacted
from .schema import citation_label

log = logging.getLogger(__name__)
SCHEMA_VERSION = 3  # 2: the trigger that keeps updated_at; 3: who wrote each conversation
SERVED_SCHEMA_VERSION = 1
ROLES = ("user", "assistant")
TITLE_CHARS = 80
SHARED = ""  # the author of a conversation written without a login: the workspace everybody shares

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    author      TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content         TEXT NOT NULL,
    result_json     TEXT,
    created_at      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages (conversation_id, id);
CREATE INDEX IF NOT EXISTS conversations_by_update ON conversations (updated_at);
CREATE TRIGGER IF NOT EXISTS messages_touch_conversation AFTER INSERT ON messages BEGIN
    UPDATE conversations SET updated_at = NEW.created_at WHERE id = NEW.conversation_id;
END;
"""

_AUTHOR_INDEX = "CREATE INDEX IF NOT EXISTS conversations_by_author ON conversations (author, updated_at)"

# The same tables on the server; text compared byte by byte (COLLATE "C"), as SQLite compares it.
_SERVED_SCHEMA = [
    'CREATE TABLE IF NOT EXISTS conversations (id TEXT COLLATE "C" PRIMARY KEY, title TEXT NOT NULL, '
    'created_at TEXT COLLATE "C" NOT NULL, updated_at TEXT COLLATE "C" NOT NULL, '
    "author TEXT COLLATE \"C\" NOT NULL DEFAULT '')",
    "CREATE TABLE IF NOT EXISTS messages (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    "conversation_id TEXT COLLATE \"C\" NOT NULL REFERENCES conversations (id) ON DELETE CASCADE, "
    "role TEXT NOT NULL CHECK (role IN ('user', 'assistant')), content TEXT NOT NULL, result_json TEXT, "
    'created_at TEXT COLLATE "C" NOT NULL)',
    "CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages (conversation_id, id)",
    "CREATE INDEX IF NOT EXISTS conversations_by_update ON conversations (updated_at)",
    _AUTHOR_INDEX,
    "CREATE OR REPLACE FUNCTION rag_touch_conversation() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "UPDATE conversations SET updated_at = NEW.created_at WHERE id = NEW.conversation_id; RETURN NEW; END $$",
    "CREATE OR REPLACE TRIGGER messages_touch_conversation AFTER INSERT ON messages FOR EACH ROW "
    "EXECUTE FUNCTION rag_touch_conversation()",
]

_ID_RE = re.compile(r"^[0-9a-f]{32}$")
_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d")


class ConversationError(RuntimeError):
    """A conversation operation a user should read about (unknown id, bad role)."""


class StoreUnavailable(ConversationError):
    """The database cannot be used now. `str()` says which file (or server), why, and what to do; `kind` is
    "corrupt", "read-only", "locked", "unopenable" or, for the server, "unreachable"."""

    def __init__(self, path: Path | str, kind: str, detail: str):
        self.path, self.kind, self.detail = path, kind, detail
        super().__init__(f"The conversation history at {path} cannot be used ({detail}): {_REMEDY[kind](path)}")


_REMEDY = {
    "corrupt": lambda p: f"the file is damaged. Move it aside (for example to {Path(p).name}.bad) and a new, empty "
                         "history is started; the indexed filings are not affected.",
    "read-only": lambda p: f"the app may not write there. Make {Path(p).parent} writable for the user running the app, "
                           "or set RAG_STORAGE_DIR to a writable folder.",
    "unopenable": lambda p: f"check that {Path(p).parent} is a folder the app can write to and {Path(p).name} is a file, "
                            "or set RAG_STORAGE_DIR to another folder.",
    "locked": lambda p: "another program keeps it locked. Close the program writing to it (a script, a second "
                        "app on the same storage folder); writes are retried.",
    "unreachable": lambda p: "check that the database server runs and that RAG_DATABASE_URL points at it; the "
                             "chat keeps what it could not save and saves it once the server answers.",
}


def _kind(exc: BaseException) -> str:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return "locked"
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return "corrupt"
    if "readonly" in text or "read-only" in text or isinstance(exc, PermissionError):
        return "read-only"
    return "unopenable"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def make_title(text: str, limit: int = TITLE_CHARS) -> str:
    """A one-line title from the first question: whitespace collapsed, cut at a word boundary."""
    title = re.sub(r"\s+", " ", text or "").strip()
    if not title:
        return "New conversation"
    if len(title) <= limit:
        return title
    cut = title[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:.")
    return (cut or title[: limit - 1]) + "…"


def valid_id(value: Any) -> bool:
    return isinstance(value, str) and bool(_ID_RE.match(value))


class ConversationStore:
    """Conversations in one SQLite file (`db_path`) or in team mode's PostgreSQL (`database_url`), shared by every
    thread of the process (see the module docstring).

    write_patience: seconds a write keeps retrying while another process holds the database locked."""

    BUSY_TIMEOUT_S = 2.0  # one wait inside SQLite; the retries around it add backoff and the overall patience
    READERS = 4  # idle reader connections kept open

    def __init__(self, db_path: str | Path | None = None, *, database_url: str | None = None,
                 write_patience: float = 30.0):
        if (db_path is None) == (database_url is None):
            raise ValueError("conversations live in a file (db_path) or a database (database_url), one of them")
        self.database_url = database_url
        self.db_path = Path(db_path) if db_path is not None else None
        self.where = redacted(database_url) if database_url else self.db_path
        self.served = database_url is not None
        self._served_ready = False
        self.write_patience = write_patience
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._readers: list[sqlite3.Connection] = []  # idle reader connections, taken and given back
        self._readers_lock = threading.Lock()
        self._retrying(lambda db: None)  # a bad file is reported now, not at the first question

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        with self._readers_lock:
            idle, self._readers = self._readers, []
        for db in [self._db, *idle]:
            if db is not None:
                try:
                    db.close()
                except sqlite3.Error:
                    pass
        self._db = None

    def _open(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.db_path, timeout=self.BUSY_TIMEOUT_S, isolation_level=None,
                                 check_same_thread=False)
        except OSError as exc:
            raise StoreUnavailable(self.db_path, _kind(exc), str(exc)) from exc
        db.row_factory = sqlite3.Row
        return db

    def _connection(self) -> sqlite3.Connection:
        """The open connection, opened (and the schema made) when there is none. Called with the lock held;
        raises sqlite3 errors for _retrying to judge."""
        if self._db is not None:
            return self._db
        try:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(self.db_path, _kind(exc), str(exc)) from exc
        # Autocommit: transactions are begun explicitly, so none stays open by accident between operations.
        db = self._open()
        try:
            db.execute("PRAGMA foreign_keys=ON")
            if db.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
                log.warning("%s: WAL journal not available; writers wait for readers", self.db_path)
            if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:  # a reader writes nothing
                db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} COMMIT;")
                db.execute("BEGIN IMMEDIATE")  # the check and the change in one step: two upgraders take turns
                try:
                    columns = [r[1] for r in db.execute("PRAGMA table_info(conversations)")]
                    if columns.count("author") == 0:  # a version 2 file
                        db.execute("ALTER TABLE conversations ADD COLUMN author TEXT NOT NULL DEFAULT ''")
                    db.execute(_AUTHOR_INDEX)
                    db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except BaseException:
            db.close()
            raise
        self._db = db
        return db

    @contextmanager
    def _connect(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection for one operation: a reader from the pool, or the writer connection under the lock (a
        write is one statement, committed by SQLite as it ends). Only for operations that can be retried whole:
        see _retrying."""
        if not write:
            if self._db is None:
                with self._lock:
                    self._connection()  # the file opened and its schema made
            with self._readers_lock:
                db = self._readers.pop() if self._readers else None
            if db is None:
                db = self._open()
                db.execute("PRAGMA query_only=ON")
            try:
                yield db
            except BaseException:
                db.close()
                raise
            with self._readers_lock:
                if len(self._readers) < self.READERS and self._db is not None:
                    self._readers.append(db)
                    db = None
            if db is not None:
                db.close()
            return
        with self._lock:
            yield self._connection()

    def _served(self, operation):
        """operation(db) in one transaction on the server. A pooled connection the server dropped (a restart) is
        replaced once; a server that is not there, or any other database error, is StoreUnavailable."""
        import psycopg

        for attempt in (1, 2):
            try:
                if not self._served_ready:
                    with pooled(self.database_url) as conn:
                        ensure_schema(conn, "conversations", SERVED_SCHEMA_VERSION, _SERVED_SCHEMA)
                    self._served_ready = True
                with pooled(self.database_url) as conn:
                    return operation(QmarkConnection(conn))
            except DatabaseUnavailable as exc:
                raise StoreUnavailable(self.where, "unreachable", exc.detail) from exc
            except psycopg.OperationalError as exc:
                if attempt == 1:
                    continue
                raise StoreUnavailable(self.where, "unreachable", first_line(exc) or type(exc).__name__) from exc
            except psycopg.Error as exc:
                raise StoreUnavailable(self.where, "unopenable", first_line(exc) or type(exc).__name__) from exc

    def _retrying(self, operation, write: bool = False):
        """operation(db), retried with backoff while another process holds the database locked (up to
        write_patience seconds); any other database error, or a lock held past that, is StoreUnavailable.
        On the server: _served."""
        if self.served:
            return self._served(operation)
        deadline = time.monotonic() + self.write_patience
        delay = 0.05
        while True:
            try:
                with self._connect(write) as db:
                    return operation(db)
            except ConversationError:
                raise
            except sqlite3.OperationalError as exc:
                kind = _kind(exc)
                if kind == "locked" and time.monotonic() < deadline:
                    time.sleep(delay * (0.5 + random.random()))  # jitter: two waiting processes do not collide
                    delay = min(delay * 2, 1.0)
                    continue
                with self._lock:
                    self._drop()
                raise StoreUnavailable(self.db_path, kind, str(exc)) from exc
            except sqlite3.Error as exc:  # corrupt, read-only, I/O: the next operation opens the file afresh
                with self._lock:
                    self._drop()
                raise StoreUnavailable(self.db_path, _kind(exc), str(exc)) from exc

    # ---- conversations
    def create(self, title: str = "", conversation_id: str | None = None, *, author: str = SHARED) -> dict:
        """A new conversation written by `author` (SHARED: the workspace everybody shares); `conversation_id`
        keeps the id a conversation was given while the store was unavailable (an id already stored is kept as
        it is, so saving it again is harmless)."""
        now = _now()
        cid = conversation_id if valid_id(conversation_id) else uuid.uuid4().hex
        conv = {"id": cid, "title": make_title(title), "created_at": now, "updated_at": now, "author": author or SHARED}
        self._retrying(lambda db: _insert_conversation(db, conv), write=True)
        return self.get(cid) or conv

    def get(self, conversation_id: str) -> dict | None:
        if not valid_id(conversation_id):
            return None
        row = self._retrying(lambda db: db.execute(
            "SELECT id, title, created_at, updated_at, author FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone())
        return dict(row) if row else None

    def list(self, limit: int | None = None, *, author: str | None = None) -> list[dict]:
        """Newest activity first, each with its number of messages: `author`'s and the shared workspace's (every
        conversation when `author` is None)."""
        sql = (
            "SELECT c.id, c.title, c.created_at, c.updated_at, c.author, "
            "(SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS messages FROM conversations c"
        )
        params: tuple = ()
        if author is not None:
            sql += " WHERE c.author IN (?, ?)"
            params = (author, SHARED)
        sql += " ORDER BY c.updated_at DESC, c.created_at DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params += (int(limit),)
        return [dict(r) for r in self._retrying(lambda db: db.execute(sql, params).fetchall())]

    def delete(self, conversation_id: str) -> bool:
        return self._retrying(lambda db: db.execute(
            "DELETE FROM conversations WHERE id = ?", (conversation_id,)).rowcount > 0, write=True)

    # ---- messages
    def add_message(self, conversation_id: str, role: str, content: str, result: dict | None = None) -> int:
        if role not in ROLES:
            raise ConversationError(f"role must be one of {ROLES}, not {role!r}")
        now = _now()
        payload = json.dumps(result, ensure_ascii=False, default=str) if result is not None else None

        def insert(db) -> int:
            message_id = _insert_message(db, conversation_id, role, content or "", payload, now)
            if message_id is None:
                raise ConversationError(f"no conversation {conversation_id!r}")
            return message_id

        return self._retrying(insert, write=True)

    def messages(self, conversation_id: str) -> list[dict]:
        """Oldest first: id, role, content, result (the parsed result_json, or None), created_at."""
        out = []
        for row in self._stored_messages(conversation_id):
            item = dict(row)
            raw = item.pop("result_json")
            try:
                item["result"] = json.loads(raw) if raw else None
            except ValueError:
                item["result"] = None
            out.append(item)
        return out

    def _stored_messages(self, conversation_id: str) -> list[dict]:
        """Oldest first, as stored (result_json unparsed)."""
        if not valid_id(conversation_id):
            return []
        return [dict(r) for r in self._retrying(lambda db: db.execute(
            "SELECT id, role, content, result_json, created_at FROM messages WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        ).fetchall())]

    def copy_from(self, source: "ConversationStore") -> dict:
        """Every conversation of `source` (each author's) that this store lacks, with its messages as stored, each
        conversation in one transaction; one it has already is left as it is (it may have gone on here), so
        copying again adds nothing. Returns counts: copied, present, messages."""
        done = {"copied": 0, "present": 0, "messages": 0}
        for conv in reversed(source.list()):  # oldest first: the copies' message ids keep the original order
            stored = source._stored_messages(conv["id"])
            if self._retrying(lambda db, conv=conv, stored=stored: _copy_conversation(db, conv, stored), write=True):
                done["copied"] += 1
                done["messages"] += len(stored)
            else:
                done["present"] += 1
        return done


def _insert_conversation(db, conv: dict) -> bool:
    """Insert `conv` unless its id is stored (also by a writer at the same moment); True when it was inserted.
    One statement: SQLite's writer does not wait inside Python (see the module docstring)."""
    return db.execute(
        "INSERT INTO conversations (id, title, created_at, updated_at, author) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (id) DO NOTHING",
        (conv["id"], conv["title"], conv["created_at"], conv["updated_at"], conv.get("author") or SHARED),
    ).rowcount == 1


def _insert_message(db, conversation_id: str, role: str, content: str, payload: str | None, created_at: str):
    """The new message's id, or None when there is no such conversation (one statement, as above)."""
    served = isinstance(db, QmarkConnection)  # the server says the new id with RETURNING, SQLite as lastrowid
    cur = db.execute(
        "INSERT INTO messages (conversation_id, role, content, result_json, created_at) "
        "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM conversations WHERE id = ?)" + (" RETURNING id" if served else ""),
        (conversation_id, role, content, payload, created_at, conversation_id),
    )
    if cur.rowcount != 1:
        return None
    return int(cur.fetchone()["id"] if served else cur.lastrowid)


def _copy_conversation(db, conv: dict, messages: list[dict]) -> bool:
    """One conversation and its messages as stored, unless its id is here already, in one transaction (the one
    write of several statements: a copy, not a chat); True when copied."""
    if isinstance(db, sqlite3.Connection):
        db.execute("BEGIN IMMEDIATE")  # the served operation is one transaction already
    try:
        copied = _insert_conversation(db, conv)
        if copied:
            for m in messages:
                _insert_message(db, conv["id"], m["role"], m["content"], m["result_json"], m["created_at"])
            db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (conv["updated_at"], conv["id"]))
    except BaseException:
        if isinstance(db, sqlite3.Connection):
            db.execute("ROLLBACK")
        raise
    if isinstance(db, sqlite3.Connection):
        db.execute("COMMIT")
    return copied


# --------------------------------------------------------------------------------------------------------------
# Export


@dataclass(frozen=True)
class Escaper:
    """How untrusted text enters the export (ui.text.EXPORT_ESCAPER, the page's own rules). Every function takes
    untrusted text and returns Markdown that renders it as text: `block` for an answer or a question (words,
    figures and lists render; links, images, HTML, formulas do not), `inline` for one literal line (a name, a
    ticker, a label), `code` for an inline code span, `url` the address itself when it is a plain https URL fit to
    link, else None."""

    block: Callable[[str], str]
    inline: Callable[[str], str]
    code: Callable[[str], str]
    url: Callable[[str], str | None]


def _quote(text: str, escape: Escaper, limit: int = 1200) -> str:
    """A cited passage as a block quote, each line literal (its text can open no heading, list, link or tag)."""
    body = (text or "").strip()
    if len(body) > limit:
        body = body[:limit].rstrip() + " …"
    return "\n".join("> " + escape.inline(line) if line.strip() else ">" for line in body.splitlines())


def to_markdown(conversation: dict, messages: list[dict], *, escape: Escaper) -> str:
    """The conversation as Markdown: each question, each answer as written, and under it the passages it cites
    (company, form, fiscal period, Item, page, link: rag.schema.citation_label) with their text quoted. Everything
    that did not come from the app (the title, questions, answers, names, labels, passages, addresses) goes
    through `escape`, as on the page: the file renders as text in any Markdown reader and fetches nothing."""
    lines = [f"# {escape.inline(conversation.get('title') or 'Conversation')}", ""]
    started = str(conversation.get("created_at") or "")[:16].replace("T", " ")
    lines.append(f"Exported {_now()[:16].replace('T', ' ')} UTC from the SEC filings workbench."
                 + (f" Started {started} UTC." if _STAMP.fullmatch(started) else ""))  # the store's own time only
    lines.append("")
    for msg in messages:
        if msg["role"] == "user":
            lines += ["---", "", f"## Q: {escape.inline(msg['content'])}", ""]
            continue
        result = msg.get("result") or {}
        lines += [escape.block(msg["content"].strip()), ""]
        facts = []
        if result.get("detected", {}).get("label"):
            facts.append(f"Filters detected: {escape.inline(result['detected']['label'])}")
        if result.get("mode"):
            facts.append(f"retrieval: {escape.inline(result['mode'])}")
        if result.get("model"):
            facts.append(f"model: {escape.inline(result['model'])}")
        elif result.get("extractive"):
            facts.append("extractive answer (no language model)")
        if facts:
            lines += ["*" + " · ".join(facts) + "*", ""]
        for warning in result.get("warnings") or []:
            lines += [f"> **Warning:** {escape.inline(warning)}", ""]
        cited = result.get("citations") or []
        if cited:
            lines += ["**Citations**", ""]
            for c in cited:
                head = f"**\\[{escape.inline(str(c.get('number')))}\\]** {escape.inline(citation_label(c))}"
                url = escape.url(c.get("url"))
                if url:
                    head += f" — <{url}>"
                elif c.get("url") or c.get("source"):
                    head += f" — {escape.code(c.get('url') or c.get('source'))}"
                lines += [head, "", _quote(c.get("text") or "", escape), ""]
    return "\n".join(lines).rstrip() + "\n"
