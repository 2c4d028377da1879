"""Filings added in the background: a queue one worker thread works through, one filing at a time.

Why one filing per IndexStore.add call: each call publishes a new index generation, so a filing becomes searchable
as soon as it is done while readers (the chat) keep answering from the last complete generation meanwhile. Why
one worker: IndexStore takes a file lock per write, so writers queue anyway; a single thread keeps the order the
user asked for and lets a cancel stop cleanly between filings (the filing in hand finishes and is published).

The state every job is in (queued, downloading, parsing, embedding n of N chunks, done, failed with the reason)
lives here, behind a lock; a UI reads `snapshot()` and never hands the worker anything but plain values. In team
mode (the store is served) each change is also written to the database (rag.job_records), where every process
sees every process's jobs.
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from . import edgar
from .config import Settings
from .index import IndexBusy, IndexError_, IndexStore
from .job_records import JobRecords

log = logging.getLogger(__name__)

LOCK_WAIT_S = 5.0  # one try for the writer lock; the worker retries while another process writes
LOCK_GIVE_UP_S = 600.0
ACTIVE = ("downloading", "parsing", "chunking", "embedding", "publishing")
FINISHED = ("done", "unchanged", "failed", "cancelled")
UNFINISHED = ("queued", *ACTIVE)
_EMBEDDING = re.compile(r"^embedding (\d+)/(\d+)$")
RECORD_PROGRESS_S = 2.0  # how often a job's embedding progress alone is written to the database


@dataclass
class FilingJob:
    """One filing (or, while it downloads, one ticker) on its way into the index."""

    id: int
    label: str
    batch: int  # the submission it came with (one click of a button)
    kind: str = "filing"  # "filing" (one file to index) | "download" (one ticker's EDGAR download)
    replace: bool = False  # index it afresh even if the same bytes are indexed (its metadata was corrected)
    path: Path | None = None  # None for a download until its files are there
    overrides: dict = field(default_factory=dict)
    state: str = "queued"  # queued | downloading | parsing | chunking | embedding | publishing | FINISHED
    detail: str = ""  # the failure's reason; "n chunks" when done; the download's own progress message
    chunks_done: int = 0
    chunks_total: int = 0
    submitted: float = field(default_factory=time.monotonic)
    embed_started: float | None = None
    finished: float | None = None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def finished_ok(self) -> bool:
        return self.state in ("done", "unchanged")

    def eta_seconds(self, now: float | None = None) -> float | None:
        """Seconds left to embed this filing's chunks, from the rate so far (None before the first batch)."""
        if self.state != "embedding" or not self.embed_started or not self.chunks_done or not self.chunks_total:
            return None
        elapsed = (now or time.monotonic()) - self.embed_started
        return max(0.0, elapsed / self.chunks_done * (self.chunks_total - self.chunks_done))


@dataclass
class _Download:
    """A queued EDGAR download: its ticker's filings join the queue as soon as they are on disk."""

    job_id: int
    tickers: list[str]
    form: str
    limit: int
    settings: Settings


class IndexJobs:
    """The background queue of one index (one storage folder). Thread-safe; the worker is a daemon thread started
    with the first submission. `store` is the engine's IndexStore, so the embedding model is loaded once."""

    def __init__(self, store: IndexStore, *, before_first: Callable[[], object] | None = None,
                 on_published: Callable[[], object] | None = None):
        self.store = store
        self.before_first = before_first  # run by the worker before its first task (e.g. wait for a model load)
        self.on_published = on_published  # run after each publish (e.g. to reload an engine's index early)
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._jobs: dict[int, FilingJob] = {}
        self._batches_of: dict[int, int] = {}  # job id -> its batch, kept after the job is forgotten
        self._queue: deque = deque()  # job ids, or _Download tasks
        self._ids = itertools.count(1)
        self._batches = itertools.count(1)
        self._cancel = False
        self._worker: threading.Thread | None = None
        settings = getattr(store, "settings", None)
        self._records = JobRecords(settings.database_url, UNFINISHED) if settings is not None and settings.served else None
        self._recorded: dict[int, tuple] = {}  # job id -> (state, detail, when) last written to the database
        self._record_lock = threading.Lock()  # one write at a time, in the order the changes happened

    # ---- submitting (any thread)
    def add_files(self, items: list[tuple[Path, str]], overrides: dict | None = None,
                  replace: set[Path] | None = None) -> list[int]:
        """Queue files to index. items: (path, label shown); replace: the paths to index afresh even when their
        bytes are indexed already (their record was corrected). Returns the jobs' ids."""
        afresh = {Path(p) for p in replace or ()}
        with self._lock:
            batch = next(self._batches)
            ids = [self._new_job(label, batch, path=Path(path), overrides=dict(overrides or {}),
                                 replace=Path(path) in afresh)
                   for path, label in items]
            self._queue.extend(ids)
            self._start_locked()
        self._record()
        return ids

    def add_download(self, tickers: list[str], form: str, limit: int, settings: Settings) -> int:
        """Queue one EDGAR download of the tickers' latest filings; each filing downloaded becomes a job of its
        own, and each ticker that failed a failed job with the reason. Returns the download job's id."""
        with self._lock:
            job_id = self._new_job(", ".join(tickers), next(self._batches), kind="download")
            self._queue.append(_Download(job_id, list(tickers), form, limit, settings))
            self._start_locked()
        self._record()
        return job_id

    def cancel(self) -> int:
        """Stop after the filing in hand (it finishes and is published); the queued ones are marked cancelled.
        Returns how many were cancelled. Nothing already indexed or downloaded is lost."""
        with self._lock:
            dropped = 0
            while self._queue:
                task = self._queue.popleft()
                job = self._jobs[task.job_id if isinstance(task, _Download) else task]
                job.state, job.detail, job.finished = "cancelled", "cancelled before it started", time.monotonic()
                dropped += 1
            self._cancel = self._current_locked() is not None
        self._record()
        return dropped

    def clear_finished(self, batches: set[int] | None = None) -> None:
        """Forget finished jobs (the user dismissed their outcome): of the given batches only, else of all."""
        with self._lock:
            for job_id in [j.id for j in self._jobs.values()
                           if j.state in FINISHED and (batches is None or j.batch in batches)]:
                del self._jobs[job_id]

    def batch_of(self, job_id: int) -> int | None:
        """The batch (one submission) a job came with, also once the job is gone (a download whose every ticker
        failed at once leaves only its per-ticker failures, possibly before the submitter asks)."""
        with self._lock:
            return self._batches_of.get(job_id)

    # ---- reading (any thread)
    def snapshot(self) -> list[FilingJob]:
        """Copies of every job, in submission order."""
        with self._lock:
            return [replace(job, overrides=dict(job.overrides)) for job in self._jobs.values()]

    def busy(self) -> bool:
        with self._lock:
            return bool(self._queue) or self._current_locked() is not None

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Until nothing is queued or running (tests, the CLI). True when idle."""
        deadline = time.monotonic() + timeout
        while self.busy():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    # ---- internals (the lock is held where the name ends in _locked)
    def _new_job(self, label: str, batch: int, **kwargs) -> int:
        job = FilingJob(id=next(self._ids), label=label, batch=batch, **kwargs)
        self._jobs[job.id] = job
        self._batches_of[job.id] = batch
        return job.id

    def _current_locked(self) -> FilingJob | None:
        return next((j for j in self._jobs.values() if j.active), None)

    def _start_locked(self) -> None:
        self._wake.notify_all()
        if self._worker is None or not self._worker.is_alive():
            self._worker = threading.Thread(target=self._run, name="index-jobs", daemon=True)
            self._worker.start()

    def _update(self, job_id: int, **changes) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None:
                for key, value in changes.items():
                    setattr(job, key, value)
        self._record()

    def _record(self) -> None:
        """Write the jobs that changed since last written to the database (team mode only); embedding progress
        alone at most every RECORD_PROGRESS_S. A failed write is logged: it never stops the indexing."""
        if self._records is None:
            return
        with self._record_lock:
            now = time.monotonic()
            with self._lock:
                changed = []
                for job in self._jobs.values():
                    last = self._recorded.get(job.id)
                    if last is None or last[:2] != (job.state, job.detail) or (
                            job.chunks_done and now - last[2] >= RECORD_PROGRESS_S and last[3] != job.chunks_done):
                        changed.append(replace(job, overrides={}))
                        self._recorded[job.id] = (job.state, job.detail, now, job.chunks_done)
            try:
                self._records.write(changed)
            except Exception:  # noqa: BLE001 - the database is the team's view of the queue, not the queue
                log.warning("could not record the indexing jobs in the database", exc_info=True)

    def _run(self) -> None:
        if self.before_first:
            try:
                self.before_first()
            except Exception:  # noqa: BLE001 - the jobs can still run; the model loads on first use
                log.exception("preparing the index jobs failed")
        while True:
            with self._lock:
                self._cancel = False  # a cancel stops the work in hand; what is submitted after it runs
                while not self._queue:
                    self._wake.wait()
                task = self._queue.popleft()
                job = self._jobs[task.job_id if isinstance(task, _Download) else task]
                job.state = "downloading" if isinstance(task, _Download) else "parsing"
            self._record()
            try:
                if isinstance(task, _Download):
                    self._download(task)
                else:
                    self._index(job.id, job.path, job.overrides, job.replace)
            except IndexError_ as exc:  # busy too long, storage full or read-only: its message says it all
                self._update(job.id, state="failed", detail=str(exc), finished=time.monotonic())
            except Exception as exc:  # noqa: BLE001 - the worker must outlive any one filing
                log.exception("background job %s failed", job.label)
                self._update(job.id, state="failed", detail=f"{type(exc).__name__}: {exc}",
                             finished=time.monotonic())
            self._record()  # what the task left: a download's per-ticker failures among it

    def _download(self, task: _Download) -> None:
        def progress(ticker: str, message: str, _fraction: float) -> None:
            self._update(task.job_id, detail=f"{ticker}: {message}"[:140])

        outcomes = edgar.download_filings(task.tickers, form=task.form, limit=task.limit, settings=task.settings,
                                          progress=progress)
        ok = [o for o in outcomes if o.ok]
        with self._lock:
            job = self._jobs[task.job_id]
            for outcome in outcomes:
                if not outcome.ok:  # a line of its own: which ticker, and why
                    failed = self._jobs[self._new_job(outcome.ticker, job.batch, kind="download")]
                    failed.state, failed.detail = "failed", outcome.error or "download failed"
                    failed.finished = time.monotonic()
                elif not self._cancel:
                    record = outcome.record
                    self._queue.append(self._new_job(record_label(record, outcome.ticker), job.batch,
                                                     path=Path(record.path)))
            n = len(ok)
            if not n and len(outcomes):  # each ticker's failure has its line: no second one for the whole
                del self._jobs[task.job_id]
                return
            job.state = "done" if n else "failed"
            job.detail = f"{n} filing{'s' if n != 1 else ''} downloaded" if n else "nothing downloaded"
            if self._cancel and n:
                job.detail += "; not indexed (cancelled): they stay on disk for the next run"
            job.finished = time.monotonic()
        self._record()

    def _index(self, job_id: int, path: Path, overrides: dict, afresh: bool = False) -> None:
        def progress(_name: str, stage: str, _fraction: float) -> None:
            self._on_progress(job_id, stage)

        started = time.monotonic()
        while True:
            try:
                if afresh:  # the same bytes under corrected metadata: drop the old entry, then add anew
                    self.store.remove([str(path)], lock_timeout=LOCK_WAIT_S)
                    afresh = False
                report = self.store.add([path], overrides=overrides or None, progress=progress,
                                        lock_timeout=LOCK_WAIT_S)
                break
            except IndexBusy:
                if time.monotonic() - started > LOCK_GIVE_UP_S:
                    raise
                self._update(job_id, state="queued", detail="waiting: another indexing run holds the index")
        row = report.rows[0] if report.rows else {}
        status = row.get("status")
        if status == "indexed":
            changes = {"state": "done", "detail": f"{row.get('chunks', 0)} chunks"}
        elif status == "skipped":
            changes = {"state": "unchanged", "detail": "already indexed, unchanged"}
        else:
            changes = {"state": "failed", "detail": row.get("error") or "not indexed"}
        self._update(job_id, finished=time.monotonic(), **changes)
        if report.changed and self.on_published:
            try:
                self.on_published()
            except Exception:  # noqa: BLE001 - a reader's refresh must not fail the job
                log.exception("refreshing after a publish failed")

    def _on_progress(self, job_id: int, stage: str) -> None:
        counted = _EMBEDDING.match(stage)
        if counted:
            done, total = int(counted.group(1)), int(counted.group(2))
            with self._lock:
                job = self._jobs[job_id]
                if job.embed_started is None:
                    job.embed_started = time.monotonic()
                job.state, job.chunks_done, job.chunks_total, job.detail = "embedding", done, total, ""
            self._record()
            return
        if stage == "embedding":
            self._update(job_id, state="embedding", embed_started=time.monotonic(), detail="")
        elif stage in ("parsing", "chunking"):
            self._update(job_id, state=stage, detail="")
        elif stage == "indexed":  # the shard is written; the next generation is being built
            self._update(job_id, state="publishing")


def record_label(record, fallback: str) -> str:
    """'TICKER FORM FY2024 Q2' for a filing record, or the fallback when it says none of these."""
    parts = [getattr(record, "ticker", None) or "", getattr(record, "form", None) or ""]
    fy = getattr(record, "fiscal_year", None)
    if fy:
        parts.append(f"FY{fy}")
    period = getattr(record, "fiscal_period", None)
    if period and period != "FY":
        parts.append(str(period))
    label = " ".join(p for p in parts if p)
    return label or fallback


CORRECTABLE = ("company", "ticker", "form", "fiscal_year", "fiscal_period")


def correct_record(record, values: dict) -> list[str]:
    """Apply what the user corrected (company, ticker, form, fiscal year, period) to a filing record and save its
    filing.json, which the index reads first. Returns the fields that changed."""
    changed = []
    for key in CORRECTABLE:
        value = values.get(key)
        if value is None or (isinstance(value, float) and value != value) or str(value).strip() == "":
            continue
        if key == "fiscal_year":
            value = int(value)
        elif key in ("ticker", "form", "fiscal_period"):
            value = str(value).strip().upper()
        else:
            value = str(value).strip()
        if value == getattr(record, key):
            continue
        setattr(record, key, value)
        changed.append(key)
        if key in ("fiscal_year", "fiscal_period"):
            setattr(record, f"{key}_source", "caller")
    if changed:
        record.save()
    return changed
