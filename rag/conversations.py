"""Chat conversations, kept in SQLite so they survive reloads and restarts.

    store = ConversationStore(settings.db_path)
    conv = store.create("What were Acme's net sales in FY2024?")
    store.add_message(conv["id"], "user", "What were Acme's net sales in FY2024?")
    store.add_message(conv["id"], "assistant", result.answer, result=result.to_dict())
    store.list()                      # newest first
    store.messages(conv["id"])        # oldest first, each with its parsed `result`
    to_markdown(conv, messages)       # an export with every citation

The schema is plain SQL a served database (PostgreSQL, MySQL) can take over unchanged in meaning:

    conversations(id TEXT PRIMARY KEY, title TEXT, created_at TEXT, updated_at TEXT)
    messages(id INTEGER PRIMARY KEY, conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
             role TEXT, content TEXT, result_json TEXT, created_at TEXT)

Ids of conversations are random hex strings (safe in a URL, unguessable, and free of any per-database sequence);
times are ISO 8601 in UTC. One connection per operation, WAL journal, a busy timeout: two app sessions (or the app
and a script) can write at once. This module imports no streamlit.
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from contextlib import closing, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from .schema import citation_label

SCHEMA_VERSION = 1
ROLES = ("user", "assistant")
TITLE_CHARS = 80

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
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
"""

_ID_RE = re.compile(r"^[0-9a-f]{32}$")


class ConversationError(RuntimeError):
    """A conversation operation a user should read about (unknown id, bad role)."""


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
    def __init__(self, db_path: str | Path):
        self.db_path = Path(db_path)
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One connection per operation, committed on success, rolled back on error, always closed."""
        with closing(sqlite3.connect(self.db_path, timeout=15.0)) as db:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA busy_timeout=15000")
            with db:
                yield db

    # ---- conversations
    def create(self, title: str = "") -> dict:
        now = _now()
        conv = {"id": uuid.uuid4().hex, "title": make_title(title), "created_at": now, "updated_at": now}
        with self._connect() as db:
            db.execute(
                "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (conv["id"], conv["title"], conv["created_at"], conv["updated_at"]),
            )
        return conv

    def get(self, conversation_id: str) -> dict | None:
        if not valid_id(conversation_id):
            return None
        with self._connect() as db:
            row = db.execute(
                "SELECT id, title, created_at, updated_at FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
        return dict(row) if row else None

    def list(self, limit: int | None = None) -> list[dict]:
        """Newest activity first, each with its number of messages."""
        sql = (
            "SELECT c.id, c.title, c.created_at, c.updated_at, "
            "(SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) AS messages "
            "FROM conversations c ORDER BY c.updated_at DESC, c.created_at DESC"
        )
        params: tuple = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (int(limit),)
        with self._connect() as db:
            return [dict(r) for r in db.execute(sql, params).fetchall()]

    def delete(self, conversation_id: str) -> bool:
        with self._connect() as db:
            cur = db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
            return cur.rowcount > 0

    # ---- messages
    def add_message(self, conversation_id: str, role: str, content: str, result: dict | None = None) -> int:
        if role not in ROLES:
            raise ConversationError(f"role must be one of {ROLES}, not {role!r}")
        now = _now()
        payload = json.dumps(result, ensure_ascii=False, default=str) if result is not None else None
        with self._connect() as db:
            exists = db.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
            if not exists:
                raise ConversationError(f"no conversation {conversation_id!r}")
            cur = db.execute(
                "INSERT INTO messages (conversation_id, role, content, result_json, created_at) VALUES (?, ?, ?, ?, ?)",
                (conversation_id, role, content or "", payload, now),
            )
            db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))
            return int(cur.lastrowid)

    def messages(self, conversation_id: str) -> list[dict]:
        """Oldest first: id, role, content, result (the parsed result_json, or None), created_at."""
        if not valid_id(conversation_id):
            return []
        with self._connect() as db:
            rows = db.execute(
                "SELECT id, role, content, result_json, created_at FROM messages WHERE conversation_id = ? "
                "ORDER BY id",
                (conversation_id,),
            ).fetchall()
        out = []
        for row in rows:
            item = dict(row)
            raw = item.pop("result_json")
            try:
                item["result"] = json.loads(raw) if raw else None
            except ValueError:
                item["result"] = None
            out.append(item)
        return out


# --------------------------------------------------------------------------------------------------------------
# Export


def _quote(text: str, limit: int = 1200) -> str:
    body = (text or "").strip()
    if len(body) > limit:
        body = body[:limit].rstrip() + " …"
    return "\n".join("> " + line if line.strip() else ">" for line in body.splitlines())


def to_markdown(conversation: dict, messages: list[dict]) -> str:
    """The conversation as Markdown: each question, each answer as written, and under it the passages it cites
    (company, form, fiscal period, Item, page, link: rag.schema.citation_label) with their text quoted."""
    lines = [f"# {conversation.get('title') or 'Conversation'}", ""]
    lines.append(f"Exported {_now()[:16].replace('T', ' ')} UTC from the SEC filings workbench. "
                 f"Started {str(conversation.get('created_at', ''))[:16].replace('T', ' ')} UTC.")
    lines.append("")
    for msg in messages:
        if msg["role"] == "user":
            lines += ["---", "", f"## Q: {msg['content'].strip()}", ""]
            continue
        result = msg.get("result") or {}
        lines += [msg["content"].strip(), ""]
        facts = []
        if result.get("detected", {}).get("label"):
            facts.append(f"Filters detected: {result['detected']['label']}")
        if result.get("mode"):
            facts.append(f"retrieval: {result['mode']}")
        if result.get("model"):
            facts.append(f"model: {result['model']}")
        elif result.get("extractive"):
            facts.append("extractive answer (no language model)")
        if facts:
            lines += ["*" + " · ".join(facts) + "*", ""]
        for warning in result.get("warnings") or []:
            lines += [f"> **Warning:** {warning}", ""]
        cited = result.get("citations") or []
        if cited:
            lines += ["**Citations**", ""]
            for c in cited:
                head = f"**[{c.get('number')}]** {citation_label(c)}"
                if c.get("url"):
                    head += f" — <{c['url']}>"
                elif c.get("source"):
                    head += f" — `{c['source']}`"
                lines += [head, "", _quote(c.get("text") or ""), ""]
    return "\n".join(lines).rstrip() + "\n"
