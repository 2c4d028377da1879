"""Filings added by hand (.htm/.html, EDGAR full-submission .txt, .pdf): copied into data_dir/uploads/<sha256[:16]>/
with a filing.json, from what the file says and what the caller adds for what it does not."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from .. import parse
from ..companies import TICKER_FORM, checked_ticker
from ..config import Settings, get_settings
from .record import (
    ACCESSION_RE,
    EXTRACTED_PRIMARY,
    FISCAL_PERIODS,
    FP_CALLER,
    FP_DEI,
    FY_CALLER,
    FY_DEI,
    UPLOADS_DIR,
    EdgarError,
    FilingRecord,
    edgar_date,
    field_of,
    filing_url,
    fiscal_year_and_source,
    norm_cik,
)
from .storage import (
    UPLOAD_TMP_PREFIX,
    clean_stale_tmp,
    parsed_meta,
    read_submission,
    remove_tree,
    safe_file_name,
    swap_into,
    write_primary,
)

UPLOAD_SUFFIXES = (".htm", ".html", ".txt", ".pdf")

_OVERRIDE_KEYS = {"ticker", "company", "cik", "form", "fiscal_year", "fiscal_period", "period_end", "filing_date",
                  "accession"}


def add_local_file(
    path: str | Path,
    *,
    settings: Settings | None = None,
    name: str | None = None,
    source: str = "upload",
    **meta_overrides: Any,
) -> FilingRecord:
    """Copy a filing file (.htm/.html, EDGAR full-submission .txt, .pdf) into data_dir/uploads/<sha256[:16]>/
    and record its metadata.

    name: the file's own name when `path` is a temporary copy (e.g. a browser upload); it is sanitised.
    source: "upload" (default) or "path".
    meta_overrides: ticker, company, cik, form, fiscal_year, fiscal_period ("Q1".."Q3", "FY"), period_end,
    filing_date, accession, for what the file does not say. What the file's tags (dei:) or EDGAR header say wins;
    the caller's values beat what was only read from the cover page's words or derived (a fiscal year from the
    period end, a quarter from the statements): fiscal_year_source / fiscal_period_source then say "caller".
    """
    settings = settings or get_settings()
    unknown = set(meta_overrides) - _OVERRIDE_KEYS
    if unknown:
        raise TypeError(f"add_local_file() got unknown metadata {sorted(unknown)}; known: {sorted(_OVERRIDE_KEYS)}")
    if source not in ("upload", "path"):
        raise ValueError("source must be 'upload' or 'path'")
    src = Path(path)
    shown = Path(str(name or src.name).replace("\\", "/")).name or "the file"
    safe = _checked_file(src, name, shown, settings)
    overrides = _clean_overrides(meta_overrides, shown)

    data_dir = Path(settings.data_dir)
    uploads = data_dir / UPLOADS_DIR
    uploads.mkdir(parents=True, exist_ok=True)
    clean_stale_tmp(data_dir)
    tmp = Path(tempfile.mkdtemp(prefix=UPLOAD_TMP_PREFIX, dir=data_dir))
    try:
        work = tmp / "filing"
        work.mkdir()
        copy = work / safe
        if copy.resolve().parent != work.resolve():  # cannot happen after safe_file_name; checked all the same
            raise EdgarError(f"{shown}: refusing a file name that points outside the upload folder.")
        file_sha = _copy_within_limit(src, copy, shown, settings)
        primary, header, edgar_name = _primary_document(copy, work, shown)
        meta = parsed_meta(primary, shown)
        record = _local_record(primary, meta, header, overrides, edgar_name, source)
        final = uploads / file_sha[:16]
        record.path = final / primary.name
        record.save(work, final_folder=final)
        swap_into(work, final, tmp)
        return record
    finally:
        remove_tree(tmp)


def _checked_file(src: Path, name: str | None, shown: str, settings: Settings) -> str:
    """The safe name to store the file under, once it is known to exist, be of a kind that can be added and be of
    an acceptable size; EdgarError otherwise."""
    if not src.is_file():
        raise EdgarError(f"{shown}: no such file.")
    safe = safe_file_name(name or src.name)
    suffix = Path(safe).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise EdgarError(f"{shown}: only EDGAR .htm/.html files, full-submission .txt files and PDFs can be "
                         f"added, not {'a ' + suffix + ' file' if suffix else 'a file without a suffix'}.")
    size = src.stat().st_size
    if size > _limit_bytes(settings):
        raise EdgarError(f"{shown} is {size / 1024 / 1024:.1f} MB, over the {settings.max_upload_mb} MB limit "
                         "(RAG_MAX_UPLOAD_MB).")
    if size == 0:
        raise EdgarError(f"{shown} is empty.")
    return safe


def _limit_bytes(settings: Settings) -> int:
    return int(settings.max_upload_mb) * 1024 * 1024


def _copy_within_limit(src: Path, copy: Path, shown: str, settings: Settings) -> str:
    """Copy src to copy and return the SHA-256 of its bytes. The limit is checked again while copying: the file
    may have grown since it was measured."""
    limit_bytes = _limit_bytes(settings)
    digest = hashlib.sha256()
    with open(src, "rb") as fin, open(copy, "wb") as fout:
        copied = 0
        for block in iter(lambda: fin.read(1 << 20), b""):
            copied += len(block)
            if copied > limit_bytes:
                raise EdgarError(f"{shown} is over the {settings.max_upload_mb} MB limit (RAG_MAX_UPLOAD_MB).")
            digest.update(block)
            fout.write(block)
    return digest.hexdigest()


def _primary_document(copy: Path, work: Path, shown: str) -> tuple[Path, dict | None, str | None]:
    """(the document to parse, the full submission's header, its EDGAR file name). A PDF or HTML file is its own
    primary document; a full-submission .txt has its main document written out beside it."""
    suffix = copy.suffix.lower()
    if suffix == ".pdf":
        with open(copy, "rb") as fh:
            if not fh.read(1024).lstrip().startswith(b"%PDF-"):
                raise EdgarError(f"{shown} is not a PDF (it does not start with %PDF-).")
    elif suffix == ".txt":
        head = copy.read_bytes()[:65536].upper()
        if b"<DOCUMENT>" not in head and b"<SEC-DOCUMENT>" not in head and b"<SEC-HEADER>" not in head:
            raise EdgarError(f"{shown} is not an EDGAR full-submission .txt (no <SEC-DOCUMENT>/<DOCUMENT> "
                             "blocks); add the filing's .htm instead.")
        submission = read_submission(copy, shown)
        primary = work / EXTRACTED_PRIMARY
        edgar_name = write_primary(submission, primary, shown)
        return primary, field_of(submission, "header"), edgar_name
    return copy, None, None


def _clean_overrides(raw: dict, shown: str) -> dict:
    """The caller's metadata in the record's spellings (upper-case ticker and form, bare CIK, ISO dates);
    EdgarError for a value that cannot be one."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if value in (None, ""):
            continue
        if key == "fiscal_year":
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise EdgarError(f"{shown}: the fiscal year must be a year like 2024, got {value!r}.") from None
        elif key == "ticker":
            value = checked_ticker(value)
            if value is None:
                raise EdgarError(f"{shown}: {raw[key]!r} is not a ticker: {TICKER_FORM}.")
        elif key == "form":
            value = str(value).strip().upper()
        elif key == "fiscal_period":
            value = str(value).strip().upper()
            if value not in FISCAL_PERIODS:
                raise EdgarError(f"{shown}: the fiscal period must be one of {', '.join(FISCAL_PERIODS)}, "
                                 f"got {raw[key]!r}.")
        elif key == "cik":
            value = norm_cik(value)
        elif key in ("period_end", "filing_date"):
            iso = edgar_date(value)
            if iso is None:
                raise EdgarError(f"{shown}: {key.replace('_', ' ')} must be a date like 2024-09-28, got {value!r}.")
            value = iso
        elif key == "accession":
            value = str(value).strip()
            if not ACCESSION_RE.match(value):
                raise EdgarError(f"{shown}: an accession number looks like 0001234567-24-000123, got {value!r}.")
        else:
            value = str(value).strip()
        out[key] = value
    return out


def _local_record(primary: Path, meta: dict, header, overrides: dict, edgar_name: str | None,
                  source: str) -> FilingRecord:
    """The record of an added file: what the file's tags say first, then its full submission's header, then the
    caller's metadata, then what was read from the cover page's words."""
    from_cover = set(meta.get("cover_fields") or ())

    def pick(key: str, header_key: str | None = None):
        told = None if key in from_cover else meta.get(key)
        guessed = meta.get(key) if key in from_cover else None
        for value in (told, field_of(header, header_key or key), overrides.get(key), guessed):
            if value not in (None, ""):
                return value
        return None

    period_end = edgar_date(pick("period_end"))
    if meta.get("fiscal_year") not in (None, "") and (meta.get("fiscal_year_source") or FY_DEI) == FY_DEI:
        fiscal_year, fy_source = fiscal_year_and_source(meta, period_end)
    elif "fiscal_year" in overrides:
        fiscal_year, fy_source = overrides["fiscal_year"], FY_CALLER
    else:
        fiscal_year, fy_source = fiscal_year_and_source(meta, period_end)
    if meta.get("fiscal_period") and (meta.get("fiscal_period_source") == FP_DEI or "fiscal_period" not in overrides):
        fiscal_period, fp_source = meta["fiscal_period"], meta.get("fiscal_period_source")
    elif "fiscal_period" in overrides:
        fiscal_period, fp_source = overrides["fiscal_period"], FP_CALLER
    else:
        fiscal_period, fp_source = None, None
    accession = pick("accession")
    accession = str(accession) if accession and ACCESSION_RE.match(str(accession)) else None
    cik = norm_cik(pick("cik"))
    sha = parse.file_sha256(primary)
    ticker = pick("ticker")
    form = pick("form")
    return FilingRecord(
        doc_id=accession or f"local-{sha[:16]}",
        path=primary,
        ticker=str(ticker).upper() if ticker else None,
        company=pick("company"),
        cik=cik,
        form=str(form).upper() if form else None,
        fiscal_year=fiscal_year,
        fiscal_year_source=fy_source,
        fiscal_period=fiscal_period,
        fiscal_period_source=fp_source,
        period_end=period_end,
        filing_date=edgar_date(pick("filing_date")),
        accession=accession,
        url=filing_url(cik, accession, edgar_name),
        source=source,
        sha256=sha,
    )
