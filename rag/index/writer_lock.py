"""The index's writer lock, which says whom a waiting writer waits for.

Writers (an indexing run, a removal, a metadata correction; from the CLI or the app) take storage/index/.writer.lock
one at a time. The holder notes its pid, what it does and since when in .writer.lock.holder beside it: the lock
file itself cannot hold that, since filelock truncates it on every attempt to take it. A writer that finds the lock
taken says so through `on_wait` at once ("waiting for another indexing run (pid 4242, started 14:02:11) to release
storage/index/.writer.lock since 14:02:30"), again every `report_every_s` seconds, and when it gets the lock.
"""

from __future__ import annotations

import json
import logging
import os
import time
from contextlib import suppress
from pathlib import Path
from typing import Callable

from filelock import FileLock, Timeout

log = logging.getLogger(__name__)

LockWait = Callable[[str], None]  # receives each message of a wait
POLL_S = 0.25  # how often a waiting writer tries the lock again


def _clock(epoch: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch))


class WriterLock:
    """One writer's hold on an index folder's lock: `acquire(timeout)` waits up to `timeout` s (then raises
    filelock.Timeout), `release()` lets the next writer in. `what` names the work in other writers' messages."""

    def __init__(self, root: Path, *, what: str = "indexing run", on_wait: LockWait | None = None,
                 report_every_s: float = 10.0):
        self.root = Path(root)
        self.path = self.root / ".writer.lock"
        self.holder_path = self.root / ".writer.lock.holder"
        self.what = what
        self.on_wait = on_wait or (lambda message: log.warning("%s", message))
        self.report_every_s = report_every_s
        self._lock: FileLock | None = None

    def acquire(self, timeout: float) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.path), timeout=timeout)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            self._wait(lock, timeout)
        self._lock = lock
        self._note_holder()

    def _wait(self, lock: FileLock, timeout: float) -> None:
        """Try the lock every POLL_S until `timeout`, saying whom it waits for and for how long."""
        since = time.time()
        start = time.monotonic()
        self.on_wait(f"waiting for {self.holder()} to release {self.path} since {_clock(since)}")
        next_report = start + self.report_every_s
        while True:
            try:
                lock.acquire(timeout=POLL_S)
                break
            except Timeout:
                now = time.monotonic()
                if now - start >= timeout:
                    self.on_wait(f"gave up after {now - start:.0f} s: {self.holder()} still holds {self.path}")
                    raise
                if now >= next_report:
                    self.on_wait(f"still waiting for {self.holder()} ({now - start:.0f} s so far)")
                    next_report = now + self.report_every_s
        self.on_wait(f"got {self.path} after {time.monotonic() - start:.0f} s of waiting; going on")

    def holder(self) -> str:
        """Who holds the lock, as its holder noted: 'another indexing run (pid 4242, started 14:02:11)'."""
        try:
            note = json.loads(self.holder_path.read_text(encoding="utf-8"))
            pid, started, what = int(note["pid"]), float(note["started"]), str(note.get("what") or "writer")
        except (OSError, ValueError, KeyError, TypeError):
            return "another writer (it left no note of its pid)"
        return f"another {what} (pid {pid}, started {_clock(started)})"

    def _note_holder(self) -> None:
        note = {"pid": os.getpid(), "started": time.time(), "what": self.what}
        tmp = self.holder_path.with_name(f".{self.holder_path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(note), encoding="utf-8")
            os.replace(tmp, self.holder_path)
        except OSError as exc:  # the note only helps a waiting writer's message: never stop the work for it
            tmp.unlink(missing_ok=True)
            # Info, not a warning: on a full disk the run's own first write fails next and says so, in one line.
            log.info("cannot note the index lock's holder in %s: %s", self.holder_path, exc)

    def release(self) -> None:
        if self._lock is None:
            return
        with suppress(OSError):
            self.holder_path.unlink()
        self._lock.release()
        self._lock = None
