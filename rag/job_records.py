"""Team mode's record of indexing jobs (rag_jobs in the database at RAG_DATABASE_URL): every job that any app or
CLI process queues, with its state as it changes, so a team sees what is being indexed, by which process, and what
failed and why, whichever process they look from.

The queue (rag.jobs) runs its jobs from memory and writes each change here; a write also touches the writing
process's other unfinished rows. A queued or running row that has not been touched for STALE_S belongs to a
process that is gone (killed mid-index): it reads as "interrupted", and the filing can be indexed again, as a killed
writer's transaction left nothing of it.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from typing import Iterable

from .database import connect, ensure_schema, pooled

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
SCHEMA = [
    """CREATE TABLE IF NOT EXISTS rag_jobs (
        process text NOT NULL,
        job integer NOT NULL,
        label text NOT NULL,
        kind text NOT NULL,
        state text NOT NULL,
        detail text NOT NULL,
        chunks_done integer NOT NULL,
        chunks_total integer NOT NULL,
        submitted_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        PRIMARY KEY (process, job)
    )""",
    "CREATE INDEX IF NOT EXISTS rag_jobs_submitted ON rag_jobs (submitted_at DESC)",
]
STALE_S = 900  # longer than any one stage goes without a progress write (a long PDF's parse takes minutes)


class JobRecords:
    """This process's writer of rag_jobs rows, and a reader of everyone's."""

    def __init__(self, url: str, unfinished: tuple[str, ...]):
        self.url = url
        self.unfinished = list(unfinished)  # the queue's states of a job not yet finished (rag.jobs.UNFINISHED)
        # One name per process run: host, process id and a random part (a restarted process may reuse the pid).
        self.process = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._schema_ready = False

    def _ready(self) -> None:
        if not self._schema_ready:
            with connect(self.url) as conn:
                ensure_schema(conn, "jobs", SCHEMA_VERSION, SCHEMA)
            self._schema_ready = True

    def write(self, jobs: Iterable) -> None:
        """Record the jobs' current state (rag.jobs.FilingJob), and touch this process's other unfinished rows."""
        rows = [(self.process, job.id, job.label, job.kind, job.state, job.detail[:500], job.chunks_done,
                 job.chunks_total, job.finished is not None) for job in jobs]
        if not rows:
            return
        self._ready()
        with pooled(self.url) as conn:
            conn.cursor().executemany(
                "INSERT INTO rag_jobs (process, job, label, kind, state, detail, chunks_done, chunks_total, "
                "finished_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, CASE WHEN %s THEN now() END) "
                "ON CONFLICT (process, job) DO UPDATE SET label = EXCLUDED.label, state = EXCLUDED.state, "
                "detail = EXCLUDED.detail, chunks_done = EXCLUDED.chunks_done, chunks_total = EXCLUDED.chunks_total, "
                "updated_at = now(), finished_at = coalesce(rag_jobs.finished_at, EXCLUDED.finished_at)", rows)
            conn.execute("UPDATE rag_jobs SET updated_at = now() WHERE process = %s AND state = ANY(%s)",
                         (self.process, self.unfinished))

    def recent(self, limit: int = 50) -> list[dict]:
        """The latest jobs of every process, newest first, each a dict; a queued or running one left untouched for
        STALE_S reads as state "interrupted"."""
        self._ready()
        with pooled(self.url) as conn:
            found = conn.execute(
                "SELECT process, job, label, kind, CASE WHEN state = ANY(%s) AND updated_at < now() - "
                "make_interval(secs => %s) THEN 'interrupted' ELSE state END, detail, chunks_done, chunks_total, "
                "submitted_at, updated_at, finished_at FROM rag_jobs ORDER BY submitted_at DESC, job DESC LIMIT %s",
                (self.unfinished, STALE_S, limit)).fetchall()
        keys = ("process", "job", "label", "kind", "state", "detail", "chunks_done", "chunks_total", "submitted_at",
                "updated_at", "finished_at")
        return [dict(zip(keys, row)) for row in found]


__all__ = ["JobRecords", "STALE_S"]
