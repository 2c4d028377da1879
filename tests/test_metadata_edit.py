"""Correcting a filing's details after indexing (IndexStore.update_filing, `python -m rag edit`), and the fiscal
period in every label that names a filing."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from rag.answer.sources import sources_from_retrieval
from rag.config import get_settings
from rag.facts import FactStore
from rag.index import IndexError_, IndexStore, InvalidCorrection, checked_corrections
from rag.retrieve import Retriever
from rag.schema import Citation, Filters, citation_label, period_label
from tests.filings import ACME, BOLT, write_filing
from ui.library import filing_label
from ui.text import long_label, short_label

ROOT = Path(__file__).resolve().parents[1]
QUARTER = {"company": "Acme Widgets Holdings Inc.", "ticker": "acmx", "form": "10-q", "fiscal_year": "2025",
           "fiscal_period": "q3"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """ACME (FY2024) and BOLT (FY2023) indexed once; each test works on its own copy."""
    root = tmp_path_factory.mktemp("edit-index")
    store = IndexStore(get_settings(storage_dir=root / "storage", data_dir=root / "data"))
    report = store.add([write_filing(root / "in", "acme.htm", **ACME), write_filing(root / "in", "bolt.htm", **BOLT)])
    assert not report.errors, report.errors
    return root / "storage"


@pytest.fixture
def store(built, tmp_path) -> IndexStore:
    shutil.copytree(built, tmp_path / "storage", symlinks=True)
    return IndexStore(get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data"))


def _doc(store: IndexStore, ticker: str) -> str:
    return next(f["doc_id"] for f in store.list_filings() if f["ticker"] == ticker)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _vector_files(store: IndexStore) -> dict[str, str]:
    gen = store.root / "generations" / store.current_generation()
    files = {"generation": _digest(gen / "vectors.faiss")}
    for shard in sorted((store.root / "shards").iterdir()):
        files[shard.name] = _digest(shard / "vectors.npy")
    return files


def _no_embedding(store: IndexStore, monkeypatch) -> None:
    def refuse(*_a, **_k):
        raise AssertionError("a metadata correction must not embed anything")

    monkeypatch.setattr(store, "embed_model", refuse)
    monkeypatch.setattr("rag.index.store.get_embed_model", refuse)


# --------------------------------------------------------------------------------------------------------------
# IndexStore.update_filing


def test_correction_changes_filters_citations_and_facts_without_re_embedding(store, monkeypatch):
    acme = _doc(store, "ACME")
    before = store.load()
    texts = [n.text for n in before.nodes]
    vectors = _vector_files(store)
    facts_before = FactStore.for_settings(store.settings).count(acme)
    _no_embedding(store, monkeypatch)

    record = store.update_filing(acme, QUARTER)

    assert {k: record[k] for k in QUARTER} == {"company": "Acme Widgets Holdings Inc.", "ticker": "ACMX",
                                               "form": "10-Q", "fiscal_year": 2025, "fiscal_period": "Q3"}
    assert record["fiscal_year_source"] == record["fiscal_period_source"] == "user"
    assert record["corrected"] == sorted(QUARTER)
    after = store.load()
    assert after.generation != before.generation
    # Metadata only: the same texts in the same order, and not one vector file changed.
    assert [n.text for n in after.nodes] == texts
    assert _vector_files(store) == vectors
    acme_nodes = [n for n in after.nodes if n.metadata["doc_id"] == acme]
    assert acme_nodes and all((n.metadata["ticker"], n.metadata["form"], n.metadata["fiscal_year"],
                               n.metadata["fiscal_period"]) == ("ACMX", "10-Q", 2025, "Q3") for n in acme_nodes)
    assert {n.metadata["ticker"] for n in after.nodes if n.metadata["doc_id"] != acme} == {"BOLT"}
    # The shard agrees with the record, so a later publish keeps the correction.
    shard_nodes = (store.root / "shards" / record["shard"] / "nodes.jsonl").read_text()
    assert '"ticker": "ACMX"' in shard_nodes and '"ticker": "ACME"' not in shard_nodes

    # Filters select by the corrected values, the old ones select nothing.
    assert len(after.subset(tickers=["ACMX"], fiscal_periods=["Q3"], fiscal_years=[2025])) == len(acme_nodes)
    assert len(after.subset(tickers=["ACME"])) == 0
    assert len(after.subset(fiscal_years=[2024])) == 0
    # A question naming the new ticker is filtered to it, and its citations carry the quarter.
    retriever = Retriever(after, embed_model=None)
    result = retriever.retrieve("What does ACMX alone sell, the zorblax coupler?", mode="keyword", top_k=3)
    assert result.filters.tickers == ["ACMX"]
    cites = sources_from_retrieval(result)
    assert cites and all(c.fiscal_period == "Q3" for c in cites)
    assert cites[0].label().startswith("Acme Widgets Holdings Inc. (ACMX) · 10-Q · Q3 FY2025 · ")
    user = retriever.retrieve("zorblax coupler", mode="keyword", top_k=3,
                              filters=Filters(tickers=["ACMX"], fiscal_periods=["Q3"]))
    assert user.nodes and {n.node.metadata["doc_id"] for n in user.nodes} == {acme}

    # The facts store's filing row follows; its facts stay.
    row = FactStore.for_settings(store.settings).filing(acme)
    assert (row["ticker"], row["company"], row["form"], row["fiscal_year"], row["fiscal_period"]) == (
        "ACMX", "Acme Widgets Holdings Inc.", "10-Q", 2025, "Q3")
    assert FactStore.for_settings(store.settings).count(acme) == facts_before > 0


@pytest.mark.parametrize("changes, problem", [
    ({"ticker": "not a ticker"}, "ticker 'not a ticker' is not a ticker"),
    ({"ticker": ""}, "ticker cannot be empty"),
    ({"form": "8-K"}, "form '8-K' is not a periodic report"),
    ({"fiscal_year": 1850}, "fiscal year 1850 is outside 1993-"),
    ({"fiscal_year": "twenty"}, "fiscal year 'twenty' is not a year"),
    ({"fiscal_period": "Q4"}, "fiscal period 'Q4' is not one of Q1, Q2, Q3, FY"),
    ({"fiscal_period": "Q2"}, "a 10-K reports a whole fiscal year: its period is FY, not Q2"),
    ({"form": "10-Q"}, "a 10-Q reports one quarter: give its fiscal period"),
    ({"cik": "0000123456"}, "cik cannot be edited"),
])
def test_bad_values_are_refused_with_a_message_and_change_nothing(store, changes, problem):
    acme = _doc(store, "ACME")
    generation = store.current_generation()
    with pytest.raises(InvalidCorrection) as caught:
        store.update_filing(acme, changes)
    assert any(problem in p for p in caught.value.problems), caught.value.problems
    assert store.current_generation() == generation
    assert {f["ticker"] for f in store.list_filings()} == {"ACME", "BOLT"}


def test_every_problem_is_named_at_once_and_unknown_filings_are_refused(store):
    with pytest.raises(InvalidCorrection) as caught:
        store.update_filing(_doc(store, "ACME"), {"ticker": "a b", "fiscal_year": 3000, "fiscal_period": "H1"})
    assert len(caught.value.problems) == 3
    with pytest.raises(IndexError_, match="no indexed filing has the id 'nope'"):
        store.update_filing("nope", {"ticker": "ACMX"})


def test_same_values_publish_nothing(store):
    generation = store.current_generation()
    record = store.update_filing(_doc(store, "ACME"), {"ticker": " acme ", "fiscal_year": 2024, "form": None})
    assert record["ticker"] == "ACME" and "corrected" not in record
    assert store.current_generation() == generation


def test_a_correction_cut_short_before_publishing_leaves_chunks_agreeing_with_their_record(store, monkeypatch):
    """The shard was rewritten, the publish never happened: the next publish takes the record's values."""
    acme = _doc(store, "ACME")
    generation = store.current_generation()

    def killed(_filings):
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "_publish", killed)
    with pytest.raises(KeyboardInterrupt):
        store.update_filing(acme, {"ticker": "ACMX"})
    monkeypatch.undo()
    assert store.current_generation() == generation
    store.remove([_doc(store, "BOLT")])  # any later change publishes again
    assert {n.metadata["ticker"] for n in store.load().nodes} == {"ACME"}


def test_form_and_period_rules():
    today = date(2025, 6, 1)
    # An annual form given without a period takes FY; a quarter is accepted with a 10-Q.
    assert checked_corrections({"form": "10-K"}, {"form": "10-Q", "fiscal_period": "Q2"}, today=today) == {
        "form": "10-K", "fiscal_period": "FY"}
    assert checked_corrections({"form": "10-q", "fiscal_period": "Q1"}, {"form": "10-K", "fiscal_period": "FY"},
                               today=today) == {"form": "10-Q", "fiscal_period": "Q1"}
    # Share classes, amendments, next year's fiscal label; a record indexed before periods were read gets FY.
    assert checked_corrections({"ticker": "brk-b", "form": "10-K/A", "fiscal_year": 2026}, {"form": "10-K"},
                               today=today) == {"ticker": "BRK-B", "form": "10-K/A", "fiscal_year": 2026,
                                                "fiscal_period": "FY"}
    with pytest.raises(InvalidCorrection, match="outside 1993-2026"):
        checked_corrections({"fiscal_year": 2027}, {}, today=today)


# --------------------------------------------------------------------------------------------------------------
# The command line


def test_cli_edit_then_list_shows_the_quarter(store):
    env = {**os.environ, "RAG_STORAGE_DIR": str(store.settings.storage_dir)}
    acme = _doc(store, "ACME")

    def rag(*args):
        return subprocess.run([sys.executable, "-m", "rag", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=120)

    bad = rag("edit", acme, "--period", "Q5")
    assert bad.returncode == 2 and "fiscal period 'Q5' is not one of Q1, Q2, Q3, FY" in bad.stderr
    done = rag("edit", acme, "--ticker", "acmx", "--form", "10-Q", "--fiscal-year", "2025", "--period", "Q3")
    assert done.returncode == 0, done.stderr
    assert "ticker        ACME -> ACMX" in done.stdout and "nothing was re-embedded" in done.stdout
    listing = rag("list").stdout.splitlines()
    assert listing[0].split()[:4] == ["ticker", "form", "FY", "period"]
    rows = {line.split()[0]: line.split() for line in listing[1:]}
    assert rows["ACMX"][1:4] == ["10-Q", "2025", "Q3"]
    assert rows["BOLT"][1:4] == ["10-K", "2023", "FY"]  # an annual report is FY


# --------------------------------------------------------------------------------------------------------------
# Labels


def test_period_label():
    assert period_label(2025, "Q3") == "Q3 FY2025"
    assert period_label(2025, "q2") == "Q2 FY2025"
    assert period_label(2024, "FY") == period_label(2024, None) == "FY2024"
    assert period_label(None, "Q1") == "Q1"
    assert period_label(None, None) == ""


def test_citation_labels_show_the_quarter():
    quarter = dict(number=1, ticker="ACME", company="Acme Widgets Inc.", form="10-Q", fiscal_year=2025,
                   fiscal_period="Q3", section="Part I Item 2", page_start=21, page_end=21)
    assert short_label(quarter) == "ACME · 10-Q · Q3 FY2025 · Part I Item 2 · p. 21"
    assert citation_label(quarter) == "Acme Widgets Inc. (ACME) · 10-Q · Q3 FY2025 · Part I Item 2 · p. 21"
    assert long_label({**quarter, "page_end": 22}) == (
        "Acme Widgets Inc. (ACME) · 10-Q · Q3 FY2025 · Part I Item 2 · p. 21–22")
    assert Citation(**quarter, kind="fact").label().endswith("· Q3 FY2025 · Part I Item 2 · p. 21 · XBRL fact")
    # Annual reports, and citations saved before periods were recorded, read as before.
    annual = {**quarter, "form": "10-K", "fiscal_year": 2024, "fiscal_period": "FY", "section": "Item 8"}
    assert short_label(annual) == "ACME · 10-K · FY2024 · Item 8 · p. 21"
    assert short_label({k: v for k, v in annual.items() if k != "fiscal_period"}) == short_label(annual)


def test_library_filing_label_shows_the_quarter():
    assert filing_label({"ticker": "ACME", "form": "10-Q", "fiscal_year": 2025, "fiscal_period": "Q3",
                         "company": "Acme Widgets Inc."}) == "ACME · 10-Q · Q3 FY2025 — Acme Widgets Inc."
    assert filing_label({"ticker": "ACME", "form": "10-K", "fiscal_year": 2024}) == "ACME · 10-K · FY2024"
