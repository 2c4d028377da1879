"""The background queue (rag/jobs.py): filings indexed one by one by a worker thread while questions are answered,
per-filing state with embedding progress, cancel, corrected metadata; and the embedding step's batch hook."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from rag.config import get_settings
from rag.edgar import add_local_file
from rag.edgar.record import RECORD_NAME, FilingRecord
from rag.engine import Engine
from rag.index import IndexStore
from rag.index.transforms import EmbedChangedChunks
from rag.jobs import FilingJob, IndexJobs, correct_record
from tests.filings import ACME, BOLT, write_filing


@pytest.fixture
def settings(tmp_path):
    return get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data", embed_batch_size=4)


class RecordingStore(IndexStore):
    """The real store, recording every progress stage and able to hold a filing's indexing until released."""

    def __init__(self, settings):
        super().__init__(settings)
        self.stages: list[str] = []
        self.hold = threading.Event()
        self.hold.set()
        self.entered = threading.Event()

    def add(self, paths, *, progress=None, **kwargs):
        def recording(name, stage, fraction):
            self.stages.append(stage)
            if progress:
                progress(name, stage, fraction)

        self.entered.set()
        assert self.hold.wait(60), "the test never released the held filing"
        return super().add(paths, progress=recording, **kwargs)


def test_embedding_reports_each_batch():
    class Model:
        embed_batch_size = 2

        def __init__(self):
            self.batches = []

        def __call__(self, nodes):
            self.batches.append(len(nodes))
            for node in nodes:
                node.embedding = [1.0]

    class Node:
        def __init__(self, text):
            self.text, self.embedding = text, None

    model, calls = Model(), []
    nodes = [Node(f"chunk {i}") for i in range(5)] + [Node("known")]
    EmbedChangedChunks(model, {"known": np.array([0.5])}, on_batch=lambda d, t: calls.append((d, t)))(nodes)
    assert model.batches == [2, 2, 1]
    assert calls == [(2, 5), (4, 5), (5, 5)]
    assert [n.embedding for n in nodes][-1] == [0.5]


def test_filings_are_indexed_one_by_one_with_progress(settings, tmp_path):
    store = RecordingStore(settings)
    files = [write_filing(tmp_path / "in", "acme.htm", **ACME), write_filing(tmp_path / "in", "bolt.htm", **BOLT)]
    jobs = IndexJobs(store)
    ids = jobs.add_files([(files[0], "ACME 10-K"), (files[1], "BOLT 10-K")])
    assert jobs.wait_idle(180)
    done = {j.id: j for j in jobs.snapshot()}
    assert [done[i].state for i in ids] == ["done", "done"]
    assert all(done[i].detail.endswith("chunks") and done[i].chunks_total > 0 for i in ids)
    assert done[ids[0]].chunks_done == done[ids[0]].chunks_total
    counted = [s for s in store.stages if s.startswith("embedding ")]
    assert counted and counted[-1].split()[1].split("/")[0] == counted[-1].split("/")[1]
    # One publish per filing: each was searchable as soon as it was done.
    assert store.stages.count("indexed") == 2
    assert {f["ticker"] for f in store.list_filings()} == {"ACME", "BOLT"}


def test_a_question_is_answered_while_a_filing_is_added(settings, tmp_path):
    base = IndexStore(settings)
    base.add([write_filing(tmp_path / "in", "acme.htm", **ACME)])
    engine = Engine(settings)
    engine.warm()
    store = RecordingStore(settings)
    store._embed = engine.store.embed_model()  # the app shares one model between questions and the worker
    store.hold.clear()
    published = threading.Event()
    jobs = IndexJobs(store, on_published=published.set)
    jobs.add_files([(write_filing(tmp_path / "in", "bolt.htm", **BOLT), "BOLT 10-K")])
    assert store.entered.wait(30)
    # The worker is in the middle of its filing: the last complete index still answers.
    before = engine.retrieve("Who sells the zorblax coupler?", mode="keyword")
    assert before.nodes and before.nodes[0].node.metadata["ticker"] == "ACME"
    assert jobs.busy()
    store.hold.set()
    answers = []
    while jobs.busy():  # questions keep being answered while the filing is parsed, embedded and published
        answers.append(engine.retrieve("What are the main risk factors?", mode="hybrid"))
    assert jobs.wait_idle(120) and published.is_set()
    assert answers and all(a.nodes for a in answers)
    after = engine.retrieve("Who builds the quintaphonic drivetrain?", mode="keyword")
    assert after.nodes[0].node.metadata["ticker"] == "BOLT", "the new filing is searchable once published"
    assert [j.state for j in jobs.snapshot()] == ["done"]


def test_cancel_finishes_the_filing_in_hand_and_keeps_it(settings, tmp_path):
    store = RecordingStore(settings)
    store.hold.clear()
    files = [write_filing(tmp_path / "in", f"{t['ticker']}.htm", **t) for t in (ACME, BOLT)]
    third = write_filing(tmp_path / "in", "crux.htm", **{**ACME, "ticker": "CRUX", "company": "Crux Inc."})
    jobs = IndexJobs(store)
    ids = jobs.add_files([(files[0], "ACME"), (files[1], "BOLT"), (third, "CRUX")])
    assert store.entered.wait(30)
    assert jobs.cancel() == 2
    store.hold.set()
    assert jobs.wait_idle(120)
    states = {j.id: j.state for j in jobs.snapshot()}
    assert [states[i] for i in ids] == ["done", "cancelled", "cancelled"]
    assert [f["ticker"] for f in store.list_filings()] == ["ACME"]
    # The queue takes new work after a cancel.
    jobs.add_files([(files[1], "BOLT")])
    assert jobs.wait_idle(120)
    assert jobs.snapshot()[-1].state == "done"


def test_a_failed_filing_says_why_and_the_next_goes_on(settings, tmp_path):
    bad = tmp_path / "in" / "broken.pdf"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"<html>not a pdf</html>")
    jobs = IndexJobs(IndexStore(settings))
    jobs.add_files([(bad, "broken.pdf"), (write_filing(tmp_path / "in", "acme.htm", **ACME), "ACME")])
    assert jobs.wait_idle(120)
    failed, done = jobs.snapshot()
    assert failed.state == "failed" and "Failed to load document" in failed.detail, failed.detail
    assert done.state == "done"


def test_corrected_metadata_is_what_gets_indexed(settings, tmp_path):
    source = write_filing(tmp_path / "in", "crux.htm", **{**ACME, "company": "Crux Instruments Inc.", "ticker": "CRUX"})
    record = add_local_file(source, settings=settings)
    assert record.ticker == "CRUX" and record.fiscal_year == 2024
    store = IndexStore(settings)
    jobs = IndexJobs(store)
    jobs.add_files([(record.path, "crux.htm")])
    assert jobs.wait_idle(120)
    # The user reads the table and corrects the company name and the fiscal year.
    saved = FilingRecord.load(record.path.parent / RECORD_NAME)
    changed = correct_record(saved, {"company": "Crux Instruments Holdings", "ticker": "crux", "form": "10-K",
                                     "fiscal_year": 2025.0, "fiscal_period": float("nan")})
    assert changed == ["company", "fiscal_year"]
    assert FilingRecord.load(record.path.parent / RECORD_NAME).fiscal_year_source == "caller"
    jobs.add_files([(saved.path, "crux.htm")], replace={saved.path})
    assert jobs.wait_idle(120)
    assert jobs.snapshot()[-1].state == "done"
    (entry,) = store.list_filings()
    assert entry["company"] == "Crux Instruments Holdings" and entry["fiscal_year"] == 2025


def test_time_left_follows_the_rate_so_far():
    job = FilingJob(id=1, label="X", batch=1, state="embedding", chunks_done=20, chunks_total=100,
                    embed_started=100.0)
    assert job.eta_seconds(now=110.0) == pytest.approx(40.0)
    assert FilingJob(id=2, label="Y", batch=1, state="parsing").eta_seconds(now=time.monotonic()) is None


def test_a_download_queues_each_filing_and_names_each_failed_ticker(settings, tmp_path, monkeypatch):
    import rag.edgar as edgar

    good = write_filing(tmp_path / "dl", "primary-document.html", **ACME)

    def fake_download(tickers, *, form, limit, settings, progress=None):
        assert tickers == ["ACME", "NOPE"] and form == "10-K" and limit == 1
        progress("ACME", "Downloading", 0.5)
        record = edgar.FilingRecord(doc_id="0000999999-24-000001", path=good, ticker="ACME", form="10-K",
                                    fiscal_year=2024, company="Acme Widgets Inc.")
        return [edgar.DownloadOutcome("ACME", record, None),
                edgar.DownloadOutcome("NOPE", None, "NOPE is not a ticker EDGAR knows.")]

    monkeypatch.setattr(edgar, "download_filings", fake_download)
    jobs = IndexJobs(IndexStore(settings))
    jobs.add_download(["ACME", "NOPE"], "10-K", 1, settings)
    assert jobs.wait_idle(120)
    lines = {(j.kind, j.label): j for j in jobs.snapshot()}
    assert lines[("download", "ACME, NOPE")].detail == "1 filing downloaded"
    assert lines[("download", "NOPE")].state == "failed"
    assert lines[("download", "NOPE")].detail == "NOPE is not a ticker EDGAR knows."
    assert lines[("filing", "ACME 10-K FY2024")].state == "done"


# ---- team mode: the jobs in the database


def test_team_mode_records_every_job_in_the_database_and_a_dead_processs_as_interrupted(tmp_path, pg_url):
    """Two processes' queues write their jobs to rag_jobs: each sees both, with states as they ran (a file that is
    not a filing failed, with why); a job whose process died while it ran reads as interrupted; `rag jobs` lists
    them."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from rag.database import connect
    from rag.index import ServedIndexStore
    from rag.job_records import STALE_S, JobRecords
    from rag.jobs import UNFINISHED

    settings = get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data", database_url=pg_url)
    notes = tmp_path / "in" / "notes.txt"
    notes.parent.mkdir(parents=True)
    notes.write_text("not a filing\n" * 10, encoding="utf-8")
    first, second = IndexJobs(ServedIndexStore(settings)), IndexJobs(ServedIndexStore(settings))
    first.add_files([(write_filing(tmp_path / "in", "acme.htm", **ACME), "ACME 10-K")])
    second.add_files([(notes, "notes.txt")])
    assert first.wait_idle(180) and second.wait_idle(60)

    seen = JobRecords(pg_url, UNFINISHED).recent()
    assert {(j["label"], j["state"]) for j in seen} == {("ACME 10-K", "done"), ("notes.txt", "failed")}
    assert len({j["process"] for j in seen}) == 2 and all(j["finished_at"] is not None for j in seen)
    acme = next(j for j in seen if j["label"] == "ACME 10-K")
    assert acme["detail"].endswith("chunks") and acme["chunks_done"] == acme["chunks_total"] > 0

    # A process killed while embedding leaves its row as it was; once stale, it reads as interrupted.
    with connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO rag_jobs (process, job, label, kind, state, detail, chunks_done, chunks_total, "
                     "submitted_at, updated_at) VALUES ('gone:1:x', 1, 'BOLT 10-K', 'filing', 'embedding', '', 3, 9, "
                     "now() - make_interval(secs => %s), now() - make_interval(secs => %s))", (STALE_S + 60,) * 2)
    states = {j["label"]: j["state"] for j in JobRecords(pg_url, UNFINISHED).recent()}
    assert states["BOLT 10-K"] == "interrupted" and states["ACME 10-K"] == "done"

    env = {**os.environ, "RAG_DATABASE_URL": pg_url, "RAG_STORAGE_DIR": str(tmp_path / "storage")}
    listed = subprocess.run([sys.executable, "-m", "rag", "jobs", "--json"], cwd=Path(__file__).resolve().parents[1],
                            env=env, capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert {(j["label"], j["state"]) for j in json.loads(listed.stdout)} == {
        ("ACME 10-K", "done"), ("notes.txt", "failed"), ("BOLT 10-K", "interrupted")}


def test_the_embedded_queue_writes_no_database_and_rag_jobs_says_where_jobs_are(settings, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    assert IndexJobs(IndexStore(settings))._records is None
    env = {k: v for k, v in os.environ.items() if k != "RAG_DATABASE_URL"}
    listed = subprocess.run([sys.executable, "-m", "rag", "jobs"], cwd=Path(__file__).resolve().parents[1],
                            env={**env, "RAG_STORAGE_DIR": str(tmp_path / "storage")}, capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 2 and "team mode only" in listed.stderr


def test_a_download_that_failed_at_once_still_tells_its_batch(settings, monkeypatch):
    """The download's own job is dropped when every ticker failed (each has its failed line): the session that
    submitted it still finds the batch to show those lines under, however soon the worker got there."""
    from rag import edgar

    monkeypatch.setattr(edgar, "download_filings", lambda tickers, **_: [
        edgar.DownloadOutcome(t, None, f"{t} is not a ticker EDGAR knows.") for t in tickers])
    jobs = IndexJobs(IndexStore(settings))
    job_id = jobs.add_download(["NOPE", "NADA"], "10-K", 1, settings)
    assert jobs.wait_idle(30)
    assert job_id not in {j.id for j in jobs.snapshot()}
    batch = jobs.batch_of(job_id)
    assert batch is not None
    assert sorted((j.label, j.state) for j in jobs.snapshot() if j.batch == batch) == [
        ("NADA", "failed"), ("NOPE", "failed")]
