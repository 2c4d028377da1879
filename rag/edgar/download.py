"""EDGAR downloads through sec-edgar-downloader: per ticker, list the filings of a form (EDGAR's submissions JSON,
see listing), choose exactly the accessions asked for (the latest N, or those of chosen fiscal years), fetch them,
verify what landed, read its metadata, and move each filing into place.

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
from ..parse.period import FP_FISCAL_YEAR_END, FY_FROM_FISCAL_PERIOD
from .failures import downloader_messages, explain, explain_exc, printed_failures
from .listing import ListedFiling, Listing, choose, download_window, read_listing
from .record import (
    ACCESSION_RE,
    EDGAR_DIR,
    EXTRACTED_PRIMARY,
    FULL_SUBMISSION,
    FY_PERIOD_END,
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

    limit: the N latest filings (per ticker). fiscal_years: every filing of those fiscal years (a 10-K per year,
    three 10-Qs per year), chosen from EDGAR's listing by report date and the company's fiscal year end, then
    checked against the filing's own label (dei:DocumentFiscalYearFocus); with both, the N latest of those. With
    neither, the latest filing only.
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

    # Imported here: the app and add_local_file do not need it, and tests patch its module-level URLs (read at
    # call time below, so that the listing is asked of the same server as the downloads).
    from sec_edgar_downloader import Downloader, _orchestrator, _sec_gateway

    report(wanted[0], "Connecting to EDGAR", 0.0)
    try:
        downloader = Downloader(name, email, data_dir)
    except Exception as exc:
        message = explain_exc("the list of tickers (company_tickers_exchange.json)", exc)
        report(wanted[-1], message, 1.0)
        return [DownloadOutcome(t, None, message) for t in wanted]

    def fetch_submissions(page: str) -> dict:
        uri = _orchestrator.URL_SUBMISSIONS.format(submission=page)
        return _sec_gateway.get_list_of_available_filings(uri, downloader.user_agent)

    outcomes: list[DownloadOutcome] = []
    n = len(wanted)
    for i, ticker in enumerate(wanted):
        def step(message: str, within: float, _i=i, _t=ticker) -> None:
            report(_t, message, (_i + within) / n)

        try:
            outcomes.extend(
                _download_ticker(downloader, fetch_submissions, ticker, form, limit, years, data_dir, step)
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

    ticker: str  # as asked ("ABC.B", or a CIK)
    key: str  # as EDGAR writes it: ABC-B, or the CIK
    cik: str | None
    is_cik: bool
    form: str
    limit: int | None
    years: list[int] | None
    data_dir: Path
    step: Callable[[str, float], None]


class _ListingFailed(Exception):
    """EDGAR's list of a ticker's filings could not be had; the message says why."""


def _download_ticker(downloader, fetch_submissions: Callable[[str], dict], ticker: str, form: str,
                     limit: int | None, years: list[int] | None, data_dir: Path,
                     step: Callable[[str, float], None]) -> list[DownloadOutcome]:
    if not _TICKER_RE.match(ticker):
        return [DownloadOutcome(ticker, None, f"{ticker!r} is not a ticker (letters, digits, '.' or '-').")]
    is_cik = ticker.isdigit()
    key = ticker if is_cik else ticker.replace(".", "-")  # EDGAR writes share classes with a dash: ABC-B
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
            listing = _read_listing(fetch_submissions, job)
            chosen = choose(listing, limit, years)
            failures = _fetch(downloader, job, listing, chosen) if chosen else {}
        except _ListingFailed as exc:
            return [DownloadOutcome(ticker, None, str(exc))]
        records, failed = _check_landed(tmp, job, failures, chosen)
        if years is None:
            selected, outcomes = records, failed
            if not chosen:
                outcomes.append(DownloadOutcome(ticker, None, f"EDGAR lists no {form} filings for {ticker}."))
        else:
            selected, outcomes = _select_fiscal_years(records, failed, job, listing)
        return _save_selected(selected, tmp, job) + outcomes
    finally:
        remove_tree(tmp)


def _read_listing(fetch_submissions: Callable[[str], dict], job: _TickerJob) -> Listing:
    """The ticker's filings of the form as EDGAR lists them (its submissions JSON, older pages as needed)."""
    job.step(f"Reading the list of {job.ticker}'s {job.form} filings", 0.02)
    try:
        return read_listing(fetch_submissions, f"CIK{int(job.cik or 0):010d}.json", job.form, job.limit,
                            job.years)
    except Exception as exc:
        raise _ListingFailed(f"{job.ticker}: " + explain_exc(f"the list of {job.ticker}'s filings", exc)) from exc


def _fetch(downloader, job: _TickerJob, listing: Listing, chosen: list[ListedFiling]) -> dict[str, str]:
    """Have the downloader fetch exactly the chosen filings into its folder, in one call: the filing dates they
    span, skipping the other filings of the form in that span. Returns the failures it printed, by accession."""
    after, before, skip, count = download_window(listing, chosen)
    years, form, ticker = job.years, job.form, job.ticker
    if years is None:
        what = f"the {len(chosen)} latest {form} filing(s) of {ticker}"
    else:
        span = f"FY{years[0]}" if len(years) == 1 else f"FY{years[0]}-FY{years[-1]}"
        what = f"{len(chosen)} {form} filing(s) of {ticker} for {span}"
    job.step(f"Downloading {what} (filed {after} to {before})", 0.05)
    try:
        with downloader_messages() as printed:
            downloader.get(form, job.key, limit=count, after=after, before=before, download_details=True,
                           accession_numbers_to_skip=skip or None)
    except Exception as exc:
        raise _ListingFailed(f"{ticker}: " + explain_exc(f"the list of {ticker}'s filings", exc)) from exc
    return printed_failures("".join(printed))


def _check_landed(tmp: Path, job: _TickerJob, failures: dict[str, str], chosen: list[ListedFiling]
                  ) -> tuple[list[tuple[Path, FilingRecord]], list[DownloadOutcome]]:
    """The records of the filings that landed and passed the checks, and one failed outcome per chosen filing
    that did not (or did not land at all)."""
    ticker, form = job.ticker, job.form
    listed = {f.accession: f for f in chosen}
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
            record = finish_download(acc_dir, ticker=None if job.is_cik else ticker, cik=job.cik, form=form,
                                     listed=listed.get(acc))
        except EdgarError as exc:
            # A folder exists only when the full submission arrived; what failed is checking or reading it.
            failed.append(DownloadOutcome(ticker, None, f"{ticker} {form} {acc}: {exc}"))
            continue
        records.append((acc_dir, record))
    landed_names = {d.name for d in landed}
    for acc, why in failures.items():
        if acc not in landed_names:
            failed.append(DownloadOutcome(ticker, None, explain(f"{ticker} {form} {acc}", why)))
    for acc in listed:
        if acc not in landed_names and acc not in failures:
            failed.append(DownloadOutcome(ticker, None, f"{ticker} {form} {acc}: EDGAR lists it, but the "
                                                        "downloader did not fetch it. Try again."))
    return records, failed


def _select_fiscal_years(records: list[tuple[Path, FilingRecord]], failed: list[DownloadOutcome], job: _TickerJob,
                         listing: Listing) -> tuple[list[tuple[Path, FilingRecord]], list[DownloadOutcome]]:
    """The filings whose own fiscal year is one asked for (the latest `limit` of them), and the outcomes to
    report: every filing that failed (each was chosen for a year asked for), and one per year not found."""
    ticker, form, years = job.ticker, job.form, job.years or []
    selected = [(d, r) for d, r in records if r.fiscal_year in years]
    for _, r in records:
        if r.fiscal_year not in years:
            log.info("%s %s %s states FY%s, not asked for: discarded", ticker, form, r.accession, r.fiscal_year)
    found = {r.fiscal_year for _, r in selected}
    outcomes = list(failed)
    outcomes.extend(DownloadOutcome(ticker, None, _year_not_found(listing, job, y, len(failed)))
                    for y in years if y not in found)
    selected.sort(key=lambda dr: dr[1].filing_date or "", reverse=True)
    if job.limit is not None:
        selected = selected[: job.limit]
    return selected, outcomes


def _year_not_found(listing: Listing, job: _TickerJob, year: int, n_failed: int) -> str:
    """Why no filing of `year` was saved, from what EDGAR lists."""
    ticker, form = job.ticker, job.form
    listed = [f for f in listing.filings if year in f.fiscal_years]
    if listed and n_failed:
        return (f"No {form} for fiscal year {year} of {ticker} was saved: EDGAR lists {len(listed)}, and "
                f"{n_failed} filing(s) could not be downloaded (see the other messages).")
    if listed:
        return (f"No {form} for fiscal year {year} of {ticker}: the {len(listed)} filing(s) EDGAR's dates place "
                "in that year state another fiscal year.")
    span = listing.fiscal_year_range()
    if span is None:
        return f"EDGAR lists no {form} filings for {ticker}."
    if year > span[1]:
        return (f"No {form} for fiscal year {year} of {ticker} has been filed yet (the latest is for fiscal "
                f"year {span[1]}).")
    return (f"No {form} for fiscal year {year} of {ticker} on EDGAR (its {form} filings listed cover fiscal "
            f"years {span[0]} to {span[1]}).")


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


def finish_download(acc_dir: Path, *, ticker: str | None, cik: str | None, form: str,
                    listed: ListedFiling | None = None) -> FilingRecord:
    """Verify one landed filing folder, find its primary document and build its record (paths inside acc_dir).
    listed: what EDGAR's listing says of it, filling in what the document does not state."""
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
    period_end = (edgar_date(meta.get("period_end")) or edgar_date(field_of(header, "period_end"))
                  or (listed.report_date if listed else None))
    fiscal_year, fy_source, fiscal_period, fp_source = _fiscal_labels(meta, period_end, listed)
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
        fiscal_period=fiscal_period,
        fiscal_period_source=fp_source,
        period_end=period_end,
        filing_date=edgar_date(field_of(header, "filing_date")) or edgar_date(meta.get("filing_date")),
        accession=accession,
        url=filing_url(cik, accession, edgar_name),
        source="edgar",
        sha256=sha,
    )


def _fiscal_labels(meta: dict, period_end: str | None, listed: ListedFiling | None
                   ) -> tuple[int | None, str | None, str | None, str | None]:
    """(fiscal year, its source, fiscal period, its source). The filing's own dei: labels win; where it has none
    (older 10-Qs carry no inline XBRL), the quarter EDGAR's listing places it in by the company's fiscal year end
    beats a fiscal year guessed from the calendar year of a quarter's end."""
    fiscal_year, fy_source = fiscal_year_and_source(meta, period_end)
    fiscal_period, fp_source = meta.get("fiscal_period"), meta.get("fiscal_period_source")
    if listed is None:
        return fiscal_year, fy_source, fiscal_period, fp_source
    if not fiscal_period and listed.fiscal_period:
        fiscal_period, fp_source = listed.fiscal_period, FP_FISCAL_YEAR_END
    if fy_source in (None, FY_PERIOD_END) and listed.fiscal_year is not None and fiscal_period == listed.fiscal_period:
        fiscal_year, fy_source = listed.fiscal_year, FY_FROM_FISCAL_PERIOD
    return fiscal_year, fy_source, fiscal_period, fp_source
