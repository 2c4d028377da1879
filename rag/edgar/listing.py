"""What EDGAR lists for a company (its submissions JSON, data.sec.gov/submissions/CIK##########.json): each 10-K
or 10-Q with its filing date, report date and primary document, the fiscal year and period it belongs to by the
company's fiscal year end, and the choice of exactly which accessions a download needs.

A filing's fiscal year is not its filing year: the 10-Qs of fiscal year Y are filed during Y, its 10-K after Y
ends, and a year that ends in September puts the first quarter of fiscal Y in the calendar year before. The JSON
says, per filing, the period it reports on (reportDate), and, per company, the month and day its fiscal year
ends (fiscalYearEnd, "MMDD"): together they place a 10-Q in its quarter and fiscal year before any download. The
fiscal year the filing itself states (dei:DocumentFiscalYearFocus) still decides once it is downloaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Callable, Iterable

from ..dates import fiscal_year_from_period_end
from ..parse.period import fiscal_year_of_quarter, quarter_from_fiscal_year_end

ANNUAL_FORM = "10-K"

# A page of the listing: the "recent" block of the first response, or one of the older pages in filings.files[].
_COLUMNS = ("accessionNumber", "form", "filingDate", "reportDate", "primaryDocument")
_MMDD_RE = re.compile(r"^(0[1-9]|1[0-2])([0-2]\d|3[01])$")
_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class ListedFiling:
    """One filing as EDGAR lists it, with the fiscal year(s) it can belong to."""

    accession: str
    form: str
    filing_date: str  # ISO
    report_date: str | None  # ISO: the period end the filing reports on
    primary_document: str | None
    # One year when the fiscal year end places it; two when the company's naming of a year that ends in January
    # or February is not known (see possible_fiscal_years); none when nothing places it.
    fiscal_years: tuple[int, ...] = ()
    fiscal_period: str | None = None  # "Q1".."Q3", "FY"; None when the report date does not place it

    @property
    def fiscal_year(self) -> int | None:
        """The fiscal year, when the listing alone settles it."""
        return self.fiscal_years[0] if len(self.fiscal_years) == 1 else None


@dataclass
class Listing:
    """A company's filings of one form, newest first, as far as the pages read so far go."""

    form: str
    fiscal_year_end: tuple[int, int] | None  # (month, day)
    filings: list[ListedFiling] = field(default_factory=list)
    older_pages: list[str] = field(default_factory=list)  # names of the pages not read yet, newest first

    @property
    def complete(self) -> bool:
        return not self.older_pages

    @property
    def oldest_filing_date(self) -> str | None:
        return min((f.filing_date for f in self.filings), default=None)

    def fiscal_year_range(self) -> tuple[int, int] | None:
        """The first and last fiscal year the listed filings of the form can belong to."""
        years = [y for f in self.filings for y in f.fiscal_years]
        return (min(years), max(years)) if years else None


def fiscal_year_end_of(submissions: dict) -> tuple[int, int] | None:
    """(month, day) from the JSON's "fiscalYearEnd": "0630"; None when absent or malformed."""
    m = _MMDD_RE.match(str(submissions.get("fiscalYearEnd") or "").strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def possible_fiscal_years(year: int, end_month: int, end_day: int) -> tuple[int, ...]:
    """The labels a fiscal year that ends on (end_month, end_day) of the named year can carry. A year that ends
    in late January or in February is named by some companies for the calendar year it ends in and by others for
    the year it began in (retailers' "fiscal 2024" ends early in 2025): both are candidates, and the filing's own
    dei:DocumentFiscalYearFocus decides after the download. Other year ends carry the label of
    rag.dates.fiscal_year_from_period_end alone (already given as `year`)."""
    if end_month == 2 or (end_month == 1 and end_day > 7):
        return (year, year - 1)
    return (year,)


def place(form: str, report_date: str | None, fiscal_year_end: tuple[int, int] | None
          ) -> tuple[tuple[int, ...], str | None]:
    """(fiscal years, fiscal period) of a filing of `form` reporting on `report_date`. An annual report covers
    the fiscal year that ends on its report date; a quarterly report falls 3, 6 or 9 months after the fiscal
    year end before it, and belongs to the fiscal year that ends after it."""
    if not report_date or not _ISO_RE.match(report_date):
        return (), None
    if form == ANNUAL_FORM:
        month, day = int(report_date[5:7]), int(report_date[8:10])
        return possible_fiscal_years(fiscal_year_from_period_end(report_date), month, day), "FY"
    if fiscal_year_end is None:
        return (), None
    quarter = quarter_from_fiscal_year_end(report_date, *fiscal_year_end)
    if quarter is None:
        return (), None
    year = fiscal_year_of_quarter(report_date, quarter)
    return possible_fiscal_years(year, *fiscal_year_end), f"Q{quarter}"


def _rows(page: dict) -> Iterable[dict]:
    columns = [page.get(name) or [] for name in _COLUMNS]
    for values in zip(*columns):
        yield dict(zip(_COLUMNS, values))


def add_page(listing: Listing, page: dict) -> None:
    """Add the filings of listing.form on one page. Amendments (10-Q/A) are left out: the downloader fetches
    original filings only, and an amendment restates a filing already listed."""
    for row in _rows(page):
        filing_date, report_date = str(row["filingDate"] or "").strip(), str(row["reportDate"] or "").strip()
        if str(row["form"]).strip().upper() != listing.form or not _ISO_RE.match(filing_date):
            continue
        report_date = report_date if _ISO_RE.match(report_date) else None
        years, period = place(listing.form, report_date, listing.fiscal_year_end)
        listing.filings.append(ListedFiling(
            accession=str(row["accessionNumber"]), form=listing.form, filing_date=filing_date,
            report_date=report_date, primary_document=str(row["primaryDocument"] or "") or None,
            fiscal_years=years, fiscal_period=period,
        ))
    listing.filings.sort(key=lambda f: f.filing_date, reverse=True)


def read_listing(fetch: Callable[[str], dict], first_page: str, form: str, limit: int | None,
                 years: list[int] | None) -> Listing:
    """The listing of `form`, reading older pages (fetch(name) -> JSON) only while the choice may need them: until
    `limit` filings are listed, or until the listed filings reach back before the first fiscal year asked for."""
    submissions = fetch(first_page)
    filings = submissions.get("filings") or {}
    listing = Listing(form=form, fiscal_year_end=fiscal_year_end_of(submissions),
                      older_pages=[str(p.get("name")) for p in filings.get("files") or [] if p.get("name")])
    add_page(listing, filings.get("recent") or {})
    while listing.older_pages and _needs_older(listing, limit, years):
        add_page(listing, fetch(listing.older_pages.pop(0)))
    return listing


def _needs_older(listing: Listing, limit: int | None, years: list[int] | None) -> bool:
    if years is None:
        return len(listing.filings) < (limit or 1)
    oldest = listing.oldest_filing_date
    # A filing of fiscal year Y is filed no earlier than the calendar year before Y (a first quarter of a year
    # that ends early in Y+1 and is named for its first year is filed in Y; one named for its last, in Y-1).
    return oldest is None or oldest >= date(min(years) - 1, 1, 1).isoformat()


def choose(listing: Listing, limit: int | None, years: list[int] | None) -> list[ListedFiling]:
    """The filings to download, newest first: the `limit` latest, or every one that can belong to a fiscal year
    asked for (with a limit too, the latest `limit` of those once their fiscal years are certain). A filing the
    listing does not place is kept when its period ends (or, without one, it was filed) in a calendar year a
    filing of a year asked for can fall in, the year before to the year after, so that its own dei: label can
    decide."""
    if years is None:
        return listing.filings[: limit or 1]
    wanted = set(years)
    around = {y + shift for y in wanted for shift in (-1, 0, 1)}
    chosen = []
    for f in listing.filings:
        if f.fiscal_years:
            if wanted.intersection(f.fiscal_years):
                chosen.append(f)
        elif int((f.report_date or f.filing_date)[:4]) in around:
            chosen.append(f)
    if limit is not None and all(f.fiscal_year is not None for f in chosen):
        chosen = chosen[:limit]
    return chosen


def download_window(listing: Listing, chosen: list[ListedFiling]) -> tuple[str, str, set[str], int]:
    """(after, before, accessions to skip, count) for one downloader call that fetches exactly `chosen`: the
    filing dates they span, the other filings of the form filed in that span (skipped), and how many filings of
    the form the span holds (the downloader's limit, so that it stops reading pages once it has them all)."""
    after = min(f.filing_date for f in chosen)
    before = max(f.filing_date for f in chosen)
    keep = {f.accession for f in chosen}
    in_span = [f for f in listing.filings if after <= f.filing_date <= before]
    skip = {f.accession for f in in_span if f.accession not in keep}
    return after, before, skip, len(in_span)
