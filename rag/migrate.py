"""`python -m rag migrate --to postgresql://...`: the embedded store's contents copied into team mode's database.

One step per component, each a function (settings, url) -> counts that reads the embedded files under the
storage folder and writes the database through the component's own served store, so a copy is written as the
app writes; each can run again (a filing is replaced whole, a conversation already there is kept), so a copy cut
short is finished by running it again. The index goes first: a filing's facts cite its chunks by id, which the
copy keeps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .config import Settings
from .conversations import ConversationStore
from .database import DatabaseUnavailable, connect
from .facts import FactStore
from .facts.tables import DB_NAME

Step = Callable[[Settings, str], dict]


def migrate_index(settings: Settings, url: str) -> dict:
    """Every live filing of the embedded index with its chunks, vectors, text and sections (nothing is embedded
    again; see ServedIndexStore.copy_from); a filing the database holds with the same bytes is left as it is."""
    from .index import IndexStore, ServedIndexStore

    source = IndexStore(settings.with_overrides(database_url=""))
    filings = len(source.list_filings())
    copied = ServedIndexStore(settings.with_overrides(database_url=url)).copy_from(source) if filings else 0
    return {"filings": copied, "present": filings - copied}


def migrate_facts(settings: Settings, url: str) -> dict:
    """Every filing's row and XBRL facts from storage/facts.sqlite3, each filing in one transaction in place of
    what the database held for it (filings only the database holds stay)."""
    path = Path(settings.storage_dir) / DB_NAME
    done = {"filings": 0, "facts": 0}
    if not path.exists():
        return done
    source, target = FactStore(path), FactStore(database_url=url)
    for filing in source.filings():
        copied = target.copy_filing(source, filing["doc_id"])
        if copied is not None:
            done["filings"] += 1
            done["facts"] += copied
    return done


def migrate_conversations(settings: Settings, url: str) -> dict:
    """Every conversation (each author's) with its messages from storage/app.sqlite3; see ConversationStore.copy_from."""
    if not Path(settings.db_path).exists():
        return {"copied": 0, "present": 0, "messages": 0}
    return ConversationStore(database_url=url).copy_from(ConversationStore(settings.db_path))


STEPS: list[tuple[str, Step]] = [("index", migrate_index), ("facts", migrate_facts), ("conversations", migrate_conversations)]


def check_target(url: str) -> None:
    """DatabaseUnavailable, saying why, unless `url` is a PostgreSQL that answers."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise DatabaseUnavailable(url, "the address must start with postgresql://")
    connect(url, timeout_s=5).close()


def migrate(settings: Settings, url: str, *, steps: list[tuple[str, Step]] | None = None,
            report: Callable[[str, dict], None] | None = None) -> dict[str, dict]:
    """Run each step (all of STEPS by default) into the database at `url`; returns each one's counts."""
    check_target(url)
    done = {}
    for name, step in steps if steps is not None else STEPS:
        done[name] = step(settings, url)
        if report is not None:
            report(name, done[name])
    return done
