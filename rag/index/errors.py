"""The index's errors a user reads, and write failures of the storage folder said as one line.

The libraries that write the index report a full disk in their own words: FAISS as a C++ assertion ("'ret ==
(size * 4)' failed"), numpy as "122112 requested and 20448 written", SQLite as "database or disk is full" or, when
it cannot even make its shared-memory file, "disk I/O error". `storage_error` turns each into a StorageError that
names the storage folder, what is wrong with it and the room left on its disk.
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path


class IndexError_(RuntimeError):
    """A problem with the index a user should read (named with a trailing _ to keep the builtin usable)."""


class IndexBusy(IndexError_):
    pass


class StorageError(IndexError_):
    """The storage folder cannot be written: a full disk, read-only storage, no permission, an I/O error."""


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READ_ONLY = {errno.EROFS}
_DENIED = {errno.EACCES, errno.EPERM}
_IO = {errno.EIO}
# Below this much room, a write that failed without saying why failed for want of room.
_NEARLY_FULL = 1 << 20


def free_space(folder: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the disk holding `folder` (its nearest existing parent)."""
    path = Path(folder).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def size_text(size: float | None) -> str:
    """'0 bytes', '12.0 KB', '3.4 MB', '1.2 GB'."""
    if size is None:
        return "unknown"
    if size < 1024:
        return f"{int(size)} bytes"
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            break
    return f"{size:.1f} {unit}"


def _kind(exc: BaseException | None) -> str | None:
    """full | read-only | denied | io | None (not a failure to write: a bug or a missing input, shown as it is).
    An error raised for another (the fact store's own, around SQLite's) is judged by the one it was raised for."""
    for _ in range(4):
        if exc is None:
            return None
        kind = _own_kind(exc)
        if kind is not None:
            return kind
        exc = exc.__cause__
    return None


def _own_kind(exc: BaseException) -> str | None:
    if isinstance(exc, OSError):
        if exc.errno in _FULL:
            return "full"
        if exc.errno in _READ_ONLY:
            return "read-only"
        if exc.errno in _DENIED:
            return "denied"
        if exc.errno in _IO:
            return "io"
        # numpy's short write ("2304 requested and 0 written") carries no errno.
        return "io" if exc.errno is None and "written" in str(exc) else None
    if isinstance(exc, sqlite3.Error):
        text = str(exc).lower()
        if "full" in text:
            return "full"
        if "readonly" in text or "read-only" in text:
            return "read-only"
        return "io" if "i/o" in text or "unable to open" in text else None
    if isinstance(exc, RuntimeError) and "faiss" in str(exc) and "write" in str(exc).lower():
        return "io"  # faiss::write_index's assertion that fwrite wrote every byte
    return None


def storage_error(exc: BaseException, folder: Path, doing: str, outcome: str) -> StorageError | None:
    """The StorageError `exc` amounts to while the index `doing` ("write the next index generation") in `folder`,
    saying `outcome` (what is left as it was); None when `exc` is no failure to write."""
    kind = _kind(exc)
    if kind is None:
        return None
    free = free_space(folder)
    if kind == "io" and free is not None and free < _NEARLY_FULL:
        kind = "full"
    if kind == "full":  # measured once the failed write's temporaries are gone, hence "now"
        state = f"ran out of room on its disk ({size_text(free)} free now)"
    elif kind == "read-only":
        state = "is read-only"
    elif kind == "denied":
        state = "is not writable by this user (permission denied)"
    else:
        state = f"could not be written ({_detail(exc)}; {size_text(free)} free)"
    return StorageError(f"the storage folder {folder} {state}: could not {doing}. {outcome}")


def _detail(exc: BaseException) -> str:
    """The words of the error at the bottom of the chain ("disk I/O error", "Input/output error")."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return getattr(exc, "strerror", None) or str(exc)
