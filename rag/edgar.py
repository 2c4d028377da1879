"""Filings in: EDGAR downloads (through sec-edgar-downloader) and local files, each with its metadata.

Where files land (all under settings.data_dir):

    sec-edgar-filings/<TICKER>/<FORM>/<accession>/full-submission.txt     what EDGAR serves as <accession>.txt
                                                 /primary-document.html    the 10-K/10-Q itself (or .htm, cut out
                                                                            of full-submission.txt when the
                                                                            primary download failed)
                                                 /filing.json              FilingRecord: the metadata
    uploads/<sha256[:16]>/<sanitised name>                                 a file added by hand (.htm/.html/.txt/.pdf)
                         /primary-document.htm                             for a full-submission .txt: its main document
                         /filing.json

A download goes into a hidden temporary folder inside data_dir (".edgar-tmp-*", same filesystem), is checked
(sec-edgar-downloader prints failures and carries on, so what landed is verified: present, non-empty, a
full-submission ending in </SEC-DOCUMENT>, a primary document ending in </html>), gets its filing.json, and only
then is moved into place with os.replace. The temporary folder is removed on every path out, so a failure leaves
nothing half-written behind.

The downloader (5.1.0) makes one attempt per file: no retries, no back-off, and no timeout on requests. It
throttles itself to 10 requests per second, process-wide. It reports a failed file only with print() and goes on:
that print is intercepted per thread (a module global in sec_edgar_downloader._orchestrator that shadows the
builtin) so that each outcome can say why.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import html
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
import unicodedata
from dataclasses import asdict, dataclass, fields
from datetime import date
from pathlib import Path
from typing import Any, Callable, Iterable

from . import dates, parse
from .config import Settings, get_settings

log = logging.getLogger(__name__)

FORMS = ("10-K", "10-Q")
EDGAR_DIR = "sec-edgar-filings"  # sec-edgar-downloader's folder name, kept for the final layout too
UPLOADS_DIR = "uploads"
RECORD_NAME = "filing.json"
FULL_SUBMISSION = "full-submission.txt"
PRIMARY_STEM = "primary-document"
EXTRACTED_PRIMARY = PRIMARY_STEM + ".htm"
UPLOAD_SUFFIXES = (".htm", ".html", ".txt", ".pdf")
TMP_PREFIX = ".edgar-tmp-"
UPLOAD_TMP_PREFIX = ".upload-tmp-"
STALE_TMP_SECONDS = 24 * 3600

SEC_ARCHIVES = "https://www.sec.gov/Archives/edgar/data"
FY_DEI = "dei:DocumentFiscalYearFocus"
FY_PERIOD_END = "period_end"
FY_CALLER = "caller"

_ACCESSION_RE = re.compile(r"^\d{10}-\d{2}-\d{6}$")
_TICKER_RE = re.compile(r"^[A-Z0-9][A-Z0-9.\-]{0,9}$")
_USER_AGENT_RE = re.compile(r"^(?P<name>\S.*?)\s+(?P<email>[^@\s]+@[^@\s]+\.[A-Za-z]{2,})$")
# sec-edgar-downloader 5.1.0 prints failures as:
#   Error occurred while downloading filing for accession number {}: {} 0000320193-24-000123 <exception text>
_FAILURE_RE = re.compile(
    r"Error occurred while downloading filing for accession number\s+(?:\{\}: \{\}\s+)?"
    r"(?P<acc>\d{10}-\d{2}-\d{6}):?\s+(?P<why>.*)"
)

Progress = Callable[[str, str, float], None]  # (ticker, message, fraction of the whole job done, 0..1)


class EdgarError(Exception):
    """Something about getting a filing went wrong; the message is written for the analyst who asked."""


# --------------------------------------------------------------------------------------------------------------
# Records


@dataclass
class FilingRecord:
    """One filing on disk and what is known about it. Saved as filing.json beside the primary document."""

    doc_id: str  # the accession when known, else "local-" + sha256[:16] of the primary document
    path: Path  # the primary document to parse (.htm/.html/.pdf)
    ticker: str | None = None
    company: str | None = None
    cik: str | None = None  # digits without leading zeros, e.g. "320193"
    form: str | None = None  # "10-K", "10-Q", ...
    fiscal_year: int | None = None
    fiscal_year_source: str | None = None  # "dei:DocumentFiscalYearFocus" | "period_end" | "caller"
    period_end: str | None = None  # ISO date
    filing_date: str | None = None  # ISO date
    accession: str | None = None  # "0000320193-24-000123"
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
            clean["cik"] = _norm_cik(clean["cik"])
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
    ticker: str
    record: FilingRecord | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.record is not None and self.error is None


# --------------------------------------------------------------------------------------------------------------
# Small helpers


def validate_user_agent(ua: str | None) -> tuple[str, str]:
    """SEC asks every program to say who it is: "Name email@domain". Returns (name, email) or raises EdgarError."""
    raw = (ua or "").strip()
    how = (
        'Set SEC_USER_AGENT to your name and e-mail, e.g. SEC_USER_AGENT="Jane Analyst jane@example.com" '
        "(or fill in the SEC user agent in the app's settings). SEC rejects anonymous programs."
    )
    if not raw:
        raise EdgarError("EDGAR needs to know who is asking, and no SEC user agent is set. " + how)
    match = _USER_AGENT_RE.match(raw)
    if not match:
        raise EdgarError(f'The SEC user agent must be "Name email@domain"; got {raw!r}. ' + how)
    return match.group("name").strip(), match.group("email")


def _norm_cik(value: Any) -> str | None:
    if value in (None, ""):
        return None
    digits = re.sub(r"\D", "", str(value))
    return str(int(digits)) if digits else None


def _iso_date(value: Any) -> str | None:
    """'20241101', '2024-11-01', date -> '2024-11-01'; anything else -> None."""
    if value in (None, ""):
        return None
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip()
    m = re.match(r"^(\d{4})-?(\d{2})-?(\d{2})", text)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
    except ValueError:
        return None


def fiscal_year_from_period_end(period_end: str | None) -> int | None:
    """rag.dates.fiscal_year_from_period_end for a date in any of EDGAR's spellings (None when there is none)."""
    iso = _iso_date(period_end)
    return dates.fiscal_year_from_period_end(iso) if iso else None


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _tail(path: Path, size: int = 4096) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        length = fh.tell()
        fh.seek(max(0, length - size))
        return fh.read()


def _is_complete_full_submission(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0 and _tail(path).rstrip().endswith(b"</SEC-DOCUMENT>")


def _is_complete_html(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0 and b"</html>" in _tail(path).lower()


def _safe_name(name: str) -> str:
    """A file name that can only mean a file inside its folder: no directories, no leading dots, plain characters."""
    base = re.split(r"[\\/]", str(name))[-1]
    base = unicodedata.normalize("NFKC", base)
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._- ")
    stem, suffix = os.path.splitext(base)
    stem = stem.strip("._- ")[:80] or "filing"
    suffix = suffix.lower() if re.fullmatch(r"\.[a-z0-9]{1,8}", suffix.lower()) else ""
    return stem + suffix


def _filing_url(cik: str | None, accession: str | None, document: str | None) -> str | None:
    if not (cik and accession and document):
        return None
    document = Path(str(document).replace("\\", "/")).name
    if not document:
        return None
    return f"{SEC_ARCHIVES}/{int(cik)}/{accession.replace('-', '')}/{document}"


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _clean_stale_tmp(folder: Path) -> None:
    """Temporary folders a killed process left behind (a live one is never older than a day)."""
    now = time.time()
    for prefix in (TMP_PREFIX, UPLOAD_TMP_PREFIX):
        for tmp in folder.glob(prefix + "*"):
            try:
                if now - tmp.stat().st_mtime > STALE_TMP_SECONDS:
                    _rmtree(tmp)
            except OSError:
                pass


def _swap_into(src: Path, dst: Path, scratch: Path) -> None:
    """Move the finished folder `src` to `dst` with os.replace. An existing `dst` is first moved aside into
    `scratch` (a temporary folder the caller removes), since a directory cannot replace a non-empty one."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        aside = scratch / (".old-" + os.urandom(4).hex())
        os.replace(dst, aside)
    os.replace(src, dst)


def _parse_meta(path: Path, shown_name: str) -> dict:
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


def _read_submission(path: Path, shown_name: str):
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


def _write_primary(submission, target: Path, shown_name: str) -> str | None:
    """Write the submission's main document to `target` (.htm). Returns its EDGAR file name."""
    primary = _get(submission, "primary")
    text = _get(primary, "text")
    if not text or not str(text).strip():
        raise EdgarError(f"{shown_name} holds no main document (no <DOCUMENT> with a <TEXT> body).")
    text = str(text).strip()
    # EDGAR wraps inline XBRL documents in <XBRL>...</XBRL> inside <TEXT>.
    text = re.sub(r"^\s*<XBRL>\s*", "", text, flags=re.I)
    text = re.sub(r"\s*</XBRL>\s*$", "", text, flags=re.I)
    filename = _get(primary, "filename")
    if not re.search(r"<html|<body|<\?xml", text[:4096], flags=re.I):
        # An old plain-text filing: keep its layout in a <pre> so that the HTML parser reads it as it is.
        text = f"<html><body><pre>{html.escape(text)}</pre></body></html>"
    target.write_bytes(text.encode("latin-1", errors="replace"))
    return str(filename) if filename else None


def _fiscal_year(meta: dict, period_end: str | None) -> tuple[int | None, str | None]:
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


# --------------------------------------------------------------------------------------------------------------
# Failure messages


_CUT_MARKERS = ("incompleteread", "connection broken", "chunkedencoding", "response ended prematurely",
                "remotedisconnected", "connection aborted", "connection reset", "protocolerror")
_UNREACHABLE_MARKERS = ("max retries exceeded", "failed to establish", "nameresolution", "name or service",
                        "connection refused", "temporary failure in name resolution", "network is unreachable")


def _explain(what: str, text: str, status: int | None = None, exc: BaseException | None = None) -> str:
    """Turn a requests/urllib3 failure into a sentence an analyst can act on."""
    if status is None:
        m = re.search(r"\b(\d{3}) (?:Client|Server) Error", text)
        status = int(m.group(1)) if m else None
    low = text.lower()
    if status == 429:
        return (f"SEC rate limit: EDGAR answered 429 Too Many Requests for {what}. SEC allows about 10 requests "
                "a second and then blocks for roughly 10 minutes; wait a while and try again.")
    if status == 403:
        return (f"EDGAR refused {what} (HTTP 403 Forbidden). SEC turns away programs without a proper user "
                'agent ("Name email@domain" in SEC_USER_AGENT) and addresses that sent too many requests.')
    if status == 404:
        return f"EDGAR has no such file: {what} (HTTP 404 Not Found)."
    if status is not None and status >= 500:
        return (f"EDGAR server error (HTTP {status}) for {what}: the SEC's servers are having trouble; "
                "try again later.")
    if status is not None:
        return f"EDGAR answered HTTP {status} for {what}."
    if any(m in low for m in _CUT_MARKERS):
        return (f"The connection to EDGAR was cut while downloading {what}: the file arrived incomplete and was "
                "not kept. Try again.")
    if "timed out" in low or "timeout" in low:
        return f"EDGAR did not answer in time for {what}. Try again later."
    if any(m in low for m in _UNREACHABLE_MARKERS):
        return (f"Could not reach EDGAR for {what}: check the internet connection (or proxy/firewall) and try "
                "again.")
    if exc is not None and isinstance(exc, ValueError) and ("json" in low or "expecting" in low):
        return f"EDGAR answered {what} with something that is not the expected JSON; try again later."
    short = text.strip().splitlines()[0][:300] if text.strip() else type(exc).__name__ if exc else "unknown error"
    return f"Downloading {what} failed: {short}"


def _explain_exc(what: str, exc: BaseException) -> str:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return _explain(what, f"{type(exc).__name__}: {exc}", status=status, exc=exc)


_capture = threading.local()


def _downloader_print(*args, sep=" ", end="\n", file=None, flush=False):
    """Stands in for print() inside sec_edgar_downloader._orchestrator, its only way of reporting a failed file.
    In a thread that is downloading, the message is kept for that download (and logged); anywhere else it is
    printed as before. Per thread, so that two sessions downloading at once keep their messages apart."""
    buffer = getattr(_capture, "buffer", None)
    if buffer is None or file is not None:
        builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
        return
    line = (" " if sep is None else sep).join(str(a) for a in args) + ("\n" if end is None else end)
    buffer.append(line)
    log.warning("sec-edgar-downloader: %s", line.strip())


@contextlib.contextmanager
def _downloader_messages():
    import sec_edgar_downloader._orchestrator as orchestrator

    if getattr(orchestrator, "print", None) is not _downloader_print:
        orchestrator.print = _downloader_print  # a module global shadows the builtin for that module only
    previous = getattr(_capture, "buffer", None)
    _capture.buffer = buffer = []
    try:
        yield buffer
    finally:
        _capture.buffer = previous


def _printed_failures(printed: str) -> dict[str, str]:
    return {m.group("acc"): m.group("why").strip() for m in _FAILURE_RE.finditer(printed)}


# --------------------------------------------------------------------------------------------------------------
# EDGAR download


def _filing_date_window(form: str, fiscal_year: int) -> tuple[date, date]:
    """Filing dates that can hold `form` for `fiscal_year`. A fiscal year Y ends between about late January of
    Y (NVIDIA) and early February of Y+1 (Home Depot's "fiscal 2024"), and its 10-K follows within months; its
    10-Qs start about a year earlier. The window is wide on purpose: the parsed fiscal year decides."""
    today = date.today()
    if form == "10-Q":
        after, before = date(fiscal_year - 1, 4, 1), date(fiscal_year + 1, 6, 30)
    else:
        after, before = date(fiscal_year, 1, 1), date(fiscal_year + 1, 12, 31)
    return after, min(before, today)


def _clean_tickers(tickers: str | Iterable[str]) -> list[str]:
    if isinstance(tickers, str):
        tickers = re.split(r"[\s,;]+", tickers)
    out: list[str] = []
    for raw in tickers:
        t = str(raw or "").strip().upper()
        if t and t not in out:
            out.append(t)
    return out


def download_filings(
    tickers: str | Iterable[str],
    *,
    form: str = "10-K",
    limit: int | None = None,
    fiscal_years: Iterable[int] | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> list[DownloadOutcome]:
    """Download 10-K or 10-Q filings from EDGAR into settings.data_dir.

    limit: the N latest filings (per ticker). fiscal_years: only filings of those fiscal years (the company's own
    label, dei:DocumentFiscalYearFocus); with both, the N latest of those. With neither, the latest filing only.
    Returns one outcome per filing saved or failed, and one per ticker that failed as a whole (unknown ticker,
    EDGAR unreachable, a fiscal year with no filing); a failure never stops the other tickers.
    Raises EdgarError before any request for a missing/malformed user agent or an unsupported form.
    progress(ticker, message, fraction) is called along the way; fraction is of the whole job, 0..1.
    """
    settings = settings or get_settings()
    name, email = validate_user_agent(settings.sec_user_agent)
    form = str(form or "").strip().upper()
    if form not in FORMS:
        raise EdgarError(f"Only {' and '.join(FORMS)} filings can be downloaded, not {form or 'an empty form'!r}.")
    if limit is not None:
        try:
            limit = int(limit)
        except (TypeError, ValueError):
            raise EdgarError(f"The number of filings must be a whole number, got {limit!r}.") from None
        if limit < 1:
            raise EdgarError("The number of filings to download must be at least 1.")
    years: list[int] | None = None
    if fiscal_years is not None:
        try:
            years = sorted({int(y) for y in fiscal_years})
        except (TypeError, ValueError):
            raise EdgarError(f"Fiscal years must be whole numbers like 2024, got {fiscal_years!r}.") from None
        bad = [y for y in years if not 1993 <= y <= date.today().year + 1]
        if bad:
            raise EdgarError(f"EDGAR has no filings for fiscal year {bad[0]}.")
        if not years:
            years = None
    if years is None and limit is None:
        limit = 1
    wanted = _clean_tickers(tickers)
    if not wanted:
        return []

    data_dir = Path(settings.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    _clean_stale_tmp(data_dir)

    def report(ticker: str, message: str, fraction: float) -> None:
        if progress is not None:
            progress(ticker, message, max(0.0, min(1.0, fraction)))

    # Imported here: the app and add_local_file do not need it, and tests patch its module-level URLs.
    from sec_edgar_downloader import Downloader

    report(wanted[0], "Connecting to EDGAR", 0.0)
    try:
        downloader = Downloader(name, email, data_dir)
    except Exception as exc:
        message = _explain_exc("the list of tickers (company_tickers_exchange.json)", exc)
        report(wanted[-1], message, 1.0)
        return [DownloadOutcome(t, None, message) for t in wanted]

    outcomes: list[DownloadOutcome] = []
    n = len(wanted)
    for i, ticker in enumerate(wanted):
        def step(message: str, within: float, _i=i, _t=ticker) -> None:
            report(_t, message, (_i + within) / n)

        try:
            outcomes.extend(
                _download_ticker(downloader, ticker, form, limit, years, data_dir, step)
            )
        except Exception as exc:  # a bug or an OS error for one ticker must not cost the others
            log.exception("download of %s failed", ticker)
            message = f"{ticker}: {exc}" if isinstance(exc, EdgarError) else f"{ticker}: {type(exc).__name__}: {exc}"
            outcomes.append(DownloadOutcome(ticker, None, message))
        step("Done", 1.0)
    return outcomes


def _download_ticker(downloader, ticker: str, form: str, limit: int | None, years: list[int] | None,
                     data_dir: Path, step: Callable[[str, float], None]) -> list[DownloadOutcome]:
    if not _TICKER_RE.match(ticker):
        return [DownloadOutcome(ticker, None, f"{ticker!r} is not a ticker (letters, digits, '.' or '-').")]
    is_cik = ticker.isdigit()
    key = ticker if is_cik else ticker.replace(".", "-")  # EDGAR writes share classes with a dash: BRK-B
    mapping: dict[str, str] = getattr(downloader, "ticker_to_cik_mapping", {}) or {}
    if is_cik:
        cik = _norm_cik(ticker)
    elif key in mapping:
        cik = _norm_cik(mapping[key])
    else:
        return [DownloadOutcome(ticker, None, f"{ticker} is not a ticker EDGAR knows. Check the spelling "
                                              "(share classes are written with a dash, e.g. BRK-B).")]

    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=data_dir))
    try:
        downloader.download_folder = tmp
        windows: list[tuple[date | None, date | None]] = (
            [(None, None)] if years is None else [_filing_date_window(form, y) for y in years]
        )
        failures: dict[str, str] = {}
        for w, (after, before) in enumerate(windows):
            if after is not None and before is not None and after > before:
                continue  # a fiscal year too recent to have been filed: reported as not found below
            if years is None:
                step(f"Downloading the {limit} latest {form} filing(s) of {ticker}", 0.05)
            else:
                step(f"Downloading {ticker} {form} filings for FY{years[w]} "
                     f"(filed {after.isoformat()} to {before.isoformat()})", 0.05 + 0.5 * w / len(windows))
            try:
                with _downloader_messages() as printed:
                    downloader.get(form, key, limit=limit if years is None else None, after=after, before=before,
                                   download_details=True)
            except Exception as exc:
                return [DownloadOutcome(ticker, None, f"{ticker}: " + _explain_exc(f"the list of {ticker}'s filings",
                                                                                     exc))]
            failures.update(_printed_failures("".join(printed)))

        # What landed: every accession folder the downloader created, wherever its layout puts them.
        landed = sorted({p.parent for p in tmp.rglob("*") if p.is_file() and p.parent != tmp}, key=lambda p: p.name)
        records: list[tuple[Path, FilingRecord]] = []
        failed: list[DownloadOutcome] = []
        for j, acc_dir in enumerate(landed):
            acc = acc_dir.name
            if not _ACCESSION_RE.match(acc):
                log.warning("ignoring unexpected folder %s from the downloader", acc_dir)
                continue
            step(f"Checking and reading {form} {acc}", 0.6 + 0.35 * j / max(1, len(landed)))
            try:
                record = _finish_download(acc_dir, ticker=None if is_cik else ticker, cik=cik, form=form)
            except EdgarError as exc:
                # A folder exists only when the full submission arrived; what failed is checking or reading it.
                failed.append(DownloadOutcome(ticker, None, f"{ticker} {form} {acc}: {exc}"))
                continue
            records.append((acc_dir, record))
        landed_names = {d.name for d in landed}
        for acc, why in failures.items():
            if acc not in landed_names:
                failed.append(DownloadOutcome(ticker, None, _explain(f"{ticker} {form} {acc}", why)))

        outcomes: list[DownloadOutcome] = []
        selected = records
        if years is None:
            outcomes.extend(failed)
            if not landed and not failures:
                outcomes.append(DownloadOutcome(ticker, None, f"EDGAR lists no {form} filings for {ticker}."))
        else:
            selected = [(d, r) for d, r in records if r.fiscal_year in years]
            for _, r in records:
                if r.fiscal_year not in years:
                    log.info("%s %s %s is FY%s, not asked for: discarded", ticker, form, r.accession, r.fiscal_year)
            found = {r.fiscal_year for _, r in selected}
            missing = [y for y in years if y not in found]
            if missing:
                # A failed filing may be the missing year: say so. When every year was found, the failures
                # were filings of other years that shared the filing-date window, and are only logged.
                outcomes.extend(failed)
            for o in failed if not missing else []:
                log.info("not needed after all: %s", o.error)
            for y in missing:
                after, before = _filing_date_window(form, y)
                if after > before:
                    outcomes.append(DownloadOutcome(ticker, None, f"No {form} for fiscal year {y} of {ticker} has "
                                                                  "been filed yet."))
                    continue
                note = (f"; {len(failed)} filing(s) in that window could not be downloaded (see the other messages)"
                        if failed else "")
                outcomes.append(DownloadOutcome(ticker, None, (
                    f"No {form} for fiscal year {y} of {ticker} on EDGAR (looked at filings dated "
                    f"{after.isoformat()} to {before.isoformat()}){note}.")))
            selected.sort(key=lambda dr: dr[1].filing_date or "", reverse=True)
            if limit is not None:
                selected = selected[:limit]

        saved: list[DownloadOutcome] = []
        for acc_dir, record in sorted(selected, key=lambda dr: dr[1].filing_date or "", reverse=True):
            folder_name = key
            if is_cik and record.ticker and _TICKER_RE.match(record.ticker):  # the file's own ticker, if sane
                folder_name = record.ticker.replace(".", "-")
            final = data_dir / EDGAR_DIR / folder_name / form / record.accession
            relative = Path(record.path).relative_to(acc_dir)
            record.path = final / relative
            record.save(acc_dir, final_folder=final)
            _swap_into(acc_dir, final, tmp)
            step(f"Saved {form} {record.accession}" + (f" (FY{record.fiscal_year})" if record.fiscal_year else ""),
                 0.95)
            saved.append(DownloadOutcome(ticker, record, None))
        return saved + outcomes
    finally:
        _rmtree(tmp)


def _finish_download(acc_dir: Path, *, ticker: str | None, cik: str | None, form: str) -> FilingRecord:
    """Verify one landed filing folder, find its primary document and build its record (paths inside acc_dir)."""
    acc = acc_dir.name
    full = acc_dir / FULL_SUBMISSION
    if not full.is_file() or full.stat().st_size == 0:
        raise EdgarError("the full submission did not arrive.")
    if not _is_complete_full_submission(full):
        raise EdgarError(f"the full submission arrived incomplete ({full.stat().st_size:,} bytes, no closing "
                         "</SEC-DOCUMENT>): the connection was probably cut. Nothing was kept; try again.")
    submission = _read_submission(full, f"{acc}.txt")
    header = _get(submission, "header")
    edgar_name = _get(_get(submission, "primary"), "filename")

    primary = acc_dir / (PRIMARY_STEM + ".html")
    if not _is_complete_html(primary):
        for leftover in acc_dir.glob(PRIMARY_STEM + ".*"):
            leftover.unlink()  # missing, incomplete or not HTML: use the copy inside the full submission
        primary = acc_dir / EXTRACTED_PRIMARY
        edgar_name = _write_primary(submission, primary, f"{acc}.txt") or edgar_name

    meta = _parse_meta(primary, Path(str(edgar_name or primary.name)).name)
    header_acc = _get(header, "accession")
    accession = header_acc if header_acc and _ACCESSION_RE.match(str(header_acc)) else acc
    period_end = _iso_date(meta.get("period_end")) or _iso_date(_get(header, "period_end"))
    fiscal_year, fy_source = _fiscal_year(meta, period_end)
    cik = cik or _norm_cik(_get(header, "cik")) or _norm_cik(meta.get("cik"))
    sha = parse.file_sha256(primary)
    return FilingRecord(
        doc_id=accession,
        path=primary,
        ticker=ticker or (str(meta["ticker"]).upper() if meta.get("ticker") else None),
        company=_get(header, "company") or meta.get("company"),
        cik=cik,
        form=(str(_get(header, "form") or "").upper() or None) or form,
        fiscal_year=fiscal_year,
        fiscal_year_source=fy_source,
        period_end=period_end,
        filing_date=_iso_date(_get(header, "filing_date")) or _iso_date(meta.get("filing_date")),
        accession=accession,
        url=_filing_url(cik, accession, edgar_name),
        source="edgar",
        sha256=sha,
    )


# --------------------------------------------------------------------------------------------------------------
# Local files


_OVERRIDE_KEYS = {"ticker", "company", "cik", "form", "fiscal_year", "period_end", "filing_date", "accession"}


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
    meta_overrides: ticker, company, cik, form, fiscal_year, period_end, filing_date, accession, for what the
    file does not say. What the file says wins, except that a fiscal year the caller gives beats one derived from
    the period end (fiscal_year_source then says "caller").
    """
    settings = settings or get_settings()
    unknown = set(meta_overrides) - _OVERRIDE_KEYS
    if unknown:
        raise TypeError(f"add_local_file() got unknown metadata {sorted(unknown)}; known: {sorted(_OVERRIDE_KEYS)}")
    if source not in ("upload", "path"):
        raise ValueError("source must be 'upload' or 'path'")
    src = Path(path)
    shown = Path(str(name or src.name).replace("\\", "/")).name or "the file"
    if not src.is_file():
        raise EdgarError(f"{shown}: no such file.")
    safe = _safe_name(name or src.name)
    suffix = Path(safe).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise EdgarError(f"{shown}: only EDGAR .htm/.html files, full-submission .txt files and PDFs can be "
                         f"added, not {'a ' + suffix + ' file' if suffix else 'a file without a suffix'}.")
    size = src.stat().st_size
    limit_bytes = int(settings.max_upload_mb) * 1024 * 1024
    if size > limit_bytes:
        raise EdgarError(f"{shown} is {size / 1024 / 1024:.1f} MB, over the {settings.max_upload_mb} MB limit "
                         "(RAG_MAX_UPLOAD_MB).")
    if size == 0:
        raise EdgarError(f"{shown} is empty.")
    overrides = _clean_overrides(meta_overrides, shown)

    data_dir = Path(settings.data_dir)
    uploads = data_dir / UPLOADS_DIR
    uploads.mkdir(parents=True, exist_ok=True)
    _clean_stale_tmp(data_dir)
    tmp = Path(tempfile.mkdtemp(prefix=UPLOAD_TMP_PREFIX, dir=data_dir))
    try:
        work = tmp / "filing"
        work.mkdir()
        copy = work / safe
        if copy.resolve().parent != work.resolve():  # cannot happen after _safe_name; checked all the same
            raise EdgarError(f"{shown}: refusing a file name that points outside the upload folder.")
        digest = hashlib.sha256()
        with open(src, "rb") as fin, open(copy, "wb") as fout:
            copied = 0
            for block in iter(lambda: fin.read(1 << 20), b""):
                copied += len(block)
                if copied > limit_bytes:
                    raise EdgarError(f"{shown} is over the {settings.max_upload_mb} MB limit (RAG_MAX_UPLOAD_MB).")
                digest.update(block)
                fout.write(block)
        file_sha = digest.hexdigest()

        header = None
        edgar_name = None
        primary = copy
        if suffix == ".pdf":
            with open(copy, "rb") as fh:
                if not fh.read(1024).lstrip().startswith(b"%PDF-"):
                    raise EdgarError(f"{shown} is not a PDF (it does not start with %PDF-).")
        elif suffix == ".txt":
            head = copy.read_bytes()[:65536].upper()
            if b"<DOCUMENT>" not in head and b"<SEC-DOCUMENT>" not in head and b"<SEC-HEADER>" not in head:
                raise EdgarError(f"{shown} is not an EDGAR full-submission .txt (no <SEC-DOCUMENT>/<DOCUMENT> "
                                 "blocks); add the filing's .htm instead.")
            submission = _read_submission(copy, shown)
            header = _get(submission, "header")
            primary = work / EXTRACTED_PRIMARY
            edgar_name = _write_primary(submission, primary, shown)

        meta = _parse_meta(primary, shown)
        record = _local_record(primary, meta, header, overrides, edgar_name, source)
        final = uploads / file_sha[:16]
        record.path = final / primary.name
        record.save(work, final_folder=final)
        _swap_into(work, final, tmp)
        return record
    finally:
        _rmtree(tmp)


def _clean_overrides(raw: dict, shown: str) -> dict:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if value in (None, ""):
            continue
        if key == "fiscal_year":
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise EdgarError(f"{shown}: the fiscal year must be a year like 2024, got {value!r}.") from None
        elif key in ("ticker", "form"):
            value = str(value).strip().upper()
        elif key == "cik":
            value = _norm_cik(value)
        elif key in ("period_end", "filing_date"):
            iso = _iso_date(value)
            if iso is None:
                raise EdgarError(f"{shown}: {key.replace('_', ' ')} must be a date like 2024-09-28, got {value!r}.")
            value = iso
        elif key == "accession":
            value = str(value).strip()
            if not _ACCESSION_RE.match(value):
                raise EdgarError(f"{shown}: an accession number looks like 0000320193-24-000123, got {value!r}.")
        else:
            value = str(value).strip()
        out[key] = value
    return out


def _local_record(primary: Path, meta: dict, header, overrides: dict, edgar_name: str | None,
                  source: str) -> FilingRecord:
    def pick(key: str, header_key: str | None = None):
        for value in (meta.get(key), _get(header, header_key or key), overrides.get(key)):
            if value not in (None, ""):
                return value
        return None

    period_end = _iso_date(pick("period_end"))
    fiscal_year, fy_source = None, None
    if meta.get("fiscal_year") not in (None, "") and (meta.get("fiscal_year_source") or FY_DEI) != FY_PERIOD_END:
        fiscal_year, fy_source = _fiscal_year(meta, period_end)
    elif "fiscal_year" in overrides:
        fiscal_year, fy_source = overrides["fiscal_year"], FY_CALLER
    else:
        fiscal_year, fy_source = _fiscal_year(meta, period_end)
    accession = pick("accession")
    accession = str(accession) if accession and _ACCESSION_RE.match(str(accession)) else None
    cik = _norm_cik(pick("cik"))
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
        period_end=period_end,
        filing_date=_iso_date(pick("filing_date")),
        accession=accession,
        url=_filing_url(cik, accession, edgar_name),
        source=source,
        sha256=sha,
    )


# --------------------------------------------------------------------------------------------------------------
# What is on disk


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
