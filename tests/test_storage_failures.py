"""Indexing meets storage and inputs that fail it (issue 45, items 5-8): a full disk, read-only storage, a FIFO or
a device named as a filing, a file far beyond any filing; and a long filing embedded a batch at a time.

The disks here are real: a small tmpfs mounted for the test, filled with a real file, or remounted read-only
(root only; the tests skip, saying so, elsewhere)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from rag.__main__ import main
from rag.config import get_settings
from rag.facts import FactStore
from rag.index import IndexStore, PathRefused, StorageError
from rag.index import transforms as transforms_module
from rag.index.writer_lock import WriterLock
from rag.jobs import IndexJobs
from tests.filings import ACME, BOLT, write_filing

ROOT = Path(__file__).resolve().parents[1]
# What the writing libraries say of a full disk, which a user must not be left to read.
RAW_WORDS = ("Traceback", "faiss", "requested and", "Errno", "disk I/O error", "database or disk is full")


def _mount_tmpfs(where: Path, size: str) -> Path:
    if os.geteuid() != 0:
        pytest.skip("mounting a small real filesystem (tmpfs) needs root")
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True,
                          text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    return where


@pytest.fixture
def small_disk(tmp_path):
    """A real 4 MB filesystem with ACME indexed on it: (its mount point, its storage folder, the store)."""
    mnt = _mount_tmpfs(tmp_path / "mnt", "4m")
    try:
        storage = mnt / "storage"
        store = IndexStore(get_settings(storage_dir=storage, data_dir=tmp_path / "data"))
        assert not store.add([write_filing(tmp_path / "in", "acme.htm", **ACME)]).errors
        yield mnt, storage, store
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(mnt: Path, leave: int) -> Path:
    """A file taking all the room on `mnt` but `leave` bytes."""
    st = os.statvfs(mnt)
    filler = mnt / "filler"
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
    return filler


def _live_and_facts(store: IndexStore) -> tuple[set, set]:
    return ({f["ticker"] for f in store.list_filings()},
            {f["ticker"] for f in FactStore.for_settings(store.settings).filings()})


def test_a_full_disk_fails_the_run_in_one_line_and_never_publishes_a_filing_without_its_facts(
        small_disk, tmp_path, capsys, caplog):
    """Item 5: at every level of free space, `rag index` either indexes BOLT with its facts and exits 0, or exits
    non-zero with one line naming the storage folder and its free space, the index and facts as they were."""
    mnt, storage, store = small_disk
    bolt = write_filing(tmp_path / "in", "bolt.htm", **BOLT)
    caplog.set_level(logging.WARNING)
    outcomes = []
    for kb in range(192, -1, -16):  # from room to spare down to none: each write of the run fails at some level
        before = store.current_generation()
        filler = _fill(mnt, kb * 1024)
        caplog.clear()
        code = main(["index", str(bolt), "--storage", str(storage)])
        out, err = capsys.readouterr()
        filler.unlink()  # the checks below read SQLite, which needs room for its shared-memory file
        live, facts = _live_and_facts(store)
        assert facts == live, f"{kb} KB free: index {live} but facts {facts}; {out} {err}"
        if code == 0:
            assert "BOLT" in live and "indexed" in out, f"{kb} KB free: {out} {err}"
            store.remove([doc_id for doc_id, f in store.load().filings.items() if f["ticker"] == "BOLT"])
        else:
            assert live == {"ACME"} and store.current_generation() == before and "indexed" not in out, (kb, out)
            lines = [line for line in err.splitlines() if not line.lstrip().startswith("[")]  # not progress
            assert len(lines) == 1 and lines[0].startswith("error: the storage folder "), f"{kb} KB free: {err}"
            assert str(storage) in lines[0] and " free" in lines[0], lines[0]
            assert not any(word in err for word in RAW_WORDS), lines[0]
            assert not [r.getMessage() for r in caplog.records], f"{kb} KB free: logged {caplog.records}"
            assert store.load().vector_store.client.ntotal == len(store.load())
        outcomes.append(code)
        for shard in (storage / "index" / "shards").iterdir():  # each level embeds and writes BOLT afresh
            if shard.name not in {f["shard"] for f in store.list_filings()}:
                shutil.rmtree(shard)
    assert outcomes[0] == 0 and outcomes[-1] != 0, outcomes  # the sweep reached both a roomy and a full disk
    assert main(["index", str(bolt), "--storage", str(storage)]) == 0  # with room again, nothing is lost
    assert _live_and_facts(store) == ({"ACME", "BOLT"}, {"ACME", "BOLT"})


def test_a_background_job_on_a_full_disk_fails_saying_so(small_disk, tmp_path):
    mnt, storage, store = small_disk
    filler = _fill(mnt, 0)
    jobs = IndexJobs(store)
    jobs.add_files([(write_filing(tmp_path / "in", "bolt.htm", **BOLT), "BOLT 10-K")])
    try:
        assert jobs.wait_idle(120)
        job = jobs.snapshot()[0]
    finally:
        filler.unlink()
    assert job.state == "failed" and job.detail.startswith(f"the storage folder {storage} ran out of room"), job


@pytest.fixture
def read_only(small_disk):
    """The small disk, remounted read-only once ACME is indexed on it."""
    mnt, storage, store = small_disk
    done = subprocess.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot remount the tmpfs read-only: {done.stderr.strip()}")
    return storage, store


def test_read_only_storage_says_so_rather_than_blaming_another_writer(read_only, tmp_path, capsys):
    """Item 6, from the CLI, the app's background jobs and a removal."""
    storage, store = read_only
    bolt = write_filing(tmp_path / "in", "bolt.htm", **BOLT)
    code = main(["index", str(bolt), "--storage", str(storage)])
    err = capsys.readouterr().err
    assert code != 0 and f"the storage folder {storage} is read-only" in err, err
    assert "another" not in err and "Errno" not in err, err

    jobs = IndexJobs(store)
    jobs.add_files([(bolt, "BOLT 10-K")])
    assert jobs.wait_idle(30), "a read-only storage folder was waited on as if another writer held it"
    job = jobs.snapshot()[0]
    assert job.state == "failed" and "is read-only" in job.detail and "another" not in job.detail, job

    with pytest.raises(StorageError, match="is read-only"):
        store.remove(["ACME"])
    assert main(["remove", "ACME", "--storage", str(storage)]) == 2
    assert capsys.readouterr().err == f"error: the storage folder {storage} is read-only: could not start the " \
                                      "removal. Nothing was changed.\n"
    assert {f["ticker"] for f in store.list_filings()} == {"ACME"}  # and readers still read it


@pytest.fixture
def unreadable_paths(tmp_path):
    """A FIFO no one writes to, and links named like filings to /dev/zero and /dev/urandom: reading any of them
    never ends."""
    folder = tmp_path / "odd"
    folder.mkdir()
    fifo = folder / "pipe.htm"
    os.mkfifo(fifo)
    zero, urandom = folder / "zero.htm", folder / "urandom.htm"
    zero.symlink_to("/dev/zero")
    urandom.symlink_to("/dev/urandom")
    return [("FIFO", fifo), ("character device", zero), ("character device", urandom)]


def test_a_fifo_or_device_is_refused_at_once_without_the_writer_lock_or_a_read(tmp_path, unreadable_paths):
    """Item 7: refused before the lock is taken (here another writer holds it) and without opening the file: a
    FIFO opened for reading would block right there."""
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data"))
    held = WriterLock(store.root, what="test holding the lock")
    held.acquire(1)
    try:
        for kind, path in unreadable_paths:
            raised: list[BaseException] = []

            def run(p=path, raised=raised):
                try:
                    store.add([p], lock_timeout=1)
                except BaseException as exc:  # noqa: BLE001 - what add raised is the test's finding
                    raised.append(exc)

            worker = threading.Thread(target=run, daemon=True)
            worker.start()
            worker.join(20)
            assert not worker.is_alive(), f"indexing {path} ({kind}) hung"
            assert raised and isinstance(raised[0], PathRefused), raised
            assert str(path) in str(raised[0]) and kind in str(raised[0]), raised[0]
    finally:
        held.release()


def test_rag_index_of_a_fifo_exits_at_once_with_a_message(tmp_path, unreadable_paths):
    fifo = unreadable_paths[0][1]
    try:
        done = subprocess.run([sys.executable, "-m", "rag", "index", str(fifo), "--storage", str(tmp_path / "s")],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("`rag index` of a FIFO hung")
    assert done.returncode == 2, done.stderr
    assert f"error: {fifo} is a FIFO (named pipe); only regular files are read" in done.stderr, done.stderr


def test_a_file_far_beyond_any_filing_is_refused_with_its_size_before_it_is_read(tmp_path, monkeypatch):
    """Item 8: the default limit (50 MB, RAG_MAX_FILE_MB) refuses a 60 MB file at once; a sparse file, so the
    test writes nothing: were it read, hashing and parsing 60 MB of zeros would say something else."""
    big = tmp_path / "in" / "huge.htm"
    big.parent.mkdir()
    with open(big, "wb") as fh:
        fh.truncate(60 * 1024 * 1024)
    monkeypatch.delenv("RAG_MAX_FILE_MB", raising=False)
    monkeypatch.delenv("RAG_MAX_UPLOAD_MB", raising=False)
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data"))
    other = write_filing(tmp_path / "in", "acme.htm", **ACME)
    report = store.add([big, other])
    rows = {Path(r["file"]).name: r for r in report.rows}
    assert rows["huge.htm"]["status"] == "failed"
    assert rows["huge.htm"]["error"] == f"{big} is 60.0 MB, over the 50 MB limit for one filing (RAG_MAX_FILE_MB)"
    assert rows["acme.htm"]["status"] == "indexed"  # the others go on

    monkeypatch.setenv("RAG_MAX_FILE_MB", "80")
    assert get_settings().max_file_mb == 80 and get_settings().max_upload_mb == 80  # the uploader follows
    monkeypatch.setenv("RAG_MAX_UPLOAD_MB", "10")
    assert get_settings().max_upload_mb == 10


def test_a_long_filing_is_embedded_and_written_a_batch_at_a_time(tmp_path, monkeypatch):
    """Item 8: the embedder never holds more than a batch of chunks, whatever the filing's length, and the shard
    written batch by batch holds every chunk's own vector, in order."""
    monkeypatch.setattr(transforms_module, "STREAM_BATCH", 4)
    seen = []
    original = transforms_module.chunk_nodes

    def recording(chunks, *args, **kwargs):  # the chunks made into nodes, and so held, at once
        seen.append(len(chunks))
        return original(chunks, *args, **kwargs)

    monkeypatch.setattr(transforms_module, "chunk_nodes", recording)
    store = IndexStore(get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data"))
    stages = []
    path = write_filing(tmp_path / "in", "acme.htm", **ACME, business_paragraphs=40)
    report = store.add([path], progress=lambda name, stage, fraction: stages.append(stage))
    chunks = report.rows[0]["chunks"]
    assert report.rows[0]["status"] == "indexed" and chunks > 8
    assert max(seen) == 4 and sum(seen) == chunks, seen
    counted = [tuple(map(int, s.split()[1].split("/"))) for s in stages if s.startswith("embedding ")]
    assert {total for _, total in counted} == {chunks} and counted[-1][0] == chunks  # one count across batches

    shard = store.root / "shards" / store.list_filings()[0]["shard"]
    vectors = np.load(shard / "vectors.npy")
    nodes = store.load().nodes
    assert vectors.shape == (chunks, 384) and vectors.dtype == np.float32
    expected = np.asarray(store.embed_model().get_text_embedding_batch([n.text for n in nodes]), dtype="float32")
    assert np.allclose(vectors, expected, atol=1e-4)
