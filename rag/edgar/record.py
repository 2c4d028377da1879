"""A filing on disk and what is known about it: FilingRecord (filing.json), the layout names under data_dir, and
the metadata rules shared by downloads and local files (CIK, dates in EDGAR's spellings, fiscal year, URL)."""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import asdict, dataclass, fields
from datetime import date
from pathlib import Path
from typing import Any

from .. import dates
from ..config import Settings, get_settings

log = logging.getLogger(__name__)

EDGAR_DIR = "sec-edgar-filings"  # sec-edgar-downloader's folder name, kept for the final layout too
UPLOADS_DIR = "uploads"
RECORD_NAME = "filing.json"
FULL_SUBMISSION = "full-submission.txt"
PRIMARY_STEM = "primary-document"
EXTRACTED_PRIMARY = PRIMARY_STEM + ".htm"

SEC_ARCHIVES = "https://www.sec.gov/Archives/edgar/data"
FY_DEI = "dei:DocumentFiscalYearFocus"
FY_PERIOD_END = "period_end"
FY_CALLER = "caller"
FP_DEI = "dei:DocumentFiscalPeriodFocus"
FP_CALLER = "caller"
FISCAL_PERIODS = ("Q1", "Q2", "Q3", "FY")

ACCESSION_RE = re.compile(r"^\d{10}-\d{2}-\d{6}$")


class EdgarError(Exception):
    """Something about getting a filing went wrong; the message is written for the analyst who asked."""


@dataclass
class FilingRecord:
    """One filing on disk and what is known about it. Saved as filing.json beside the primary document."""

    doc_id: str  # the accession when known, else "local-" + sha256[:16] of the primary document
    path: Path  # the primary document to parse (.htm/.html/.pdf)
    ticker: str | None = None
    company: str | None = None
    cik: str | None = None  # digits without leading zeros, e.g. "987654"
    form: str | None = None  # "10-K", "10-Q", ...
    fiscal_year: int | None = None
    fiscal_year_source: str | None = None  # "dei:DocumentFiscalYearFocus" | "period_end" | "fiscal_period" | "caller"
    fiscal_period: str | None = None  # "Q1" | "Q2" | "Q3" | "FY"
    # "dei:DocumentFiscalPeriodFocus" | "form" | "statement_periods" | "fiscal_year_end" | "release_title" | "caller"
    fiscal_period_source: str | None = None
    period_end: str | None = None  # ISO date
    filing_date: str | None = None  # ISO date
    accession: str | None = None  # "0000987654-24-000321"
    url: str | None = None  # the primary document on sec.gov, when known
    source: str = "edgar"  # "edgar" | "upload" | "path"
    sha256: str | None = None  # of the primary document

    def to_dict(self) -> dict:
        out = asdict(self)
        out["path"] = str(self.path)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "FilingRecord":
        known = {f.name for f in fields(cls)}
        clean = {k: v for k, v in data.items() if k in known}
        clean["path"] = Path(clean.get("path") or "")
        if clean.get("fiscal_year") not in (None, ""):
            clean["fiscal_year"] = int(clean["fiscal_year"])
        else:
            clean["fiscal_year"] = None
        if clean.get("cik") not in (None, ""):
            clean["cik"] = norm_cik(clean["cik"])
        clean.setdefault("doc_id", "")
        return cls(**clean)

    def save(self, folder: Path | None = None, *, final_folder: Path | None = None) -> Path:
        """Write filing.json into `folder` (default: the primary document's folder). The path is stored relative
        to where that folder ends up (`final_folder`, when it is written in a temporary folder and moved after),
        so that a moved data folder still reads back."""
        folder = Path(folder) if folder is not None else Path(self.path).parent
        anchor = Path(final_folder) if final_folder is not None else folder
        data = self.to_dict()
        try:
            data["path"] = Path(self.path).relative_to(anchor).as_posix()
        except ValueError:
            data["path"] = str(self.path)
        target = folder / RECORD_NAME
        tmp = folder / (".filing.json.tmp-" + os.urandom(4).hex())
        tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, target)
        return target

    @classmethod
    def load(cls, json_path: Path) -> "FilingRecord":
        json_path = Path(json_path)
        data = json.loads(json_path.read_text(encoding="utf-8"))
        record = cls.from_dict(data)
        if not record.path.is_absolute():
            record.path = json_path.parent / record.path
        return record


@dataclass
class DownloadOutcome:
    """One filing saved (record) or one failure (error, written for the analyst), for a ticker."""

    ticker: str
    record: FilingRecord | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.record is not None and self.error is None


def list_downloaded(settings: Settings | None = None) -> list[FilingRecord]:
    """Every filing saved under data_dir (downloads and uploads), read from its filing.json."""
    settings = settings or get_settings()
    data_dir = Path(settings.data_dir)
    if not data_dir.is_dir():
        return []
    records: list[FilingRecord] = []
    for json_path in data_dir.rglob(RECORD_NAME):
        rel = json_path.relative_to(data_dir)
        if any(part.startswith(".") for part in rel.parts):
            continue  # temporary folders of a download in progress
        try:
            record = FilingRecord.load(json_path)
        except (OSError, ValueError, TypeError) as exc:
            log.warning("ignoring unreadable %s: %s", json_path, exc)
            continue
        if not record.path.is_file():
            log.warning("ignoring %s: its document %s is missing", json_path, record.path)
            continue
        records.append(record)
    records.sort(key=lambda r: (r.ticker or "", r.form or "", -(r.fiscal_year or 0), r.filing_date or "",
                                r.doc_id))
    return records


# --------------------------------------------------------------------------------------------------------------
# Metadata rules shared by downloads and local files


def norm_cik(value: Any) -> str | None:
    """A CIK as digits without leading zeros ("0000987654" -> "987654"); None when there is none."""
    if value in (None, ""):
        return None
    digits = re.sub(r"\D", "", str(value))
    return str(int(digits)) if digits else None


def edgar_date(value: Any) -> str | None:
    """'20241101', '2024-11-01', date -> '2024-11-01'; anything else -> None."""
    if value in (None, ""):
        return None
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip()
    m = re.match(r"^(\d{4})-?(\d{2})-?(\d{2})", text)
    if not m:
        return None
    return dates.iso_date(m.group(1), m.group(2), m.group(3))


def fiscal_year_from_period_end(period_end: str | None) -> int | None:
    """rag.dates.fiscal_year_from_period_end for a date in any of EDGAR's spellings (None when there is none)."""
    iso = edgar_date(period_end)
    return dates.fiscal_year_from_period_end(iso) if iso else None


def fiscal_year_and_source(meta: dict, period_end: str | None) -> tuple[int | None, str | None]:
    """The company's own label (dei:DocumentFiscalYearFocus) when the file has it, else one derived from the
    period end (with the early-January rule of fiscal_year_from_period_end, also over a parser's plain year)."""
    fy, source = meta.get("fiscal_year"), meta.get("fiscal_year_source") or FY_DEI
    if fy not in (None, "") and source != FY_PERIOD_END:
        try:
            return int(fy), source
        except (TypeError, ValueError):
            pass
    derived = fiscal_year_from_period_end(period_end)
    if derived is not None:
        return derived, FY_PERIOD_END
    try:
        return (int(fy), source) if fy not in (None, "") else (None, None)
    except (TypeError, ValueError):
        return None, None


def filing_url(cik: str | None, accession: str | None, document: str | None) -> str | None:
    """The document's address on sec.gov, when the CIK, the accession and the file name are all known."""
    if not (cik and accession and document):
        return None
    document = Path(str(document).replace("\\", "/")).name
    if not document:
        return None
    return f"{SEC_ARCHIVES}/{int(cik)}/{accession.replace('-', '')}/{document}"


def filing_index_url(cik, accession) -> str | None:
    """The filing's index page on sec.gov (its documents and exhibits), when its CIK and accession are known."""
    digits = str(accession or "").replace("-", "")
    if not (str(cik or "").strip().isdigit() and digits.isdigit() and len(digits) == 18):
        return None
    return f"{SEC_ARCHIVES}/{int(cik)}/{digits}/{accession}-index.htm"


def field_of(obj: Any, name: str) -> Any:
    """obj[name] or obj.name, None when obj is None or has no such field (parse results or plain dicts)."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)
