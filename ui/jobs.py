"""The sidebar's view of the background queue (rag/jobs.py): this session's batches (one per click), one line per
filing, polled while work is under way; each finished batch has its own summary and Dismiss. In team mode, also
the team's latest jobs from every process (rag.job_records), read at most every TEAM_JOBS_TTL_S seconds.

Queued, downloading, parsing, embedding n of N chunks with the time left, done, or failed with the reason. While
anything is queued or running, a fragment redraws the lines every POLL_S seconds (a fragment's timed rerun never
interrupts the chat's own run); when a filing is published, or the queue empties, the whole page runs again so the
filters offer the new filings.
"""

from __future__ import annotations

import logging
import time

import streamlit as st

from rag.database import first_line
from rag.job_records import JobRecords
from rag.jobs import UNFINISHED, FilingJob

from . import core
from .text import safe_inline

log = logging.getLogger(__name__)

POLL_S = 1.0
TEAM_JOBS = 10  # the team's latest jobs shown
TEAM_JOBS_TTL_S = 5
K_SEEN = "jobs_seen_finished"  # how many filings had finished when this session last drew the page
K_IN_FULL_RUN = "jobs_in_full_run"
K_BATCHES = "jobs_my_batches"  # the batches (one per click) this session submitted: the only ones it shows


def _finished_count(jobs: list[FilingJob]) -> int:
    return sum(1 for j in jobs if j.kind == "filing" and j.finished_ok)


def track(s, job_ids: list[int]) -> None:
    """Remember the batches of jobs this session just submitted (the queue is the process's, shared by every
    browser session; each shows its own)."""
    queue = core.jobs(s)
    mine = st.session_state.setdefault(K_BATCHES, set())
    mine.update(b for b in (queue.batch_of(i) for i in job_ids) if b is not None)


def batches(jobs: list[FilingJob], mine: set[int]) -> list[list[FilingJob]]:
    """This session's jobs, one list per batch, oldest batch first."""
    grouped: dict[int, list[FilingJob]] = {}
    for job in jobs:
        if job.batch in mine:
            grouped.setdefault(job.batch, []).append(job)
    return [grouped[b] for b in sorted(grouped)]


def panel(s) -> None:
    queue = core.jobs(s)
    jobs = queue.snapshot()
    st.session_state[K_SEEN] = _finished_count(jobs)
    if queue.busy():
        st.session_state[K_IN_FULL_RUN] = True
        _live(s)
    else:
        _draw(s, jobs)


@st.fragment(run_every=POLL_S)
def _live(s) -> None:
    queue = core.jobs(s)
    jobs = queue.snapshot()
    # Only from the fragment's own timed runs: a rerun from inside a page run could drop a question just asked.
    timed = not st.session_state.pop(K_IN_FULL_RUN, False)
    if timed and (not queue.busy() or _finished_count(jobs) != st.session_state.get(K_SEEN)):
        st.rerun()  # a filing was published (or all are done): redraw the page so the filters offer it
    _draw(s, jobs)


def _draw(s, jobs: list[FilingJob]) -> None:
    """Each of this session's batches: under way (live lines, a stop button) or finished (its own summary, which
    counts that batch alone, and a Dismiss)."""
    for batch in batches(jobs, st.session_state.get(K_BATCHES, set())):
        if any(j.state == "queued" or j.active for j in batch):
            _running(s, batch)
        else:
            _finished(s, batch)


def _running(s, batch: list[FilingJob]) -> None:
    queue = core.jobs(s)
    todo = sum(1 for j in batch if j.state == "queued" or j.active)
    with st.status(f"Adding filings · {todo} to go", state="running", expanded=True):
        for job in batch:
            _line(job)
        st.button("Stop after this filing", key=f"jobs_cancel_{batch[0].batch}", icon=":material/stop_circle:",
                  type="tertiary", on_click=queue.cancel,
                  help="The filing being indexed finishes and is searchable; the queued ones are not started. "
                       "Nothing already indexed or downloaded is lost.")


def _dismiss(s, batch: int) -> None:
    st.session_state.get(K_BATCHES, set()).discard(batch)
    core.jobs(s).clear_finished({batch})


def _finished(s, batch: list[FilingJob]) -> None:
    label, state = summary(batch)
    with st.status(safe_inline(label), state=state, expanded=state == "error"):
        for job in batch:
            _line(job)
        st.button("Dismiss", key=f"dismiss_job_{batch[0].batch}", type="tertiary", icon=":material/close:",
                  on_click=_dismiss, args=(s, batch[0].batch))


def summary(jobs: list[FilingJob]) -> tuple[str, str]:
    """'2 filings indexed, 1 failed' and the status state ('complete' or 'error') for finished jobs."""
    filings = [j for j in jobs if j.kind == "filing"]
    done = sum(1 for j in filings if j.state == "done")
    same = sum(1 for j in filings if j.state == "unchanged")
    failed = sum(1 for j in jobs if j.state == "failed")
    cancelled = sum(1 for j in jobs if j.state == "cancelled")
    parts = []
    if done:
        parts.append(f"{done} filing{'s' if done != 1 else ''} indexed")
    if same:
        parts.append(f"{same} already indexed")
    if failed:
        parts.append(f"{failed} failed")
    if cancelled:
        parts.append(f"{cancelled} cancelled")
    label = ", ".join(parts) or "Nothing to index"
    return label, ("error" if failed and not (done or same) else "complete")


def line_text(job: FilingJob, now: float | None = None) -> str:
    """One job's state in words."""
    label = job.label
    if job.state == "embedding" and job.chunks_total:
        text = f"{label} · embedding {job.chunks_done} of {job.chunks_total} chunks"
        eta = job.eta_seconds(now)
        return text + (f" · about {_duration(eta)} left" if eta is not None else "")
    if job.state == "done":
        return f"{label} · done" + (f", {job.detail}" if job.detail else "")
    if job.state == "unchanged":
        return f"{label} · already indexed"
    if job.state in ("failed", "cancelled"):
        return f"{label} · {job.state}" + (f": {job.detail}" if job.detail else "")
    return f"{label} · {job.state}" + (f": {job.detail}" if job.detail else "")


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"


def _line(job: FilingJob) -> None:
    text = safe_inline(line_text(job, time.monotonic()))
    if job.state == "failed":
        st.error(text, icon=":material/error:")
    elif job.state == "embedding" and job.chunks_total:
        st.progress(job.chunks_done / job.chunks_total, text=text)
    elif job.active:
        st.caption(":material/progress_activity: " + text)
    elif job.state == "queued":
        st.caption(":material/schedule: " + text)
    elif job.state == "cancelled":
        st.caption(":material/block: " + text)
    else:
        st.caption(":green[:material/check_circle:] " + text)


@st.cache_data(ttl=TEAM_JOBS_TTL_S, show_spinner=False)
def _team_jobs(url: str) -> list[dict]:
    return JobRecords(url, UNFINISHED).recent(TEAM_JOBS)


def team_panel(s) -> None:
    """Team mode: the latest indexing jobs of every app and CLI process on the database, who ran them (which
    process) and how they ended, so a filing a colleague is adding is not added twice."""
    if not s.served:
        return
    try:
        jobs = _team_jobs(s.database_url)
    except Exception as exc:  # noqa: BLE001 - the team's view is extra: the chat works without it
        log.warning("reading the team's indexing jobs failed", exc_info=True)
        st.caption(safe_inline(f"The team's indexing jobs could not be read: {first_line(exc)}"))
        return
    if not jobs:
        return
    running = sum(1 for j in jobs if j["state"] in UNFINISHED)
    title = f"Team indexing · {running} under way" if running else "Team indexing"
    with st.expander(title, icon=":material/groups:"):
        for job in jobs:
            st.markdown(safe_inline(team_line(job)))
        st.caption("Every process's latest jobs on the shared database; `python -m rag jobs` lists more.")


def team_line(job: dict) -> str:
    """One of the team's jobs in words."""
    when = job["submitted_at"].astimezone().strftime("%b %d %H:%M")
    if job["state"] == "embedding" and job["chunks_total"]:
        state = f"embedding {job['chunks_done']} of {job['chunks_total']} chunks"
    elif job["state"] == "interrupted":
        state = "interrupted (its process stopped): index it again"
    else:
        state = job["state"] + (f": {job['detail']}" if job["detail"] and job["state"] != "queued" else "")
    return f"{when} · {job['label']} · {state}"
