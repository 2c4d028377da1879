"""The chat's history, whatever the conversation store does: degrade, don't die.

The store (rag/conversations.py) retries a write while another process holds the database; past that, or with the
file corrupt, read-only or unopenable, it raises StoreUnavailable. Then the chat still answers: what could not be
saved waits in this session's outbox (shown in the chat like any message), a warning names the file and what to
do, and every later run tries the outbox again, in order, so once the file is fixed each question and answer is
stored exactly once.
"""

from __future__ import annotations

import logging
import time
import uuid
from datetime import datetime, timezone

import streamlit as st

from rag.conversations import StoreUnavailable, make_title, valid_id

from . import core
from .safe import md

log = logging.getLogger(__name__)

K_OUTBOX = "history_outbox"  # conversation id -> {"conv": conv, "messages": [...]}, in the order written
K_PROBLEM = "history_problem"  # the last StoreUnavailable's message, while the outbox waits or the store fails
K_NEXT_ID = "history_next_id"  # ids of unsaved messages count down from -1 (stored ones are positive)
K_LOCKED_AT = "history_locked_at"  # when the store was last found locked by another program (time.monotonic())
RETRY_AFTER_S = 15.0  # a locked store costs a write its whole patience: the outbox is retried this often, not per run


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _outbox() -> dict:
    return st.session_state.setdefault(K_OUTBOX, {})


def _failed(exc: StoreUnavailable) -> None:
    if exc.kind == "locked":
        st.session_state[K_LOCKED_AT] = time.monotonic()
    if st.session_state.get(K_PROBLEM) != str(exc):
        log.warning("%s", exc)
    st.session_state[K_PROBLEM] = str(exc)


def _store(s=None):
    """The store, or None (the reason kept for the banner) when it cannot be opened."""
    try:
        return core.conversations(s)
    except StoreUnavailable as exc:
        _failed(exc)
        return None


def problem() -> str | None:
    """Why history is not being saved now, or None."""
    return st.session_state.get(K_PROBLEM)


def unsaved_count() -> int:
    return sum(len(item["messages"]) for item in _outbox().values())


def flush(s=None) -> bool:
    """Try the outbox again, oldest first; True when nothing waits any more."""
    box = _outbox()
    if box and time.monotonic() - st.session_state.get(K_LOCKED_AT, -RETRY_AFTER_S) < RETRY_AFTER_S:
        return False
    store = _store(s)
    if store is None:
        return not box
    try:
        for cid in list(box):
            item = box[cid]
            if not item.get("stored"):
                store.create(item["conv"]["title"], conversation_id=cid, author=item["conv"].get("author", ""))
                item["stored"] = True
            while item["messages"]:
                msg = item["messages"][0]
                store.add_message(cid, msg["role"], msg["content"], msg.get("result"))
                item["messages"].pop(0)  # only after it is stored: a failure leaves it for the next try
            del box[cid]
    except StoreUnavailable as exc:
        _failed(exc)
        return False
    st.session_state.pop(K_PROBLEM, None)
    return True


def list_conversations(s=None) -> list[dict]:
    """Newest first: the store's (the user's own and the shared workspace's, see core.author), and this session's
    not yet saved."""
    store = _store(s)
    stored = []
    if store is not None:
        try:
            stored = store.list(author=core.author())
        except StoreUnavailable as exc:
            _failed(exc)
    ids = {c["id"] for c in stored}
    waiting = [{**item["conv"], "messages": len(item["messages"])} for cid, item in reversed(_outbox().items())
               if cid not in ids]
    return waiting + stored


def get(conversation_id: str | None, s=None) -> dict | None:
    if not valid_id(conversation_id):
        return None
    item = _outbox().get(conversation_id)
    store = _store(s)
    if store is not None:
        try:
            conv = store.get(conversation_id)
            if conv is not None:
                return conv
        except StoreUnavailable as exc:
            _failed(exc)
    return item["conv"] if item else None


def messages(conversation_id: str | None, s=None) -> list[dict]:
    """Oldest first: the stored messages, then those waiting to be saved."""
    if not valid_id(conversation_id):
        return []
    out: list[dict] = []
    store = _store(s)
    if store is not None:
        try:
            out = store.messages(conversation_id)
        except StoreUnavailable as exc:
            _failed(exc)
    item = _outbox().get(conversation_id)
    return out + list(item["messages"]) if item else out


def create(question: str, s=None) -> dict:
    """A new conversation, stored, or kept in the outbox when the store cannot take it."""
    store = _store(s)
    if store is not None:
        try:
            return store.create(question, author=core.author())
        except StoreUnavailable as exc:
            _failed(exc)
    now = _now()
    conv = {"id": uuid.uuid4().hex, "title": make_title(question), "created_at": now, "updated_at": now,
            "author": core.author()}
    _outbox()[conv["id"]] = {"conv": conv, "messages": []}
    return conv


def add(conversation_id: str, role: str, content: str, result: dict | None = None, s=None) -> bool:
    """Store a message (True), or keep it in the outbox, after any older one of its conversation (False)."""
    box = _outbox()
    if conversation_id not in box:
        store = _store(s)
        if store is not None:
            try:
                store.add_message(conversation_id, role, content, result)
                return True
            except StoreUnavailable as exc:
                _failed(exc)
        conv = get(conversation_id, s) or {"id": conversation_id, "title": make_title(content)}
        box[conversation_id] = {"conv": conv, "messages": [], "stored": True}
    next_id = st.session_state.get(K_NEXT_ID, -1)
    st.session_state[K_NEXT_ID] = next_id - 1
    box[conversation_id]["messages"].append({"id": next_id, "role": role, "content": content, "result": result,
                                             "created_at": _now(), "unsaved": True})
    return False


def delete(conversation_id: str, s=None) -> bool:
    gone = _outbox().pop(conversation_id, None) is not None
    store = _store(s)
    if store is not None:
        try:
            gone = store.delete(conversation_id) or gone
        except StoreUnavailable as exc:
            _failed(exc)
    return gone


def banner() -> None:
    """The warning the chat shows while history is not being saved: the file, why, what to do."""
    why = problem()
    if not why:
        return
    waiting = unsaved_count()
    kept = (md(" {} message{} of this session wait here and are saved as soon as the history can be written.",
               waiting, "s" if waiting != 1 else "") if waiting else md(""))
    st.warning(md("**History is not being saved.** Answers still come from the indexed filings. {}", why) + kept,
               icon=":material/history_toggle_off:")
