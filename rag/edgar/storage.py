"""Files under data_dir: safe names, checks that a download arrived whole, temporary folders swapped into place,
and reading a filing's metadata and main document through rag.parse."""

from __future__ import annotations

import html
import logging
import os
import re
import shutil
import time
import unicodedata
from pathlib import Path

from .. import parse
from .record import EdgarError, field_of

log = logging.getLogger(__name__)

TMP_PREFIX = ".edgar-tmp-"
UPLOAD_TMP_PREFIX = ".upload-tmp-"
STALE_TMP_SECONDS = 24 * 3600


def safe_file_name(name: str) -> str:
    """A file name that can only mean a file inside its folder: no directories, no leading dots, plain characters."""
    base = re.split(r"[\\/]", str(name))[-1]
    base = unicodedata.normalize("NFKC", base)
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._- ")
    stem, suffix = os.path.splitext(base)
    stem = stem.strip("._- ")[:80] or "filing"
    suffix = suffix.lower() if re.fullmatch(r"\.[a-z0-9]{1,8}", suffix.lower()) else ""
    return stem + suffix


def _tail(path: Path, size: int = 4096) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        length = fh.tell()
        fh.seek(max(0, length - size))
        return fh.read()


def is_complete_full_submission(path: Path) -> bool:
    """Present, non-empty and ending in </SEC-DOCUMENT>: the whole file arrived."""
    return path.is_file() and path.stat().st_size > 0 and _tail(path).rstrip().endswith(b"</SEC-DOCUMENT>")


def is_complete_html(path: Path) -> bool:
    """Present, non-empty and with </html> near its end: the whole document arrived."""
    return path.is_file() and path.stat().st_size > 0 and b"</html>" in _tail(path).lower()


def remove_tree(path: Path) -> None:
    """Remove a folder and what it holds, quietly: used on the way out, where a failure must not hide the first."""
    shutil.rmtree(path, ignore_errors=True)


def clean_stale_tmp(folder: Path) -> None:
    """Temporary folders a killed process left behind (a live one is never older than a day)."""
    now = time.time()
    for prefix in (TMP_PREFIX, UPLOAD_TMP_PREFIX):
        for tmp in folder.glob(prefix + "*"):
            try:
                if now - tmp.stat().st_mtime > STALE_TMP_SECONDS:
                    remove_tree(tmp)
            except OSError:
                pass


def swap_into(src: Path, dst: Path, scratch: Path) -> None:
    """Move the finished folder `src` to `dst` with os.replace. An existing `dst` is first moved aside into
    `scratch` (a temporary folder the caller removes), since a directory cannot replace a non-empty one."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        aside = scratch / (".old-" + os.urandom(4).hex())
        os.replace(dst, aside)
    os.replace(src, dst)


def parsed_meta(path: Path, shown_name: str) -> dict:
    """The metadata the file states about itself (rag.parse); EdgarError when it cannot be read as a filing."""
    try:
        parsed = parse.parse_file(path)
    except parse.ParseError as exc:
        raise EdgarError(f"{shown_name} could not be read as a filing: {exc}") from exc
    except EdgarError:
        raise
    except Exception as exc:  # a parser bug or an odd file must not leave a half-added filing behind
        log.exception("parsing %s failed", path)
        raise EdgarError(f"{shown_name} could not be read as a filing: {type(exc).__name__}: {exc}") from exc
    return dict(parsed.meta or {})


def read_submission(path: Path, shown_name: str) -> parse.FullSubmission:
    """The full submission in the file; EdgarError when it cannot be read as one."""
    # latin-1 maps every byte to one character and back, so the main document is written out byte for byte.
    text = path.read_bytes().decode("latin-1")
    try:
        submission = parse.read_full_submission(text)
    except parse.ParseError as exc:
        raise EdgarError(f"{shown_name} could not be read as an EDGAR full submission: {exc}") from exc
    except Exception as exc:
        log.exception("reading full submission %s failed", path)
        raise EdgarError(
            f"{shown_name} could not be read as an EDGAR full submission: {type(exc).__name__}: {exc}"
        ) from exc
    return submission


def write_primary(submission: parse.FullSubmission, target: Path, shown_name: str) -> str | None:
    """Write the submission's main document to `target` (.htm). Returns its EDGAR file name."""
    primary = field_of(submission, "primary")
    text = field_of(primary, "text")
    if not text or not str(text).strip():
        raise EdgarError(f"{shown_name} holds no main document (no <DOCUMENT> with a <TEXT> body).")
    text = str(text).strip()
    # EDGAR wraps inline XBRL documents in <XBRL>...</XBRL> inside <TEXT>.
    text = re.sub(r"^\s*<XBRL>\s*", "", text, flags=re.I)
    text = re.sub(r"\s*</XBRL>\s*$", "", text, flags=re.I)
    filename = field_of(primary, "filename")
    if not re.search(r"<html|<body|<\?xml", text[:4096], flags=re.I):
        # An old plain-text filing: keep its layout in a <pre> so that the HTML parser reads it as it is.
        text = f"<html><body><pre>{html.escape(text)}</pre></body></html>"
    target.write_bytes(text.encode("latin-1", errors="replace"))
    return str(filename) if filename else None
