"""EDGAR downloads through sec-edgar-downloader: per ticker, list and fetch the filings of a form (the latest N,
or those of chosen fiscal years), verify what landed, read its metadata, and move each filing into place.

A download goes into a hidden temporary folder inside data_dir (".edgar-tmp-*", same filesystem), is checked
(sec-edgar-downloader prints failures and carries on, so what landed is verified: present, non-empty, a
full-submission ending in </SEC-DOCUMENT>, a primary document ending in </html>), gets its filing.json, and only
then is moved into place with os.replace. The temporary folder is removed on every path out, so a failure leaves
nothing half-written behind.

The downloader (5.1.0) makes one attempt per file: no retries, no back-off, and no timeout on requests. It
throttles itself to 10 requests per second, process-wide.
"""

from __future__ import annotations

import logging
import re
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Callable, Iterable

from .. import parse
from ..config import Settings, get_settings
from .failures import downloader_messages, explain, explain_exc, printed_failures
from .record import (
    ACCESSION_RE,
    EDGAR_DIR,
    EXTRACTED_PRIMARY,
    FULL_SUBMISSION,
    PRIMARY_STEM,
    DownloadOutcome,
    EdgarError,
    FilingRecord,
    edgar_date,
    field_of,
    filing_url,
    fiscal_year_and_source,
    norm_cik,
)
from .storage import (
    TMP_PREFIX,
    clean_stale_tmp,
    is_complete_full_submission,
    is_complete_html,
    parsed_meta,
    read_submission,
    remove_tree,
    swap_into,
    write_primary,
)

log = logging.getLogger(__name__)

FORMS = ("10-K", "10-Q")

_TICKER_RE = re.compile(r"^[A-Z0-9][A-Z0-9.\-]{0,9}$")
_USER_AGENT_RE = re.compile(r"^(?P<name>\S.*?)\s+(?P<email>[^@\s]+@[^@\s]+\.[A-Za-z]{2,})$")

Progress = Callable[[str, str, float], None]  # (ticker, message, fraction of the whole job done, 0..1)


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


def filing_date_window(form: str, fiscal_year: int) -> tuple[date, date]:
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


def _checked_selection(limit: int | None, fiscal_years: Iterable[int] | None) -> tuple[int | None, list[int] | None]:
    """(limit, sorted fiscal years) as asked, or EdgarError; with neither, the latest filing only (limit 1)."""
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
    return limit, years


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
    limit, years = _checked_selection(limit, fiscal_years)
    wanted = _clean_tickers(tickers)
    if not wanted:
        return []

    data_dir = Path(settings.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    clean_stale_tmp(data_dir)

    def report(ticker: str, message: str, fraction: float) -> None:
        if progress is not None:
            progress(ticker, message, max(0.0, min(1.0, fraction)))

    # Imported here: the app and add_local_file do not need it, and tests patch its module-level URLs.
    from sec_edgar_downloader import Downloader

    report(wanted[0], "Connecting to EDGAR", 0.0)
    try:
        downloader = Downloader(name, email, data_dir)
    except Exception as exc:
        message = explain_exc("the list of tickers (company_tickers_exchange.json)", exc)
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


# --------------------------------------------------------------------------------------------------------------
# One ticker


@dataclass
class _TickerJob:
    """One ticker's download: what was asked, and where the filings go."""

    ticker: str  # as asked ("BRK.B", or a CIK)
    key: str  # as EDGAR writes it: BRK-B, or the CIK
    cik: str | None
    is_cik: bool
    form: str
    limit: int | None
    years: list[int] | None
    data_dir: Path
    step: Callable[[str, float], None]


class _ListingFailed(Exception):
    """EDGAR's list of a ticker's filings could not be had; the message says why."""


def _download_ticker(downloader, ticker: str, form: str, limit: int | None, years: list[int] | None,
                     data_dir: Path, step: Callable[[str, float], None]) -> list[DownloadOutcome]:
    if not _TICKER_RE.match(ticker):
        return [DownloadOutcome(ticker, None, f"{ticker!r} is not a ticker (letters, digits, '.' or '-').")]
    is_cik = ticker.isdigit()
    key = ticker if is_cik else ticker.replace(".", "-")  # EDGAR writes share classes with a dash: BRK-B
    mapping: dict[str, str] = getattr(downloader, "ticker_to_cik_mapping", {}) or {}
    if not is_cik and key not in mapping:
        return [DownloadOutcome(ticker, None, f"{ticker} is not a ticker EDGAR knows. Check the spelling "
                                              "(share classes are written with a dash, e.g. BRK-B).")]
    job = _TickerJob(ticker, key, norm_cik(ticker if is_cik else mapping[key]), is_cik, form, limit, years,
                     data_dir, step)

    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=data_dir))
    try:
        downloader.download_folder = tmp
        try:
            failures = _fetch(downloader, job)
        except _ListingFailed as exc:
            return [DownloadOutcome(ticker, None, str(exc))]
        landed, records, failed = _check_landed(tmp, job, failures)
        if years is None:
            selected, outcomes = records, list(failed)
            if not landed and not failures:
                outcomes.append(DownloadOutcome(ticker, None, f"EDGAR lists no {form} filings for {ticker}."))
        else:
            selected, outcomes = _select_fiscal_years(records, failed, job)
        return _save_selected(selected, tmp, job) + outcomes
    finally:
        remove_tree(tmp)


def _fetch(downloader, job: _TickerJob) -> dict[str, str]:
    """Have the downloader fetch the filings asked for into its folder; the failures it printed, by accession."""
    years, form, ticker = job.years, job.form, job.ticker
    windows: list[tuple[date | None, date | None]] = (
        [(None, None)] if years is None else [filing_date_window(form, y) for y in years]
    )
    failures: dict[str, str] = {}
    for w, (after, before) in enumerate(windows):
        if after is not None and before is not None and after > before:
            continue  # a fiscal year too recent to have been filed: reported as not found later
        if years is None:
            job.step(f"Downloading the {job.limit} latest {form} filing(s) of {ticker}", 0.05)
        else:
            job.step(f"Downloading {ticker} {form} filings for FY{years[w]} "
                     f"(filed {after.isoformat()} to {before.isoformat()})", 0.05 + 0.5 * w / len(windows))
        try:
            with downloader_messages() as printed:
                downloader.get(form, job.key, limit=job.limit if years is None else None, after=after,
                               before=before, download_details=True)
        except Exception as exc:
            raise _ListingFailed(f"{ticker}: " + explain_exc(f"the list of {ticker}'s filings", exc)) from exc
        failures.update(printed_failures("".join(printed)))
    return failures


def _check_landed(tmp: Path, job: _TickerJob, failures: dict[str, str]
                  ) -> tuple[list[Path], list[tuple[Path, FilingRecord]], list[DownloadOutcome]]:
    """The accession folders that landed, the records of those that passed the checks, and one failed outcome per
    filing that did not (or did not land at all)."""
    ticker, form = job.ticker, job.form
    # What landed: every accession folder the downloader created, wherever its layout puts them.
    landed = sorted({p.parent for p in tmp.rglob("*") if p.is_file() and p.parent != tmp}, key=lambda p: p.name)
    records: list[tuple[Path, FilingRecord]] = []
    failed: list[DownloadOutcome] = []
    for j, acc_dir in enumerate(landed):
        acc = acc_dir.name
        if not ACCESSION_RE.match(acc):
            log.warning("ignoring unexpected folder %s from the downloader", acc_dir)
            continue
        job.step(f"Checking and reading {form} {acc}", 0.6 + 0.35 * j / max(1, len(landed)))
        try:
            record = finish_download(acc_dir, ticker=None if job.is_cik else ticker, cik=job.cik, form=form)
        except EdgarError as exc:
            # A folder exists only when the full submission arrived; what failed is checking or reading it.
            failed.append(DownloadOutcome(ticker, None, f"{ticker} {form} {acc}: {exc}"))
            continue
        records.append((acc_dir, record))
    landed_names = {d.name for d in landed}
    for acc, why in failures.items():
        if acc not in landed_names:
            failed.append(DownloadOutcome(ticker, None, explain(f"{ticker} {form} {acc}", why)))
    return landed, records, failed


def _select_fiscal_years(records: list[tuple[Path, FilingRecord]], failed: list[DownloadOutcome], job: _TickerJob
                         ) -> tuple[list[tuple[Path, FilingRecord]], list[DownloadOutcome]]:
    """The filings of the fiscal years asked for (the latest `limit` of them), and the outcomes to report: one per
    year not found, and the failed filings when a year is missing (one of them may be it)."""
    ticker, form, years = job.ticker, job.form, job.years
    outcomes: list[DownloadOutcome] = []
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
        after, before = filing_date_window(form, y)
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
    if job.limit is not None:
        selected = selected[: job.limit]
    return selected, outcomes


def _save_selected(selected: list[tuple[Path, FilingRecord]], tmp: Path, job: _TickerJob) -> list[DownloadOutcome]:
    """Give each chosen filing its filing.json and move its folder into place, latest filing first."""
    saved: list[DownloadOutcome] = []
    for acc_dir, record in sorted(selected, key=lambda dr: dr[1].filing_date or "", reverse=True):
        folder_name = job.key
        if job.is_cik and record.ticker and _TICKER_RE.match(record.ticker):  # the file's own ticker, if sane
            folder_name = record.ticker.replace(".", "-")
        final = job.data_dir / EDGAR_DIR / folder_name / job.form / record.accession
        relative = Path(record.path).relative_to(acc_dir)
        record.path = final / relative
        record.save(acc_dir, final_folder=final)
        swap_into(acc_dir, final, tmp)
        job.step(f"Saved {job.form} {record.accession}" + (f" (FY{record.fiscal_year})" if record.fiscal_year else ""),
                 0.95)
        saved.append(DownloadOutcome(job.ticker, record, None))
    return saved


def finish_download(acc_dir: Path, *, ticker: str | None, cik: str | None, form: str) -> FilingRecord:
    """Verify one landed filing folder, find its primary document and build its record (paths inside acc_dir)."""
    acc = acc_dir.name
    full = acc_dir / FULL_SUBMISSION
    if not full.is_file() or full.stat().st_size == 0:
        raise EdgarError("the full submission did not arrive.")
    if not is_complete_full_submission(full):
        raise EdgarError(f"the full submission arrived incomplete ({full.stat().st_size:,} bytes, no closing "
                         "</SEC-DOCUMENT>): the connection was probably cut. Nothing was kept; try again.")
    submission = read_submission(full, f"{acc}.txt")
    header = field_of(submission, "header")
    edgar_name = field_of(field_of(submission, "primary"), "filename")

    primary = acc_dir / (PRIMARY_STEM + ".html")
    if not is_complete_html(primary):
        for leftover in acc_dir.glob(PRIMARY_STEM + ".*"):
            leftover.unlink()  # missing, incomplete or not HTML: use the copy inside the full submission
        primary = acc_dir / EXTRACTED_PRIMARY
        edgar_name = write_primary(submission, primary, f"{acc}.txt") or edgar_name

    meta = parsed_meta(primary, Path(str(edgar_name or primary.name)).name)
    header_acc = field_of(header, "accession")
    accession = header_acc if header_acc and ACCESSION_RE.match(str(header_acc)) else acc
    period_end = edgar_date(meta.get("period_end")) or edgar_date(field_of(header, "period_end"))
    fiscal_year, fy_source = fiscal_year_and_source(meta, period_end)
    cik = cik or norm_cik(field_of(header, "cik")) or norm_cik(meta.get("cik"))
    sha = parse.file_sha256(primary)
    return FilingRecord(
        doc_id=accession,
        path=primary,
        ticker=ticker or (str(meta["ticker"]).upper() if meta.get("ticker") else None),
        company=field_of(header, "company") or meta.get("company"),
        cik=cik,
        form=(str(field_of(header, "form") or "").upper() or None) or form,
        fiscal_year=fiscal_year,
        fiscal_year_source=fy_source,
        fiscal_period=meta.get("fiscal_period"),
        fiscal_period_source=meta.get("fiscal_period_source"),
        period_end=period_end,
        filing_date=edgar_date(field_of(header, "filing_date")) or edgar_date(meta.get("filing_date")),
        accession=accession,
        url=filing_url(cik, accession, edgar_name),
        source="edgar",
        sha256=sha,
    )
