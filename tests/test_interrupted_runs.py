"""A writer killed at any point leaves nothing behind: no facts of filings its index never published, no
temporaries, no half-built generation; the next writer clears what is left and the index loads."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rag.config import get_settings
from rag.facts import FactStore
from rag.facts.tables import SCHEMA
from rag.index import IndexStore
from tests.filings import ACME, BOLT, write_filing

ROOT = Path(__file__).resolve().parents[1]

# Runs one indexing run in its own process and kills it with SIGKILL (kill -9: no clean-up runs) when it reaches
# the IndexStore step named by argv[2].
KILLED_RUN = """
import os, signal, sys
from pathlib import Path
from rag.config import get_settings
from rag.index import IndexStore

storage, step, *paths = sys.argv[1:]
setattr(IndexStore, step, lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL))
IndexStore(get_settings(storage_dir=Path(storage))).add(paths)
"""


def _killed_run(storage: Path, step: str, *paths: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", KILLED_RUN, str(storage), step, *map(str, paths)], cwd=ROOT,
                          env=os.environ.copy(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]


def _staged(storage: Path) -> list[str]:
    with sqlite3.connect(storage / "facts.sqlite3") as con:
        return [r[0] for r in con.execute("SELECT doc_id FROM pending_filings")]


@pytest.fixture
def indexed(tmp_path):
    """A storage folder with ACME indexed, its store, and BOLT's file (not indexed)."""
    storage = tmp_path / "storage"
    store = IndexStore(get_settings(storage_dir=storage, data_dir=tmp_path / "data"))
    store.add([write_filing(tmp_path / "in", "acme.htm", **ACME)])
    return storage, store, write_filing(tmp_path / "in", "bolt.htm", **BOLT)


def _tickers(facts: FactStore) -> set[str]:
    return {f["ticker"] for f in facts.filings()}


def test_facts_of_a_run_killed_before_it_published_are_never_read_and_then_dropped(indexed):
    storage, store, bolt = indexed
    facts = FactStore.for_settings(store.settings)
    before = store.load()
    _killed_run(storage, "_publish", bolt)  # BOLT parsed, embedded, its facts recorded; nothing published

    assert store.load().generation == before.generation
    assert len(_staged(storage)) == 1  # the killed run did record BOLT's facts...
    assert _tickers(facts) == {"ACME"}  # ...where no reader looks
    assert facts.docs_with(["us-gaap:Revenues"], ["2023-12-31"]) == []

    store.add([])  # the next writer drops them
    assert _staged(storage) == []
    assert _tickers(facts) == {"ACME"}
    report = store.add([bolt])  # and indexing BOLT again publishes index and facts together
    assert report.rows[0]["status"] == "indexed"
    assert _tickers(facts) == {f["ticker"] for f in store.list_filings()} == {"ACME", "BOLT"}
    assert _staged(storage) == []


def test_facts_of_a_run_killed_right_after_it_published_are_published_by_the_next_writer(indexed):
    storage, store, bolt = indexed
    facts = FactStore.for_settings(store.settings)
    _killed_run(storage, "_facts_publish", bolt)  # CURRENT names the new generation; facts still staged

    assert {f["ticker"] for f in store.list_filings()} == {"ACME", "BOLT"}
    assert _tickers(facts) == {"ACME"}
    store.add([])
    assert _tickers(facts) == {"ACME", "BOLT"}
    bolt_id = next(doc_id for doc_id, f in store.load().filings.items() if f["ticker"] == "BOLT")
    assert facts.count(bolt_id) > 0 and _staged(storage) == []


def test_next_writer_removes_every_temporary_a_killed_writer_can_leave(indexed):
    storage, store, _ = indexed
    root = storage / "index"
    live = store.load()
    live_shard = next(iter(live.filings.values()))["shard"]
    leftovers = [
        root / ".CURRENT.0123456789abcdef.tmp",  # _write_text_atomic of CURRENT
        root / "shards" / live_shard / ".nodes.jsonl.0123456789abcdef.tmp",  # ... of a shard's nodes (correction)
        root / "shards" / ".tmp-0123456789abcdef-deadbeef" / "nodes.jsonl",  # a shard being built
        root / "generations" / f".tmp-{live.generation}x" / "nodes.jsonl",  # a generation being built
        root / "generations" / "29991231-235959-000000abcd" / "manifest.json",  # built, CURRENT never switched
    ]
    for path in leftovers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("left by a killed writer")
    cached = root / "shards" / "0123456789abcdef-cachedshrd"  # a complete shard of an unpublished run
    cached.mkdir()
    (cached / "vectors.npy").write_bytes(b"")

    assert not store.add([]).changed  # any writer clears them first
    for path in leftovers:
        assert not path.exists(), path
    assert not (root / "generations" / "29991231-235959-000000abcd").exists()
    assert cached.is_dir()  # not a temporary: the next run reuses its vectors instead of embedding again
    after = store.load()
    assert after.generation == live.generation and len(after) == len(live) == after.vector_store.client.ntotal
    assert (root / "CURRENT").read_text().strip() == live.generation


def test_next_writer_drops_facts_of_filings_the_index_does_not_hold_and_applies_published_corrections(indexed,
                                                                                                      monkeypatch):
    storage, store, _ = indexed
    facts = FactStore.for_settings(store.settings)
    acme_id = next(iter(store.load().filings))
    # What older versions could leave: facts of a filing whose run never published, written straight in.
    facts.add_filing({"doc_id": "local-ghost", "ticker": "GHST", "form": "10-K", "fiscal_year": 2024}, [])
    # A correction killed after the index published it, before the facts' row got it.
    monkeypatch.setattr(IndexStore, "_facts_update", lambda self, doc_id, fields: None)
    store.update_filing(acme_id, {"company": "Acme Gadgets Inc.", "fiscal_year": 2025})
    assert facts.filing(acme_id)["company"] == "Acme Widgets Inc."
    monkeypatch.undo()

    store.add([])
    assert [f["doc_id"] for f in facts.filings()] == [acme_id]
    row = facts.filing(acme_id)
    assert (row["company"], row["fiscal_year"], row["fiscal_year_source"]) == ("Acme Gadgets Inc.", 2025, "user")
    assert facts.count(acme_id) > 0


def test_a_fact_store_made_before_staging_loads_and_stages(tmp_path):
    path = tmp_path / "facts.sqlite3"
    with sqlite3.connect(path) as con:  # a version 2 store: no pending tables
        con.executescript(SCHEMA)
        con.execute("INSERT INTO filings (doc_id, ticker, fact_count) VALUES ('old', 'OLD', 0)")
    facts = FactStore(path)
    assert [f["ticker"] for f in facts.filings()] == ["OLD"]
    facts.add_filing({"doc_id": "new", "ticker": "NEW"}, [], run="run-1")
    assert [f["ticker"] for f in facts.filings()] == ["OLD"]
    assert facts.publish_run("run-1") == 1
    assert sorted(f["ticker"] for f in facts.filings()) == ["NEW", "OLD"]
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT value FROM schema_info WHERE key = 'version'").fetchone()[0] == "3"
