"""The fact store (rag/facts/store.py) on both backends, the SQLite file and team mode's PostgreSQL: the same
writes give the same reads; an indexing run's staged facts; and, on the server, a filing's facts written inside
the index's own transaction under the filing's lock, and a server that is not there."""

from __future__ import annotations

import threading

import pytest

from rag.database import connect, xact_lock
from rag.facts import FactStore, FactStoreUnavailable
from rag.parse.results import Fact

TEXT = "Revenue | 1,200 | 1,000\nNet income | 300 | 250\n"


def facts_of(year: int, revenue: float) -> list[Fact]:
    """A filing's few facts: two durations, an instant, a dimension member and a dei: label."""
    start, end = f"{year - 1}-10-01", f"{year}-09-30"
    return [
        Fact("us-gaap:Revenues", revenue, f"{revenue / 1e6:,.0f}", "usd", "c1", start, end, decimals="-6", scale=6,
             char_start=10, char_end=15),
        Fact("us-gaap:NetIncomeLoss", revenue / 4, "300", "usd", "c1", start, end, decimals="-6", scale=6,
             char_start=37, char_end=40),
        Fact("us-gaap:Assets", revenue * 2, "2,400", "usd", "c2", None, end, scale=6),
        Fact("us-gaap:Revenues", revenue / 3, "400", "usd", "c3", start, end, {"srt:ProductOrServiceAxis": "x:Widgets"}),
        Fact("dei:DocumentType", None, "10-K", "", "c1", start, end),
    ]


CHUNKS = [{"id": "c-0", "char_start": 0, "char_end": 24, "section": "Item 8", "page_start": 3},
          {"id": "c-1", "char_start": 24, "char_end": 48, "section": "Item 8", "page_start": 4}]


def meta(doc_id: str, ticker: str | None, year: int | None, form: str = "10-K") -> dict:
    return {"doc_id": doc_id, "ticker": ticker, "company": f"{ticker} Corp", "form": form, "fiscal_year": year,
            "period_end": f"{year}-09-30" if year else None, "sha256": f"sha-{doc_id}"}


@pytest.fixture(params=["embedded", "served"])
def store(request, tmp_path):
    if request.param == "embedded":
        return FactStore(tmp_path / "facts.sqlite3")
    return FactStore(database_url=request.getfixturevalue("pg_url"))


def fill(store: FactStore) -> None:
    store.add_filing(meta("acme-24", "acme", 2024), facts_of(2024, 1.2e9), CHUNKS, text=TEXT)
    store.add_filing(meta("acme-23", "ACME", 2023), facts_of(2023, 1.0e9), CHUNKS, text=TEXT)
    store.add_filing(meta("acme-24q", "ACME", 2024, "10-q"), facts_of(2024, 3e8), [], text=None)
    store.add_filing(meta("bolt-x", "BOLT", None), facts_of(2022, 5e8), CHUNKS)
    store.add_filing(meta("nameless", None, 2021), [], None)


def test_the_same_writes_read_back_the_same_on_either_backend(store):
    fill(store)
    listed = [(f["doc_id"], f["ticker"], f["fiscal_year"], f["form"]) for f in store.filings()]
    assert listed == [("nameless", None, 2021, "10-K"), ("acme-24", "ACME", 2024, "10-K"),
                      ("acme-24q", "ACME", 2024, "10-Q"), ("acme-23", "ACME", 2023, "10-K"),
                      ("bolt-x", "BOLT", None, "10-K")]  # no ticker first, then years newest first, no year last
    assert [f["doc_id"] for f in store.filings(ticker="acme", doc_ids=["acme-23", "bolt-x"])] == ["acme-23"]
    assert store.tickers() == ["ACME", "BOLT"]
    row = store.filing("acme-24")
    assert row["fact_count"] == 5 and row["period_start"] == "2023-10-01" and row["company"] == "acme Corp"

    rows = store.facts("acme-24")
    assert [r.concept for r in rows] == ["us-gaap:Revenues", "us-gaap:NetIncomeLoss", "us-gaap:Assets",
                                         "us-gaap:Revenues", "dei:DocumentType"]  # the order they were written
    revenue, income, assets, widgets, _ = rows
    assert (revenue.value, revenue.scale, revenue.chunk_id, revenue.page, revenue.row_label) == (
        1.2e9, 6, "c-0", 3, "Revenue")
    assert (income.chunk_id, income.section, income.row_label) == ("c-1", "Item 8", "Net income")
    assert assets.instant and assets.chunk_id is None and not revenue.instant
    assert widgets.dimensions == {"srt:ProductOrServiceAxis": "x:Widgets"}
    assert [r.value for r in store.facts("acme-24", ["us-gaap:Assets"])] == [2.4e9]
    assert store.facts("acme-24", []) == []
    assert sorted(store.docs_with(["us-gaap:Revenues"], ["2024-09-30"])) == ["acme-24", "acme-24q"]
    assert store.count("acme-24") == 5 and store.count() == 20 and store.has("bolt-x")

    # Adding a filing again replaces its facts; a correction changes its row, not its facts.
    store.add_filing(meta("acme-24", "ACME", 2024), facts_of(2024, 1.3e9)[:2], CHUNKS, text=TEXT)
    assert [r.value for r in store.facts("acme-24")] == [1.3e9, 1.3e9 / 4]
    assert store.update_filing("acme-24", {"company": "Acme Widgets", "not_a_column": 1}) is True
    assert store.filing("acme-24")["company"] == "Acme Widgets" and store.count("acme-24") == 2
    assert store.update_filing("nobody", {"company": "x"}) is False
    assert store.remove(["acme-24", "bolt-x", "nobody"]) == 2
    assert not store.has("acme-24") and store.facts("bolt-x") == [] and store.count() == 10


def test_an_indexing_runs_facts_wait_until_it_publishes_and_a_dead_runs_are_dropped(store):
    fill(store)
    store.add_filing(meta("acme-24", "ACME", 2024), facts_of(2024, 9e9)[:1], CHUNKS, run="gen-2")
    store.add_filing(meta("new-one", "NEW", 2024), facts_of(2024, 1e8), CHUNKS, run="gen-2")
    store.add_filing(meta("ghost", "GHOST", 2024), facts_of(2024, 1e8), CHUNKS, run="gen-dead")
    assert not store.has("new-one") and store.facts("acme-24")[0].value == 1.2e9  # readers see the old facts
    assert store.publish_run("gen-2") == 2
    assert [r.value for r in store.facts("acme-24")] == [9e9] and store.has("new-one")

    live = {d: {"sha256": f"sha-{d}"} for d in ("acme-24", "acme-23", "new-one")}
    live["acme-23"] = {"sha256": "sha-acme-23", "corrected": ["company"], "company": "Acme Corrected"}
    live["new-one"] = {"sha256": "other bytes"}
    done = store.settle(None, live)
    assert done == {"published": 0, "dropped": 1, "orphans": 4}  # ghost's run; new-one, bolt-x, acme-24q, nameless
    assert sorted(f["doc_id"] for f in store.filings()) == ["acme-23", "acme-24"]
    assert store.filing("acme-23")["company"] == "Acme Corrected" and not store.has("ghost")


def test_served_facts_commit_with_the_indexs_transaction_and_wait_for_the_filings_writer(pg_url):
    store = FactStore(database_url=pg_url)
    store.add_filing(meta("other", "OTHER", 2024), [], None)  # the tables made before the index writes
    with connect(pg_url) as conn:
        with conn.transaction():
            xact_lock(conn, "filing", "acme-24")  # as the index takes it for the filing's chunks
            store.add_filing(meta("acme-24", "ACME", 2024), facts_of(2024, 1.2e9), CHUNKS, text=TEXT, within=conn)
            assert not store.has("acme-24")  # nobody else sees half a filing
            # Another writer of the same filing waits for this transaction; one of another filing does not.
            started, finished = threading.Event(), threading.Event()

            def same_filing():
                started.set()
                store.remove(["acme-24"])
                finished.set()

            waiter = threading.Thread(target=same_filing)
            waiter.start()
            started.wait(10)
            store.add_filing(meta("bolt-x", "BOLT", 2024), facts_of(2024, 5e8), CHUNKS)
            assert store.has("bolt-x") and not finished.wait(0.5)
        waiter.join(10)  # the removal ran after the commit: it found the facts and removed them
        assert finished.is_set() and not store.has("acme-24")
        with pytest.raises(RuntimeError), conn.transaction():
            store.add_filing(meta("acme-24", "ACME", 2024), facts_of(2024, 1e9), CHUNKS, within=conn)
            raise RuntimeError("the index's write failed after the facts")
    assert not store.has("acme-24") and store.count() == 5  # rolled back with it: only bolt-x's facts


def test_served_text_loses_only_the_nul_characters_postgresql_cannot_hold(pg_url):
    store = FactStore(database_url=pg_url)
    fact = Fact("dei:EntityRegistrantName", None, "Acme\x00 Widgets", "", "c1", None, "2024-09-30")
    store.add_filing(meta("acme-24", "ACME\x00", 2024), [fact], None)
    assert store.facts("acme-24")[0].text == "Acme Widgets" and store.tickers() == ["ACME"]


def test_a_database_server_that_is_not_there_costs_the_exact_figures_and_says_why(tmp_path):
    store = FactStore(database_url=f"postgresql://ana:s3cret@/rag?host={tmp_path}&port=1")
    problem = store.problem()
    assert problem.startswith("The XBRL facts at postgresql://ana:***@/rag")
    assert "s3cret" not in problem and "RAG_DATABASE_URL" in problem and "without exact figures" in problem
    with pytest.raises(FactStoreUnavailable):
        store.filings()


def _drop_connections(url: str) -> int:
    """What a server restart does to the store's idle connections: the server ends them."""
    with connect(url, autocommit=True) as conn:
        return len(conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchall())


def test_idle_connections_the_server_dropped_are_replaced_after_a_long_idle_spell(pg_url, monkeypatch):
    import rag.database

    store = FactStore(database_url=pg_url)
    fill(store)
    monkeypatch.setattr(rag.database, "CHECK_IDLE_AFTER_S", 1e9)  # never asked: the next read meets the dead one
    assert _drop_connections(pg_url) >= 1
    with pytest.raises(FactStoreUnavailable):
        store.filings()
    assert len(store.filings()) == 5  # the broken connection was dropped, not kept
    monkeypatch.setattr(rag.database, "CHECK_IDLE_AFTER_S", 0.0)  # idle long enough to be asked first
    assert _drop_connections(pg_url) >= 1
    assert len(store.filings()) == 5 and store.count() == 20
