"""`python -m rag migrate --to postgresql://...` (rag/migrate.py): an embedded store's index, facts and conversations
copied into a real PostgreSQL, compared row for row, and copied again without doubling anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rag.__main__ import main
from rag.config import get_settings
from rag.conversations import SHARED, ConversationStore
from rag.database import connect
from rag.facts import FactStore
from rag.index import IndexStore
from tests.filings import ACME, BOLT, store_facts, write_filing
from tests.filings import SHARED as SHARED_FOLDER

ROOT = Path(__file__).resolve().parents[1]
REAL_FILING = SHARED_FOLDER / "corpus" / "filings" / "AAPL" / "aapl-20240928.htm"  # thousands of facts, when there


@pytest.fixture
def embedded(tmp_path, monkeypatch):
    """A storage folder as the app leaves it: the XBRL facts of two generated filings and of a real 10-K from the
    shared corpus when it is there (parsed and chunked as the index does), and three conversations, one of them
    signed by a user."""
    monkeypatch.delenv("RAG_DATABASE_URL", raising=False)
    settings = get_settings(storage_dir=tmp_path / "storage")
    facts = FactStore.for_settings(settings)
    chunker = IndexStore(settings).chunker()
    for name, fields in (("acme.htm", ACME), ("acme-2023.htm", {**ACME, "fiscal_year": 2023,
                                                                  "period_end": "2023-09-30"})):
        store_facts(facts, chunker, write_filing(tmp_path / "in", name, **fields), {})
    if REAL_FILING.exists():
        store_facts(facts, chunker, REAL_FILING, {})
    chats = ConversationStore(settings.db_path)
    for n, author in enumerate((SHARED, "ana@example.com", SHARED)):
        conv = chats.create(f"question {n}", author=author)
        chats.add_message(conv["id"], "user", f"question {n}")
        chats.add_message(conv["id"], "assistant", f"answer {n} [1]", result={"citations": [{"number": 1}]})
    return settings, facts, chats


def _messages(store: ConversationStore, conversation_id: str) -> list[tuple]:
    """A conversation's messages without their ids (each database numbers its own)."""
    return [(m["role"], m["content"], m["result"], m["created_at"]) for m in store.messages(conversation_id)]


def test_migrate_copies_facts_and_conversations_and_copying_again_adds_nothing(embedded, pg_url, capsys):
    settings, facts, chats = embedded
    filings = len(facts.filings())
    assert filings >= 2 and facts.count() >= 20

    assert main(["migrate", "--to", pg_url, "--storage", str(settings.storage_dir)]) == 0
    out = capsys.readouterr().out
    assert f"facts: {filings} filings, {facts.count()} facts copied" in out
    assert "conversations: 3 copied with 6 messages, 0 already there" in out

    served_facts = FactStore(database_url=pg_url)
    assert served_facts.filings() == facts.filings()  # every column of every filing, in the same order
    assert served_facts.count() == facts.count()
    for filing in facts.filings():
        assert served_facts.facts(filing["doc_id"]) == facts.facts(filing["doc_id"])
    doc_id = max(facts.filings(), key=lambda f: f["fact_count"])["doc_id"]
    sample = [r for r in facts.facts(doc_id) if r.value is not None and r.chunk_id][-1]
    assert sample in served_facts.facts(doc_id, [sample.concept])  # value, period, dimensions, cited chunk kept

    served_chats = ConversationStore(database_url=pg_url)
    assert served_chats.list() == chats.list()  # ids, titles, authors, times and message counts
    for conv in chats.list():
        assert _messages(served_chats, conv["id"]) == _messages(chats, conv["id"])
    assert len(served_chats.list(author="bob@example.com")) == 2  # the shared workspace's, as before

    # A conversation that went on in the database is kept as it is there; a second copy doubles nothing.
    served_chats.add_message(chats.list()[0]["id"], "user", "asked on the server")
    assert main(["migrate", "--to", pg_url, "--storage", str(settings.storage_dir)]) == 0
    out = capsys.readouterr().out
    assert "conversations: 0 copied with 0 messages, 3 already there" in out
    assert served_facts.count() == facts.count() and len(served_facts.filings()) == filings
    assert [m["content"] for m in served_chats.messages(chats.list()[0]["id"])][-1] == "asked on the server"


def test_migrate_to_a_bad_address_says_so_and_copies_nothing(embedded, tmp_path, capsys):
    settings, _facts, _chats = embedded
    for url, said in ((f"postgresql://ana:s3cret@/rag?host={tmp_path}&port=1", "cannot copy into postgresql://ana:***@"),
                      ("mysql://ana@db.example/rag", "must start with postgresql://")):
        assert main(["migrate", "--to", url, "--storage", str(settings.storage_dir)]) == 1
        err = capsys.readouterr().err
        assert said in err and "s3cret" not in err and "nothing was copied" in err


def _rag(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rag", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def test_migrate_copies_the_index_with_its_vectors_and_rag_list_shows_the_same_filings(tmp_path, pg_url):
    """The CLI as an analyst runs it: index on the laptop, copy it over, list both; the copy moves the vectors
    (the same numbers, nothing embedded again) and a second copy leaves the database as it was."""
    env = {k: v for k, v in os.environ.items() if k != "RAG_DATABASE_URL"}
    env["RAG_STORAGE_DIR"] = str(tmp_path / "storage")
    write_filing(tmp_path / "in", "acme.htm", **ACME)
    write_filing(tmp_path / "in", "bolt.htm", **BOLT)
    indexed = _rag(["index", str(tmp_path / "in")], env)
    assert indexed.returncode == 0, indexed.stderr

    copied = _rag(["migrate", "--to", pg_url], env)
    assert copied.returncode == 0, copied.stderr
    assert "index: 2 filings copied with their vectors, 0 already there" in copied.stdout
    assert copied.stdout.index("index:") < copied.stdout.index("facts:")  # facts cite chunks the index copied

    embedded = json.loads(_rag(["list", "--json"], env).stdout)
    served = json.loads(_rag(["list", "--json"], {**env, "RAG_DATABASE_URL": pg_url}).stdout)
    assert [(f["ticker"], f["fiscal_year"]) for f in embedded] == [("ACME", 2024), ("BOLT", 2023)]
    assert [f.pop("shard") for f in served] == [None, None]  # the embedded store's folder for a filing's files
    assert served == [{k: v for k, v in f.items() if k != "shard"} for f in embedded]  # chunk counts included

    local = IndexStore(get_settings(storage_dir=tmp_path / "storage", database_url="")).load()
    with connect(pg_url) as conn:
        rows = conn.execute("SELECT node_id, embedding::text FROM rag_chunks").fetchall()
    assert len(rows) == len(local)
    vectors = {node_id: np.array(json.loads(text)) for node_id, text in rows}
    for row in (0, len(local) - 1):
        node = local.nodes[row]
        assert np.allclose(vectors[node.node_id], local.vector_store.client.reconstruct(row), atol=1e-6)

    again = _rag(["migrate", "--to", pg_url], {**env, "RAG_DATABASE_URL": pg_url})  # as team mode's README has it
    assert again.returncode == 0, again.stderr
    assert "index: 0 filings copied with their vectors, 2 already there" in again.stdout
    assert json.loads(_rag(["list", "--json"], {**env, "RAG_DATABASE_URL": pg_url}).stdout) == [
        {**f, "shard": None} for f in served]
    with connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM rag_chunks").fetchone()[0] == len(local)
    # Each chunk's continuation in its filing is the same chunk in both stores, and a filing's last has none.
    served_index = IndexStore(get_settings(storage_dir=tmp_path / "storage", database_url=pg_url)).load()
    for row in (0, 1, len(local) - 2):
        own = local.nodes[row]
        following = local.following_chunk(own.node_id)
        assert following is not None and following.node_id == local.nodes[row + 1].node_id
        assert served_index.following_chunk(own.node_id).node_id == following.node_id
    assert local.following_chunk(local.nodes[-1].node_id) is None
    assert served_index.following_chunk(local.nodes[-1].node_id) is None
