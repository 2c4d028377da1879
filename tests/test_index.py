"""The persisted hybrid index: chunking, metadata, incremental updates, removal, crash safety, locking."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from rag.config import get_settings
from rag.database import connect
from rag.index import NODE_META_KEYS, FilingVectorStore, IndexBusy, IndexStore, ServedIndexStore, open_store
from rag.index.chunking import _sentence_spans as sentence_spans
from rag.retrieve import Retriever
from rag.schema import Filters
from tests.filings import ACME, BOLT, write_filing

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(tmp_path):
    return IndexStore(get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data"))


@pytest.fixture(params=["embedded", "served"])
def any_store(request, tmp_path):
    """The store of each backend: files under a storage folder, or a PostgreSQL database (team mode)."""
    settings = get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data")
    if request.param == "served":
        settings = settings.with_overrides(database_url=request.getfixturevalue("pg_url"))
    return open_store(settings)


@pytest.fixture
def embed_calls(monkeypatch):
    """Counts the texts sent to the embedding model."""
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    calls = {"texts": 0}
    original = HuggingFaceEmbedding._get_text_embeddings

    def counting(self, texts):
        calls["texts"] += len(texts)
        return original(self, texts)

    monkeypatch.setattr(HuggingFaceEmbedding, "_get_text_embeddings", counting)
    return calls


def _keyword_hits(store, query, filters=None):
    index = store.load()
    retriever = Retriever(index, store.embed_model())
    return retriever.retrieve(query, mode="keyword", top_k=5, filters=filters, use_analysis=False).nodes


def test_chunks_fit_the_model_and_carry_metadata(any_store, tmp_path):
    store = any_store
    path = write_filing(tmp_path / "in", "acme.htm", **ACME, business_paragraphs=25, table_rows=80)
    report = store.add([path])
    assert report.rows[0]["status"] == "indexed", report.rows
    index = store.load()
    chunker = store.chunker()
    sizes = chunker.count([n.text for n in index.nodes])
    for node, size in zip(index.nodes, sizes):
        if node.metadata["statement"]:  # a primary statement's rows may run past what the embedder reads
            assert size <= store.settings.statement_chunk_tokens, node.text[:200]
        else:
            assert size <= 254, f"a chunk is longer than the embedder reads: {node.text[:200]}"
    # The statement opens its own chunk with its caption, and that chunk reaches rows far below the revenue line
    # (a margin's inputs are cited in one passage); the prose chunks stay within what the embedder reads.
    first = next(n.text for n in index.nodes if "Total net sales |" in n.text)
    assert "CONSOLIDATED STATEMENTS OF OPERATIONS" in first.split("Total net sales |")[0]
    assert "Other line 20" in first
    assert max(s for n, s in zip(index.nodes, sizes) if not n.metadata["statement"]) <= 200
    for node in index.nodes:
        assert set(NODE_META_KEYS) <= set(node.metadata)
        m = node.metadata
        assert m["ticker"] == "ACME" and m["fiscal_year"] == 2024 and m["form"] == "10-K"
        assert m["page_start"] <= m["page_end"]
        assert node.text.startswith("Acme Widgets Inc. (ACME) · 10-K · FY2024 · ")
        # The span points at the chunk's own text in the filing.
        text = index.filing_text(m["doc_id"])
        assert text[m["char_start"]:m["char_end"]] in node.text
    sections = [n.metadata["section"] for n in index.nodes]
    assert sections.index("Item 1") < sections.index("Item 1A") < sections.index("Item 7") < sections.index("Item 8")
    # The long table is split between rows, and a chunk that starts inside it repeats the years.
    table_chunks = [n.text for n in index.nodes if "Other line" in n.text]
    assert len(table_chunks) >= 2
    for chunk in table_chunks:
        assert "2024" in chunk.split("\n", 2)[1] or "2024 | 2023" in chunk.replace("$", ""), chunk[:200]


def test_unchanged_filing_costs_no_embedding_and_new_one_embeds_only_its_chunks(store, tmp_path, embed_calls):
    acme = write_filing(tmp_path / "in", "acme.htm", **ACME)
    store.add([acme])
    first = embed_calls["texts"]
    assert first > 0
    generation = store.current_generation()

    report = store.add([acme])
    assert embed_calls["texts"] == first, "re-indexing an unchanged filing embedded something"
    assert report.rows[0]["status"] == "skipped" and not report.changed
    assert store.current_generation() == generation

    bolt = write_filing(tmp_path / "in", "bolt.htm", **BOLT)
    report = store.add([acme, bolt])
    bolt_chunks = next(r["chunks"] for r in report.rows if r["file"].endswith("bolt.htm"))
    assert embed_calls["texts"] - first == bolt_chunks
    assert {f["ticker"] for f in store.list_filings()} == {"ACME", "BOLT"}


def test_chunker_change_re_embeds_only_changed_chunks(store, tmp_path, embed_calls, monkeypatch):
    """A new chunker version rebuilds every shard, but a chunk whose text is unchanged keeps its vector."""
    import rag.index.chunking as chunking

    acme = write_filing(tmp_path / "in", "acme.htm", **ACME, business_paragraphs=12)
    store.add([acme])
    before = {n.text: i for i, n in enumerate(store.load().nodes)}
    old_vectors = store.load().vector_store.client.reconstruct_n(0, len(before))
    calls = embed_calls["texts"]

    # The new chunker changes one Item's text only (as a chunker fix would).
    original_split = chunking.FilingChunker.split

    def split_v2(self, parsed, meta):
        chunks = original_split(self, parsed, meta)
        for chunk in chunks:
            if chunk["section"] == "Item 1A":
                chunk["text"] += " (revised)"
        return chunks

    monkeypatch.setattr(chunking.FilingChunker, "split", split_v2)
    monkeypatch.setattr(chunking, "CHUNKER_VERSION", chunking.CHUNKER_VERSION + "-test")
    report = store.add([acme])
    assert report.rows[0]["status"] == "indexed"
    index = store.load()
    changed = [n for n in index.nodes if n.text.endswith(" (revised)")]
    assert changed and len(changed) < len(index.nodes)
    assert embed_calls["texts"] - calls == len(changed), "unchanged chunks were embedded again"
    assert report.rows[0]["reused"] == len(index.nodes) - len(changed)
    vectors = index.vector_store.client.reconstruct_n(0, len(index))
    fresh = np.asarray(store.embed_model().get_text_embedding(changed[0].text), dtype="float32")
    for i, node in enumerate(index.nodes):
        if node.text in before:
            assert np.allclose(vectors[i], old_vectors[before[node.text]])
        elif node is changed[0]:
            assert np.allclose(vectors[i], fresh, atol=1e-5)
    # Only the new shard is left: the old one was read, then pruned.
    assert len(list((store.root / "shards").iterdir())) == 1


def test_remove_leaves_no_orphans(any_store, tmp_path):
    store = any_store
    acme = write_filing(tmp_path / "in", "acme.htm", **ACME)
    bolt = write_filing(tmp_path / "in", "bolt.htm", **BOLT)
    store.add([acme, bolt])
    before = store.load()
    acme_chunks = sum(1 for n in before.nodes if n.metadata["ticker"] == "ACME")
    assert any("quintaphonic" in n.node.text for n in _keyword_hits(store, "quintaphonic drivetrain"))

    removed = store.remove([str(bolt)])
    assert len(removed) == 1
    after = store.load()
    assert len(after) == acme_chunks
    if not isinstance(store, ServedIndexStore):
        assert len(after) == after.vector_store.client.ntotal
    assert all(n.metadata["ticker"] == "ACME" for n in after.nodes)
    assert not any("quintaphonic" in n.node.text for n in _keyword_hits(store, "quintaphonic drivetrain"))
    dense = Retriever(after, store.embed_model()).retrieve(
        "quintaphonic drivetrain", mode="dense", top_k=50, use_analysis=False
    ).nodes
    assert dense and not any("quintaphonic" in n.node.text for n in dense)
    if isinstance(store, ServedIndexStore):
        with connect(store.url) as conn:
            assert conn.execute("SELECT count(*) FROM rag_chunks").fetchone() == (acme_chunks,)
    else:
        shards = list((store.root / "shards").iterdir())
        assert len(shards) == 1, "the removed filing's vectors are still on disk"

    # And by accession/doc id.
    assert store.remove([after.nodes[0].metadata["doc_id"]]) and len(store.load()) == 0


def test_filters_are_exact_and_return_k(any_store, tmp_path):
    store = any_store
    acme = write_filing(tmp_path / "in", "acme.htm", **ACME, business_paragraphs=12)
    bolt = write_filing(tmp_path / "in", "bolt.htm", **BOLT, business_paragraphs=12)
    store.add([acme, bolt])
    index = store.load()
    bolt_total = sum(1 for n in index.nodes if n.metadata["ticker"] == "BOLT")
    retriever = Retriever(index, store.embed_model())
    for mode in ("dense", "hybrid"):
        # The query is about Acme, but the filter says Bolt: only Bolt comes back, k of them.
        nodes = retriever.retrieve(
            "Acme zorblax coupler", mode=mode, top_k=6, filters=Filters(tickers=["BOLT"]), use_analysis=False
        ).nodes
        assert len(nodes) == min(6, bolt_total)
        assert {n.node.metadata["ticker"] for n in nodes} == {"BOLT"}
    nodes = retriever.retrieve("widgets", mode="keyword", top_k=4, filters=Filters(fiscal_years=[2024]),
                               use_analysis=False).nodes
    assert nodes and {n.node.metadata["fiscal_year"] for n in nodes} == {2024}


def _run_cli(args, env, **kwargs):
    return subprocess.Popen(
        [sys.executable, "-m", "rag", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, **kwargs,
    )


def _index_killed_while_embedding(path: Path, env: dict) -> None:
    """Run `rag index path` and kill it (SIGKILL) once it is embedding: parsed, not yet written or committed."""
    proc = _run_cli(["index", str(path)], env)
    deadline = time.time() + 240
    for line in proc.stderr:
        if "embedding" in line or time.time() > deadline:
            break
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_killed_indexing_run_leaves_previous_index_loadable(tmp_path):
    storage = tmp_path / "storage"
    env = {**os.environ, "RAG_STORAGE_DIR": str(storage), "RAG_DATA_DIR": str(tmp_path / "data")}
    acme = write_filing(tmp_path / "in", "acme.htm", **ACME)
    proc = _run_cli(["index", str(acme)], env)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    store = IndexStore(get_settings(storage_dir=storage))
    before = store.load()

    big = write_filing(tmp_path / "in", "bolt.htm", **BOLT, business_paragraphs=400)
    _index_killed_while_embedding(big, env)

    after = store.load()
    assert after.generation == before.generation
    assert len(after) == len(before) == after.vector_store.client.ntotal
    assert {n.metadata["ticker"] for n in after.nodes} == {"ACME"}
    # The next run finishes the job and cleans up what the killed one left.
    report = store.add([big])
    assert report.rows[0]["status"] == "indexed"
    assert {f["ticker"] for f in store.list_filings()} == {"ACME", "BOLT"}
    assert not list((storage / "index" / "shards").glob(".tmp-*"))
    assert not list((storage / "index" / "generations").glob(".tmp-*"))


def test_writers_are_serialised_and_readers_keep_reading(store, tmp_path):
    from filelock import FileLock

    acme = write_filing(tmp_path / "in", "acme.htm", **ACME)
    store.add([acme])
    bolt = write_filing(tmp_path / "in", "bolt.htm", **BOLT)
    with FileLock(str(store.root / ".writer.lock")):  # another writer holds the index
        with pytest.raises(IndexBusy):
            store.add([bolt], lock_timeout=0.5)
        assert len(store.load()) > 0  # readers are not blocked
    assert store.add([bolt]).changed


def test_cli_index_list_remove(tmp_path):
    env = {**os.environ, "RAG_STORAGE_DIR": str(tmp_path / "s")}
    acme = write_filing(tmp_path / "in", "acme.htm", **ACME)
    proc = _run_cli(["index", str(tmp_path / "in")], env)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "indexed" in out and "acme.htm" in out
    assert "%" in err  # progress is shown
    listing = subprocess.run([sys.executable, "-m", "rag", "list", "--json"], cwd=ROOT, env=env,
                             capture_output=True, text=True, check=True)
    filings = json.loads(listing.stdout)
    assert [(f["ticker"], f["form"], f["fiscal_year"]) for f in filings] == [("ACME", "10-K", 2024)]
    assert filings[0]["chunks"] > 0
    # --storage wins over the environment.
    other = subprocess.run([sys.executable, "-m", "rag", "list", "--storage", str(tmp_path / "empty")], cwd=ROOT,
                           env=env, capture_output=True, text=True, check=True)
    assert "empty" in other.stdout
    removed = subprocess.run([sys.executable, "-m", "rag", "remove", str(acme)], cwd=ROOT, env=env,
                             capture_output=True, text=True)
    assert removed.returncode == 0 and "removed" in removed.stdout
    missing = subprocess.run([sys.executable, "-m", "rag", "remove", "nope"], cwd=ROOT, env=env,
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "no indexed filing" in missing.stderr


# ---- The dense store (FilingVectorStore) behind LlamaIndex's vector-store interface


@pytest.fixture(scope="module")
def two_filings(tmp_path_factory):
    """ACME (FY2024) and BOLT (FY2023), indexed once for the vector-store tests."""
    tmp = tmp_path_factory.mktemp("two")
    store = IndexStore(get_settings(storage_dir=tmp / "storage", data_dir=tmp / "data"))
    store.add([write_filing(tmp / "in", "acme.htm", **ACME, business_paragraphs=12),
               write_filing(tmp / "in", "bolt.htm", **BOLT, business_paragraphs=12)])
    return store


def _own_vector_store(index):
    """A store of the test's own (deleting from a LoadedIndex's store would desync its keyword index)."""
    vectors = index.vector_store.client.reconstruct_n(0, len(index))
    return FilingVectorStore.from_vectors(index.nodes, vectors, vectors.shape[1]), vectors


def _query(store, embedding, k, **selection):
    return store.query(VectorStoreQuery(query_embedding=embedding, similarity_top_k=k, **selection))


def test_vector_store_filters_are_exact(two_filings):
    index = two_filings.load()
    embedding = two_filings.embed_model().get_query_embedding("Acme zorblax coupler")
    store, vectors = _own_vector_store(index)
    bolt = [i for i, n in enumerate(index.nodes) if n.metadata["ticker"] == "BOLT"]
    assert 0 < len(bolt) < len(index)

    # A subset holding k chunks gives k, nothing outside it, best first, scored as FAISS scores the whole index.
    ticker_is_bolt = MetadataFilters(filters=[MetadataFilter(key="ticker", value="bolt")])
    found = _query(store, embedding, len(bolt), filters=ticker_is_bolt)
    assert len(found.nodes) == len(bolt)
    assert {n.metadata["ticker"] for n in found.nodes} == {"BOLT"}
    expected = sorted(bolt, key=lambda i: -float(vectors[i] @ np.asarray(embedding, dtype="float32")))
    assert [n.node_id for n in found.nodes] == [index.nodes[i].node_id for i in expected]
    assert found.similarities == sorted(found.similarities, reverse=True)
    assert len(_query(store, embedding, len(bolt) + 5, filters=ticker_is_bolt).nodes) == len(bolt)

    # IN, AND/OR, doc_ids and node_ids select the same rows the index's own filter columns do.
    in_2023 = MetadataFilters(filters=[MetadataFilter(key="fiscal_year", value=[2023, 2022],
                                                      operator=FilterOperator.IN)])
    assert {n.node_id for n in _query(store, embedding, 1000, filters=in_2023).nodes} == {
        index.nodes[i].node_id for i in bolt}
    either = MetadataFilters(filters=[MetadataFilter(key="ticker", value="ACME"),
                                      MetadataFilter(key="fiscal_year", value=2023)], condition=FilterCondition.OR)
    assert len(_query(store, embedding, 1000, filters=either).nodes) == len(index)
    both = MetadataFilters(filters=[MetadataFilter(key="ticker", value="ACME"),
                                    MetadataFilter(key="fiscal_year", value=2023)])
    assert _query(store, embedding, 10, filters=both).nodes == []
    bolt_doc = index.nodes[bolt[0]].metadata["doc_id"]
    assert len(_query(store, embedding, 1000, doc_ids=[bolt_doc]).nodes) == len(bolt)
    risk_rows = index.subset(sections=["Item 1A"])
    picked = _query(store, embedding, 1000, **index.restriction(risk_rows)).nodes
    assert sorted(n.node_id for n in picked) == sorted(index.restriction(risk_rows)["node_ids"])

    # A filter the store cannot apply exactly is refused, not ignored.
    with pytest.raises(ValueError):
        _query(store, embedding, 5, filters=MetadataFilters(filters=[MetadataFilter(key="company", value="x")]))
    with pytest.raises(ValueError):
        _query(store, embedding, 5, filters=MetadataFilters(
            filters=[MetadataFilter(key="fiscal_year", value=2023, operator=FilterOperator.GT)]))


def test_vector_store_delete_by_filing_removes_its_vectors(two_filings):
    index = two_filings.load()
    store, vectors = _own_vector_store(index)
    embedding = two_filings.embed_model().get_query_embedding("quintaphonic drivetrain")
    bolt_doc = next(n.metadata["doc_id"] for n in index.nodes if n.metadata["ticker"] == "BOLT")
    acme_rows = [i for i, n in enumerate(index.nodes) if n.metadata["ticker"] == "ACME"]

    store.delete(bolt_doc)
    assert len(store) == store.client.ntotal == len(acme_rows)
    found = _query(store, embedding, 1000)
    assert len(found.nodes) == len(acme_rows) and {n.metadata["ticker"] for n in found.nodes} == {"ACME"}
    # Row i is still node i: each remaining vector is the one its node had.
    left = store.client.reconstruct_n(0, store.client.ntotal)
    for row, node in enumerate(store.nodes):
        assert np.array_equal(left[row], vectors[index.nodes.index(node)])
    assert _query(store, embedding, 5, doc_ids=[bolt_doc]).nodes == []
    store.delete(bolt_doc)  # deleting what is gone changes nothing
    assert len(store) == len(acme_rows)


def test_vector_store_serves_llamaindex_retrievers(two_filings):
    index = two_filings.load()
    embed_model = two_filings.embed_model()
    assert isinstance(index.vector_store, BasePydanticVectorStore)
    vector_index = VectorStoreIndex.from_vector_store(index.vector_store, embed_model=embed_model)
    retriever = vector_index.as_retriever(
        similarity_top_k=4, filters=MetadataFilters(filters=[MetadataFilter(key="ticker", value="BOLT")])
    )
    hits = retriever.retrieve("Which company builds the quintaphonic drivetrain?")
    assert len(hits) == 4 and {h.node.metadata["ticker"] for h in hits} == {"BOLT"}
    assert "quintaphonic" in hits[0].node.text
    # The engine's own dense search goes through the same store and agrees with it.
    ours = Retriever(index, embed_model).retrieve("Which company builds the quintaphonic drivetrain?", mode="dense",
                                                  top_k=4, filters=Filters(tickers=["BOLT"]), use_analysis=False)
    assert [n.node.node_id for n in ours.nodes][:1] == [hits[0].node.node_id]


def test_a_paragraph_too_long_for_one_chunk_breaks_between_sentences_only():
    # A person's initial and an abbreviation end no sentence: a chunk must not end at "Richard A." and start the next
    # one at "Gonzalez", which leaves each half without the sentence a question asks about.
    sentence = ("On July 1, 2024, Robert A. Michael, the president of the U.S. business, succeeded Richard A. Gonzalez "
                "as chief executive officer of Acme Widgets Inc. and joined the board.")
    closing = "The board also named a new chair for the holders of Class B. Each such sentence ends at its period."
    paragraph = " ".join([sentence] * 3 + [closing])
    pieces = [paragraph[a:b].strip() for a, b in sentence_spans(paragraph, 0, len(paragraph))]
    assert pieces == [sentence] * 3 + ["The board also named a new chair for the holders of Class B.",
                                       "Each such sentence ends at its period."]


def _parsed_prose(paragraphs: list[str]):
    from rag.parse import Block, ParsedFiling, Section

    text, blocks = "", []
    for paragraph in paragraphs:
        blocks.append(Block("text", len(text), len(text) + len(paragraph), 1, text=paragraph))
        text += paragraph + "\n\n"
    section = Section("Item 1A", "Risk Factors", 0, len(text), 1, 1)
    return ParsedFiling(text=text, blocks=blocks, sections=[section], page_starts=[0], meta={})


def _filler(topic: str, sentences: int) -> str:
    return " ".join(f"The company describes its {topic} in sentence number {i} with several further ordinary words."
                    for i in range(sentences))


def test_a_heading_or_lead_in_opens_the_passage_it_names_rather_than_ending_the_one_before(store):
    # A heading summarises its passage in the words a question uses. Packed greedily, it ended whichever chunk had
    # room (about a fifth of 10-K prose chunks ended on one), away from the passage it names; a lead-in whose
    # paragraph did not fit beside it stood alone as a chunk of one line.
    chunker = store.chunker()
    heading = "Intellectual Property"
    lead_in = "The company names the resellers it depends on in the paragraph that follows:"
    paragraphs = [_filler("markets", 9), heading, _filler("patents", 4), _filler("competition", 5), lead_in,
                  _filler("resellers", 10), _filler("suppliers", 2), _filler("lenders", 2)]
    parsed = _parsed_prose(paragraphs)
    chunks = chunker.split(parsed, {"ticker": "ACME", "form": "10-K", "fiscal_year": 2024})
    bodies = [c["text"].split("\n", 1)[1] for c in chunks]
    budget = chunker.chunk_tokens - chunker.count([chunks[0]["text"].split("\n", 1)[0]])[0] - 1
    size = dict(zip(paragraphs, chunker.count(paragraphs)))
    assert max(chunker.count([c["text"] for c in chunks])) <= chunker.chunk_tokens
    assert size[paragraphs[0]] + size[heading] + size[paragraphs[2]] > budget
    assert size[paragraphs[5]] <= budget < size[lead_in] + size[paragraphs[5]]  # the lead-in that stood alone

    opening_heading = next(b for b in bodies if heading in b)
    assert opening_heading.startswith(heading) and "patents in sentence number 0" in opening_heading
    opening_lead = next(b for b in bodies if lead_in in b)
    assert opening_lead.startswith(lead_in) and "resellers in sentence number 0" in opening_lead
    assert not any(b.rstrip().endswith((heading, lead_in)) for b in bodies)
    # Nothing is lost or repeated: the chunks hold the text in order.
    assert " ".join(" ".join(bodies).split()) == " ".join(" ".join(paragraphs).split())


def test_a_tables_header_lines_and_lead_in_open_the_chunk_that_holds_its_rows(store):
    # A note table whose caption sentence and header lines ended one chunk and whose rows opened the next left
    # neither chunk saying what its figures are ("... customers which represented 10% or more of total revenue ...
    # in the following table:", "| Year Ended" | then "Customer A | 12% | 11%").
    from rag.parse import Block, ParsedFiling, Section

    lead_in = "Sales to direct customers which represented ten percent or more of total revenue are in the following table:"
    head = "| Year Ended\n| Jan 26, 2025 | Jan 28, 2024"
    rows = "\n".join(f"Direct Customer {c}, buying through distributors and integrators | 1{i}% | 9%"
                     for i, c in enumerate("ABC"))
    filler = _filler("markets", 9)
    meta = {"ticker": "ACME", "form": "10-K", "fiscal_year": 2024}
    text, blocks = "", []
    for kind, body in (("text", filler), ("text", lead_in), ("table", f"{head}\n{rows}"), ("text", _filler("risks", 2))):
        blocks.append(Block(kind, len(text), len(text) + len(body), 1, text=body,
                            table_header=head if kind == "table" else ""))
        text += body + "\n\n"
    parsed = ParsedFiling(text=text, blocks=blocks, sections=[Section("Item 7", "MD&A", 0, len(text), 1, 1)],
                          page_starts=[0], meta={})
    chunker = store.chunker()
    budget = chunker.chunk_tokens - chunker.count([chunker.header(meta, parsed.sections[0])])[0] - 1
    first_row = rows.split("\n")[0]
    size = dict(zip([filler, lead_in, head, first_row], chunker.count([filler, lead_in, head, first_row])))
    # The caption and header fit after the prose; the first row does not.
    assert size[filler] + size[lead_in] + size[head] <= budget < sum(size.values())

    chunks = chunker.split(parsed, meta)
    bodies = [c["text"].split("\n", 1)[1] for c in chunks]
    holding_rows = next(b for b in bodies if "Direct Customer A" in b)
    assert holding_rows.startswith(lead_in) and "| Jan 26, 2025 | Jan 28, 2024" in holding_rows
    assert not any(b.rstrip().endswith(("Year Ended", "Jan 28, 2024")) for b in bodies)
    assert " ".join(" ".join(bodies).split()) == " ".join(text.split())


def test_a_chunk_opening_inside_a_row_group_names_the_group(store):
    # A product's worldwide total sits two rows below the row that names it ("Zentrix | United States | ..." over
    # "| International" and "| Total"): a chunk opening at those rows said nothing of the product they belong to.
    from rag.parse import Block, ParsedFiling, Section

    head = "| (in millions)\n| 2024 | 2023"
    groups = [(f"Product{chr(65 + i)}x", i) for i in range(14)]
    rows = "\n".join(f"{name} | United States | {100 + i:,} | {90 + i:,}\n| International | {10 + i} | {9 + i}\n"
                     f"| Total | {110 + 2 * i:,} | {99 + 2 * i:,}" for name, i in groups)
    meta = {"ticker": "ACME", "form": "10-K", "fiscal_year": 2024}
    body = f"{head}\n{rows}"
    blocks = [Block("table", 0, len(body), 1, text=body, table_header=head)]
    parsed = ParsedFiling(text=body + "\n", blocks=blocks, sections=[Section("Item 7", "MD&A", 0, len(body) + 1, 1, 1)],
                          page_starts=[0], meta={})
    chunks = [c["text"].split("\n", 1)[1] for c in store.chunker().split(parsed, meta)]
    assert len(chunks) >= 2
    names = {name for name, _ in groups}
    carried = 0
    for chunk in chunks[1:]:
        shown = chunk.split(head + "\n", 1)[-1].splitlines()
        # No chunk opens on a continued row ("| International") without its group's label before it.
        assert not shown[0].startswith("|"), chunk
        if shown[0] in names and shown[1].startswith("|"):
            carried += 1  # the label on its own line, then the group's continued rows
    # The split fell inside a group at least once (else this test tests nothing), and every chunk keeps its years.
    assert carried >= 1
    assert all("| 2024 | 2023" in c for c in chunks)


def test_row_group_label_reads_a_first_cell_label_or_a_heading_line():
    from types import SimpleNamespace

    from rag.index.chunking import row_group_label

    head = "| 2024 | 2023\n"
    text = head + "Zentrix | United States | 10 | 9\n| International | 1 | 2\n| Total | 11 | 11\n"
    block = SimpleNamespace(char_start=0, table_header=head)
    assert row_group_label(text, block, text.index("| Total")) == "Zentrix"
    headed = head + "Segment North\nRevenue | 5 | 4\nOperating income | 2 | 1\n"
    assert row_group_label(headed, block, headed.index("Operating income")) == "Segment North"
    # A row that opens its own group, or one under no label, gets none.
    assert row_group_label(text, block, text.index("Zentrix")) == ""
    plain = head + "Revenue | 5 | 4\nCost | 2 | 1\n"
    assert row_group_label(plain, block, plain.index("Cost")) == ""
    # A period heading the rows below it, where the columns are parts: the rows are that period's.
    dated = "| North | South | Total\nThree months ended June 30, 2025\nRevenue | 5 | 4 | 9\nCost | 2 | 1 | 3\n"
    block = SimpleNamespace(char_start=0, table_header="| North | South | Total\n")
    assert row_group_label(dated, block, dated.index("Cost")) == "Three months ended June 30, 2025"
    numbered = "| North | South | Total\nNote 7\nRevenue | 5 | 4 | 9\nCost | 2 | 1 | 3\n"
    assert row_group_label(numbered, block, numbered.index("Cost")) == ""


# ---- team mode: the served index in PostgreSQL (the tests above marked any_store run on both backends)


def _served(tmp_path, pg_url):
    return ServedIndexStore(get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data",
                                         database_url=pg_url))


def test_keyword_search_finds_other_forms_of_a_word(any_store, tmp_path):
    any_store.add([write_filing(tmp_path / "in", "acme.htm", **ACME), write_filing(tmp_path / "in", "bolt.htm", **BOLT)])
    hits = _keyword_hits(any_store, "couplers")  # the filing writes "coupler"
    assert hits and "zorblax coupler" in hits[0].node.text
    assert not _keyword_hits(any_store, "xylophonic")


def test_a_filtered_dense_search_returns_k_through_the_graph_as_exactly(tmp_path, pg_url, monkeypatch):
    from rag.index import pg_vector_store

    store = _served(tmp_path, pg_url)
    store.add([write_filing(tmp_path / "in", "acme.htm", **ACME, business_paragraphs=12),
               write_filing(tmp_path / "in", "bolt.htm", **BOLT, business_paragraphs=12)])
    index = store.load()
    embedding = store.embed_model().get_query_embedding("electric vehicle drivetrain")
    bolt = MetadataFilters(filters=[MetadataFilter(key="ticker", value="bolt")])
    bolt_total = int((index.columns["ticker"] == "BOLT").sum())
    exact = _query(index.vector_store, embedding, 1000, filters=bolt)
    assert len(exact.nodes) == bolt_total and {n.metadata["ticker"] for n in exact.nodes} == {"BOLT"}
    assert exact.similarities == sorted(exact.similarities, reverse=True)
    # Every selection through the HNSW index (iterative scan): still k, still only the filter's rows, same order.
    monkeypatch.setattr(pg_vector_store, "EXACT_BELOW", 0)
    for k in (3, bolt_total):
        walked = _query(index.vector_store, embedding, k, filters=bolt)
        assert [n.node_id for n in walked.nodes] == [n.node_id for n in exact.nodes[:k]]
    # A subset of rows a phrase picks (no filter to say it in SQL) is searched by its chunks' ids.
    rows = index.rows_with_phrase("quintaphonic drivetrain")
    assert len(rows) and {n.metadata["ticker"] for n in index.nodes_at(rows)} == {"BOLT"}
    found = _query(index.vector_store, embedding, 10, **index.restriction(rows)).nodes
    assert {n.node_id for n in found} == {n.node_id for n in index.nodes_at(rows)}


def test_served_writers_of_two_filings_proceed_together_and_of_one_filing_take_turns(tmp_path, pg_url):
    import threading

    from rag.database import xact_lock
    from rag.parse import file_sha256

    store = _served(tmp_path, pg_url)
    acme = write_filing(tmp_path / "in", "acme.htm", **ACME)
    bolt = write_filing(tmp_path / "in", "bolt.htm", **BOLT)
    store.embed_model()
    reports = {}
    with connect(pg_url) as holder, holder.transaction():
        xact_lock(holder, "filing", "local-" + file_sha256(bolt)[:16])  # another writer is writing Bolt
        waiting = threading.Thread(target=lambda: reports.update(bolt=_served(tmp_path, pg_url).add([bolt])))
        waiting.start()
        reports["acme"] = store.add([acme])  # a different filing: it does not wait
        assert reports["acme"].rows[0]["status"] == "indexed"
        time.sleep(1.0)
        assert waiting.is_alive() and "bolt" not in reports  # the same filing waits its turn
        assert {f["ticker"] for f in store.list_filings()} == {"ACME"}
    waiting.join(120)
    assert reports["bolt"].rows[0]["status"] == "indexed"
    assert {f["ticker"] for f in store.list_filings()} == {"ACME", "BOLT"}


def test_readers_never_see_half_a_served_filing(tmp_path, pg_url, monkeypatch):
    from rag.index import transforms

    monkeypatch.setattr(transforms, "STREAM_BATCH", 4)  # the filing is written a few chunks at a time
    store = _served(tmp_path, pg_url)
    store.add([write_filing(tmp_path / "in", "acme.htm", **ACME)])
    before = store.load()
    seen = []

    def look(name, stage, fraction):
        if stage.startswith("embedding ") and "/" in stage:  # some of its chunks are inserted already
            index = _served(tmp_path, pg_url).load()
            seen.append((len(index), tuple(sorted(index.filings)), index.generation))

    store.add([write_filing(tmp_path / "in", "bolt.htm", **BOLT, business_paragraphs=20)], progress=look)
    assert len(seen) > 2  # looked after each batch: the batches before it were inserted, not yet committed
    assert set(seen) == {(len(before), tuple(sorted(before.filings)), before.generation)}
    after = store.load()
    assert len(after) > len(before) and after.generation != before.generation


def test_a_killed_served_writer_leaves_the_index_as_it_was(tmp_path, pg_url):
    env = {**os.environ, "RAG_STORAGE_DIR": str(tmp_path / "storage"), "RAG_DATA_DIR": str(tmp_path / "data"),
           "RAG_DATABASE_URL": pg_url}
    store = _served(tmp_path, pg_url)
    store.add([write_filing(tmp_path / "in", "acme.htm", **ACME)])
    before = store.load()

    big = write_filing(tmp_path / "in", "bolt.htm", **BOLT, business_paragraphs=400)
    _index_killed_while_embedding(big, env)

    after = store.load()
    assert (after.generation, len(after), set(after.filings)) == (before.generation, len(before), set(before.filings))
    with connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM rag_chunks").fetchone() == (len(before),)
    # Its lock went with it: the next run indexes the filing, and `rag list` shows both.
    assert store.add([big]).rows[0]["status"] == "indexed"
    listed = _run_cli(["list"], env)
    out, err = listed.communicate(timeout=120)
    assert listed.returncode == 0, err
    assert "ACME" in out and "BOLT" in out


def test_a_correction_on_the_served_index_reaches_the_record_the_filters_and_the_chunks(tmp_path, pg_url):
    store = _served(tmp_path, pg_url)
    store.add([write_filing(tmp_path / "in", "acme.htm", **ACME)])
    doc_id = store.list_filings()[0]["doc_id"]
    before = store.current_generation()
    record = store.update_filing(doc_id, {"ticker": "acmx", "fiscal_year": 2023})
    assert (record["ticker"], record["fiscal_year"], record["fiscal_year_source"]) == ("ACMX", 2023, "user")
    index = store.load()
    assert index.generation != before and store.list_filings()[0]["ticker"] == "ACMX"
    rows = index.subset(tickers=["ACMX"], fiscal_years=[2023])
    assert len(rows) == len(index) and not len(index.subset(tickers=["ACME"]))
    assert {(n.metadata["ticker"], n.metadata["fiscal_year"]) for n in index.nodes_at(range(len(index)))} == {
        ("ACMX", 2023)}
    found = index.vector_store.query(VectorStoreQuery(
        query_embedding=store.embed_model().get_query_embedding("zorblax coupler"), similarity_top_k=3,
        **index.restriction(rows)))
    assert len(found.nodes) == 3


def test_a_served_filings_facts_live_and_go_with_its_chunks_in_one_transaction(tmp_path, pg_url, monkeypatch):
    from rag.facts import FactStore
    from rag.index import served

    store = _served(tmp_path, pg_url)
    facts = FactStore.for_settings(store.settings)
    store.add([write_filing(tmp_path / "in", "acme.htm", **ACME)])
    acme = store.list_filings()[0]["doc_id"]
    assert facts.has(acme)

    # A write that fails after its facts were recorded, before its commit: neither its chunks nor its facts stay.
    def fail(conn):
        raise RuntimeError("the disk filled")

    monkeypatch.setattr(served.ServedIndexStore, "_next_generation", staticmethod(fail))
    report = store.add([write_filing(tmp_path / "in", "bolt.htm", **BOLT)])
    assert report.rows[0]["status"] != "indexed"
    assert [f["ticker"] for f in store.list_filings()] == ["ACME"]
    assert [f["doc_id"] for f in facts.filings()] == [acme]
    monkeypatch.undo()

    assert store.remove([acme]) == [acme]
    assert not facts.has(acme) and not store.list_filings()


def test_the_served_index_adds_up_word_counts_kept_per_filing_as_the_chunks_would_give_them(tmp_path, pg_url):
    """The catalog's word uses come from counts written with each filing (no chunk read when a reader loads),
    equal to counting the chunks; a filing written before the counts were kept is counted from its chunks, and a
    corrected ticker takes its filing's counts along."""
    from rag.index import word_uses

    files = [write_filing(tmp_path / "in", "acme.htm", **ACME), write_filing(tmp_path / "in", "bolt.htm", **BOLT)]
    store = _served(tmp_path, pg_url)
    store.add(files)
    index = store.load()
    counted = word_uses(index.nodes_at(range(len(index))))
    kept = index.word_uses()
    assert set(kept.capitalised) == {"ACME", "BOLT"}
    assert kept == counted and kept.lowercase_uses and "zorblax" in kept.every

    with connect(pg_url) as conn:
        conn.execute("UPDATE rag_filings SET word_uses = NULL WHERE record->>'ticker' = 'BOLT'")
    assert store.load().word_uses() == counted

    store.update_filing(next(f["doc_id"] for f in store.list_filings() if f["ticker"] == "ACME"), {"ticker": "ACMX"})
    moved = store.load().word_uses()
    assert moved.capitalised["ACMX"] == counted.capitalised["ACME"] and "ACME" not in moved.capitalised


def test_an_unfiltered_served_keyword_search_scores_the_rarest_words_chunks_first_within_its_budget(
        tmp_path, pg_url, monkeypatch):
    """Past MAX_SCORED chunks an unfiltered keyword search scores the chunks of the question's rarest words only:
    the chunk holding the rarest word still comes first, and a filtered search is not cut."""
    from rag.index import pg_vector_store

    store = _served(tmp_path, pg_url)
    store.add([write_filing(tmp_path / "in", "acme.htm", **ACME), write_filing(tmp_path / "in", "bolt.htm", **BOLT)])
    index = store.load()
    whole = [n.node.node_id for n in index.keyword_search("zorblax coupler widgets", 5)]
    monkeypatch.setattr(pg_vector_store, "MAX_SCORED", 1)
    cut = index.keyword_search("zorblax coupler widgets", 5)
    assert cut and cut[0].node.node_id == whole[0] and "zorblax" in cut[0].node.text.lower()
    assert all("zorblax" in n.node.text.lower() for n in cut)  # only the rarest word's chunks were scored
    acme = index.subset(tickers=["ACME"])
    assert len(index.keyword_search("zorblax coupler widgets", 50, acme)) >= len(cut)
    assert pg_vector_store._within_budget(["a", "b", "c"], {"a": 5, "b": 10, "c": 1}, 15) == ["a", "b"]
    # The common stems' counts come from the planner's statistics once ANALYZE has run: on a table its sample
    # covers whole, they are the exact counts, which a search no longer has to take.
    with connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE rag_chunks")
        rows = conn.execute("SELECT count(*) FROM rag_chunks").fetchone()[0]
        common = store.load().vector_store._common_stems(rows)
        assert common
        for stem in list(common)[:5]:
            exact = conn.execute("SELECT count(*) FROM rag_chunks WHERE search @@ %s::tsquery",
                                 (pg_vector_store._quoted(stem),)).fetchone()[0]
            assert common[stem] == exact, stem
    assert pg_vector_store._within_budget(["a", "b"], {"a": 50, "b": 1}, 15) == ["a"]


def test_served_phrase_and_row_label_rows_over_the_whole_index_are_those_the_texts_match(tmp_path, pg_url):
    """Over the whole index the served store finds a phrase's or a row label's chunks through the full-text index
    first: the rows are still exactly those whose text the pattern matches."""
    from rag.index.loaded import phrase_pattern, row_label_pattern

    store = _served(tmp_path, pg_url)
    store.add([write_filing(tmp_path / "in", "acme.htm", **ACME), write_filing(tmp_path / "in", "bolt.htm", **BOLT)])
    index = store.load()
    texts = [n.text for n in index.nodes_at(range(len(index)))]
    for phrase in ("Total net sales", "zorblax coupler", "of the"):
        pattern = phrase_pattern(phrase)[0]
        assert index.rows_with_phrase(phrase).tolist() == [i for i, t in enumerate(texts) if pattern.search(t)]
    for words in (["total", "net", "sale"], ["net", "sales"]):
        pattern = row_label_pattern(words)[0]
        expected = [i for i, t in enumerate(texts) if pattern.search(t)]
        assert index.rows_with_row_label(words).tolist() == expected
    assert index.rows_with_phrase("Total net sales").size and index.rows_with_row_label(["total", "net", "sale"]).size
