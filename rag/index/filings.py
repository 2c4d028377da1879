"""Which files are filings, and each filing's identity (its bytes' sha256) and metadata."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path
from typing import Iterable

from ..companies import short_names
from ..parse import ParsedFiling

log = logging.getLogger(__name__)

# What a filing's record in the manifest carries, and its Document's metadata when it is chunked.
FILING_META_KEYS = (
    "doc_id", "ticker", "company", "cik", "form", "fiscal_year", "fiscal_year_source", "fiscal_period",
    "fiscal_period_source", "period_end", "filing_date", "accession", "source", "url", "path", "origin",
)


def filing_meta(path: Path, parsed: ParsedFiling, sha256: str, overrides: dict | None = None) -> dict:
    """The filing's metadata: what the download recorded beside the file (filing.json), then what the file
    itself says; the caller's overrides (what the user typed: `rag index --ticker`, the uploader's fields) win over
    both, as a correction would (an old PDF's cover names no ticker, and a user who knows better says so)."""
    meta: dict = {}
    sidecar = path.parent / "filing.json"
    if sidecar.is_file():
        try:
            meta.update({k: v for k, v in json.loads(sidecar.read_text()).items() if v not in (None, "")})
        except (OSError, ValueError):
            log.warning("ignoring unreadable %s", sidecar)
    for key, value in parsed.meta.items():
        meta.setdefault(key, value)
    for key, value in (overrides or {}).items():
        if value in (None, ""):
            continue
        if key in ("fiscal_year", "fiscal_period") and str(meta.get(key)) != str(value):
            meta[f"{key}_source"] = "caller"
        meta[key] = value
    if meta.get("ticker"):
        meta["ticker"] = str(meta["ticker"]).upper()
    if meta.get("fiscal_year") not in (None, ""):
        meta["fiscal_year"] = int(meta["fiscal_year"])
    meta["doc_id"] = meta.get("accession") or f"local-{sha256[:16]}"
    meta["path"] = str(path.resolve())
    # A record's "source" says how it arrived (edgar/upload); a chunk's "source" is where to read it.
    meta["origin"] = meta.pop("source", None) or "path"
    meta["source"] = meta.get("url") or str(path.resolve())
    meta["sha256"] = sha256
    return meta


def filing_files(paths: Iterable[str | Path]):
    """The files to index for the paths a user names. In a folder, a filing that was downloaded or uploaded (a filing.json beside it) counts
    once, as the primary document the record names; hidden folders (a download in progress) are skipped."""
    suffixes = {".htm", ".html", ".txt", ".pdf"}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path).parts
                if any(part.startswith(".") for part in rel) or not child.is_file():
                    continue
                if child.name == "filing.json":
                    primary = _recorded_primary(child)
                    if primary is not None:
                        yield primary
                    continue
                if child.suffix.lower() in suffixes and not (child.parent / "filing.json").is_file():
                    yield child
        elif path.exists():
            yield regular_file(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")


class PathRefused(ValueError):
    """A path named to be indexed that is no regular file (a FIFO, a device, a socket)."""


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def regular_file(path: Path) -> Path:
    """`path` when it is a regular file (through any links); PathRefused otherwise. Only stat is used: opening a
    FIFO for reading blocks until a writer comes, and /dev/zero or /dev/urandom never end, so a reader would hang
    (holding the writer lock) rather than fail."""
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return path
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    shown = f"{path} (a link to {os.path.realpath(path)})" if path.is_symlink() else str(path)
    raise PathRefused(f"{shown} is {kind}; only regular files are read")


def indexable(path: Path, max_mb: int) -> Path:
    """`path` when it is a regular file of at most `max_mb` MB (0: no limit); PathRefused saying why otherwise.
    Checked before a byte is read: a file far beyond any filing would cost gigabytes and hours to index."""
    regular_file(path)
    size = path.stat().st_size
    if max_mb and size > max_mb * 1024 * 1024:
        raise PathRefused(f"{path} is {size / 1024 / 1024:.1f} MB, over the {max_mb} MB limit for one filing "
                          "(RAG_MAX_FILE_MB)")
    return path


def _recorded_primary(record: Path) -> Path | None:
    try:
        name = json.loads(record.read_text()).get("path")
    except (OSError, ValueError):
        return None
    if not name:
        return None
    primary = (record.parent / name).resolve()
    # The record must name a file inside its own folder: a record's contents never choose another path.
    if primary.parent != record.parent.resolve() or not primary.is_file():
        return None
    return primary


def shared_ticker(meta: dict, indexed: Iterable[dict]) -> str | None:
    """The ticker of the indexed filings of the same company (same CIK, else the same name without its
    'Inc.'), for a filing that names none: a 10-K's cover printed no trading symbol before 2019, and a company's
    filings must share one ticker to be searched together. None when none matches or the matches disagree."""
    cik = str(meta.get("cik") or "").lstrip("0")
    names = short_names(meta.get("company") or "")
    found = set()
    for other in indexed:
        ticker = str(other.get("ticker") or "").upper()
        if not ticker:
            continue
        other_cik = str(other.get("cik") or "").lstrip("0")
        if (cik and other_cik == cik) or (not (cik and other_cik) and names & short_names(other.get("company") or "")):
            found.add(ticker)
    return found.pop() if len(found) == 1 else None
